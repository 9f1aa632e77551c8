"""Agreement between two graders of the same answers: a person and the machine, or a grader and the labels."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Iterable

from ctxlab.evaluation.levels import LEVELS, Graded


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



__all__ = ["Agreement", "agreement"]
