"""Manual grades across runs: kept when a resubmitted answer did not change, dropped when it did.

A resubmission replaces a graded notebook (:func:`resubmitted`, before it is placed); after
autograde, nbgrader flags every manually graded cell for review again, and an unchanged answer
keeps its grade (:func:`keep_manual_grades`).
"""
from __future__ import annotations

import json
from pathlib import Path

from ctxlab.grading._nbgrader import gradebook_url


def _answers(path: Path) -> dict[str, str]:
    """grade_id -> source of every answer cell (nbgrader solution cells) of a notebook."""
    try:
        nb = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        return {}
    out = {}
    for cell in nb.get("cells", []) if isinstance(nb, dict) else []:
        meta = (cell.get("metadata") or {}).get("nbgrader") or {}
        if meta.get("solution") and meta.get("grade_id"):
            src = cell.get("source", "")
            out[meta["grade_id"]] = "".join(src) if isinstance(src, list) else str(src)
    return out


def resubmitted(gb, old: Path, new: Path, learner: str, assignment: str) -> tuple[list[str], list[str]]:
    """A resubmission replaces a graded one: manual grades of changed answers are dropped
    (a written answer whose own text changed; a manual override of an autograded test when
    any answer changed); the others are kept. Returns (dropped, kept) grade ids."""
    from nbgrader.api import MissingEntry

    before, after = _answers(old), _answers(new)
    changed = {g for g in set(before) | set(after) if before.get(g) != after.get(g)}
    try:
        sub = gb.find_submission(assignment, learner)
    except MissingEntry:
        return [], []
    dropped, kept = [], []
    for nb in sub.notebooks:
        comments = {c.name: c for c in nb.comments}
        for g in nb.grades:
            if g.manual_score is None:
                continue
            written = g.name in before or g.name in after   # the grade is on the answer cell itself
            if (g.name in changed) if written else bool(changed):
                g.manual_score = None
                if g.name in comments:
                    comments[g.name].manual_comment = None
                dropped.append(g.name)
            else:
                kept.append(g.name)
    gb.db.commit()
    return dropped, kept


def keep_manual_grades(root: Path, kept: dict[tuple[str, str], list[str]]) -> None:
    """After a resubmission was autograded: nbgrader flags every manually graded cell for
    review again; an unchanged answer keeps its manual grade, so its flag is cleared."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(gradebook_url(root)) as gb:
        for (learner, assignment), names in kept.items():
            try:
                sub = gb.find_submission(assignment, learner)
            except MissingEntry:
                continue
            for nb in sub.notebooks:
                for g in nb.grades:
                    if g.name in names and g.manual_score is not None:
                        g.needs_manual_grade = False
        gb.db.commit()
