"""What a widget shows where widgets cannot render: its content as text, and how to drive it from code.

A front end without a widget manager (a viewer, an HTML export, an editor without the
widget extension, a terminal) shows a display's ``text/plain``, which for an ipywidgets
box is ``VBox(children=(...))``. Every course widget puts its own text there instead: what
the widget shows now, then the calls that do what its buttons and sliders do.
"""
from __future__ import annotations

NO_WIDGETS = "（ウィジェットを表示できない画面では、次のようにコードで操作できます）"


def how_to(name: str, calls: list[str]) -> str:
    """The fallback's last lines: the calls that work without a widget front end.
    ``name`` is the variable that holds the widget (assign it first when the cell shows it
    without one)."""
    lines = [NO_WIDGETS, f"  {name} = …（このセルの式を変数に入れる）"]
    lines += [f"  {call}" for call in calls]
    return "\n".join(lines)


def mimebundle(widget, text: str, html: str | None = None, **kwargs) -> dict:
    """The widget's display data with ``text`` as its ``text/plain`` (and ``html`` as its
    ``text/html`` when given): JupyterLab still draws the live widget."""
    data = dict(widget._repr_mimebundle_(**kwargs) or {})
    data["text/plain"] = text
    if html is not None:
        # JupyterLab typesets an HTML output: two "$" amounts would turn the words between them into math
        data["text/html"] = f'<div class="mathjax_ignore tex2jax_ignore">{html}</div>'
    return data


class TextFallback:
    """Display for a course widget: the live ``self.widget`` where a widget manager draws it,
    ``fallback_text()`` (and ``fallback_html()``, when not None) everywhere else, and as repr."""

    def fallback_text(self) -> str:
        raise NotImplementedError

    def fallback_html(self) -> str | None:
        return None

    def _repr_mimebundle_(self, **kwargs):
        return mimebundle(self.widget, self.fallback_text(), self.fallback_html(), **kwargs)

    def __repr__(self) -> str:
        return self.fallback_text()


def html_to_text(markup: str) -> str:
    """The text of a small HTML fragment (line breaks at ``<br>``, rows and blocks)."""
    import html
    import re

    text = re.sub(r"<br\s*/?>|</(?:tr|div|p|li|h\d)>", "\n", markup, flags=re.I)
    text = re.sub(r"</t[dh]>", "  ", text, flags=re.I)
    text = html.unescape(re.sub(r"<[^>]+>", "", text))
    return "\n".join(line.strip() for line in text.splitlines() if line.strip())
