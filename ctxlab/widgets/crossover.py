"""Lesson 05's widgets: seed 000's "Move the line" simulator and seed 001's rho-k map.

Both are built the same way:

* a plot class (:class:`MonthlyCostPlot`, :class:`RhoKPlot`) creates its matplotlib artists
  once on an Axes and ``update()`` changes them in place (``set_data``, ``set_x``...), so a
  redraw never rebuilds the figure; the same class draws the static figure of the notebook
  (:func:`plot_monthly`, :func:`plot_rho_k`) for readers without a live kernel;
* the widget (:class:`CrossoverSimulator`, :class:`RhoKExplorer`) owns a figure outside
  pyplot and renders it to PNG into an ``ipywidgets.Image`` on every control change. It
  blits: the axes, ticks and legend are drawn once into a saved background, and a change
  restores that background and draws only the artists that move (the plot's ``dynamic``
  list). Only when the axis limits change (they move in "nice" steps) is the whole figure
  drawn again (the last few backgrounds are kept, so going back to earlier limits or
  another model is a blit again). The widget keeps what it shows in ``.result`` (a dict) so
  that notebook code and tests can read it.

Nothing blocks or waits: a change redraws synchronously in the kernel (no timers, no
threads), so the widgets run headless under nbclient and nbgrader. ``.set(...)`` changes
several controls with one redraw; ``.redraw_times`` holds the last redraw durations.
The numbers come from :mod:`ctxlab.costs.crossover` (compare and pricing underneath).
"""
from __future__ import annotations

import base64
import html
import math
import struct
import time
import zlib
from collections import OrderedDict, deque
from contextlib import contextmanager

import ipywidgets as W
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle
from matplotlib.ticker import FuncFormatter

from ctxlab.costs import compare, crossover, formulas, pricing
from ctxlab import plots  # noqa: F401  (Japanese font)

PATH_COLORS = {"long_context": "#1f77b4", "filter": "#2ca02c", "rag": "#d62728"}
METHOD_COLORS = {"full": "#f4b183", "cache": "#9dc3e6", "retrieval": "#a9d18e"}
FIGSIZE = (6.6, 3.9)
MAP_FIGSIZE = (7.6, 3.9)
DPI = 96


def _tokens_label(x: float, _pos=None) -> str:
    if x >= 1_000_000:
        return f"{x / 1_000_000:g}M"
    if x >= 1_000:
        return f"{x / 1_000:g}k"
    return f"{x:g}"


def _png_chunk(tag: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)


def png_rgba(rgba: np.ndarray, level: int = 1) -> bytes:
    """Encode an (height, width, 4) uint8 array as PNG with no row filter and fast deflate.

    Pillow's encoder tries a filter per row, which costs more than the drawing itself for a
    figure with large flat areas; a plain deflate of the rows is 2-3x faster at the same size.
    """
    h, w, c = rgba.shape
    if c != 4 or rgba.dtype != np.uint8:
        raise ValueError(f"expected an (h, w, 4) uint8 array, got shape {rgba.shape} of {rgba.dtype}")
    raw = np.zeros((h, w * 4 + 1), dtype=np.uint8)  # each row: filter type 0, then the pixels
    raw[:, 1:] = rgba.reshape(h, w * 4)
    return (b"\x89PNG\r\n\x1a\n"
            + _png_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0))
            + _png_chunk(b"IDAT", zlib.compress(raw.tobytes(), level))
            + _png_chunk(b"IEND", b""))


