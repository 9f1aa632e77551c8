"""Lesson 07's figure: where the citations of an answer fall in each document."""
from __future__ import annotations

from typing import Any, Iterable, Sequence

import matplotlib.pyplot as plt

import ctxlab.plots  # noqa: F401  (Japanese font)
from ctxlab.api.messages import doc_name, doc_text, field_of as _get


def citation_map(docs: Sequence[Any], cites: Iterable[Any], ax=None, *, boundaries: Iterable[int] = (),
                      title: str | None = None, names: Sequence[str] | None = None):
    """One bar per document (its length in characters) with the cited ranges marked.

    ``boundaries`` draws dotted lines at those offsets (e.g. where the files of a bundle
    begin, which only one's own bookkeeping knows). Returns the axes.
    """
    docs = list(docs)
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 0.45 * len(docs) + 1))
    labels = list(names) if names is not None else [doc_name(d) for d in docs]
    lengths = [len(doc_text(d)) for d in docs]
    ys = list(range(len(docs)))[::-1]
    ax.barh(ys, lengths, color="#e7e6e6", height=0.6)
    for c in cites:
        k = _get(c, "document_index")
        a, b = _get(c, "start_char_index"), _get(c, "end_char_index")
        if k is None or a is None or not 0 <= k < len(docs):
            continue
        ax.barh(ys[k], max(b - a, max(lengths) / 400), left=a, color="#c00000", height=0.6)
    for x in boundaries:
        ax.axvline(x, color="#7f7f7f", ls=":", lw=0.8)
    ax.set_yticks(ys)
    ax.set_yticklabels(labels, fontsize=8)
    ax.set_xlim(0, max(lengths) * 1.01)
    ax.set_xlabel("文書の中の文字位置")
    if title:
        ax.set_title(title, fontsize=10)
    return ax
