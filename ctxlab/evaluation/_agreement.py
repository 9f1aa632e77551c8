"""Agreement between two graders of the same answers: a person and the machine, or a grader and the labels.

:func:`compare` takes two lists of levels (the grader's and the reference's, answer by answer) and returns an
:class:`Agreement`: how many agree, the 3 x 3 confusion matrix (rows: the grader, columns: the reference), and
Cohen's kappa, the agreement beyond what two graders with the same level frequencies would reach by chance::

    p_o = agree / n                       # observed agreement
    p_e = sum over levels of (grader's share of the level) x (reference's share of the level)
    kappa = (p_o - p_e) / (1 - p_e)       # undefined (None) when p_e = 1

:func:`agreement` is the same comparison for graded answers of a run and a person's grades by
``(question id, method)`` (the grader widget's ``human``). :meth:`Agreement.format` prints the matrix.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Sequence

from ctxlab import _table
from ctxlab.evaluation.levels import LEVELS, Graded

LEVEL_JA = {"correct": "正しい", "partial": "惜しい", "wrong": "違う"}


@dataclass(frozen=True)
class Agreement:
    """How often one grader's levels match another's (the reference: labels, or a person)."""

    n: int
    agree: int
    #: counts of (grader's level, reference level)
    confusion: dict
    kappa: float | None

    @property
    def rate(self) -> float:
        return self.agree / self.n if self.n else 0.0

    @property
    def disagreement(self) -> float:
        """Share of answers on which the two disagree."""
        return 1 - self.rate if self.n else 0.0

    def matrix(self) -> list[list[int]]:
        """The confusion matrix as rows (grader's level) of columns (reference level), in :data:`LEVELS` order."""
        return [[self.confusion.get((a, b), 0) for b in LEVELS] for a in LEVELS]

    def table(self, grader: str = "採点", reference: str = "ラベル") -> _table.Table:
        """The confusion matrix as a table, with the agreement and kappa under it."""
        rows = [[LEVEL_JA[a], *row] for a, row in zip(LEVELS, self.matrix())]
        return _table.Table([f"{grader} ＼ {reference}", *(LEVEL_JA[b] for b in LEVELS)], rows,
                            align=["l"] + ["r"] * len(LEVELS), summary=[self.line(reference)])

    def format(self, grader: str = "採点", reference: str = "ラベル") -> str:
        """:meth:`table` as text."""
        return str(self.table(grader, reference))

    def line(self, reference: str = "自動採点") -> str:
        """One line: how many were graded and how many agree with ``reference`` (what the grades are compared with)."""
        if not self.n:
            return "まだ 1 件も採点していません"
        k = "" if self.kappa is None else f"、κ = {self.kappa:.2f}"
        return f"{self.n} 件採点、{reference}と一致 {self.agree} 件（{self.rate:.0%}{k}）"

    def __str__(self) -> str:
        return self.line()


def _check(levels: Sequence[str], who: str) -> None:
    bad = [lv for lv in levels if lv not in LEVELS]
    if bad:
        raise ValueError(f"a {who} level must be one of {LEVELS}, got {bad[0]!r}")


def cohen_kappa(grader: Sequence[str], reference: Sequence[str]) -> float | None:
    """Cohen's kappa of two equally long lists of levels (None when chance agreement is 1 or the lists are empty)."""
    return compare(grader, reference).kappa


def compare(grader: Sequence[str], reference: Sequence[str]) -> Agreement:
    """Agreement of ``grader``'s levels with ``reference``'s, answer by answer (see the module docstring)."""
    grader, reference = list(grader), list(reference)
    if len(grader) != len(reference):
        raise ValueError(f"{len(grader)} grades but {len(reference)} reference levels: compare the same answers")
    _check(grader, "grader's")
    _check(reference, "reference")
    n = len(grader)
    confusion = Counter(zip(grader, reference))
    agree = sum(a == b for a, b in zip(grader, reference))
    kappa = None
    if n:
        g, r = Counter(grader), Counter(reference)
        pe = sum(g[lv] * r[lv] for lv in LEVELS) / (n * n)
        if pe < 1:
            kappa = (agree / n - pe) / (1 - pe)
    return Agreement(n, agree, dict(confusion), kappa)


def agreement(graded: Iterable[Graded], human: dict) -> Agreement:
    """Compare automatic grades with ``human[(question_id, method)] = level`` (only the answers a person graded)."""
    pairs = [(g.level, human[(g.question.id, g.method)]) for g in graded if (g.question.id, g.method) in human]
    return compare([a for a, _ in pairs], [h for _, h in pairs])


__all__ = ["LEVEL_JA", "Agreement", "compare", "cohen_kappa", "agreement"]