def _png(canvas: FigureCanvasAgg) -> bytes:
    """PNG bytes of what the Agg canvas holds now (without drawing it again)."""
    return png_rgba(np.asarray(canvas.buffer_rgba()))


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

    def __init__(self, ax, points: int = 11, n_files: int = crossover.SEED_FILES, sticky_limits: bool = False):
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
                                 fontsize=7, color="#c55a11")
        self.over_text = ax.text(0, 0.97, "ウィンドウ超:\n載らない", transform=xt, va="top", ha="left",
                                 fontsize=7, color="#843c0c")
        self.lines = {path: ax.plot([], [], color=PATH_COLORS[path], lw=2, label=label)[0]
                      for path, label in crossover.PATHS.items()}
        self.doc_line = ax.axvline(0, color="black", ls=":", lw=1, label="いまの文書量")
        self.cross_vline = ax.axvline(0, color=PATH_COLORS["rag"], ls="--", lw=1)
        (self.cross_dot,) = ax.plot([], [], "o", color="black", ms=6, zorder=5)
        self.cross_text = ax.text(0, 0, "", fontsize=8, ha="left", va="bottom", zorder=6,
                                  bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "none", "alpha": 0.8})
        self.note = ax.text(0.99, 0.5, "", transform=ax.transAxes, ha="right", va="center", fontsize=8,
                            bbox={"boxstyle": "round,pad=0.3", "fc": "white", "ec": "gray", "alpha": 0.9})
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
        ys = crossover.curves(p, grid, self.n_files)
        for path, ln in self.lines.items():
            ln.set_data(grid, ys[path])
        needed_y = _nice_ceiling(max(1.0, max(float(v.max()) for v in ys.values())) * 1.08)
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
                self.note.set_text("交差しない: RAG は安くならない")
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
                 n_files: int = crossover.SEED_FILES):
    """The static version of the simulator's figure (pyplot, shown inline). Returns the plot object."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=FIGSIZE)
    p = p or compare.Profile()
    plot = MonthlyCostPlot(ax, n_files=n_files)
    plot.update(doc_tokens, p)
    m = pricing.get_model(p.model)
    ax.figure.suptitle(f"{m.display_name}・1 日 {crossover.per_day(p):g} 問・ヒット率 {p.hit_rate:.0%}・"
                       f"{p.rag_chunks} チャンク・DB ${p.db_monthly:g}/月", fontsize=10)
    ax.figure.tight_layout()
    return plot


SHORT_LABELS = {"long_context": "ロングコンテキスト", "filter": "メタデータで絞る", "rag": "RAG（DB 込み）"}


def numbers_html(res: dict) -> str:
    """The simulator's panel of numbers (HTML), from a :func:`crossover.situation` dict."""
    rows = [("long_context", res["monthly_long_context"], res["ttft_long_context_s"]),
            ("filter", res["monthly_filter"], res["ttft_filter_s"]),
            ("rag", res["monthly_rag"], res["ttft_rag_s"])]
    cell = "style='white-space:nowrap;padding:1px 6px;text-align:right'"
    body = "".join(
        f"<tr><td style='white-space:nowrap;padding:1px 6px;color:{PATH_COLORS[k]}'>{html.escape(SHORT_LABELS[k])}</td>"
        f"<td {cell}>{'<b>' if k == res['cheapest'] else ''}${cost:,.0f}{'</b>' if k == res['cheapest'] else ''}</td>"
        f"<td {cell}>{ttft:.1f} s</td></tr>"
        for k, cost, ttft in rows)
    usage = res["window_usage"]
    verdict = ("50% 以下: 前提を満たす" if res["within_half_window"]
               else "50% 超: 前提を満たさない" if res["fits_window"] else "ウィンドウに載らない")
    cross = res["crossover_tokens"]
    cross_txt = "交差しない" if cross is None else f"{cross:,.0f} tok から RAG が安い"
    ttft_ok = res["ttft_long_context_s"] <= crossover.TTFT_LIMIT_S
    return (
        "<div style='font-size:12px;line-height:1.6'>"
        "<table style='font-size:12px;border-collapse:collapse'>"
        f"<tr><th></th><th {cell}>月額</th><th {cell}>TTFT</th></tr>{body}</table>"
        f"キャッシュなしのロングコンテキスト: ${res['monthly_long_context_no_cache']:,.0f}<br>"
        f"コンテキスト使用率: <b>{usage:.1%}</b>（{verdict}）<br>"
        f"ロングコンテキストの TTFT: {'3 秒以内' if ttft_ok else '3 秒超'}<br>"
        f"交点: {cross_txt}<br>"
        "<span style='color:gray'>太字は最も安い方式。TTFT はキャッシュが温まった状態（RAG は検索込み）の"
        "シミュレーションで、実測ではない</span></div>"
    )


