"""Re-runs converge on one learner per LMS id, whatever an earlier run called the learner.

A learner's id in the course root depends on what the run knew: without a roster a Moodle
participant is keyed by name, with one by email; a same-name clash keys each id apart. When
a later run keys an LMS id (per assignment) to another learner than an earlier run did, the
earlier learner's copy of that submission is stale: its folders (``submitted/``,
``autograded/``, ``feedback/``), its gradebook submission, its LMS id in ``lms.json`` and its
issues. :func:`converge` moves them to the learner this run found, manual grades included,
when that learner has nothing of the assignment yet, and removes them otherwise; a learner
left with no submission is removed from the gradebook and ``lms.json``. So grades.csv, the
Moodle worksheet and the feedback zip never hold two rows for one participant id.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from ctxlab.grading._manual import move_feedback_state
from ctxlab.grading._nbgrader import rmtree
from ctxlab.grading.lms import Upload, load_issues, load_lms_ids, save_issues, write_lms_ids

_FOLDERS = ("submitted", "autograded", "feedback")


def stale(root: Path, uploads: list[Upload]) -> dict[tuple[str, str], str]:
    """(earlier learner, assignment) -> the learner this run keys the same LMS id to."""
    owner = {(u.layout, u.assignment, u.lms_id): u.learner for u in uploads
             if u.lms_id and u.assignment and u.learner}
    out = {}
    for old, info in load_lms_ids(root).items():
        for assignment, lms_id in (info.get("ids") or {}).items():
            new = owner.get((info.get("layout", ""), assignment, lms_id))
            if new and new != old:
                out[(old, assignment)] = new
    return out


def converge(root: Path, gb, uploads: list[Upload]) -> dict[tuple[str, str], str]:
    """Move or remove every stale copy (:func:`stale`) in ``root`` and its gradebook ``gb``.
    Returns what was done: (earlier learner, assignment) -> the new learner."""
    from nbgrader.api import MissingEntry

    moves = stale(root, uploads)
    if not moves:
        return {}
    root = Path(root)
    ids = load_lms_ids(root)
    issues = load_issues(root)
    kept_old = set()   # removed, not moved: the new learner had the assignment already
    for (old, assignment), new in sorted(moves.items()):
        try:
            sub = gb.find_submission(assignment, old)
        except MissingEntry:
            sub = None
        try:
            gb.find_submission(assignment, new)
            taken = True
        except MissingEntry:
            taken = (root / "submitted" / new / assignment).exists()
        if taken:
            kept_old.add((old, assignment))
        if sub is not None and not taken:   # keep the grading (manual grades too) under the new learner
            sub.student = gb.update_or_create_student(new)
            gb.db.commit()
        elif sub is not None:
            gb.remove_submission(assignment, old)
        for folder in _FOLDERS:
            src, dest = root / folder / old / assignment, root / folder / new / assignment
            if src.exists() and not taken:
                dest.parent.mkdir(parents=True, exist_ok=True)
                rmtree(dest)
                shutil.move(src, dest)
            rmtree(src)
            if (root / folder / old).is_dir() and not any((root / folder / old).iterdir()):
                (root / folder / old).rmdir()
        entry = ids.get(old, {})
        entry.get("ids", {}).pop(assignment, None)
        entry.get("attachments", {}).pop(assignment, None)
        mine = [i for i in issues if i.learner == old and i.assignment == assignment]
        for issue in mine:
            issue.learner = new
        if taken:
            issues = [i for i in issues if i not in mine]
    for old in {o for o, _ in moves}:
        if ids.get(old, {}).get("ids"):
            continue
        ids.pop(old, None)
        issues = [i for i in issues if i.learner != old]
        try:
            student = gb.find_student(old)
        except MissingEntry:
            continue
        if not student.submissions:
            gb.remove_student(old)
    write_lms_ids(root, ids)
    save_issues(root, issues)
    move_feedback_state(root, {k: v for k, v in moves.items() if k not in kept_old})
    return moves


def another_class(root: Path, gb, uploads: list[Upload]) -> str | None:
    """Why this upload looks like another class than the one graded in ``root`` (None when it
    does not): both hold two or more learners and share none, by learner id or by LMS id.
    A late submitter's own upload (one learner) is never taken for another class, nor are
    learners that exist for one assignment only (anonymous and blind-marking ids)."""
    ids = load_lms_ids(root)
    # a learner of one assignment only (Canvas anonymous grading, Moodle blind marking) says nothing
    per_assignment = {lid for lid, info in ids.items() if info.get("layout") == "canvas_anon"
                      or lid.startswith("participant_")}
    before = ({s.id for s in gb.students} | set(ids)) - per_assignment
    before_ids = {(info.get("layout", ""), i) for lid, info in ids.items() if lid not in per_assignment
                  for i in (info.get("ids") or {}).values() if i}
    mine = [u for u in uploads if u.learner and u.layout != "canvas_anon" and not u.learner.startswith("participant_")]
    now = {u.learner for u in mine}
    now_ids = {(u.layout, u.lms_id) for u in mine if u.lms_id}
    if len(before) < 2 or len(now) < 2 or now & before or now_ids & before_ids:
        return None
    return (f"{root} にはすでに別の受講者 {len(before)} 人の採点があり、今回の提出の {len(now)} 人とは一人も"
            "（LMS の id も）重なりません。別のクラスなら、クラスごとに別の採点フォルダにしてください"
            "（例: ctxlab grade export.zip --root grading/クラス名、make grade では別のフォルダを作って "
            "--root を付けた ctxlab grade を使います）。同じクラスの追加の提出なら --same-class を付けてください")
