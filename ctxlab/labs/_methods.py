"""Lesson 08's three ways of choosing the documents of a request, and a folder whose files can change.

:class:`LongContext`, :class:`MetadataFilter` and :class:`RAG` differ only in who picks the
documents: nobody (every document, in catalog order), lesson 06's keyword table and fixed
bundles (:func:`ctxlab.labs.metadata_filtering.select`), or BM25 over article chunks. Each
reads a list of documents or a :class:`Folder` (whose files can change, for the freshness
experiment) and turns a question into the keyword arguments of ``client.messages.create``
(:meth:`Method.request`).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Iterable

from ctxlab.api.messages import SYSTEM_PROMPT, question_request
from ctxlab.labs import metadata_filtering
from ctxlab.labs._analysis import edge_order
from ctxlab.retrieval import BM25Index, chunk_by_articles


@dataclass(frozen=True)
class Passage:
    """What a method puts into the request: one document block."""

    file: str
    title: str
    text: str


class Folder:
    """The regulations as they are now, in memory: :meth:`update` simulates editing a file.

    :meth:`docs` reads the folder (a fresh list each time). A method built on the folder
    reads it on every question; a method built on ``folder.docs()`` read it once, at
    start-up, and keeps what it read.
    """

    def __init__(self, docs: Iterable):
        self._docs = list(docs)
        if not self._docs:
            raise ValueError("a folder needs at least one document")
        #: how many updates the folder has seen
        self.version = 0

    def docs(self) -> list:
        return list(self._docs)

    def __len__(self) -> int:
        return len(self._docs)

    def update(self, file: str, text: str):
        """Replace the text of ``file`` (as if someone saved a new revision); returns the new document."""
        for i, d in enumerate(self._docs):
            if d.file == file:
                if not isinstance(text, str) or not text.strip():
                    raise ValueError("the new text is empty")
                self._docs[i] = dataclasses.replace(d, text=text)
                self.version += 1
                return self._docs[i]
        raise KeyError(f"{file}: not in the folder")


def _read(source) -> list:
    return source.docs() if isinstance(source, Folder) else list(source)


def _passages(docs) -> list[Passage]:
    return [Passage(d.file, getattr(d, "label", None) or d.title, d.text) for d in docs]


class Method:
    """A way of choosing the documents for a question. Subclasses implement :meth:`select`."""

    name = "method"
    label = "method"
    #: cache the documents (they repeat between questions) or not (they change every question)
    cache_ttl: str | None = "5m"

    def select(self, question: str) -> list[Passage]:  # pragma: no cover - abstract
        raise NotImplementedError

    def request(self, question: str, *, model: str, max_tokens: int) -> tuple[dict, list[Passage]]:
        """Keyword arguments for ``client.messages.create`` and the passages they carry."""
        passages = self.select(question)
        if not passages:  # nothing selected: ask without documents
            req = {"model": model, "max_tokens": max_tokens, "system": SYSTEM_PROMPT,
                   "messages": [{"role": "user", "content": [{"type": "text", "text": question}]}]}
            return req, passages
        return question_request(passages, question, model=model, max_tokens=max_tokens,
                                cache_ttl=self.cache_ttl), passages

    def sees(self, text: str, question: str) -> bool:
        """Whether ``text`` is in what this method would send for ``question`` (e.g. an updated rule)."""
        return any(text in p.text for p in self.select(question))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class LongContext(Method):
    """Every document, in catalog order (a stable prefix: the cache stays warm).

    ``source`` is a :class:`Folder` (read again on every question) or a list of documents
    (read once: later edits of the folder are not seen).
    """

    label = "ロングコンテキスト"

    def __init__(self, source, name: str = "long_context"):
        self.source = source
        self.name = name
        self.reads_every_question = isinstance(source, Folder)

    def select(self, question: str) -> list[Passage]:
        return _passages(_read(self.source))


def _versions(file: str, by: dict) -> list:
    """The document of ``file`` in a folder, preceded by the older versions of it the folder also holds."""
    out = []
    while file in by:
        out.insert(0, by[file])
        file = getattr(by[file], "supersedes", None)
    return out


class MetadataFilter(Method):
    """Lesson 06's filter, :func:`ctxlab.labs.metadata_filtering.select`, reading ``source``.

    Its keyword table picks one fixed bundle (at most ``MAX_DOCS`` current files in catalog
    order); a question without a dictionary word gets the fallback bundle (全社共通). The
    bundle names the files; the documents come from ``source`` (a list or a :class:`Folder`).
    When ``source`` also holds superseded versions of a bundle's file (a folder without version
    management), each is sent right before its successor, as a filter on such a folder would.
    On the current files the method sends exactly ``select(question).files``; the same bundle
    is the same prefix, so the cache stays warm per bundle.
    """

    label = "メタデータで絞る"

    def __init__(self, source, name: str = "filter"):
        self.source = source
        self.name = name

    def select(self, question: str) -> list[Passage]:
        by = {d.file: d for d in _read(self.source)}
        return _passages([d for f in metadata_filtering.select(question).files for d in _versions(f, by)])


class RAG(Method):
    """BM25 over article chunks of about ``chunk_tokens`` tokens; the top ``k`` chunks.

    The index is built when the method is created (like a RAG service that indexes at
    start-up or in a nightly batch): edits of the folder are not seen until :meth:`reindex`.
    Chunks change with every question, so nothing is cached. ``order="edge"`` sends them
    strongest first and second strongest last (:func:`ctxlab.labs._analysis.edge_order`);
    ``"rank"`` (the default) sends them best first.
    """

    label = "RAG（BM25・上位チャンク）"
    cache_ttl = None

    def __init__(self, source, k: int = 8, chunk_tokens: int = 800, name: str = "rag", order: str = "rank"):
        if not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be a positive int, got {k!r}")
        if order not in ("rank", "edge"):
            raise ValueError(f"order must be 'rank' or 'edge', got {order!r}")
        self.order = order
        self.source = source
        self.k = k
        self.chunk_tokens = chunk_tokens
        self.name = name
        self.label = f"RAG（BM25・上位 {k} チャンク）"
        self.reindex()

    def reindex(self) -> None:
        """Read the source again and rebuild the chunks and the index."""
        docs = _read(self.source)
        self.chunks = [c for d in docs for c in chunk_by_articles(d.text, self.chunk_tokens, doc_id=d.file,
                                                                  title=getattr(d, "label", None) or d.title)]
        self.index = BM25Index.from_chunks(self.chunks)
        self.indexed_version = self.source.version if isinstance(self.source, Folder) else 0

    @property
    def behind(self) -> int:
        """How many folder updates the index has not seen yet."""
        return (self.source.version - self.indexed_version) if isinstance(self.source, Folder) else 0

    def select(self, question: str) -> list[Passage]:
        hits = self.index.search(question, k=self.k)
        if self.order == "edge":
            hits = edge_order(hits)
        return [Passage(self.chunks[i].doc_id, self.chunks[i].context_header(), self.chunks[i].text) for i, _ in hits]


__all__ = ["Passage", "Folder", "Method", "LongContext", "MetadataFilter", "RAG"]
