"""A table that reads right in a terminal and in JupyterLab.

Text tables padded by display width drift out of column in the browser: its font does not give a
full-width character exactly two half-width columns. :class:`Table` keeps one set of cells and
renders them twice: ``str()`` pads them by display width (``_text.pad``) for the CLI and ``print``,
``_repr_html_`` writes an HTML table (every cell escaped) that the notebook lays out itself: numbers
right-aligned in tabular figures, the source as the caption, the lines that read the table (``summary``)
under it, and the notes and assumptions folded into a ``<details>`` a learner opens when they want them.
A lesson shows a table by leaving it as a cell's last value (or ``display(t)``), never ``print(t)``.
"""
from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any, Sequence

from ctxlab import _text


#: a header or a label cell wider than this (in half-width columns) may wrap in HTML
WRAP_HEADER_OVER = 12


def _cell(v: Any) -> str:
    return "" if v is None else str(v)


@dataclass
class Table:
    """Rows of cells under ``columns``; ``align`` is "l" or "r" per column (numbers right by default)."""

    columns: Sequence[str]
    rows: Sequence[Sequence[Any]]
    caption: str | None = None
    align: Sequence[str] | None = None
    notes: list[str] = field(default_factory=list)
    #: lines above the table (what was measured), and below it (what the table says)
    intro: list[str] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)
    #: the label of the folded notes in HTML
    notes_label: str = "注と前提"

    def __post_init__(self):
        self.columns = [_cell(c) for c in self.columns]
        self.rows = [[_cell(v) for v in row] for row in self.rows]
        for i, row in enumerate(self.rows):
            if len(row) != len(self.columns):
                raise ValueError(f"row {i} has {len(row)} cells, the table has {len(self.columns)} columns")
        if self.align is None:
            self.align = [self._guess(j) for j in range(len(self.columns))]
        if len(self.align) != len(self.columns) or any(a not in ("l", "r") for a in self.align):
            raise ValueError(f"align must give 'l' or 'r' for each of the {len(self.columns)} columns")

    def _guess(self, j: int) -> str:
        cells = [row[j] for row in self.rows if row[j]]
        numeric = cells and all(c.lstrip("$-+").replace(",", "").replace(".", "", 1).rstrip("%xs×")[:1].isdigit()
                                for c in cells)
        return "r" if numeric else "l"

    def __str__(self) -> str:
        widths = [max([_text.width(c)] + [_text.width(row[j]) for row in self.rows])
                  for j, c in enumerate(self.columns)]

        def line(cells):
            return "  ".join(_text.pad(c, w, a == "r") for c, w, a in zip(cells, widths, self.align)).rstrip()

        out = list(self.intro) + [line(self.columns), "  ".join("-" * w for w in widths)]
        out += [line(row) for row in self.rows]
        out += ([self.caption] if self.caption else []) + list(self.summary)   # the source under the table, as in HTML
        out += [f"注: {n}" for n in self.notes]
        return "\n".join(out)

    def _repr_html_(self) -> str:
        def style(a):
            return (' style="text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap"' if a == "r"
                    else ' style="text-align:left"')

        def para(lines):
            return "".join(f'<p style="margin:0.2em 0">{html.escape(t)}</p>' for t in lines)

        def header(c, a):
            # a long header may wrap (on one line it would widen its column past its cells'); a short one and the
            # cells' numbers do not
            st = style(a) if _text.width(c) <= WRAP_HEADER_OVER else style(a).replace(";white-space:nowrap", "")
            return f"<th{st}>{html.escape(c)}</th>"

        head = "".join(header(c, a) for c, a in zip(self.columns, self.align))
        def cell(v, a):
            # a short label stays on one line (「1 時間」 broke after 「時」 in a narrow last column); a long one may wrap
            st = style(a) if a == "r" or _text.width(v) > WRAP_HEADER_OVER else ' style="text-align:left;white-space:nowrap"'
            return f"<td{st}>{html.escape(v)}</td>"

        body = "".join("<tr>" + "".join(cell(v, a) for v, a in zip(row, self.align)) + "</tr>" for row in self.rows)
        cap = (f'<caption style="caption-side:bottom;text-align:left;font-size:0.9em;color:#555">'
               f"{html.escape(self.caption)}</caption>" if self.caption else "")
        notes = ""
        if self.notes:
            items = "".join(f"<li>{html.escape(n)}</li>" for n in self.notes)
            notes = (f'<details style="font-size:0.9em"><summary>{html.escape(self.notes_label)}'
                     f"（{len(self.notes)} 件）</summary><ul>{items}</ul></details>")
        # JupyterLab's MathJax 3 (mathjax_ignore) and MathJax 2 on a site (tex2jax_ignore) would read the text
        # between two "$" of a line as math
        return (f'<div class="ctxlab-table mathjax_ignore tex2jax_ignore">{para(self.intro)}<table>{cap}'
                f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{para(self.summary)}{notes}</div>")

    def __repr__(self) -> str:
        return str(self)
