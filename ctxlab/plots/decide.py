"""Lesson 11 (ctxlab decide): the memo's two figures, month against questions a day and against document volume."""
from __future__ import annotations

import math
from typing import Mapping, Sequence

import matplotlib.pyplot as plt

import ctxlab.plots  # noqa: F401  (Japanese font)
from ctxlab.plots import LABEL_BOX

LABELS = {"long_context": "ロングコンテキスト（安いほうのキャッシュ設定）", "long_context_no_cache": "ロングコンテキスト（キャッシュなし）",
          "filter": "メタデータで絞る", "rag": "RAG（DB 込み）"}
STYLES = {"long_context": "-o", "long_context_no_cache": ":", "filter": "--s", "rag": "-^"}
COLORS = {"long_context": "tab:blue", "long_context_no_cache": "tab:blue", "filter": "tab:green", "rag": "tab:red"}


def _series(ax, xs: Sequence[float], curves: Mapping[str, Sequence[float | None]]):
    for key, ys in curves.items():
        pts = [(x, y) for x, y in zip(xs, ys) if y is not None and not (isinstance(y, float) and math.isnan(y))]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], STYLES.get(key, "-"), color=COLORS.get(key),
                    label=LABELS.get(key, key), ms=4)


def per_day(grid: Sequence[float], curves: Mapping[str, Sequence[float | None]], now: float, *, title: str, ax=None):
    """Monthly dollars of each path against questions a day (log scale), the current level marked."""
    if ax is None:
        _fig, ax = plt.subplots(figsize=(7.2, 4.2))
    _series(ax, grid, curves)
    ax.axvline(now, color="grey", lw=1)
    ax.annotate(f"今: 1 日 {now:g} 問", (now, ax.get_ylim()[1]), xytext=(4, -14), textcoords="offset points", fontsize=9)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("1 日の質問数（対数目盛）")
    ax.set_ylabel("月額（ドル、対数目盛）")
    ax.set_title(title, fontsize=11)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return ax


def crossover(grid: Sequence[float], curves: Mapping[str, Sequence[float | None]], now_tokens: float,
              cross_tokens: float, *, title: str, ax=None):
    """Monthly dollars against document tokens at this traffic: where long context and RAG cross."""
    if ax is None:
        _fig, ax = plt.subplots(figsize=(7.2, 4.2))
    _series(ax, [g / 1000 for g in grid], curves)
    ax.axvline(now_tokens / 1000, color="grey", lw=1)
    ax.annotate("今の文書量", (now_tokens / 1000, 0), xycoords=("data", "axes fraction"), xytext=(4, 6),
                textcoords="offset points", fontsize=9, zorder=6, bbox=LABEL_BOX)
    if math.isfinite(cross_tokens) and 0 < cross_tokens <= max(grid):
        ax.axvline(cross_tokens / 1000, color="tab:red", lw=1, ls="--")
        ax.annotate(f"交点 {cross_tokens / 1000:,.0f}k", (cross_tokens / 1000, 1), xycoords=("data", "axes fraction"),
                    xytext=(4, -14), textcoords="offset points", fontsize=9, color="tab:red", zorder=6, bbox=LABEL_BOX)
    ax.set_xlabel("文書のトークン数（千）")
    ax.set_ylabel("月額（ドル）")
    ax.set_title(title, fontsize=11)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return ax
