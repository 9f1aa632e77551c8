"""The three levels of an answer, one graded answer (:class:`Graded`), and accuracy over a list of levels."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Iterable

from ctxlab.corpus import Question

LEVELS = ("correct", "partial", "wrong")


@dataclass(frozen=True)
class Graded:
    """One answer and its grade. The last three fields say what the method sent."""

    question: Question
    method: str
    answer: str
    level: str
    #: files the method put into the request (RAG: the files of its chunks)
    files: tuple[str, ...] = ()
    #: input tokens of the request (usage: uncached + cache write + cache read)
    input_tokens: int = 0
    #: what the call cost (online) or would have cost (offline), in dollars
    cost_usd: float = 0.0


def accuracy(levels: Iterable[str], partial_weight: float = 0.5) -> float:
    """Share of correct answers, partial ones counted with ``partial_weight``."""
    levels = list(levels)
    if not levels:
        raise ValueError("no graded answers")
    bad = [lv for lv in levels if lv not in LEVELS]
    if bad:
        raise ValueError(f"levels must be one of {LEVELS}, got {bad[0]!r}")
    c = Counter(levels)
    return (c["correct"] + partial_weight * c["partial"]) / len(levels)



__all__ = ["LEVELS", "Graded", "accuracy"]
