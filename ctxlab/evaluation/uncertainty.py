"""An accuracy's interval that includes the grader's own error, measured on the labelled answers.

A bootstrap over the questions says how much an accuracy would move with other questions of the same kind; it
assumes every grade is right. The grader's disagreement with the labels (:mod:`ctxlab.evaluation.labelled`) says
how often it is not, and in which direction. :func:`grader_bias` reads the confusion matrix in points of accuracy
(correct 1, partial ``partial_weight``, wrong 0), averaged over the labelled answers:

* ``over``: how much the grader gave above the label (a wrong answer graded correct counts 1, a partial one 0.5);
* ``under``: how much it gave below the label.

:func:`accuracy_interval` widens the bootstrap interval by them: the low end moves down by ``over`` (the accuracy
may be that much lower than graded) and the high end up by ``under``. For a difference of two methods graded by the
same grader (:func:`ctxlab.labs.measure.paired_interval`) either method's errors may go either way, so both ends
move by ``over + under``. A grader that agrees with every label leaves the interval as it was.

This is a plain, conservative reading: it assumes the run's answers are misgraded as often as the labelled ones
(which were written to test hard cases, so the share may be lower on ordinary answers), and it does not add the
uncertainty of the matrix itself (a few dozen labelled answers).
"""
from __future__ import annotations

import random
from typing import Sequence

from ctxlab.evaluation._agreement import Agreement


def _scores(partial_weight: float) -> dict[str, float]:
    return {"correct": 1.0, "partial": partial_weight, "wrong": 0.0}


def grader_bias(agreement: Agreement | None, partial_weight: float = 0.5) -> tuple[float, float]:
    """(over, under): mean points per labelled answer the grader gave above and below the labels."""
    if agreement is None or not agreement.n:
        return 0.0, 0.0
    s = _scores(partial_weight)
    over = sum(k * max(0.0, s[g] - s[lab]) for (g, lab), k in agreement.confusion.items()) / agreement.n
    under = sum(k * max(0.0, s[lab] - s[g]) for (g, lab), k in agreement.confusion.items()) / agreement.n
    return over, under


def bootstrap(values: Sequence[float], *, rounds: int = 2000, seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """A seeded percentile bootstrap interval of the mean of ``values``."""
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level!r}")
    values = list(values)
    n = len(values)
    rng = random.Random(seed)
    means = sorted(sum(rng.choice(values) for _ in range(n)) / n for _ in range(rounds))
    return means[int((1 - level) / 2 * rounds)], means[min(rounds - 1, int((1 + level) / 2 * rounds))]


def accuracy_interval(levels: Sequence[str], agreement: Agreement | None = None, *, partial_weight: float = 0.5,
                      rounds: int = 2000, seed: int = 0, level: float = 0.95) -> tuple[float, float, float]:
    """(accuracy, low, high): the bootstrap interval, widened by the grader's measured error (module docstring)."""
    levels = list(levels)
    if not levels:
        raise ValueError("no graded answers")
    s = _scores(partial_weight)
    values = [s[lv] for lv in levels]
    lo, hi = bootstrap(values, rounds=rounds, seed=seed, level=level)
    over, under = grader_bias(agreement, partial_weight)
    return sum(values) / len(values), max(0.0, lo - over), min(1.0, hi + under)


__all__ = ["grader_bias", "bootstrap", "accuracy_interval"]