class _Widget:
    """Shared plumbing: controls, one PNG image, synchronous redraws, batched .set()."""

    MAX_BACKGROUNDS = 8  # saved backgrounds (axis limits x window) kept for going back and forth

    def __init__(self, figsize=FIGSIZE):
        self.figure = Figure(figsize=figsize, dpi=DPI)
        self.canvas = FigureCanvasAgg(self.figure)
        self.ax = self.figure.add_subplot(1, 1, 1)
        self.image = W.Image(format="png")
        self.redraw_times: deque[float] = deque(maxlen=200)
        self.full_redraws = 0
        self.result: dict = {}
        self._holding = False
        self._backgrounds: OrderedDict = OrderedDict()  # layout key -> saved background (a few, LRU)

    def _watch(self):
        for c in self.controls.values():
            c.observe(self._on_change, names="value")

    def _on_change(self, _change=None):
        if not self._holding:
            self.redraw()

    @contextmanager
    def hold(self):
        """Change several controls inside ``with w.hold():`` and redraw once at the end."""
        self._holding = True
        try:
            yield self
        finally:
            self._holding = False
            self.redraw()

    def set(self, **values):
        """Set controls by name (the keys of ``.controls``) with one redraw; return ``.result``."""
        unknown = set(values) - set(self.controls)
        if unknown:
            raise ValueError(f"unknown control(s) {sorted(unknown)}: choose from {', '.join(self.controls)}")
        with self.hold():
            for name, v in values.items():
                self.controls[name].value = v
        return self.result

    @property
    def state(self) -> dict:
        """Current control values."""
        return {name: c.value for name, c in self.controls.items()}

    @property
    def last_redraw_s(self) -> float | None:
        return self.redraw_times[-1] if self.redraw_times else None

    def _finish_layout(self):
        """Lay the figure out once, mark the moving artists, draw the first frame."""
        self.figure.tight_layout()
        for a in self.plot.dynamic:
            a.set_animated(True)
        self._backgrounds.clear()
        self.redraw()

    def redraw(self):
        """Update the artists, blit them over the saved background, publish the PNG; return ``.result``."""
        t0 = time.perf_counter()
        self._update_artists()
        key = self.plot.layout_key()
        background = self._backgrounds.get(key)
        if background is None:
            self.canvas.draw()  # animated (moving) artists are left out of the background
            background = self._backgrounds[key] = self.canvas.copy_from_bbox(self.figure.bbox)
            while len(self._backgrounds) > self.MAX_BACKGROUNDS:
                self._backgrounds.popitem(last=False)
            self.full_redraws += 1
        else:
            self._backgrounds.move_to_end(key)
            self.canvas.restore_region(background)
        renderer = self.canvas.get_renderer()
        for a in self.plot.dynamic:
            if a.get_visible():
                a.draw(renderer)
        self.image.value = _png(self.canvas)
        self.redraw_times.append(time.perf_counter() - t0)
        return self.result

    def _update_artists(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def static_html(self) -> str:
        """The current figure and numbers as plain HTML (what a page without a kernel can show)."""
        png = base64.b64encode(self.image.value).decode("ascii")
        return (f"<div style='display:flex;gap:12px;align-items:flex-start'>"
                f"<img src='data:image/png;base64,{png}'/><div>{self.numbers.value}</div></div>")

    def _repr_mimebundle_(self, **kwargs):
        # The live widget, with a static fallback for front ends that cannot render widgets.
        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle["text/html"] = self.static_html()
        return bundle


class CrossoverSimulator(_Widget):
    """Seed 000's "Move the line": move the traffic and the documents, watch the paths cross.

    Controls: document volume (tokens), questions per day, cache hit rate, model (from
    ``pricing.models()``), RAG chunks, vector DB monthly cost. Outputs: the monthly cost of
    long context (with the cache), the metadata filter and RAG (with the DB), the window
    usage, the warm-cache TTFT, and the figure. ``sim.result`` holds the numbers shown.
    """

    def __init__(self, doc_tokens: int = 197_000, questions_per_day: int = 20, hit_rate: float = 0.8,
                 model: str = pricing.DEFAULT_MODEL, rag_chunks: int = 8, db_monthly: float = 70.0, *,
                 base: compare.Profile | None = None, n_files: int = crossover.SEED_FILES,
                 continuous_update: bool = True):
        super().__init__()
        self.base = base or compare.Profile()
        style = {"description_width": "150px"}
        lay = W.Layout(width="440px")
        cu = continuous_update
        self.controls = {
            "doc_tokens": W.IntSlider(value=doc_tokens, min=10_000, max=1_500_000, step=1_000, readout_format=",d",
                                      description="文書量（tok）", continuous_update=cu, style=style, layout=lay),
            "questions_per_day": W.IntSlider(value=questions_per_day, min=1, max=300, step=1,
                                             description="1 日の質問数", continuous_update=cu, style=style, layout=lay),
            "hit_rate": W.FloatSlider(value=hit_rate, min=0.0, max=1.0, step=0.05, readout_format=".0%",
                                      description="キャッシュヒット率", continuous_update=cu, style=style, layout=lay),
            "model": W.Dropdown(options=[(m.display_name, m.id) for m in pricing.models().values()], value=model,
                                description="モデル", style=style, layout=lay),
            "rag_chunks": W.IntSlider(value=rag_chunks, min=1, max=40, step=1, description="RAG のチャンク数",
                                      continuous_update=cu, style=style, layout=lay),
            "db_monthly": W.FloatSlider(value=db_monthly, min=0.0, max=500.0, step=5.0, readout_format=",.0f",
                                        description="ベクトル DB（$/月）", continuous_update=cu, style=style, layout=lay),
        }
        self.plot = MonthlyCostPlot(self.ax, n_files=n_files, sticky_limits=True)
        self.numbers = W.HTML(layout=W.Layout(width="300px"))
        wrap = W.Layout(flex_flow="row wrap")
        self.widget = W.VBox([
            W.HBox([W.VBox(list(self.controls.values())[:3]), W.VBox(list(self.controls.values())[3:])], layout=wrap),
            W.HBox([self.image, self.numbers], layout=wrap),
        ])
        self._watch()
        self._update_artists()
        self._finish_layout()

    @property
    def profile(self) -> compare.Profile:
        """The profile the controls describe (the rest from ``base``)."""
        s = self.state
        fields = {**self.base.__dict__, "model": s["model"], "hit_rate": float(s["hit_rate"]),
                  "questions_per_month": s["questions_per_day"] * crossover.DAYS_PER_MONTH,
                  "rag_chunks": s["rag_chunks"], "db_monthly": float(s["db_monthly"])}
        return compare.Profile(**fields)

    def _update_artists(self):
        self.result = self.plot.update(self.controls["doc_tokens"].value, self.profile)
        self.numbers.value = numbers_html(self.result)


# ---------------------------------------------------------------- seed 001's rho-k map

class RhoKPlot:
    """Seed 001's plane coloured by the cheapest method, with rho_limit and r - s, updated in place.

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
        self.asym_text = ax.text(k_max * 0.98, 0, "", ha="right", va="bottom", fontsize=8)
        xs = [min(k, k_max) for _, k, _ in self.points]
        ys = [min(rho, rho_max) for _, _, rho in self.points]
        (self.points_artist,) = ax.plot(xs, ys, "k*", ms=11, zorder=5)
        self.point_texts = [ax.text(x, y + 0.03 * rho_max, label, fontsize=8, ha="center", va="bottom", zorder=6)
                            for (label, _, _), x, y in zip(self.points, xs, ys)]
        handles = [Patch(color=METHOD_COLORS[m], label=crossover.METHOD_LABELS[m] + "が最安")
                   for m in crossover.METHODS]
        handles += [self.limit_line, self.asym_line, self.break_line]
        # Outside the axes, where the coloured map cannot cover it.
        if legend:
            ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=7, frameon=False)
        ax.set_xlabel("実効使い回し回数 k（1 回の書き込みを何回の呼び出しで分け合うか）")
        ax.set_ylabel("1 回に引く割合 ρ")
        ax.set_xlim(1, k_max)
        ax.set_ylim(0, rho_max)
        self.dynamic = [self.image, self.limit_line, self.asym_line, self.break_line, self.asym_text,
                        self.points_artist, *self.point_texts]
        self.result: dict = {}

    def layout_key(self) -> tuple:
        return (self.ax.get_xlim(), self.ax.get_ylim())

    def update(self, w: float, r: float, s: float) -> dict:
        """Recolour for multipliers ``w``, ``r`` and search cost ``s``; return the figures shown."""
        m = crossover.rho_k_map(w, r, s, k=self.k, rho=self.rho)
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
            "w": w, "r": r, "s": s,
            "breakeven_k": m.breakeven_k,
            "asymptote": m.asymptote,
            "rho_limit": {k: float(formulas.rho_limit(k, w, r, s)) for k in (2, 5, 10, 20)},
            "share": {name: m.share(name) for name in crossover.METHODS},
            "points": {label: crossover.cheapest(min(k, 1e12), min(rho, 1.0), w, r, s)
                       for label, k, rho in self.points},
        }
        return self.result


def plot_rho_k(w: float = 1.25, r: float = 0.1, s: float = 0.02, points=None, ax=None, **kw):
    """The static version of the rho-k map (pyplot, shown inline). Returns the plot object."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=MAP_FIGSIZE)
    plot = RhoKPlot(ax, points, **kw)
    plot.update(w, r, s)
    ax.set_title(f"どれが最も安いか（w = {w:g}, r = {r:g}, s = {s:g}）", fontsize=10)
    ax.figure.tight_layout()
    return plot


class RhoKExplorer(_Widget):
    """Seed 001's map as a widget: sliders for w, r and s; ``points`` are (label, k, rho) marks."""

    def __init__(self, w: float = 1.25, r: float = 0.1, s: float = 0.02, points=None, *,
                 continuous_update: bool = True, **plot_kw):
        super().__init__(MAP_FIGSIZE)
        style = {"description_width": "170px"}
        lay = W.Layout(width="440px")
        cu = continuous_update
        self.controls = {
            "w": W.FloatSlider(value=w, min=1.0, max=3.0, step=0.05, description="書き込み倍率 w",
                               continuous_update=cu, style=style, layout=lay),
            "r": W.FloatSlider(value=r, min=0.01, max=0.5, step=0.01, description="読み出し倍率 r",
                               continuous_update=cu, style=style, layout=lay),
            "s": W.FloatSlider(value=s, min=0.0, max=0.5, step=0.01, description="検索 1 回の費用 s",
                               continuous_update=cu, style=style, layout=lay),
        }
        self.plot = RhoKPlot(self.ax, points, **plot_kw)
        self.numbers = W.HTML(layout=W.Layout(width="240px"))
        self.widget = W.VBox([W.VBox(list(self.controls.values())),
                              W.HBox([self.image, self.numbers], layout=W.Layout(flex_flow="row wrap"))])
        self._watch()
        self._update_artists()
        self._finish_layout()

    def _update_artists(self):
        s = self.state
        self.result = self.plot.update(float(s["w"]), float(s["r"]), float(s["s"]))
        res = self.result
        lims = "".join(f"k = {k}: ρ < {v:.3f}<br>" for k, v in res["rho_limit"].items())
        shares = "".join(f"{crossover.METHOD_LABELS[m]}: {res['share'][m]:.1%}<br>" for m in crossover.METHODS)
        self.numbers.value = (
            "<div style='font-size:12px;line-height:1.5'>"
            f"キャッシュが得になる k &gt; {res['breakeven_k']:.2f}<br>"
            f"検索が勝つ ρ の上限（rho_limit）<br>{lims}"
            f"多く使い回すときの上限 r − s = {res['asymptote']:.3f}<br><br>"
            f"図の中で最も安い面積<br>{shares}</div>"
        )


__all__ = ["MonthlyCostPlot", "plot_monthly", "numbers_html", "CrossoverSimulator",
           "RhoKPlot", "plot_rho_k", "RhoKExplorer"]
