"""Lessons that show cache behaviour print the same thing however long the reader pauses between cells.

Lesson 03 runs twice: as written, and with a pause of more than the 5-minute TTL before every code
cell. The pause is made by moving the kernel's clocks (``time.monotonic`` and ``time.time``, which
the sandbox's real-time clock reads) forward; the test checks that the pause took effect. Every
text output must be the same in both runs, which holds only because the lesson's sandbox runs on a
manual clock (with the default real-time sandbox the second run's reads turn into writes).
"""
from __future__ import annotations

from pathlib import Path

import jupytext
import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell

ROOT = Path(__file__).resolve().parent.parent
PAUSE_S = 6 * 60  # longer than the 5-minute TTL

PAUSE = f"""
import time as _t
if not hasattr(_t, "_ctxlab_real_monotonic"):
    _t._ctxlab_real_monotonic, _t._ctxlab_real_time, _t._ctxlab_paused = _t.monotonic, _t.time, 0.0
    _t.monotonic = lambda: _t._ctxlab_real_monotonic() + _t._ctxlab_paused
    _t.time = lambda: _t._ctxlab_real_time() + _t._ctxlab_paused
_before = _t.monotonic()
_t._ctxlab_paused += {PAUSE_S}
assert _t.monotonic() - _before >= {PAUSE_S}, "the pause did not move the kernel's clock"
"""


def _texts(nb) -> list[str]:
    out = []
    for cell in nb.cells:
        if cell.cell_type != "code" or cell.metadata.get("pause"):
            continue
        parts = []
        for o in cell.get("outputs", []):
            if o.output_type == "error":
                pytest.fail(f"cell failed: {o.ename}: {o.evalue}\n{cell.source[:200]}")
            if o.output_type == "stream" and o.name == "stdout":
                parts.append(o.text)
            elif o.output_type in ("display_data", "execute_result"):   # the lesson's HTML tables of usage
                parts.append(o.get("data", {}).get("text/html", ""))
        out.append("".join(parts))
    return out


def _run(nb) -> list[str]:
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(ROOT)}}).execute()
    return _texts(nb)


@pytest.mark.slow
@pytest.mark.parametrize("lesson", ["03_prompt_caching"])
def test_a_pause_longer_than_the_ttl_between_cells_changes_nothing(lesson):
    src = ROOT / "solutions" / lesson / f"{lesson}.py"
    plain = _run(jupytext.read(src))
    paused_nb = jupytext.read(src)
    cells = []
    for cell in paused_nb.cells:
        if cell.cell_type == "code":
            pause = new_code_cell(PAUSE)
            pause.metadata["pause"] = True
            cells.append(pause)
        cells.append(cell)
    paused_nb.cells = cells
    paused = _run(paused_nb)
    assert any("読み出し" in t for t in plain), "the lesson should show cache reads"
    assert paused == plain
