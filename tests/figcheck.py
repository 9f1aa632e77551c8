"""Overlaps in a rendered matplotlib figure: text on text, and a plotted line through a label.

:func:`overlaps` reads a drawn figure; :func:`install` (run inside a lesson's kernel by
tests/test_figure_overlaps.py) checks every figure the kernel renders, in the inline backend's
``print_figure``, and keeps what it found in :data:`FOUND`.
"""
from __future__ import annotations

import json

FOUND: list[dict] = []
#: boxes may touch; they overlap when the shared area is wider and taller than this (pixels at 100 dpi)
SLACK = 1.5
#: the least space between two tick labels of one axis (pixels)
TICK_GAP = 4


def _tick_labels(fig):
    """(every tick label, the ones drawn): an axis keeps Text objects for ticks outside its view, not drawn."""
    every, drawn = set(), []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                every.update((tick.label1, tick.label2))
            if ax.get_visible() and axis.get_visible():
                for tick in axis._update_ticks():   # what Axis.draw draws
                    drawn += [lab for lab in (tick.label1, tick.label2) if lab.get_visible()]
    return every, drawn


def _texts(fig, renderer):
    from matplotlib.text import Text

    every, drawn = _tick_labels(fig)
    out = []
    for t in [t for t in fig.findobj(Text) if t not in every] + drawn:
        if not t.get_visible() or not t.get_text().strip() or t.get_alpha() == 0:
            continue
        ax = t.axes
        if ax is not None and not ax.get_visible():
            continue
        bb = t.get_window_extent(renderer)
        if bb.width < 1 or bb.height < 1:
            continue
        # a tick label outside the axis' view limits is not drawn
        if t.get_clip_on() and ax is not None and not bb.overlaps(ax.bbox):
            continue
        out.append((t, bb))
    return out


def _covers(t, line) -> bool:
    """A label drawn over the line on an opaque box: the line passes under it, hidden, and the text stays readable."""
    from matplotlib.colors import to_rgba

    patch = t.get_bbox_patch()
    return (patch is not None and to_rgba(patch.get_facecolor())[3] >= 0.99
            and t.get_zorder() > line.get_zorder())


def _overlap(a, b) -> bool:
    w = min(a.x1, b.x1) - max(a.x0, b.x0)
    h = min(a.y1, b.y1) - max(a.y0, b.y0)
    return w > SLACK and h > SLACK


def _label(t) -> str:
    return " ".join(t.get_text().split())[:40]


def overlaps(fig) -> list[str]:
    """What overlaps in ``fig``: pairs of texts whose boxes share area, and annotation texts a line runs through."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    texts = _texts(fig, renderer)
    _, drawn = _tick_labels(fig)
    axis_of = {id(lab): id(lab.get_transform()) for lab in drawn}
    found = []
    for i, (a, ba) in enumerate(texts):
        for b, bb in texts[i + 1:]:
            if _overlap(ba, bb):
                found.append(f"text「{_label(a)}」 overlaps text「{_label(b)}」")
            # two tick labels of one axis closer than TICK_GAP read as one word (「単一ファイル複数ファイル」)
            elif (id(a) in axis_of and axis_of[id(a)] == axis_of.get(id(b))
                  and _overlap(ba.padded(TICK_GAP / 2), bb.padded(TICK_GAP / 2))):
                found.append(f"tick labels「{_label(a)}」and「{_label(b)}」run together")
    for ax in fig.axes:
        labels = [(t, bb) for t, bb in texts if t.axes is ax and (t in ax.texts or t in getattr(ax, "_children", []))]
        for line in ax.lines:
            if not line.get_visible() or line.get_linestyle() in ("None", "none", " ", "") or len(line.get_xdata()) < 2:
                continue
            path = line.get_transform().transform_path(line.get_path())
            for t, bb in labels:
                if _covers(t, line):
                    continue
                shrunk = bb.padded(-2)
                if shrunk.width > 0 and shrunk.height > 0 and path.intersects_bbox(shrunk, filled=False):
                    found.append(f"line「{line.get_label()}」 runs through text「{_label(t)}」")
    return found


def install() -> None:
    """Check every figure the kernel renders (the inline backend prints each one through print_figure)."""
    from matplotlib.backend_bases import FigureCanvasBase

    original = FigureCanvasBase.print_figure

    def checked(self, *args, **kwargs):
        fig = self.figure
        if not getattr(fig, "_overlap_checked", False):
            fig._overlap_checked = True
            title = " / ".join(filter(None, [fig._suptitle.get_text() if fig._suptitle else ""]
                                      + [ax.get_title() for ax in fig.axes]))[:80]
            FOUND.append({"figure": title, "overlaps": overlaps(fig)})
        return original(self, *args, **kwargs)

    FigureCanvasBase.print_figure = checked


def report() -> str:
    return json.dumps(FOUND, ensure_ascii=False)
