"""Recall@k of a ranking: the share of the relevant items found in the first k results."""
from __future__ import annotations

from typing import Any, Iterable

__all__ = ["recall_at_k", "mean_recall_at_k"]


def _ids(results: Iterable[Any]) -> list[Any]:
    out = []
    for r in results:
        if isinstance(r, tuple) and len(r) == 2 and isinstance(r[1], (int, float)):
            out.append(r[0])
        else:
            out.append(r)
    return out


def recall_at_k(retrieved: Iterable[Any], relevant: Any, k: int = 20) -> float:
    """Share of the relevant items found in the first ``k`` retrieved ones.

    ``retrieved`` is a ranked list of ids or of ``(id, score)`` pairs (what
    :meth:`BM25Index.search` returns); ``relevant`` is one id or a collection of ids.
    recall@20 = 0.95 means 5% of the relevant chunks were missed (1 - recall@20 is the
    failure rate Anthropic's Contextual Retrieval article reports).
    """
    if not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive int, got {k!r}")
    if isinstance(relevant, (str, int)) or not isinstance(relevant, Iterable):
        relevant = {relevant}
    relevant = set(relevant)
    if not relevant:
        raise ValueError("relevant is empty: recall needs at least one relevant item")
    top = set(_ids(retrieved)[:k])
    return len(top & relevant) / len(relevant)


def mean_recall_at_k(runs: Iterable[tuple[Iterable[Any], Any]], k: int = 20) -> float:
    """Mean recall@k over ``(retrieved, relevant)`` pairs, one per question."""
    values = [recall_at_k(r, rel, k) for r, rel in runs]
    if not values:
        raise ValueError("no questions given")
    return sum(values) / len(values)
