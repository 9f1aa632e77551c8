"""Plots of the course: matplotlib with a Japanese font (matplotlib-fontja).

Importing ``ctxlab.plots`` (or any of its modules) selects the Japanese font. One module per
family of figures; every plot function takes plain data (numbers, lists, the lab's result
objects read by attribute) and an optional ``ax``, and returns the axes. Figures from papers
say so in their title, never presenting a published figure as a measurement.
"""
from __future__ import annotations

import matplotlib_fontja  # noqa: F401  (registers and selects a Japanese font)

#: the box of a label that a curve may cross: the label drawn over the curve on white (tests/figcheck.py)
LABEL_BOX = {"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 1.0}   # opaque: a line passing under it is hidden


def source_note(ax, text: str, fontsize: float = 8):
    """Where a figure's numbers come from, in small grey text under the axes (not in the title, where a
    long source runs off the figure). ``tight_layout`` makes room for it. Returns the text artist."""
    below = -40 if ax.get_xlabel() else -22   # under the tick labels, and under the axis label when there is one
    return ax.annotate(text, xy=(0, 0), xycoords="axes fraction", xytext=(0, below), textcoords="offset points",
                       ha="left", va="top", fontsize=fontsize, color="#555", wrap=True)
