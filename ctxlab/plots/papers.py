"""Figures from papers, drawn as published figures (their source is in the title)."""
from __future__ import annotations

import matplotlib.pyplot as plt

import ctxlab.plots  # noqa: F401  (Japanese font)
from ctxlab.published import figures


def lost_in_the_middle(ax=None):
    """Accuracy by the position of the answer document (Liu et al., published figures)."""
    data = figures()["lost_in_the_middle"]
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 3.6))
    for model, acc in data["accuracy"].items():
        ax.plot(data["positions"], acc, marker="o", label=model)
    # the reference lines are named in the legend: a label on the plot sits where the curves run (closed book)
    for (name, y), style in zip(data["reference_lines"].items(), (":", "--", "-.")):
        ax.axhline(y, ls=style, lw=1, color="gray", label=f"{name}（参考線）")
    ax.set_xlabel("正解を含む文書の位置（20 文書中）")
    ax.set_ylabel("正答率 (%)")
    ax.set_xticks(data["positions"])
    ax.set_title("Lost in the Middle: 中ほどの文書は使われにくい\n"
                 "（公表値: Liu et al., TACL 2024。本コースの測定ではない）", fontsize=10)
    # below the axes: inside, it would hide the reference lines (closed book sits near the curves)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2, frameon=False)
    ax.grid(alpha=0.3)
    return ax
