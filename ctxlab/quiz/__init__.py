"""Question banks of the course: the 9-question knowledge check and the lessons' check questions.

Public surface: :func:`load`, :func:`instructor_bank`, :func:`banks`, :func:`quiz_for`, :func:`key_hash`,
:func:`problems`, :func:`with_key` (from :mod:`ctxlab.quiz.bank`), :func:`score`, :func:`answer_problems`,
:func:`check_answers` (from :mod:`ctxlab.quiz.scoring`), :func:`hidden_test` and :func:`feedback_text`
(lesson 09's hidden tests, from :mod:`ctxlab.quiz.graded`). The widget is :class:`ctxlab.widgets.quiz.Quiz`;
the figure is :func:`ctxlab.plots.quiz.by_lesson`.
"""
from ctxlab.errors import QuizError
from ctxlab.quiz.bank import (
    INSTRUCTOR_KEY, KEY_FILE, KNOWLEDGE_CHECK, LESSONS, MAX_CHOICES, MIN_CHOICES, QUIZZES, Bank, Choice, Question,
    bank_path, banks, instructor_bank, key_hash, load, problems, quiz_for, with_key,
)
from ctxlab.quiz.scoring import Score, answer_problems, check_answers, score
from ctxlab.quiz.graded import feedback_text, hidden_test

__all__ = [
    "INSTRUCTOR_KEY", "KEY_FILE", "KNOWLEDGE_CHECK", "LESSONS", "MAX_CHOICES", "MIN_CHOICES", "QUIZZES", "Bank",
    "Choice", "Question", "QuizError", "Score", "answer_problems", "bank_path", "banks", "check_answers",
    "feedback_text", "hidden_test", "instructor_bank", "key_hash", "load", "problems", "quiz_for", "score",
    "with_key",
]
