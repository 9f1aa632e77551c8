"""Figures of the question banks: a learner's answers by lesson (what to review)."""
from __future__ import annotations

from typing import Mapping

import matplotlib.pyplot as plt

import ctxlab.plots  # noqa: F401  (Japanese font)
from ctxlab.quiz import LESSONS, Bank, score


def by_lesson(bank: Bank, answers: Mapping | None, ax=None):
    """Horizontal bars: for each lesson the bank checks, questions answered right and not."""
    s = score(bank, answers)
    lessons = [lesson for lesson in LESSONS if lesson in s.by_lesson]
    right = [s.by_lesson[lesson][0] for lesson in lessons]
    rest = [s.by_lesson[lesson][1] - s.by_lesson[lesson][0] for lesson in lessons]
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 0.45 * len(lessons) + 1.2))
    y = range(len(lessons))
    ax.barh(y, right, color="#4c9f70", label="正解")
    ax.barh(y, rest, left=right, color="#e8a0a0", label="不正解・未回答（見直す節）")
    ax.set_yticks(list(y), lessons)
    ax.invert_yaxis()
    most = max(s.by_lesson[lesson][1] for lesson in lessons)
    ax.set_xlabel("問題数")
    ax.set_xticks(range(0, most + 1))
    ax.set_xlim(0, most + 0.1)
    ax.set_title(f"{bank.title}: {s}", fontsize=10)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)
    return ax
