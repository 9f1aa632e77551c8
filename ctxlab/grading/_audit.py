"""Grades come only from the grader: what a worker gradebook may change, checked before a merge.

A worker course root starts from a copy of the master gradebook (``pristine``) and nbgrader
autograde writes into it. Only what autograde itself sets, for the submissions that worker
graded, may differ from the pristine copy: a grade's ``auto_score`` and
``needs_manual_grade``, a comment's ``auto_comment``, a notebook's late penalty, the
submission's timestamp, and the rows autograde creates for a new submission (with empty
manual fields). :func:`audit` lists every other difference in words: changes to other
submissions' rows, to manual scores, extra credit, manual comments, flags or extensions, to
the assignment's definition (cells, points), and automatic scores outside ``[0, max]``.
The merge copies only the allowed fields, so what is listed is discarded; the run reports it.
:func:`notebook_scores` recomputes the automatic scores from the autograded notebook that
nbgrader wrote (nbgrader's own rule, ``determine_grade``): the merge takes those.
"""
from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path

_SUB = """JOIN submitted_assignment sa ON sn.assignment_id = sa.id JOIN student st ON sa.student_id = st.id
JOIN assignment a ON sa.assignment_id = a.id JOIN notebook n ON sn.notebook_id = n.id"""

#: table -> (query whose first columns are the key, number of key columns, value column names)
_ROWS = {
    "grade": ("SELECT st.id, a.name, n.name, c.name, g.auto_score, g.manual_score, g.extra_credit, g.needs_manual_grade "
              f"FROM grade g JOIN base_cell c ON g.cell_id = c.id JOIN submitted_notebook sn ON g.notebook_id = sn.id {_SUB}",
              4, ("auto_score", "manual_score", "extra_credit", "needs_manual_grade")),
    "comment": ("SELECT st.id, a.name, n.name, c.name, m.auto_comment, m.manual_comment "
                f"FROM comment m JOIN base_cell c ON m.cell_id = c.id JOIN submitted_notebook sn ON m.notebook_id = sn.id {_SUB}",
                4, ("auto_comment", "manual_comment")),
    "submitted_notebook": (f"SELECT st.id, a.name, n.name, sn.flagged, sn.late_submission_penalty FROM submitted_notebook sn {_SUB}",
                           3, ("flagged", "late_submission_penalty")),
    "submitted_assignment": ("""SELECT st.id, a.name, sa.timestamp, sa.extension FROM submitted_assignment sa
                             JOIN student st ON sa.student_id = st.id JOIN assignment a ON sa.assignment_id = a.id""",
                             2, ("timestamp", "extension")),
    "student": ("SELECT id, first_name, last_name, email, lms_user_id FROM student", 1,
                ("first_name", "last_name", "email", "lms_user_id")),
}
#: what autograde sets (may change for the worker's own submissions)
AUTOGRADE_SETS = {"grade": {"auto_score", "needs_manual_grade"}, "comment": {"auto_comment"},
                  "submitted_notebook": {"late_submission_penalty"}, "submitted_assignment": {"timestamp"}}
#: the course's definition: autograde never changes it
_DEFINITION = ("course", "assignment", "notebook", "base_cell", "source_cell", "grade_cells", "solution_cells",
               "task_cells")


def _rows(db: sqlite3.Connection, table: str) -> dict[tuple, dict]:
    query, nkey, cols = _ROWS[table]
    return {tuple(r[:nkey]): dict(zip(cols, r[nkey:])) for r in db.execute(query)}


def _definition(db: sqlite3.Connection) -> dict[str, list[tuple]]:
    return {t: sorted(map(tuple, db.execute(f"SELECT * FROM {t}")), key=repr) for t in _DEFINITION}  # noqa: S608


def _max_scores(db: sqlite3.Connection) -> dict[tuple, float]:
    q = """SELECT a.name, n.name, c.name, g.max_score FROM grade_cells g JOIN base_cell c ON g.id = c.id
           JOIN notebook n ON c.notebook_id = n.id JOIN assignment a ON n.assignment_id = a.id"""
    return {tuple(r[:3]): float(r[3]) for r in db.execute(q)}


def notebook_scores(folder: Path) -> dict[tuple[str, str], float | None]:
    """(notebook name, grade id) -> automatic score, recomputed by nbgrader's rule from the
    autograded notebooks in ``folder`` (None: a cell that needs manual grading)."""
    import nbformat
    from nbgrader.utils import determine_grade, is_grade

    out: dict[tuple[str, str], float | None] = {}
    for path in sorted(Path(folder).glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if is_grade(cell):
                score, _ = determine_grade(cell)
                out[(path.stem, cell.metadata["nbgrader"]["grade_id"])] = None if score is None else float(score)
    return out


def audit(pristine: Path, worker: Path, pairs: list[tuple[str, str]]) -> tuple[dict[tuple[str, str], list[str]], list[str]]:
    """(changes that autograde does not make, per graded submission; changes to anything
    else: other submissions, learners, the course's definition). Each change is one short
    phrase such as ``grade.extra_credit ×3``."""
    own = set(pairs)
    per: dict[tuple[str, str], Counter] = {p: Counter() for p in pairs}
    other: Counter = Counter()
    with sqlite3.connect(f"file:{pristine}?mode=ro", uri=True) as a, sqlite3.connect(f"file:{worker}?mode=ro", uri=True) as b:
        maxima = _max_scores(a)
        for table in _ROWS:
            before, after = _rows(a, table), _rows(b, table)
            allowed = AUTOGRADE_SETS.get(table, set())
            for key in before.keys() | after.keys():
                sub = key[:2] if table != "student" else None
                old, new = before.get(key), after.get(key)
                if old == new:
                    continue
                if sub not in own:
                    other[f"{table} ({'削除' if new is None else '追加' if old is None else '変更'})"] += 1
                    continue
                if new is None:
                    continue  # autograde re-creates a regraded submission's rows
                for col, value in new.items():
                    base = old.get(col) if old else None
                    if col not in allowed and value != base and not (old is None and not value):
                        per[sub][f"{table}.{col}"] += 1
                if table == "grade" and new["auto_score"] is not None:
                    top = maxima.get((key[1], key[2], key[3]))
                    if top is not None and not 0 <= float(new["auto_score"]) <= top:
                        per[sub]["grade.auto_score（満点の範囲外）"] += 1
        if _definition(a) != _definition(b):
            other["課題の定義（セル・配点）"] += 1
    fmt = lambda c: [f"{k} ×{n}" for k, n in sorted(c.items())]  # noqa: E731
    return {p: fmt(c) for p, c in per.items() if c}, fmt(other)
