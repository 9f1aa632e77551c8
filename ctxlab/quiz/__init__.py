"""Question banks of the course: the 9-question knowledge check and the lessons' check questions.

Public surface: :func:`load`, :func:`banks`, :func:`quiz_for`, :func:`key_hash`, :func:`problems`
(from :mod:`ctxlab.quiz.bank`), :func:`score`, :func:`answer_problems`, :func:`check_answers`
(from :mod:`ctxlab.quiz.scoring`). The widget is :class:`ctxlab.widgets.quiz.Quiz`; the figure
is :func:`ctxlab.plots.quiz.by_lesson`.
"""
from ctxlab.errors import QuizError
from ctxlab.quiz.bank import (
    KNOWLEDGE_CHECK, LESSONS, MAX_CHOICES, MIN_CHOICES, QUIZZES, Bank, Choice, Question, bank_path, banks,
    key_hash, load, problems, quiz_for,
)
from ctxlab.quiz.scoring import Score, answer_problems, check_answers, score

__all__ = [
    "KNOWLEDGE_CHECK", "LESSONS", "MAX_CHOICES", "MIN_CHOICES", "QUIZZES", "Bank", "Choice", "Question", "QuizError",
    "Score", "answer_problems", "bank_path", "banks", "check_answers", "key_hash", "load", "problems", "quiz_for",
    "score",
]
