"""Every lesson's figures, rendered: no two labels overlap and no plotted line runs through a label
(issue 44 item 5: 05's window labels on Haiku 4.5, 06's bar labels running together, curves across the
labels of 00's Lost in the Middle and 03's ``k > 1.28``).

Each solution notebook runs offline with tests/figcheck.py installed in its kernel, which checks each
figure when the inline backend renders it.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import matplotlib
import nbformat
import pytest
from nbclient import NotebookClient

import ctxlab.plots  # noqa: F401  (Japanese font)
import figcheck

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = sorted((ROOT / "solutions").glob("*/*.ipynb"))


def test_the_check_finds_overlapping_labels_and_a_line_through_a_label():
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4, 3))
    ax.bar(["単一ファイル", "複数ファイル"], [1, 2])
    ax.text(0.5, 0.5, "ここに線", transform=ax.transAxes)
    ax.text(0.52, 0.52, "重なる", transform=ax.transAxes)
    assert any("overlaps" in f for f in figcheck.overlaps(fig))
    fig2, ax2 = plt.subplots(figsize=(4, 3))
    ax2.plot([0, 1], [0, 1], label="曲線")
    ax2.text(0.45, 0.5, "k > 1.28")
    assert any("runs through" in f for f in figcheck.overlaps(fig2))
    ax2.texts[0].set_bbox(dict(facecolor="white", alpha=0.9, edgecolor="none"))
    ax2.texts[0].set_zorder(5)
    assert any("runs through" in f for f in figcheck.overlaps(fig2)), "a see-through box shows the line across the text"
    ax2.texts[0].set_bbox(dict(facecolor="white", alpha=1.0, edgecolor="none"))
    assert figcheck.overlaps(fig2) == []          # the label on an opaque box over the line is readable
    fig4, ax4 = plt.subplots(figsize=(2.4, 2))
    ax4.bar(["単一ファイル", "複数ファイル", "全体"], [1, 2, 3])
    assert figcheck.overlaps(fig4), "three long labels under three narrow bars run together"
    fig3, ax3 = plt.subplots(figsize=(4, 3))
    ax3.plot([0, 1], [0, 1])
    ax3.text(0.1, 0.8, "離れたラベル")
    assert figcheck.overlaps(fig3) == []
    plt.close("all")


@pytest.mark.slow
@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.parent.name)
def test_no_label_overlaps_in_a_lesson_figure(path):
    nb = nbformat.read(path, as_version=4)
    tests_dir = str(Path(__file__).resolve().parent)
    nb.cells.insert(0, nbformat.v4.new_code_cell(f"import sys; sys.path.insert(0, {tests_dir!r}); import figcheck; figcheck.install()"))
    nb.cells.append(nbformat.v4.new_code_cell("print(figcheck.report())"))
    env_before = dict(os.environ)
    try:
        os.environ.update(CTXLAB_OFFLINE="1", CTXLAB_TIME_SCALE="0")
        os.environ.pop("ANTHROPIC_API_KEY", None)
        NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True,
                       resources={"metadata": {"path": str(path.parent)}}).execute()
    finally:
        os.environ.clear()
        os.environ.update(env_before)
    out = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.output_type == "stream")
    figures = json.loads(out.strip().splitlines()[-1])
    bad = [f for f in figures if f["overlaps"]]
    assert not bad, "\n".join(f"{f['figure']}: {'; '.join(f['overlaps'])}" for f in bad)


@pytest.mark.parametrize("model", ["claude-haiku-4-5", "claude-opus-5-5", "claude-sonnet-5"])
def test_the_simulators_figure_keeps_its_labels_apart_on_every_window(model):
    """05's figure on a small window (Haiku 4.5: 「ウィンドウの 50% 超」 sat on 「ウィンドウ超: 載らない」) and a large one."""
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ctxlab.costs import compare, pricing
    from ctxlab.plots import crossover as plot

    if model not in pricing.models():
        pytest.skip(f"{model} is not in the price table")
    for tokens in (150_000, 197_000, 450_000):
        p = plot.plot_monthly(tokens, compare.Profile(model=model))
        assert figcheck.overlaps(p.ax.figure) == [], (model, tokens)
        plt.close(p.ax.figure)
