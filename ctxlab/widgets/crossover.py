"""Lesson 05's widgets: the "move the line" simulator and the rho-k map of the cost article.

Both are built the same way:

* a plot class of :mod:`ctxlab.plots.crossover` (``MonthlyCostPlot``, ``RhoKPlot``) creates
  its matplotlib artists once on an Axes and ``update()`` changes them in place, so a redraw
  never rebuilds the figure;
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
import time
from collections import OrderedDict, deque
from contextlib import contextmanager

import ipywidgets as W
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ctxlab.costs import compare, crossover, pricing
from ctxlab.plots.crossover import DPI, FIGSIZE, MAP_FIGSIZE, PATH_COLORS, MonthlyCostPlot, RhoKPlot
from ctxlab.widgets._png import _png
from ctxlab.widgets._fallback import TextFallback, how_to, html_to_text

SHORT_LABELS = {"long_context": "ロングコンテキスト", "filter": "メタデータで絞る", "rag": "RAG（DB 込み）"}


#: the class of a simulator's outer box. JupyterLab's widget manager adds ``jupyter-widgets-disconnected`` to every
#: view whose kernel went away (Kernel → Restart, a dead kernel): then, and only then, RESTART_NOTE shows, instead
#: of sliders that move while nothing updates.
LIVE_CLASS = "ctxlab-live-widget"
RESTART_NOTE = (
    f"<style>.{LIVE_CLASS}.jupyter-widgets-disconnected .ctxlab-restart-note{{display:block !important}}</style>"
    "<div class='ctxlab-restart-note' style='display:none;border:2px solid #c60;background:#fff3e0;"
    "padding:6px 10px;margin-bottom:6px'>カーネルが再起動したので、このシミュレーターはもう動きません。"
    "メニューの Run → Run All Cells で最初のセルから実行し直すと、新しいシミュレーターが出ます。</div>")


def numbers_html(res: dict) -> str:
    """The simulator's panel of numbers (HTML), from a :func:`crossover.situation` dict."""
    rows = [("long_context", res["monthly_long_context"], res["ttft_long_context_s"]),
            ("filter", res["monthly_filter"], res["ttft_filter_s"]),
            ("rag", res["monthly_rag"], res["ttft_rag_s"])]
    cell = "style='white-space:nowrap;padding:1px 6px;text-align:right'"
    body = "".join(
        f"<tr><td style='white-space:nowrap;padding:1px 6px;color:{PATH_COLORS[k]}'>{html.escape(SHORT_LABELS[k])}</td>"
        + (f"<td {cell} colspan=2>ウィンドウに載らない</td></tr>" if math.isnan(cost) else
           f"<td {cell}>{'<b>' if k == res['cheapest'] else ''}${cost:,.0f}{'</b>' if k == res['cheapest'] else ''}</td>"
           f"<td {cell}>{ttft:.1f} s</td></tr>")
        for k, cost, ttft in rows)
    usage = res["window_usage"]
    verdict = ("50% 以下: 前提を満たす" if res["within_half_window"]
               else "50% 超: 前提を満たさない" if res["fits_window"] else "ウィンドウに載らない")
    cross = res["crossover_tokens"]
    cross_txt = "交差しない" if cross is None else f"{cross:,.0f} tok から RAG が安い"
    ttft_ok = res["ttft_long_context_s"] <= crossover.TTFT_LIMIT_S
    if not res["fits_window"]:
        return (
            "<div class='mathjax_ignore tex2jax_ignore' style='font-size:12px;line-height:1.6'>"
            "<table style='font-size:12px;border-collapse:collapse'>"
            f"<tr><th></th><th {cell}>月額</th><th {cell}>TTFT</th></tr>{body}</table>"
            f"コンテキスト使用率: <b>{usage:.1%}</b>（{verdict}）<br>"
            f"{html.escape(res['window_error'])}<br>"
            f"交点: {cross_txt}（ウィンドウの内側で）</div>"
        )
    return (
        "<div class='mathjax_ignore tex2jax_ignore' style='font-size:12px;line-height:1.6'>"
        "<table style='font-size:12px;border-collapse:collapse'>"
        f"<tr><th></th><th {cell}>月額</th><th {cell}>TTFT</th></tr>{body}</table>"
        f"TTL {res['ttl']}（{'安いほうを自動で選択' if res['ttl_auto'] else '指定'}）・"
        f"ヒット率 {res['hit_rate']:.0%}（{'04 のトラフィックから' if res['hit_rate_from_traffic'] else '固定'}）・"
        f"使い分けの記事の前提（TTL 5 分・80%）ならロングコンテキスト ${res['monthly_long_context_article']:,.0f}<br>"
        f"キャッシュなしのロングコンテキスト: ${res['monthly_long_context_no_cache']:,.0f}<br>"
        f"コンテキスト使用率: <b>{usage:.1%}</b>（{verdict}）<br>"
        f"ロングコンテキストの TTFT: {'3 秒以内' if ttft_ok else '3 秒超'}<br>"
        f"交点: {cross_txt}<br>"
        "<span style='color:gray'>太字は最も安い方式。TTFT はキャッシュが温まった状態（RAG は検索込み）の"
        "シミュレーションで、実測ではない</span></div>"
    )


