"""Grading: a submission held for review, only for a cause a person can act on, and its feedback.

The tests run outside the learner's process (:mod:`~ctxlab.grading.graded`), so nothing a
learner's code does to its own kernel reaches them, and no submission is held for what its code
looks like: the in-process guard that restored IPython's hooks before each test cell and the
source scan that read learner cells (issue 31) are retired (issue 42: they held honest solutions
that used ``globals()``, ``getattr`` or ``import inspect``, and could only chase techniques).

A submission is held when the grader could not prepare a test for it (the grader kernel could
not run the lesson's cells the test needs, or could not reach the learner's kernel): every
autograded test cell gets an error output that says so without blaming the learner (0 automatic
points, nbgrader's own rule), and :class:`FlagForReview` (after ``SaveAutoGrades``) marks those
grades ``needs_manual_grade`` and writes the reasons into the autograded notebook's metadata
(``ctxlab_review``), from which ``ctxlab grade`` reports them in the summary and the grades CSV.
The instructor fixes the cause and grades again, or grades by hand in formgrader; the LMS files
hold the submission back until then.
"""
from __future__ import annotations

import json
from pathlib import Path

from nbformat.v4 import new_output
from nbgrader.preprocessors import NbGraderPreprocessor

from ctxlab.grading.graded import REVIEW_ENAME, REVIEW_KEY, REVIEW_NOTE, is_test_cell

__all__ = ["REVIEW_KEY", "REVIEW_ENAME", "REVIEW_NOTE", "is_test_cell", "held", "review_of", "FlagForReview"]


def held(nb, findings: list[str]) -> None:
    """Every autograded test cell gets an error output first: 0 automatic points, and the feedback says why."""
    for cell in nb.cells:
        if is_test_cell(cell):
            cell.outputs.insert(0, new_output("error", ename=REVIEW_ENAME, evalue=REVIEW_NOTE,
                                              traceback=[f"{REVIEW_ENAME}: {REVIEW_NOTE}"]))


def review_of(notebook: Path) -> list[str]:
    """The findings :class:`FlagForReview` wrote into an autograded notebook (empty: none)."""
    try:
        meta = json.loads(Path(notebook).read_text(encoding="utf-8")).get("metadata", {})
    except (OSError, ValueError):
        return []
    found = meta.get(REVIEW_KEY) or []
    return [str(x) for x in found] if isinstance(found, list) else []


class FlagForReview(NbGraderPreprocessor):
    """After ``SaveAutoGrades``: a held submission's test grades need manual grading, and the
    autograded notebook says why (``metadata.ctxlab_review``; any value the submission
    brought is dropped)."""

    def preprocess(self, nb, resources):
        from nbgrader.api import Gradebook

        nb.metadata.pop(REVIEW_KEY, None)
        found = resources.get(REVIEW_KEY)
        if not found:
            return nb, resources
        nb.metadata[REVIEW_KEY] = list(found)
        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gb:
            for cell in nb.cells:
                if is_test_cell(cell):
                    grade = gb.find_grade(cell.metadata["nbgrader"]["grade_id"], info["notebook"],
                                          info["assignment"], info["student"])
                    grade.needs_manual_grade = True
            gb.db.commit()
        return nb, resources
