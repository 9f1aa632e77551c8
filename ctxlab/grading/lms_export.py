"""Back to the LMS: grades files that Moodle and Canvas import, Moodle's feedback zip, pending marks.

Every ``ctxlab grade`` run writes into ``ROOT/lms/`` (the ids come from the export that was
graded, recorded in ``ROOT/lms.json`` by :mod:`~ctxlab.grading.lms`):

- ``moodle/ASSIGNMENT_worksheet.csv``: Moodle's offline grading worksheet for one assignment
  (``Identifier`` = ``Participant N`` with the per-assignment participant id, ``Full name``,
  ``Email address``, ``Grade``, ``Maximum Grade``, ``Last modified (grade)``), for the
  assignment's "Upload grading worksheet";
- ``moodle/ASSIGNMENT_feedback.zip``: the assignment's "Upload multiple feedback files in a
  zip": one folder ``氏名_N_assignfeedback_file/`` per participant with the feedback HTML
  (Moodle finds the participant by the number after the first ``_``);
- ``moodle_grades.csv``: the course gradebook's "Import > CSV file" (``Email address``
  mapped to the user's email, one column per assignment), for learners whose email is
  known (a roster);
- ``canvas_grades.csv``: Canvas's Gradebook import (``Student``, ``ID`` = Canvas user id,
  ``SIS User ID``, ``SIS Login ID``, ``Section``, one column per assignment).

A submission whose written answers are not graded yet is left out of these files (its score
would be the autograded part only) and counted, and its feedback HTML says at the top that
the written points shown are not graded yet (:func:`mark_pending_feedback`).
"""
from __future__ import annotations

import csv
import re
import zipfile
from datetime import datetime, timezone
from pathlib import Path

from ctxlab.grading._nbgrader import gradebook_url, rmtree
from ctxlab.grading.lms import load_lms_ids

EXPORT_DIR = "lms"
PENDING_MARK = "ctxlab-pending-manual"
PENDING_HTML = (f'<div id="{PENDING_MARK}" style="border:2px solid #c60;background:#fff3e0;padding:0.8em;'
                'margin:1em;font-size:1.1em">この課題の記述問題はまだ採点されていません（{points:g} 点分）。'
                'ここに表示される記述問題の点（0 点）は仮のもので、講師が採点した後のフィードバックで確定します。</div>')
# no "Feedback comments" column: an empty one would clear comments typed in Moodle
_MOODLE_HEAD = ["Identifier", "Full name", "Email address", "Grade", "Maximum Grade", "Last modified (grade)"]
_CANVAS_HEAD = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]


def submissions(root: Path) -> dict[tuple[str, str], dict]:
    """(learner, assignment) -> {score, max, pending (written points not graded yet)} of
    every graded submission in the course root's gradebook."""
    from nbgrader.api import Gradebook

    out = {}
    with Gradebook(gradebook_url(root)) as gb:
        for a in gb.assignments:
            for sub in a.submissions:
                pending = sum(float(g.max_score) for nb in sub.notebooks for g in nb.grades if g.needs_manual_grade)
                out[(sub.student.id, a.name)] = {"score": float(sub.score), "max": float(a.max_score),
                                                 "pending": pending}
    return out


def mark_pending_feedback(root: Path, subs: dict[tuple[str, str], dict] | None = None) -> int:
    """Put a notice at the top of every feedback HTML whose written answers are not graded
    yet (nbgrader shows them as 0 points). Returns how many files carry it."""
    subs = submissions(root) if subs is None else subs
    marked = 0
    for (learner, assignment), s in subs.items():
        for html in sorted((Path(root) / "feedback" / learner / assignment).glob("*.html")):
            text = html.read_text(encoding="utf-8")
            if s["pending"] and PENDING_MARK not in text:
                banner = PENDING_HTML.format(points=s["pending"])
                text, n = re.subn(r"(<body[^>]*>)", lambda m: m.group(1) + banner, text, count=1)
                html.chmod(0o644)
                html.write_text(text if n else banner + text, encoding="utf-8")
            marked += PENDING_MARK in text
    return marked


