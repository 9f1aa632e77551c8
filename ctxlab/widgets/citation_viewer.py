"""A citation viewer: the cited range highlighted in the original file.

::

    from ctxlab.widgets.citation_viewer import CitationViewer
    viewer = CitationViewer(citations.collect(resp), docs)
    viewer = CitationViewer.from_responses([resp1, resp2], docs, questions=[q1, q2])  # each citation's question shown
    viewer                    # in JupyterLab: a dropdown, ◀ ▶ buttons and the highlighted text
    viewer.select(2)          # the state lives in the kernel: viewer.index, viewer.current, viewer.html

The text around the citation is shown with ``<mark>`` around ``[start, end)``; all
document text is HTML-escaped. :func:`highlight_html` is the pure function behind it (no
widget needed). Headless (nbclient, nbgrader) the viewer displays without waiting; where
no widget manager runs (nbconvert, a static renderer) the display falls back to the same
HTML as a static snapshot of the current citation.
"""
from __future__ import annotations

import html
from typing import Any, Sequence

import ipywidgets as widgets

from ctxlab.api.messages import doc_name, doc_text, field_of as _get
from ctxlab.labs.citations import collect
from ctxlab.widgets._fallback import TextFallback, how_to, html_to_text

__all__ = ["highlight_html", "CitationViewer", "MARK_STYLE"]

MARK_STYLE = "background:#ffd54f;color:#000;padding:0 1px;border-radius:2px;font-weight:600"
_BOX_STYLE = ("white-space:pre-wrap;line-height:1.7;border:1px solid #ccc;border-radius:4px;padding:8px 10px;"
              "max-height:22em;overflow:auto;font-family:inherit;background:#fff;color:#222")


