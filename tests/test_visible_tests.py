"""The visible tests teach: each plausible wrong answer of tests/wrong_answers.py is caught by the
exercise's visible test, with a message, before the learner submits (or the entry says why not).

For each lesson, the source notebook runs once with its solutions and without its hidden tests;
after an exercise's visible test cell, a harness cell swaps in each wrong version of the learner's
function, runs the visible test cell's source against it, records the verdict and restores the
solution. ``nbgrader validate`` shows the learner the same visible cells.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

import nbfixtures as nbf
from wrong_answers import WRONG

ROOT = Path(__file__).resolve().parent.parent
MARK = "WRONG-VERDICTS "

HARNESS = '''
import json as _json, signal as _signal

def _too_long(*_):
    raise TimeoutError("the visible test did not finish in 20 s")

_signal.signal(_signal.SIGALRM, _too_long)
_verdicts = {{}}
for _label, _src in {wrongs!r}:
    exec(_src, globals())
    try:
        _signal.alarm(20)
        exec({visible!r}, globals())
        _verdicts[_label] = ["passes", ""]
    except BaseException as _e:
        _verdicts[_label] = ["caught", f"{{type(_e).__name__}}: {{_e}}"]
    finally:
        _signal.alarm(0)
        exec({solution!r}, globals())
with open({record!r}, "a", encoding="utf-8") as _f:   # a file, not stdout: a widget's output capture can take stdout
    _f.write({mark!r} + _json.dumps(_verdicts, ensure_ascii=False) + "\\n")
'''


def verdicts(name: str) -> dict[str, dict[str, tuple[str, str]]]:
    """{test grade_id: {wrong label: (verdict, message)}} for lesson ``name``."""
    import tempfile

    record = Path(tempfile.mkdtemp(prefix="ctxlab-verdicts-")) / "verdicts.jsonl"
    nb = nbformat.read(ROOT / "solutions" / name / f"{name}.ipynb", as_version=4)
    answers = {nbf.grade_id(nb.cells[i]): nb.cells[i].source for i in nbf.answer_cells(nb)}
    cells = []
    last_answer = None
    for cell in nb.cells:
        gid = nbf.grade_id(cell)
        if cell.cell_type == "code" and gid in answers:
            last_answer = cell.source
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("grade") and not meta.get("solution"):
            cell = nbformat.from_dict(dict(cell))
            cell.source = nbf.visible_part(cell.source)
            cells.append(cell)
            if gid in WRONG.get(name, {}):
                wrongs = [(w.label, w.source) for w in WRONG[name][gid]]
                cells.append(nbformat.v4.new_code_cell(HARNESS.format(
                    wrongs=wrongs, visible=cell.source, solution=last_answer, mark=MARK, record=str(record))))
            continue
        cells.append(cell)
    nb.cells = cells
    env_before = dict(os.environ)
    try:
        os.environ.update(CTXLAB_OFFLINE="1", CTXLAB_TIME_SCALE="0")
        os.environ.pop("ANTHROPIC_API_KEY", None)
        NotebookClient(nb, timeout=300, kernel_name="python3",
                       resources={"metadata": {"path": str(ROOT / "solutions" / name)}}).execute()
    finally:
        os.environ.clear()
        os.environ.update(env_before)
    # a cell's stdout can arrive in several stream outputs (split anywhere, also inside a line): join them first
    found = [json.loads(line[len(MARK):]) for line in record.read_text(encoding="utf-8").splitlines()
             if line.startswith(MARK)] if record.exists() else []
    return dict(zip(WRONG[name], found))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(WRONG))
def test_visible_tests_catch_the_plausible_wrong_answers(name):
    got = verdicts(name)
    assert set(got) == set(WRONG[name]), f"exercises without a verdict: {set(WRONG[name]) - set(got)}"
    problems = []
    for gid, entries in WRONG[name].items():
        for wrong in entries:
            verdict, message = got[gid][wrong.label]
            if wrong.passes:
                if verdict != "passes":
                    problems.append(f"{gid} / {wrong.label}: marked as passing on purpose, but now caught: {message}")
            elif verdict != "caught":
                problems.append(f"{gid} / {wrong.label}: the visible test passes this wrong answer")
            elif len(message.split(":", 1)[-1].strip()) < 8:
                problems.append(f"{gid} / {wrong.label}: caught without a message that says what to check ({message!r})")
    assert not problems, "\n".join(problems)


def test_every_exercise_has_a_wrong_answer_set():
    """Each autograded test cell of every lesson has its plausible wrong answers written down above
    (a code exercise), so a visible test that lets a wrong answer through is always a recorded choice."""
    missing = []
    for path in sorted((ROOT / "solutions").glob("*/*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type == "code" and meta.get("grade") and not meta.get("solution"):
                if meta["grade_id"] not in WRONG.get(path.parent.name, {}):
                    missing.append(f"{path.parent.name}: {meta['grade_id']}")
    assert not missing, f"exercises without a wrong-answer set in tests/wrong_answers.py: {missing}"
