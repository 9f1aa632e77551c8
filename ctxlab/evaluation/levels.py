"""The three levels of an answer, one graded answer (:class:`Graded`), and accuracy over a list of levels."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Iterable

from ctxlab.corpus import Question

LEVELS = ("correct", "partial", "wrong")
#: the name of the rule grader in ``Graded.grader``
RULES = "rules"
#: how the tables name a grader
GRADER_JA = {RULES: "ルール採点（ctxlab.evaluation.rules）"}


@dataclass(frozen=True)
class Graded:
    """One answer and its grade. ``files``, ``input_tokens`` and ``cost_usd`` say what the method sent;
    ``grader`` names what gave the level (:data:`RULES`, or a judge's :func:`ctxlab.evaluation.judge.grader_name`)."""

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
    #: what graded the answer
    grader: str = "rules"


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



__all__ = ["LEVELS", "RULES", "GRADER_JA", "Graded", "accuracy"]