def highlight_html(text: str, start: int, end: int, *, context: int = 160, heading: str | None = None,
                   note: str | None = None) -> str:
    """HTML of ``text`` around ``[start, end)`` with that range inside ``<mark>``.

    ``context`` characters are shown on each side (an ellipsis marks a cut). Everything is
    escaped, so a document that contains ``<`` or ``&`` shows them as text. A range outside
    the text raises ValueError.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if not (isinstance(start, int) and isinstance(end, int)) or not 0 <= start <= end <= len(text):
        raise ValueError(f"range [{start}, {end}) is outside the text's {len(text)} characters")
    if context < 0:
        raise ValueError("context must be >= 0")
    a, b = max(0, start - context), min(len(text), end + context)
    before = ("…" if a > 0 else "") + html.escape(text[a:start])
    after = html.escape(text[end:b]) + ("…" if b < len(text) else "")
    body = f'{before}<mark style="{MARK_STYLE}">{html.escape(text[start:end])}</mark>{after}'
    out = []
    if heading:
        out.append(f'<div style="margin:2px 0 4px 0;font-weight:600">{html.escape(heading)}</div>')
    if note:
        out.append(f'<div style="margin:2px 0 4px 0;color:#b00020">{html.escape(note)}</div>')
    out.append(f'<div class="ctxlab-citation" style="{_BOX_STYLE}">{body}</div>')
    return "".join(out)


class CitationViewer(TextFallback):
    """Step through citations and see each cited range highlighted in its document.

    ``cites`` are citation objects (``char_location``) of one or more responses to requests
    that sent ``docs`` in this order (``document_index`` indexes ``docs``). State lives in
    the kernel: :attr:`index`, :attr:`current`, :attr:`html`; :meth:`select`, :meth:`next`
    and :meth:`prev` move it, as the dropdown and buttons do.
    """

    def __init__(self, cites: Sequence[Any], docs: Sequence[Any], *, context: int = 160,
                 questions: Sequence[str] | None = None):
        self.cites = list(cites)
        self.docs = list(docs)
        if questions is not None and len(questions) != len(self.cites):
            raise ValueError(f"questions holds {len(questions)} labels for {len(self.cites)} citations: "
                             "give one question per citation (CitationViewer.from_responses does it for you)")
        self.questions = list(questions) if questions is not None else None
        self.context = context
        self.index = 0
        options = [(self._option_label(i, c), i) for i, c in enumerate(self.cites)]
        self.dropdown = widgets.Dropdown(options=options or [("（引用なし）", -1)], description="引用",
                                         layout=widgets.Layout(width="70%"))
        self.prev_button = widgets.Button(description="◀ 前", layout=widgets.Layout(width="70px"))
        self.next_button = widgets.Button(description="次 ▶", layout=widgets.Layout(width="70px"))
        self.view = widgets.HTML()
        self.widget = widgets.VBox([widgets.HBox([self.dropdown, self.prev_button, self.next_button]), self.view])
        disabled = not self.cites
        self.dropdown.disabled = self.prev_button.disabled = self.next_button.disabled = disabled
        self.dropdown.observe(self._on_pick, names="value")
        self.prev_button.on_click(lambda _: self.prev())
        self.next_button.on_click(lambda _: self.next())
        self._redraw()

    @classmethod
    def from_responses(cls, responses: Sequence[Any], docs: Sequence[Any], *, questions: Sequence[str],
                       context: int = 160) -> "CitationViewer":
        """A viewer over the citations of several responses, each citation labelled with the
        question its response answered (``questions[i]`` for ``responses[i]``)."""
        if len(questions) != len(responses):
            raise ValueError(f"{len(responses)} responses but {len(questions)} questions: one question per response")
        cites, labels = [], []
        for resp, q in zip(responses, questions):
            found = collect(resp)
            cites += found
            labels += [q] * len(found)
        return cls(cites, docs, context=context, questions=labels)

    @property
    def question(self) -> str | None:
        """The question whose answer carries the citation shown now (None when not given)."""
        return self.questions[self.index] if self.questions and self.cites else None

    # -- labels and HTML ---------------------------------------------------
    def _option_label(self, i: int, c: Any) -> str:
        k = _get(c, "document_index")
        name = doc_name(self.docs[k]) if isinstance(k, int) and 0 <= k < len(self.docs) else f"文書 {k}"
        q = f"Q{self._question_number(i)} " if self.questions else ""
        return f"{i + 1}. {q}{name}  文字 {_get(c, 'start_char_index')}–{_get(c, 'end_char_index')}"

    def _question_number(self, i: int) -> int:
        """1-based number of citation ``i``'s question among the distinct questions, in order."""
        order = list(dict.fromkeys(self.questions))
        return order.index(self.questions[i]) + 1

    def html_for(self, i: int) -> str:
        """The HTML the viewer shows for citation ``i`` (contains ``<mark>`` when the range is valid)."""
        if not self.cites:
            return '<div style="color:#555">引用がありません（citations を有効にしたリクエストの応答を渡してください）。</div>'
        c = self.cites[i]
        k = _get(c, "document_index")
        start, end = _get(c, "start_char_index"), _get(c, "end_char_index")
        heading = f"[{i + 1}/{len(self.cites)}] "
        if self.questions:
            heading = f"Q{self._question_number(i)}「{self.questions[i]}」の回答の引用 " + heading
        if not isinstance(k, int) or not 0 <= k < len(self.docs):
            return (f'<div style="color:#b00020">{html.escape(heading)}document_index={html.escape(str(k))} '
                    f"に当たる文書がありません（リクエストで送った文書は {len(self.docs)} 件）。</div>")
        doc = self.docs[k]
        text = doc_text(doc)
        title = _get(c, "document_title") or doc_name(doc)
        heading += f"{title}  文字 {start}–{end}（{doc_name(doc)}）"
        if not (isinstance(start, int) and isinstance(end, int)) or not 0 <= start <= end <= len(text):
            return (f'<div style="font-weight:600">{html.escape(heading)}</div><div style="color:#b00020">'
                    f"この範囲は文書（{len(text)} 字）の外です。文書が送ったときと同じか確かめてください。</div>")
        cited = _get(c, "cited_text")
        note = None
        if cited is not None and cited != text[start:end]:
            note = "cited_text が原文のこの範囲と一致しません（文書が送ったときから変わった可能性があります）。"
        return highlight_html(text, start, end, context=self.context, heading=heading, note=note)

    @property
    def html(self) -> str:
        """The HTML shown now."""
        return self.view.value

    @property
    def current(self) -> Any:
        """The citation shown now (None when there is none)."""
        return self.cites[self.index] if self.cites else None

    # -- state changes -----------------------------------------------------
    def select(self, i: int) -> "CitationViewer":
        """Show citation ``i`` (0-based); returns the viewer so a cell can display it."""
        if not self.cites:
            return self
        if not isinstance(i, int) or not 0 <= i < len(self.cites):
            raise IndexError(f"citation {i!r} does not exist (0..{len(self.cites) - 1})")
        self.dropdown.value = i  # triggers _on_pick when it changes
        if self.index != i:
            self.index = i
            self._redraw()
        return self

    def next(self) -> "CitationViewer":
        return self.select((self.index + 1) % len(self.cites)) if self.cites else self

    def prev(self) -> "CitationViewer":
        return self.select((self.index - 1) % len(self.cites)) if self.cites else self

    def _on_pick(self, change) -> None:
        new = change["new"]
        if isinstance(new, int) and 0 <= new < len(self.cites) and new != self.index:
            self.index = new
            self._redraw()

    def _redraw(self) -> None:
        self.view.value = self.html_for(self.index)
        if self.cites:
            self.prev_button.disabled = self.next_button.disabled = len(self.cites) < 2

    # -- display -------------------------------------------------------------
    def fallback_html(self) -> str:
        # a static snapshot for renderers without a widget manager; JupyterLab prefers the widget
        return self.html

    def fallback_text(self) -> str:
        """What a front end without widgets shows: the citation on screen and how to move from code."""
        head = f"CitationViewer: 引用 {len(self.cites)} 件、{self.index + 1} 件目を表示" if self.cites else \
            "CitationViewer: 引用はありません"
        return head + "\n" + html_to_text(self.html) + "\n\n" + how_to("viewer", [
            "viewer.select(1)   # 1 番目（0 から）の引用", "viewer.next() / viewer.prev()", "print(viewer)"])
