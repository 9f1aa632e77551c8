"""Lesson 05's figures: monthly cost against document volume, and the cost article's rho-k map.

Each plot class creates its matplotlib artists once on an Axes and ``update()`` changes them
in place (``set_data``, ``set_x``...), so a redraw never rebuilds the figure. The same class
draws the static figure of the notebook (:func:`plot_monthly`, :func:`plot_rho_k`) and the
live figure of the widgets in :mod:`ctxlab.widgets.crossover`. The numbers come from
:mod:`ctxlab.costs.crossover`.
"""
from __future__ import annotations

import math

import numpy as np
from matplotlib.colors import to_rgba
from matplotlib.patches import Patch, Rectangle
from matplotlib.ticker import FuncFormatter

import ctxlab.plots  # noqa: F401  (Japanese font)
from ctxlab.plots import LABEL_BOX, source_note
from ctxlab.costs import compare, crossover, formulas, pricing

PATH_COLORS = {"long_context": "#1f77b4", "filter": "#2ca02c", "rag": "#d62728"}
METHOD_COLORS = {"full": "#f4b183", "cache": "#9dc3e6", "retrieval": "#a9d18e", "hybrid": "#ffd966"}
FIGSIZE = (6.6, 3.9)
MAP_FIGSIZE = (7.6, 3.9)
DPI = 96


def _tokens_label(x: float, _pos=None) -> str:
    if x >= 1_000_000:
        return f"{x / 1_000_000:g}M"
    if x >= 1_000:
        return f"{x / 1_000:g}k"
    return f"{x:g}"


def _nice_ceiling(y: float) -> float:
    """The smallest of 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 x 10^n that is >= y (axis limits move in steps)."""
    if y <= 0:
        return 1.0
    e = 10 ** math.floor(math.log10(y))
    for m in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        if m * e >= y * (1 - 1e-12):
            return m * e
    return 10 * e


# ---------------------------------------------------------------- monthly cost against document volume

