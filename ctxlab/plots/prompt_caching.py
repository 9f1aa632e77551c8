"""Lesson 03's figure: the cost article's two curves, drawn from the formulas."""
from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt

import ctxlab.plots  # noqa: F401  (Japanese font)
from ctxlab.plots import LABEL_BOX
from ctxlab.costs import formulas
from ctxlab.labs.prompt_caching import COST_ARTICLE, meeting_call, total_costs


def cost_curves(*, w: float = COST_ARTICLE["w"], r: float = COST_ARTICLE["r"], rho: float = COST_ARTICLE["rho"],
                 s: float = COST_ARTICLE["s"], E: float = COST_ARTICLE["E"], n_max: int = 10, k_max: int = 20,
                 ws: Sequence[float] = (1.25, 2.0)):
    """The cost article's two figures, drawn from the formulas (returns the matplotlib Figure).

    Left: total cost against the number of calls for the whole text every time, the cache
    and retrieval with share ``rho``. Right: per-call cost of the cache against the reuse
    count k for each write multiplier in ``ws``, with break-even points.
    """
    if n_max < 2 or k_max < 2:
        raise ValueError("n_max and k_max must be >= 2")
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))

    ns = list(range(1, n_max + 1))
    totals = [total_costs(n, w=w, r=r, rho=rho, s=s, E=E) for n in ns]
    left.plot(ns, [t["full"] for t in totals], marker="o", ms=4, label="毎回全文を渡す")
    left.plot(ns, [t["cache"] for t in totals], marker="o", ms=4, label=f"全文をキャッシュ（w = {w}, r = {r}）")
    left.plot(ns, [t["retrieval"] for t in totals], marker="o", ms=4,
              label=f"検索（ρ = {rho}, s = {s}, E = {E}）")
    meet = meeting_call(w=w, r=r, rho=rho, s=s, E=E)
    if 1 <= meet <= n_max:
        y = total_costs(meet, w=w, r=r, rho=rho, s=s, E=E)["cache"]
        left.scatter([meet], [y], s=80, facecolors="none", edgecolors="black", zorder=5)
        left.annotate(f"{meet:.2f} 回目で並ぶ", (meet, y), xytext=(10, -22), textcoords="offset points", fontsize=9)
    left.set_xlabel("呼び出し回数 n")
    left.set_ylabel("総額（全文を素で 1 回渡す代金 = 1）")
    left.set_title("呼び出し回数と総額", fontsize=11)
    left.set_xticks(ns)
    left.legend(fontsize=8)
    left.grid(alpha=0.3)

    ks = [1 + i * (k_max - 1) / 200 for i in range(201)]
    for wv in ws:
        line, = right.plot(ks, [formulas.cached_cost_per_call(k, wv, r) for k in ks], label=f"キャッシュ w = {wv}")
        be = formulas.breakeven_reuses(wv, r)
        right.axvline(be, color=line.get_color(), ls=":", lw=1)
        right.annotate(f"k > {be:.2f}", (be, 0.45 - 0.15 * list(ws).index(wv)), xytext=(4, 0),
                       textcoords="offset points", fontsize=9, color=line.get_color(), zorder=5,
                       bbox=LABEL_BOX)   # the curves pass under the label, not through it
    right.axhline(1.0, color="gray", lw=1.2, label="毎回全文を渡す（= 1）")
    right.axhline(r, color="gray", lw=1, ls="--", label=f"読み出しの単価 r = {r}（漸近値）")
    right.set_xlabel("使い回し回数 k（1 回の書き込みを分け合う呼び出しの数）")
    right.set_ylabel("1 回あたりのコスト")
    right.set_title("使い回し回数と 1 回あたりのコスト", fontsize=11)
    right.set_ylim(0, max(ws) * 1.05)
    right.legend(fontsize=8)
    right.grid(alpha=0.3)
    fig.tight_layout()
    return fig
