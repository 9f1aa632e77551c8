"""The one error root of ctxlab: every error the course raises on purpose is a CtxlabError.

Each kind keeps the built-in base it had (ValueError, RuntimeError), so code that caught
those before still catches them. ``except CtxlabError`` catches all of them at once.
"""
from __future__ import annotations


class CtxlabError(Exception):
    """Root of the course's own errors. The message says what was wrong and what to do."""


class InputError(CtxlabError, ValueError):
    """A file, folder or argument given to ctxlab is not what it needs (says which and why)."""


class DocumentError(InputError):
    """A document folder or file cannot be read as the course's documents."""


class SchemaError(InputError):
    """A data file (price table, catalog, questions, quiz bank) breaks its schema.

    ``problems`` lists every problem found, each as "file: field: what is wrong".
    """

    def __init__(self, path, problems: list[str]):
        self.path = str(path)
        self.problems = list(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"{self.path} に {len(self.problems)} 件の問題があります（直してから読み直してください）:\n{lines}")


class QuizError(InputError):
    """A quiz bank or a set of answers is malformed."""


class GradeError(InputError):
    """Submissions or a course folder cannot be graded as given."""


class ContextWindowExceeded(InputError):
    """A prompt is longer than the model's context window: the API refuses it, so it has no price."""


class BudgetExceeded(CtxlabError, RuntimeError):
    """A request or a cell would spend more than the budget the learner set."""


class Unsolved(CtxlabError, NotImplementedError):
    """An exercise the learner has not solved yet: the stub a released lesson holds raises it.

    It is still an error (Run All goes on past it only because the cell is tagged
    ``raises-exception``; nbgrader scores the test cell 0), but IPython shows it as the one line
    of its message instead of a traceback: the shell renders an exception through its
    ``_render_traceback_`` when the class has one. It stays a NotImplementedError, so a cell that
    catches that one still catches this.
    """

    def __init__(self, exercise: str = "この演習"):
        self.exercise = exercise
        super().__init__(f"{exercise} はまだ解かれていません: 「# YOUR CODE HERE」の行を答えに書き換えてから、"
                         "このセルと確認のセルを実行し直してください（解かずに先へ進んでも Run All は止まりません）。")

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[0;31m{self}\x1b[0m"]


class AnswerMissing(CtxlabError, AssertionError):
    """A quiz answer that is missing or not a choice id (the knowledge check's visible tests raise it).

    Like :class:`Unsolved`, a question the learner has not answered yet is not a crash: IPython shows
    the message alone, in red, instead of a traceback. It stays an AssertionError, so the test cell still
    fails (nbgrader scores it 0) and a cell that catches AssertionError still catches it.
    """

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[0;31m{line}\x1b[0m" for line in str(self).splitlines()]