class MonthlyCostPlot:
    """Monthly cost of the three paths against the document volume, on one Axes, updated in place.

    Marks the crossover where RAG (with the database) becomes cheaper than long context (with
    the cache), the current document volume, and shades the volumes beyond 50% of the model's
    window (lighter) and beyond the window itself (darker).
    """

    def __init__(self, ax, points: int = 11, n_files: int = crossover.ARTICLE_FILES, sticky_limits: bool = False):
        self.ax = ax
        self.points = points  # the monthly costs are straight lines in the volume: a few points draw them
        self.n_files = n_files
        self.sticky_limits = sticky_limits
        self._drawn = False
        xt = ax.get_xaxis_transform()
        self.half_band = Rectangle((0, 0), 0, 1, transform=xt, color="#f8cbad", alpha=0.45, lw=0, zorder=0)
        self.over_band = Rectangle((0, 0), 0, 1, transform=xt, color="#f4b183", alpha=0.6, lw=0, zorder=0)
        ax.add_patch(self.half_band)
        ax.add_patch(self.over_band)
        self.half_text = ax.text(0, 0.97, "ウィンドウの\n50% 超", transform=xt, va="top", ha="left",
                                 fontsize=7, color="#c55a11", zorder=6, bbox=LABEL_BOX)
        # lower than the 50% label: on a small window (Haiku 4.5) the two bands start close together
        self.over_text = ax.text(0, 0.80, "ウィンドウ超:\n載らない", transform=xt, va="top", ha="left",
                                 fontsize=7, color="#843c0c", zorder=6, bbox=LABEL_BOX)
        self.lines = {path: ax.plot([], [], color=PATH_COLORS[path], lw=2, label=label)[0]
                      for path, label in crossover.PATHS.items()}
        self.doc_line = ax.axvline(0, color="black", ls=":", lw=1, label="いまの文書量")
        self.cross_vline = ax.axvline(0, color=PATH_COLORS["rag"], ls="--", lw=1)
        (self.cross_dot,) = ax.plot([], [], "o", color="black", ms=6, zorder=5)
        self.cross_text = ax.text(0, 0, "", fontsize=8, ha="left", va="bottom", zorder=6,
                                  bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "none", "alpha": 1.0})
        self.note = ax.text(0.99, 0.5, "", transform=ax.transAxes, ha="right", va="center", fontsize=8,
                            bbox={"boxstyle": "round,pad=0.3", "fc": "white", "ec": "gray", "alpha": 1.0})
        ax.set_xlabel("文書量（トークン）")
        ax.set_ylabel("月額（ドル）")
        ax.xaxis.set_major_formatter(FuncFormatter(_tokens_label))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _p: f"${y:,.0f}"))
        ax.grid(alpha=0.3)
        # The legend sits above the axes, where no moving artist can cover it.
        ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncols=4, fontsize=8, frameon=False,
                  handlelength=1.5, columnspacing=1.0)
        # What moves on every change; the bands move only with the window or the x range (layout_key).
        self.dynamic = [*self.lines.values(), self.doc_line, self.cross_vline, self.cross_dot, self.cross_text,
                        self.note]
        self._window = None
        self.result: dict = {}

    def x_max(self, doc_tokens: float, window: int, cross: float | None) -> float:
        """The x range: the current volume, the crossover (when not far beyond the window) and
        at least 60% of the window, so that the 50% line is always in view; in nice steps."""
        xmax = max(0.6 * window, 1.2 * doc_tokens)
        if cross is not None and cross < 2.5 * window:
            xmax = max(xmax, 1.3 * cross)
        return _nice_ceiling(xmax)

    def update(self, doc_tokens: float, p: compare.Profile) -> dict:
        """Redraw for ``doc_tokens`` and profile ``p``; return the numbers shown (crossover.situation)."""
        res = crossover.situation(doc_tokens, p, self.n_files)
        window = res["context_window"]
        cross = res["crossover_tokens"]
        xmax = self._keep(self.ax.get_xlim()[1], self.x_max(doc_tokens, window, cross), 2.0)
        grid = np.linspace(0, xmax, self.points)
        # a price tier's threshold (and the window's edge) as a step: the volume just at it and one token over
        cuts = np.array([hi for _lo, hi in crossover._segments(p, self.n_files)])
        cuts = cuts[(cuts > 0) & (cuts < xmax)]
        grid = np.unique(np.concatenate([grid, cuts, cuts + 1]))
        ys = crossover.curves(p, grid, self.n_files)
        for path, ln in self.lines.items():
            ln.set_data(grid, ys[path])
        # nanmax: beyond the window long context has no price (NaN), and max() with a NaN first is NaN
        needed_y = _nice_ceiling(max(1.0, max(float(np.nanmax(v)) for v in ys.values())) * 1.08)
        ymax = self._keep(self.ax.get_ylim()[1], needed_y, 2.5)

        self._window = window
        half = crossover.HALF_WINDOW * window
        self.half_band.set_x(half)
        self.half_band.set_width(max(0.0, window - half))
        self.over_band.set_x(window)
        self.over_band.set_width(max(0.0, xmax - window))
        self.half_text.set_x(half + xmax * 0.005)
        self.half_text.set_visible(half < xmax)
        self.over_text.set_x(window + xmax * 0.005)
        self.over_text.set_visible(window < xmax * 0.97)
        self.doc_line.set_xdata([doc_tokens, doc_tokens])

        if cross is not None and cross <= xmax:
            y = crossover.line("rag", p, self.n_files)(cross)
            self.cross_dot.set_data([cross], [y])
            self.cross_vline.set_xdata([cross, cross])
            self.cross_vline.set_visible(True)
            self.cross_text.set_position((cross + xmax * 0.01, y + ymax * 0.02))
            self.cross_text.set_text(f"RAG が安くなる\n{cross:,.0f} tok")
            self.cross_text.set_visible(True)
            self.note.set_text("")
        else:
            self.cross_dot.set_data([], [])
            self.cross_vline.set_visible(False)
            self.cross_text.set_visible(False)
            if cross is None:
                self.note.set_text(f"ウィンドウ {window:,} tok の内側では交差しない: RAG は安くならない")
            elif cross > window:
                self.note.set_text(f"RAG が安くなるのは {cross:,.0f} tok から\n（ウィンドウ {window:,} tok の外）")
            else:
                self.note.set_text(f"RAG が安くなるのは {cross:,.0f} tok から（図の外）")

        if self.ax.get_xlim() != (0, xmax):
            self.ax.set_xlim(0, xmax)
        if self.ax.get_ylim() != (0, ymax):
            self.ax.set_ylim(0, ymax)
        self._drawn = True
        self.result = res
        return res

    def _keep(self, current: float, needed: float, slack: float) -> float:
        """Axis limit with hysteresis: keep the current one while it shows everything and is
        at most ``slack`` times what is needed (fewer full redraws while a slider moves)."""
        if not (self.sticky_limits and self._drawn):
            return needed
        if needed <= current <= slack * needed:
            return current
        return _nice_ceiling(needed * 1.5)  # some headroom, so that a slider moving on does not step every time

    def layout_key(self) -> tuple:
        """What the saved background depends on: the axis limits and the window (the shaded bands)."""
        return (self.ax.get_xlim(), self.ax.get_ylim(), self._window)


