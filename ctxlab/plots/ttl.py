"""Lesson 04's figure: a day of requests, and which of them a cache TTL turns into hits."""
from __future__ import annotations

import math
from typing import Mapping, Sequence

import matplotlib.pyplot as plt

import ctxlab.plots  # noqa: F401  (Japanese font)
from ctxlab.labs.ttl import clock_label


def day(times: Sequence[float], hits: Mapping[str, Sequence[bool]], *, bin_minutes: int = 30,
        title: str | None = None, ax=None):
    """Requests per ``bin_minutes`` on top, and below one row per TTL with each request drawn
    as a tick, coloured hit (read) or miss (write), and the row's hit rate at its right end.

    ``times`` are seconds since 08:00 (``ctxlab.labs.ttl.office_day``); ``hits`` maps a TTL name
    to one bool per time (``model_hits`` or a replay's ``hits``). ``ax`` is a pair of axes
    ``(top, bottom)``; by default a new figure is made. Returns ``(top, bottom)``.
    """
    ts = list(times)
    for name, h in hits.items():
        if len(h) != len(ts):
            raise ValueError(f"hits[{name!r}] has {len(h)} values for {len(ts)} times: pass one bool per time")
    hours = [t / 3600 for t in ts]
    end = max(11.0, math.ceil(max(hours, default=0)))
    if ax is None:
        fig, (top, bottom) = plt.subplots(2, 1, figsize=(8.0, 2.4 + 0.5 * len(hits)), sharex=True,
                                          gridspec_kw={"height_ratios": [2, max(1, len(hits))]})
    else:
        fig, (top, bottom) = None, ax
    step = bin_minutes / 60
    bins = [i * step for i in range(int(end / step) + 1)]
    top.hist(hours, bins=bins, color="#7f9fbf", edgecolor="white")
    top.set_ylabel(f"{bin_minutes} 分ごとの質問数")
    top.grid(alpha=0.3)
    if title:
        top.set_title(title, fontsize=10)
    for row, (name, h) in enumerate(hits.items()):
        y = len(hits) - 1 - row
        for hit, color, label in ((True, "#2e8b57", "ヒット（読み出し）"), (False, "#d62728", "ミス（書き込み）")):
            xs = [x for x, k in zip(hours, h) if k == hit]
            bottom.scatter(xs, [y] * len(xs), marker="|", s=300, color=color,
                           label=label if row == 0 else None)
        rate = sum(h) / len(h) if h else 0.0
        bottom.text(end + 0.1, y, f"{rate:.0%}", va="center", fontsize=9)
    bottom.set_yticks(range(len(hits)), [f"TTL {n}" for n in reversed(list(hits))])
    bottom.set_ylim(-0.7, len(hits) - 0.3)
    ticks = list(range(0, int(end) + 1, 1))
    bottom.set_xticks(ticks, [clock_label(h * 3600) for h in ticks], fontsize=8)
    bottom.set_xlim(0, end)
    bottom.legend(loc="upper center", bbox_to_anchor=(0.5, -0.35), ncol=2, fontsize=8, frameon=False)
    if fig is not None:
        fig.tight_layout()
    return top, bottom