def _moodle_name(name: str) -> str:
    # Moodle splits the folder name at "_": the name part must not contain one
    return re.sub(r"[_/\\]+", " ", name).strip() or "learner"


def _write_csv(path: Path, head: list[str], rows: list[list[str]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:  # Moodle and Canvas read UTF-8 (no BOM)
        w = csv.writer(fh)
        w.writerow(head)
        w.writerows(rows)
    return path


def export(root: Path, assignments: list[str]) -> dict:
    """Write the LMS files of ``assignments`` (every assignment of the course, in order) into
    ``ROOT/lms/``, replacing an earlier run's. Returns what was written:
    ``files`` (paths), ``held`` (submissions left out: written answers not graded yet),
    ``without_id`` (graded learners the files cannot name: no LMS id or email), ``marked``."""
    root = Path(root)
    subs = submissions(root)
    people = load_lms_ids(root)
    out_dir = root / EXPORT_DIR
    rmtree(out_dir)   # generated: nothing of an earlier run may linger
    files: list[Path] = []
    held = sorted(k for k, s in subs.items() if s["pending"] and k[1] in assignments)
    ready = {k: s for k, s in subs.items() if not s["pending"] and k[1] in assignments}
    # Moodle reads this column with PHP's strtotime and skips a row older than the grade it holds:
    # ISO 8601 with the offset is read the same in every server time zone
    now = datetime.now(timezone.utc).astimezone().isoformat(timespec="seconds")
    named: set[str] = set()
    for a in assignments:
        rows, entries = [], []
        for (learner, name), s in sorted(ready.items()):
            info = people.get(learner, {})
            pid = info.get("ids", {}).get(name, "")
            if name != a or info.get("layout") != "moodle" or not pid:
                continue
            named.add(learner)
            rows.append([f"Participant {pid}", info.get("name", ""), info.get("email", ""), f"{s['score']:g}",
                         f"{s['max']:g}", now])
            for html in sorted((root / "feedback" / learner / a).glob("*.html")):
                entries.append((f"{_moodle_name(info.get('name', ''))}_{pid}_assignfeedback_file/{html.name}", html))
        if rows:
            rows.sort(key=lambda r: int(r[0].split()[-1]))   # participant id order, as Moodle lists them
            files.append(_write_csv(out_dir / "moodle" / f"{a}_worksheet.csv", _MOODLE_HEAD, rows))
        if entries:
            path = out_dir / "moodle" / f"{a}_feedback.zip"
            with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
                for arc, html in entries:
                    zf.write(html, arc)
            files.append(path)
    learners = sorted({k[0] for k in ready})
    by_email = [lid for lid in learners if people.get(lid, {}).get("email")]
    if by_email:
        rows = [[people[lid]["email"], *(f"{ready[(lid, a)]['score']:g}" if (lid, a) in ready else ""
                                         for a in assignments)] for lid in by_email]
        files.append(_write_csv(out_dir / "moodle_grades.csv", ["Email address", *assignments], rows))
        named.update(by_email)
    canvas = [lid for lid in learners if people.get(lid, {}).get("layout") == "canvas"]
    if canvas:
        rows = [[people[lid].get("name", ""), next(iter(people[lid]["ids"].values()), lid), "", "", "",
                 *(f"{ready[(lid, a)]['score']:g}" if (lid, a) in ready else "" for a in assignments)]
                for lid in canvas]
        files.append(_write_csv(out_dir / "canvas_grades.csv", [*_CANVAS_HEAD, *assignments], rows))
        named.update(canvas)
    return {"files": files, "held": held, "without_id": [lid for lid in learners if lid not in named],
            "marked": mark_pending_feedback(root, subs), "dir": out_dir}
