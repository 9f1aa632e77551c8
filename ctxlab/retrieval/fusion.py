"""Rank fusion: several rankings of the same items into one (reciprocal rank fusion).

Lesson 10 fuses a morphological BM25 ranking with a character-bigram one; the lesson's
exercise writes the same function, and the lab (``Lab.recall_with``) takes either.
"""
from __future__ import annotations

from typing import Iterable, Sequence

__all__ = ["rrf"]


def rrf(rankings: Iterable[Sequence], k: int = 60) -> list:
    """Reciprocal rank fusion (Cormack et al., 2009): score(d) = sum over rankings of 1 / (k + rank).

    ``rank`` counts from 1. An item missing from a ranking gets nothing from it. Ties
    keep the order in which the items first appear (reading the rankings in turn).
    """
    if isinstance(k, bool) or not isinstance(k, (int, float)) or k < 0:
        raise ValueError(f"k must be a number >= 0, got {k!r}")
    score: dict = {}
    for ranking in rankings:
        seen = set()
        for rank, item in enumerate(ranking, start=1):
            if item in seen:
                continue
            seen.add(item)
            score[item] = score.get(item, 0.0) + 1.0 / (k + rank)
    order = {item: i for i, item in enumerate(score)}
    return sorted(score, key=lambda item: (-score[item], order[item]))