class _Widget(TextFallback):
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
        """Lay the figure out once, mark the moving artists, draw the first frame; add the restart note."""
        self.widget.add_class(LIVE_CLASS)
        self.widget.children = (W.HTML(RESTART_NOTE),) + tuple(self.widget.children)
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
        # wraps: on a narrow page (the site's column) the numbers go under the figure instead of into a sliver
        return (f"<div style='display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start'>"
                f"<img style='max-width:100%' src='data:image/png;base64,{png}'/>"
                f"<div style='min-width:18em'>{self.numbers.value}</div></div>")

    def fallback_html(self) -> str:
        # the live widget, with static fallbacks for front ends that cannot render widgets
        return self.static_html()

    def fallback_text(self) -> str:
        """What a front end without widgets shows: the numbers and how to move the controls from code."""
        name = type(self).__name__
        first = next(iter(self.controls))
        return (f"{name}\n" + html_to_text(self.numbers.value) + "\n\n"
                + how_to("sim", [f"sim.set({first}={self.controls[first].value!r})   # 操作: {', '.join(self.controls)}",
                                 "sim.result   # 表示している数値", "sim.state    # いまの設定"]))


class CrossoverSimulator(_Widget):
    """The usage article's "Move the line": move the traffic and the documents, watch the paths cross.

    Controls: document volume (tokens), questions per day, where the cache hit rate comes from
    (``hit_mode``: ``"traffic"``, lesson 04's traffic model for the questions a day, or
    ``"fixed"``, the ``hit_rate`` slider), the hit rate, the cache TTL (``"auto"``: the cheaper one
    for the traffic and model, as lesson 04 picks it; or ``"5m"`` / ``"1h"``), model (from
    ``pricing.models()``), RAG chunks, vector DB monthly cost. In ``"traffic"`` mode the slider is disabled and shows the
    rate the model gives. Outputs: the monthly cost of
    long context (with the cache), the metadata filter and RAG (with the DB), the window
    usage, the warm-cache TTFT, and the figure. ``sim.result`` holds the numbers shown.
    """

    def __init__(self, doc_tokens: int = 197_000, questions_per_day: int = 20, hit_rate: float | None = None,
                 model: str = pricing.DEFAULT_MODEL, rag_chunks: int = 8, db_monthly: float = 70.0, ttl: str = "auto", *,
                 base: compare.Profile | None = None, n_files: int = crossover.ARTICLE_FILES,
                 continuous_update: bool = True):
        super().__init__()
        self.base = base or compare.Profile()
        # two columns of controls over the figure fit a notebook 720 px wide (1280 × 720 with the file browser
        # open): the figure starts within the first screen, in view while a slider moves
        style = {"description_width": "118px"}
        lay = W.Layout(width="350px")
        cu = continuous_update
        self.controls = {
            "doc_tokens": W.IntSlider(value=doc_tokens, min=10_000, max=1_500_000, step=1, readout_format=",d",
                                      description="文書量（tok）", continuous_update=cu, style=style, layout=lay),
            "questions_per_day": W.IntSlider(value=questions_per_day, min=1, max=300, step=1,
                                             description="1 日の質問数", continuous_update=cu, style=style, layout=lay),
            "hit_mode": W.ToggleButtons(options=[("トラフィックから", "traffic"), ("固定", "fixed")],
                                        value="traffic" if hit_rate is None else "fixed",
                                        description="ヒット率の決め方", style=style, layout=lay),
            "hit_rate": W.FloatSlider(value=compare.ARTICLE_HIT_RATE if hit_rate is None else hit_rate,
                                      min=0.0, max=1.0, step=0.01, readout_format=".0%",
                                      description="キャッシュヒット率", continuous_update=cu, style=style, layout=lay),
            "ttl": W.ToggleButtons(options=[("自動", "auto"), ("5 分", "5m"), ("1 時間", "1h")], value=ttl,
                                   description="キャッシュの TTL", layout=lay,
                                   style={**style, "button_width": "70px"}),   # three in one row
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
            W.HBox([W.VBox(list(self.controls.values())[:5]), W.VBox(list(self.controls.values())[5:])], layout=wrap),
            W.HBox([self.image, self.numbers], layout=wrap),
        ])
        self._watch()
        self._update_artists()
        self._finish_layout()

    def summary(self) -> str:
        """The numbers the widget shows, as the lines a cell prints (a path the window cannot hold has no price:
        it reads 「ウィンドウに載らない」, never $nan)."""
        r = self.result

        def usd(v):
            return "ウィンドウに載らない" if math.isnan(v) else f"${v:,.0f}"

        return "\n".join([
            f"{r['model']}・1 日 {r['questions_per_day']:g} 問・ヒット率 {r['hit_rate']:.0%}"
            f"（{'トラフィックから' if r['hit_rate_from_traffic'] else '固定'}）・文書 {r['doc_tokens']:,} tokens",
            f"月額: ロングコンテキスト {usd(r['monthly_long_context'])}  絞り込み {usd(r['monthly_filter'])}  "
            f"RAG {usd(r['monthly_rag'])}（最も安いのは {crossover.PATHS[r['cheapest']]}）",
            f"ウィンドウ使用率 {r['window_usage']:.1%}、TTFT（キャッシュ時）"
            + ("なし（ウィンドウに載らない）" if math.isnan(r["ttft_long_context_s"]) else f"{r['ttft_long_context_s']:.1f} 秒"),
            "交点: " + ("なし" if r["crossover_tokens"] is None else f"{r['crossover_tokens']:,.0f} tokens"),
        ])

    def set(self, **values):
        """As :meth:`_Widget.set`; setting ``hit_rate`` without ``hit_mode`` also switches to "fixed"."""
        if "hit_rate" in values and "hit_mode" not in values:
            values = {"hit_mode": "fixed", **values}
        return super().set(**values)

    @property
    def profile(self) -> compare.Profile:
        """The profile the controls describe (the rest from ``base``)."""
        s = self.state
        fixed = s["hit_mode"] == "fixed"
        fields = {**self.base.__dict__, "model": s["model"], "hit_rate": float(s["hit_rate"]) if fixed else None,
                  "ttl": s["ttl"],
                  "questions_per_month": s["questions_per_day"] * crossover.DAYS_PER_MONTH,
                  "rag_chunks": s["rag_chunks"], "db_monthly": float(s["db_monthly"])}
        return compare.Profile(**fields)

    def _update_artists(self):
        self.result = self.plot.update(self.controls["doc_tokens"].value, self.profile)
        slider = self.controls["hit_rate"]
        slider.disabled = self.result["hit_rate_from_traffic"]
        if slider.disabled and abs(slider.value - self.result["hit_rate"]) > 1e-9:
            # show the traffic model's rate on the (disabled) slider without triggering a redraw
            self._holding, was = True, self._holding
            try:
                slider.value = round(self.result["hit_rate"], 2)
            finally:
                self._holding = was
        self.numbers.value = numbers_html(self.result)


class RhoKExplorer(_Widget):
    """The cost article's map as a widget: sliders for w, r, s and the fixed part m0; ``points`` are (label, k, rho) marks."""

    def __init__(self, w: float = 1.25, r: float = 0.1, s: float = 0.02, points=None, *, m0: float = 0.0,
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
            "m0": W.FloatSlider(value=m0, min=0.0, max=0.5, step=0.01, description="固定部分の割合 m0",
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
        self.result = self.plot.update(float(s["w"]), float(s["r"]), float(s["s"]), float(s["m0"]))
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
