"""BM25 search over Japanese texts, built with ``bm25s`` on the course's own tokens.

``bm25s``' own splitter does not split Japanese, so the token ids and the vocabulary of
:func:`ctxlab.retrieval.tokens.tokenize` are passed to it directly.
"""
from __future__ import annotations

from typing import Any, Sequence

from ctxlab.retrieval.chunk import Chunk
from ctxlab.retrieval.tokens import terms

__all__ = ["BM25Index"]


class BM25Index:
    """BM25 over Japanese texts, built with ``bm25s`` on this module's tokens.

    >>> idx = BM25Index(["年次有給休暇は20日まで繰り越せる。", "出張旅費は実費を支給する。"])
    >>> idx.search("有給休暇の繰越", k=1)[0][0]
    0

    ``texts`` are tokenized with :func:`tokenize`; pass ``tokens`` (a list of token lists)
    instead to index your own tokenization. :meth:`search` returns ``(index, score)`` pairs,
    best first, only documents that share at least one term with the query (score > 0),
    ties broken by index.
    """

    def __init__(
        self,
        texts: Sequence[str] | None = None,
        *,
        tokens: Sequence[Sequence[str]] | None = None,
        k1: float = 1.5,
        b: float = 0.75,
        method: str = "lucene",
    ):
        import bm25s
        import numpy as np

        if (texts is None) == (tokens is None):
            raise ValueError("give either texts (strings to tokenize) or tokens (lists of tokens), not both")
        if tokens is None:
            if isinstance(texts, str):
                raise TypeError("texts must be a list of strings, not one string")
            tokens = [terms(t) for t in texts]
        self._np = np
        vocab: dict[str, int] = {}
        ids: list[list[int]] = []
        for toks in tokens:
            row = []
            for t in toks:
                i = vocab.get(t)
                if i is None:
                    i = vocab[t] = len(vocab)
                row.append(i)
            ids.append(row)
        self.n_docs = len(ids)
        self.vocab = vocab
        self._retriever = None
        if self.n_docs:
            if not vocab:  # every document empty: bm25s needs one token
                vocab[""] = 0
            retriever = bm25s.BM25(k1=k1, b=b, method=method)
            retriever.index(bm25s.tokenization.Tokenized(ids=ids, vocab=vocab), show_progress=False)
            self._retriever = retriever

    def __len__(self) -> int:
        return self.n_docs

    @classmethod
    def from_chunks(cls, chunks: Sequence[Chunk], *, contextual: bool = False, **kwargs) -> "BM25Index":
        """Index chunks; with ``contextual=True`` each chunk's :meth:`Chunk.context_header` is prepended."""
        texts = [(c.context_header() + "\n" + c.text) if contextual else c.text for c in chunks]
        return cls(texts, **kwargs)

    def scores(self, query: str | Sequence[str]) -> Any:
        """BM25 score of every document for ``query`` (a string or a token list), as a numpy array."""
        np = self._np
        toks = terms(query) if isinstance(query, str) else list(query)
        if self._retriever is None:
            return np.zeros(0, dtype="float32")
        ids = [self.vocab[t] for t in toks if t in self.vocab]
        if not ids:
            return np.zeros(self.n_docs, dtype="float32")
        return self._retriever.get_scores_from_ids(ids)

    def search(self, query: str | Sequence[str], k: int = 10) -> list[tuple[int, float]]:
        """Top ``k`` documents for ``query`` as ``(index, score)``, best first (score > 0 only)."""
        if not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be a positive int, got {k!r}")
        np = self._np
        scores = self.scores(query)
        if scores.size == 0:
            return []
        positive = np.flatnonzero(scores > 0)
        if positive.size == 0:
            return []
        if positive.size > k:
            part = positive[np.argpartition(-scores[positive], k - 1)[:k]]
            # include every document tied with the k-th score, then sort and cut (stable ties)
            kth = scores[part].min()
            part = positive[scores[positive] >= kth]
        else:
            part = positive
        order = sorted(part.tolist(), key=lambda i: (-float(scores[i]), i))[:k]
        return [(int(i), float(scores[i])) for i in order]
