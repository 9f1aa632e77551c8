"""Manual grades across runs: kept when a resubmitted answer did not change, dropped when it did.

A resubmission replaces a graded notebook (:func:`resubmitted`, before it is placed); after
autograde, nbgrader flags every manually graded cell for review again, and an unchanged answer
keeps its grade (:func:`keep_manual_grades`).
"""
from __future__ import annotations

import json
from pathlib import Path

from ctxlab.grading._nbgrader import gradebook_url, nbgrader


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


# --------------------------------------------------------------------------- feedback from one state

FEEDBACK_STATE = "feedback_state.json"


def grade_state(root: Path) -> dict[str, tuple[str, bool]]:
    """``learner/assignment`` -> (a digest of every score and comment of the submission, whether
    any grade is manual) for every submission in the gradebook: the state its feedback shows."""
    import hashlib

    from nbgrader.api import Gradebook

    out = {}
    with Gradebook(gradebook_url(root)) as gb:
        for a in gb.assignments:
            for sub in a.submissions:
                rows, manual = [], False
                for nb in sorted(sub.notebooks, key=lambda n: n.name):
                    for g in sorted(nb.grades, key=lambda g: g.name):
                        rows.append([nb.name, g.name, g.auto_score, g.manual_score, g.extra_credit])
                        manual = manual or g.manual_score is not None
                    for c in sorted(nb.comments, key=lambda c: c.name):
                        rows.append([nb.name, c.name, c.auto_comment, c.manual_comment])
                digest = hashlib.sha256(json.dumps(rows, default=str).encode()).hexdigest()[:16]
                out[f"{sub.student.id}/{a.name}"] = (digest, manual)
    return out


def _recorded(root: Path) -> dict[str, str]:
    try:
        return json.loads((Path(root) / FEEDBACK_STATE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def record_feedback(root: Path, keys: set[tuple[str, str]] | None = None, auto_only: bool = False) -> None:
    """Record that the feedback of ``keys`` (every submission when None) shows the gradebook's
    state now. ``auto_only``: only submissions without a manual grade (autograde's feedback is
    made in a shard before the merge: it shows no manual grade)."""
    state, data = grade_state(root), _recorded(root)
    for key, (digest, manual) in state.items():
        if (keys is None or tuple(key.split("/", 1)) in keys) and not (auto_only and manual):
            data[key] = digest
    _write_state(root, {k: v for k, v in data.items() if k in state})


def _write_state(root: Path, data: dict[str, str]) -> None:
    path = Path(root) / FEEDBACK_STATE
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
    tmp.replace(path)


def stale_feedback(root: Path) -> set[tuple[str, str]]:
    """(learner, assignment) of every submission whose feedback does not show the gradebook's
    state: recorded with other grades (graded by hand since), or never recorded and graded by
    hand (autograde's own feedback, or a root older than the record, shows the autograded state)."""
    data = _recorded(root)
    return {tuple(k.split("/", 1)) for k, (digest, manual) in grade_state(root).items()
            if data.get(k, None if manual else digest) != digest}


def remake_feedback(root: Path, keys: set[tuple[str, str]] | None, config_args: list[str]) -> tuple[int, str]:
    """Make the feedback of ``keys`` again (every submission when None) from the gradebook,
    one nbgrader run per assignment (one per submission where that run fails), and record
    what was made. Returns (how many were made, the last error or "")."""
    state = grade_state(root)
    wanted = {tuple(k.split("/", 1)) for k in state} if keys is None else set(keys)
    made, error = set(), ""
    for assignment in sorted({a for _, a in wanted}):
        mine = {k for k in wanted if k[1] == assignment}
        runs = [("*", mine)] if len(mine) > 1 else []
        runs += [(learner, {(learner, assignment)}) for learner, _ in sorted(mine)]
        for student, covers in runs:
            if covers <= made:
                continue
            proc = nbgrader(root, "generate_feedback", assignment, f"--student={student}", "--force",
                            "--log-level=WARN", *config_args, check=False)
            if proc.returncode == 0:
                made |= covers
            else:
                error = (proc.stderr.strip().splitlines() or ["?"])[-1][:300]
    record_feedback(root, made)
    return len(made), error


def move_feedback_state(root: Path, moves: dict[tuple[str, str], str]) -> None:
    """A submission moved to another learner (:mod:`~ctxlab.grading._converge`) keeps the
    record of what its feedback shows."""
    data = _recorded(root)
    for (old, assignment), new in moves.items():
        if f"{old}/{assignment}" in data:
            data[f"{new}/{assignment}"] = data.pop(f"{old}/{assignment}")
    _write_state(root, data)
