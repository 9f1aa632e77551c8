"""The answer grader: three levels from key facts, accuracy, and agreement between a person and the machine.

:func:`grade` compares an answer with the question's ``key_facts`` (after :func:`normalize`:
NFKC, no spaces, no thousands separators):

* answerable questions: every key fact present -> correct, some -> partial, none -> wrong;
  a contradiction answer that also states a superseded fact (``stale_facts``) mixes the
  old and the new regulation and is at best partial;
* unanswerable questions: correct when the answer says the documents do not cover it
  (:data:`NOT_COVERED`), otherwise wrong.

It is a yardstick, not a judge: :mod:`ctxlab.widgets.grader` lets a person grade the same
answers, and :func:`agreement` compares the two (Cohen's kappa). :class:`Graded` is one graded
answer; :func:`accuracy` counts a list of levels. Lesson 08 uses all of this through
:mod:`ctxlab.labs.measure`.
"""
from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Iterable

from ctxlab.corpus import Question

LEVELS = ("correct", "partial", "wrong")

#: phrases with which an answer says the documents do not cover the question
NOT_COVERED = (
    "記載がありません", "記載はありません", "記載されていません", "定めがありません", "定めはありません",
    "見当たりません", "見つかりません", "含まれていません", "書かれていません", "規定がありません",
    "わかりません", "分かりません", "答えられません", "確認できません", "該当する記述がありません",
    "文書がありません", "引用できる文書がありません",
)

_SEP = re.compile(r"(?<=\d),(?=\d{3})")
_SPACE = re.compile(r"\s+")


def normalize(text: str) -> str:
    """NFKC, no whitespace, no thousands separators: '50,000 円' -> '50000円'."""
    t = unicodedata.normalize("NFKC", text)
    t = _SEP.sub("", t)
    return _SPACE.sub("", t)


def facts_found(answer: str, facts: Iterable[str]) -> list[str]:
    a = normalize(answer)
    return [f for f in facts if normalize(f) in a]


def says_not_covered(answer: str) -> bool:
    a = normalize(answer)
    return any(normalize(p) in a for p in NOT_COVERED)


def grade(answer: str, q: Question) -> str:
    """Three-level grade of one answer (see the module docstring)."""
    if q.category == "unanswerable":
        return "correct" if says_not_covered(answer) else "wrong"
    found = facts_found(answer, q.key_facts)
    if len(found) == len(q.key_facts):
        level = "correct"
    elif found:
        level = "partial"
    else:
        level = "wrong"
    if level == "correct" and facts_found(answer, q.stale_facts):
        level = "partial"
    return level


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


@dataclass(frozen=True)
class Agreement:
    """How often a person's grades match the automatic ones."""

    n: int
    agree: int
    #: counts of (automatic level, human level)
    confusion: dict
    kappa: float | None

    @property
    def rate(self) -> float:
        return self.agree / self.n if self.n else 0.0

    def __str__(self) -> str:
        if not self.n:
            return "まだ 1 件も採点していません"
        k = "" if self.kappa is None else f"、κ = {self.kappa:.2f}"
        return f"{self.n} 件採点、自動採点と一致 {self.agree} 件（{self.rate:.0%}{k}）"


def agreement(graded: Iterable[Graded], human: dict) -> Agreement:
    """Compare automatic grades with ``human[(question_id, method)] = level`` (only graded ones).

    ``kappa`` is Cohen's kappa (agreement beyond chance; None when it is undefined).
    """
    pairs = []
    for g in graded:
        h = human.get((g.question.id, g.method))
        if h is None:
            continue
        if h not in LEVELS:
            raise ValueError(f"a human grade must be one of {LEVELS}, got {h!r}")
        pairs.append((g.level, h))
    confusion = Counter(pairs)
    n = len(pairs)
    agree = sum(1 for a, h in pairs if a == h)
    kappa = None
    if n:
        auto_c, human_c = Counter(a for a, _ in pairs), Counter(h for _, h in pairs)
        pe = sum(auto_c[lv] * human_c[lv] for lv in LEVELS) / (n * n)
        if pe < 1:
            kappa = (agree / n - pe) / (1 - pe)
    return Agreement(n, agree, dict(confusion), kappa)


__all__ = ["LEVELS", "NOT_COVERED", "normalize", "facts_found", "says_not_covered", "grade", "Graded",
           "accuracy", "Agreement", "agreement"]
