"""Scoring answers to a question bank: the form of a set of answers, and right, wrong, unanswered."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from ctxlab.errors import AnswerMissing
from ctxlab.quiz.bank import Bank

def answer_problems(bank: Bank, answers) -> list[str]:
    """What is wrong with the *form* of ``answers`` (question id -> choice id), in Japanese.

    Says nothing about which answers are right; an empty list means every question of
    the bank has exactly one valid choice id.
    """
    if not isinstance(answers, Mapping):
        return [f"answers は辞書（問題 id → 選択肢 id）にしてください。いまは {type(answers).__name__} です"]
    out = []
    missing = [qid for qid in bank.ids if qid not in answers]
    if missing:
        out.append(f"答えのない問題があります: {', '.join(missing)}（{len(bank)} 問すべてに答えてください）")
    extra = [str(k) for k in answers if k not in bank.ids]
    if extra:
        out.append(f"この問題集にない id があります: {', '.join(extra)}（id は {', '.join(bank.ids)}）")
    for q in bank:
        if q.id in answers and answers[q.id] not in q.choice_ids:
            out.append(f"{q.id} の答え {answers[q.id]!r} は選択肢の id ではありません（{', '.join(sorted(q.choice_ids))} のどれか）")
    return out


def check_answers(bank: Bank, answers, only: str | None = None) -> None:
    """Assert the form of ``answers`` (for visible tests): :class:`~ctxlab.errors.AnswerMissing` (an AssertionError
    shown as its message alone) with a helpful message.
    With ``only`` (a question id), just that question's answer: a learner who left other
    questions open is still graded, and shown the explanation, on the ones answered."""
    found = answer_problems(bank, answers)
    if only is not None and isinstance(answers, Mapping):
        found = [f for f in found if f.startswith(f"{only} の答え ")]
        if only not in answers:
            found.insert(0, f"{only} に答えがありません（answers[{only!r}] に選択肢の id を入れてください）")
    if found:
        raise AnswerMissing("\n".join(found))


@dataclass(frozen=True)
class Score:
    """The result of a set of answers against a bank."""

    correct: tuple[str, ...]
    wrong: tuple[str, ...]
    unanswered: tuple[str, ...]
    by_lesson: dict[str, tuple[int, int]]   # lesson -> (correct, questions)

    @property
    def points(self) -> int:
        return len(self.correct)

    @property
    def total(self) -> int:
        return len(self.correct) + len(self.wrong) + len(self.unanswered)

    def __str__(self) -> str:
        text = f"{self.total} 問中 {self.points} 問正解"
        if self.unanswered:
            text += f"（未回答 {len(self.unanswered)} 問）"
        return text


def score(bank: Bank, answers: Mapping | None) -> Score:
    """Score ``answers`` (question id -> choice id); an answer that is not a choice id is wrong."""
    answers = answers or {}
    correct, wrong, unanswered = [], [], []
    by_lesson: dict[str, list[int]] = {}
    for q in bank:
        tally = by_lesson.setdefault(q.lesson, [0, 0])
        tally[1] += 1
        if q.id not in answers or answers[q.id] is None:
            unanswered.append(q.id)
        elif q.is_correct(answers[q.id]):
            correct.append(q.id)
            tally[0] += 1
        else:
            wrong.append(q.id)
    return Score(tuple(correct), tuple(wrong), tuple(unanswered),
                 {k: (v[0], v[1]) for k, v in by_lesson.items()})