def plot_monthly(doc_tokens: float = 197_000, p: compare.Profile | None = None, ax=None,
                 n_files: int = crossover.ARTICLE_FILES):
    """The static version of the simulator's figure (pyplot, shown inline). Returns the plot object."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=FIGSIZE)
    p = p or compare.Profile()
    plot = MonthlyCostPlot(ax, n_files=n_files)
    plot.update(doc_tokens, p)
    m = pricing.get_model(p.model)
    ax.figure.suptitle(f"{m.display_name}・1 日 {crossover.per_day(p):g} 問・{p.rag_chunks} チャンク・"
                       f"DB ${p.db_monthly:g}/月", fontsize=10)
    source_note(ax, p.hit_rate_label())   # where the hit rate comes from: under the figure, not in its title
    ax.figure.tight_layout()
    return plot


# ---------------------------------------------------------------- the cost article's rho-k map

class RhoKPlot:
    """The cost article's plane coloured by the cheapest method, with rho_limit and r - s, updated in place.

    ``points`` are (label, k, rho) marks (for example a dollar profile placed with
    :func:`crossover.profile_point`); a k beyond the axis is drawn at its right edge.
    """

    def __init__(self, ax, points=None, k_max: float = 20.0, rho_max: float = 1.0, nk: int = 191, nrho: int = 201,
                 legend: bool = True):
        self.ax = ax
        self.k = np.linspace(1, k_max, nk)
        self.rho = np.linspace(0, rho_max, nrho)
        self.points = [(str(label), float(k), float(rho)) for label, k, rho in (points or [])]
        # Colour the index ourselves (uint8 RGBA): no colormap pass on every redraw.
        self._palette = (np.array([to_rgba(METHOD_COLORS[m]) for m in crossover.METHODS]) * 255).astype(np.uint8)
        self.image = ax.imshow(self._palette[np.zeros((nrho, nk), dtype=int)], origin="lower", aspect="auto",
                               interpolation="nearest", extent=(1, k_max, 0, rho_max))
        (self.limit_line,) = ax.plot([], [], color="black", lw=1.6, label="rho_limit(k)：検索が勝つ上限")
        self.asym_line = ax.axhline(0, color="black", ls="--", lw=1, label="漸近線 r − s")
        self.break_line = ax.axvline(1, color="#1f4e79", ls=":", lw=1.2, label="k = (w − r)/(1 − r)")
        self.asym_text = ax.text(k_max * 0.98, 0, "", ha="right", va="bottom", fontsize=8, zorder=6, bbox=LABEL_BOX)
        xs = [min(k, k_max) for _, k, _ in self.points]
        ys = [min(rho, rho_max) for _, _, rho in self.points]
        (self.points_artist,) = ax.plot(xs, ys, "k*", ms=11, zorder=5)
        self.point_texts = [ax.text(x, y + 0.03 * rho_max, label, fontsize=8, ha="center", va="bottom", zorder=6,
                                    bbox=LABEL_BOX)
                            for (label, _, _), x, y in zip(self.points, xs, ys)]
        handles = [Patch(color=METHOD_COLORS[m], label=crossover.METHOD_LABELS[m] + "が最安")
                   for m in crossover.METHODS]
        handles += [self.limit_line, self.asym_line, self.break_line]
        # Outside the axes, where the coloured map cannot cover it.
        if legend:
            ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=9, frameon=False)
        ax.set_xlabel("使い回し回数 k（1 回の書き込みを分け合う呼び出しの数）")
        ax.set_ylabel("1 回に引く割合 ρ")
        ax.set_xlim(1, k_max)
        ax.set_ylim(0, rho_max)
        self.dynamic = [self.image, self.limit_line, self.asym_line, self.break_line, self.asym_text,
                        self.points_artist, *self.point_texts]
        self.result: dict = {}

    def layout_key(self) -> tuple:
        return (self.ax.get_xlim(), self.ax.get_ylim())

    def update(self, w: float, r: float, s: float, m0: float = 0.0) -> dict:
        """Recolour for multipliers ``w``, ``r``, search cost ``s`` and fixed part ``m0``; return the figures shown."""
        m = crossover.rho_k_map(w, r, s, m0=m0, k=self.k, rho=self.rho)
        self.image.set_data(self._palette[m.index])
        lim = np.where(m.rho_limit >= 0, m.rho_limit, np.nan)
        self.limit_line.set_data(self.k, lim)
        self.asym_line.set_ydata([m.asymptote, m.asymptote])
        self.asym_line.set_visible(m.asymptote > 0)
        self.asym_text.set_position((self.k[-1] * 0.98, max(m.asymptote, 0) + 0.01))
        self.asym_text.set_text(f"r − s = {m.asymptote:.3f}" if m.asymptote > 0
                                else f"r − s = {m.asymptote:.3f}（使い回すほど検索は勝てない）")
        self.break_line.set_xdata([m.breakeven_k, m.breakeven_k])
        self.result = {
            "w": w, "r": r, "s": s, "m0": m0,
            "breakeven_k": m.breakeven_k,
            "asymptote": m.asymptote,
            "rho_limit": {k: float(formulas.rho_limit(k, w, r, s, m0)) for k in (2, 5, 10, 20)},
            "share": {name: m.share(name) for name in crossover.METHODS},
            "points": {label: crossover.cheapest(min(k, 1e12), min(rho, 1.0), w, r, s, m0)
                       for label, k, rho in self.points},
        }
        return self.result


def plot_rho_k(w: float = 1.25, r: float = 0.1, s: float = 0.02, points=None, ax=None, m0: float = 0.0, **kw):
    """The static version of the rho-k map (pyplot, shown inline). Returns the plot object."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=MAP_FIGSIZE)
    plot = RhoKPlot(ax, points, **kw)
    plot.update(w, r, s, m0)
    fixed = f", 固定部分 m0 = {m0:g}" if m0 else ""
    ax.set_title(f"どれが最も安いか（w = {w:g}, r = {r:g}, s = {s:g}{fixed}）", fontsize=10)
    ax.figure.tight_layout()
    return plot
