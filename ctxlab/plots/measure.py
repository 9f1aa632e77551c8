"""Lesson 08's figure: accuracy per question category, one bar per method."""
from __future__ import annotations

from typing import Iterable

import matplotlib.pyplot as plt

import ctxlab.plots  # noqa: F401  (Japanese font)
from ctxlab.plots import source_note
from ctxlab.corpus import CATEGORIES
from ctxlab.evaluation import Graded
from ctxlab.labs.measure import CATEGORY_NAMES as NAMES   # the categories as the figure names them
from ctxlab.labs.measure import by_method


def accuracy(graded: Iterable[Graded], ax=None, partial_weight: float = 0.5, title: str | None = None,
             source: str | None = None):
    """Bar chart of ``ctxlab.labs.measure.by_method``: accuracy per category (and overall), one bar per method."""
    acc = by_method(graded, partial_weight)
    cats = [c for c in CATEGORIES if any(c in per for per in acc.values())] + ["all"]
    if ax is None:
        _, ax = plt.subplots(figsize=(7.2, 3.6))
    width = 0.8 / max(1, len(acc))
    for i, (m, per) in enumerate(acc.items()):
        xs = [j + (i - (len(acc) - 1) / 2) * width for j in range(len(cats))]
        ax.bar(xs, [per.get(c, 0) * 100 for c in cats], width, label=m)
    ax.set_xticks(range(len(cats)))
    ax.set_xticklabels([NAMES.get(c, c) for c in cats])
    ax.set_ylabel("正答率 (%)（惜しい = 0.5）" if partial_weight == 0.5 else "正答率 (%)")
    ax.set_ylim(0, 105)
    ax.set_title(title or "方式ごと・質問の種類ごとの正答率", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    if source:
        source_note(ax, source)
    return ax
