"""Back to the LMS: grades files that Moodle and Canvas import, Moodle's feedback zip, pending marks.

Every ``ctxlab grade`` run writes into ``ROOT/lms/`` (the ids come from the export that was
graded, recorded in ``ROOT/lms.json`` by :mod:`~ctxlab.grading.lms`). An importer applies
every cell it reads, and a blank cell clears a grade (Moodle's gradebook import stores it
as an overridden "no grade", Canvas's as ``posted_grade: null``), so no file holds a blank
cell: a file is written per assignment, with only the learners whose grade is final.

- ``moodle/ASSIGNMENT_worksheet.csv``: Moodle's offline grading worksheet for one assignment
  (``Identifier`` = ``Participant N`` with the per-assignment participant id, ``Full name``,
  ``Email address``, ``Grade``, ``Maximum Grade``, ``Last modified (grade)``), for the
  assignment's "Upload grading worksheet";
- ``moodle/ASSIGNMENT_feedback.zip``: the assignment's "Upload multiple feedback files in a
  zip": one folder ``氏名_N_assignfeedback_file_/`` per participant with the feedback HTML.
  Moodle finds the participant by the number after the first ``_``; the trailing ``_`` is
  the form both importers accept (before 4.1 it is required, 4.1+ reads the same file name
  with or without it);
- ``moodle_grades_ASSIGNMENT.csv``: the course gradebook's "Import > CSV file" (``Email
  address`` as the LMS wrote it, one grade column), for learners whose email is known (a
  roster) and only for assignments that have no worksheet: a gradebook import overrides the
  assignment's grade, so the two are never offered for the same assignment;
- ``canvas_grades_ASSIGNMENT.csv``: Canvas's Gradebook import (``Student``, ``ID`` = Canvas
  user id, ``SIS User ID``, ``SIS Login ID``, ``Section``, one grade column).

Names are labels: a cell or folder name that a spreadsheet would run as a formula (leading
``= + - @``, tab or CR) is neutralised (:func:`spreadsheet_safe`); the columns the LMS
matches on (identifier, email, id) are written as they are. Every CSV starts with a UTF-8
BOM, so Japanese Excel shows the names (Moodle's CSV reader removes it; Canvas imports its
own exports, which carry one).

A submission whose written answers are not graded yet is left out of these files (its score
would be the autograded part only) and counted, and its feedback HTML says at the top that
the written points shown are not graded yet (:func:`mark_pending_feedback`). Feedback that
shows the correct answers (an assignment with a ``*.key.yaml`` answer key) stays out of the
zip until the deadline has passed (``release_answers``). Feedback that does not show the
gradebook's state (graded by hand after it was made: :func:`~ctxlab.grading._manual.stale_feedback`)
never joins the zip: the worksheet and the zip always come from one state.
"""
from __future__ import annotations

import csv
import json
import re
import unicodedata
import zipfile
from datetime import datetime, timezone
from pathlib import Path

from ctxlab.errors import GradeError
from ctxlab.grading._manual import stale_feedback
from ctxlab.grading._nbgrader import SOURCE_DIR, gradebook_url, rmtree
from ctxlab.grading.lms import load_lms_ids

EXPORT_DIR = "lms"
PENDING_MARK = "ctxlab-pending-manual"
PENDING_HTML = (f'<div id="{PENDING_MARK}" style="border:2px solid #c60;background:#fff3e0;padding:0.8em;'
                'margin:1em;font-size:1.1em">この課題の記述問題はまだ採点されていません（{points:g} 点分）。'
                'ここに表示される記述問題の点（0 点）は仮のもので、講師が採点した後のフィードバックで確定します。</div>')
# no "Feedback comments" column: an empty one would clear comments typed in Moodle
_MOODLE_HEAD = ["Identifier", "Full name", "Email address", "Grade", "Maximum Grade", "Last modified (grade)"]
_CANVAS_HEAD = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
# what Excel (and LibreOffice, Google Sheets) take as the start of a formula; full-width forms too
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "＝", "＋", "－", "＠")


def spreadsheet_safe(text: str) -> str:
    """A name or note as a spreadsheet shows it as text: a leading apostrophe when it starts
    like a formula (``=SUM(A1) 高橋 健`` -> ``'=SUM(A1) 高橋 健``). Only for label columns:
    never for the columns an LMS matches on."""
    text = str(text)
    return "'" + text if text.startswith(_FORMULA_START) else text


def write_csv(path: Path, head: list[str], rows: list[list[str]]) -> Path:
    """A CSV in UTF-8 with a BOM (Japanese Excel reads it; Moodle and Canvas accept it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8-sig") as fh:
        w = csv.writer(fh)
        w.writerow(head)
        w.writerows(rows)
    return path


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


def moodle_folder(name: str, pid: str) -> str:
    """The feedback zip's folder for one participant: ``氏名_N_assignfeedback_file_``. Moodle
    splits it at ``_`` (the name part must hold none) and reads N; the name is only a label,
    so one that starts like a formula loses those characters."""
    label = re.sub(r"[_/\\]+", " ", name)
    # whitespace (any Unicode space, a no-break space included) and invisible format characters
    # are stripped before the formula characters, and again after them, until neither starts it
    while label and (label.startswith(_FORMULA_START) or unicodedata.category(label[0])[0] in "ZC"):
        label = label[1:]
    label = label.strip() or "learner"
    return f"{label}_{pid}_assignfeedback_file_"


def canvas_feedback_name(info: dict, assignment: str, html: Path) -> str:
    """A feedback file's name in the zip for Canvas's "Re-upload submissions"
    (``Assignment#generate_comments_from_files``): ``infer_comment_context_from_filename`` splits
    the name at ``_`` and takes the first two all-digit parts as the user id and the attachment
    id of the submission, so the label before them holds no ``_`` and is never all digits."""
    label = re.sub(r"[_\s/\\]+", "", info.get("name", "")) or "learner"
    label = "n" + label if label.isdigit() else label
    return f"{label}_{info['ids'][assignment]}_{info['attachments'][assignment]}_{html.stem}.html"


CANVAS_FILE = "canvas_assignments.json"
_TITLE_AND_ID = re.compile(r"\A(.*)\s\((\d+)\)\Z", re.S)   # Assignment.title_and_id in canvas-lms


def save_canvas_assignments(root: Path, specs: list[str], known: list[str]) -> dict[str, str]:
    """Record ``--canvas-assignment ASSIGNMENT=ID`` or ``ASSIGNMENT=Title (ID)`` in the course
    root (later runs and ``--export`` reuse it): the Canvas CSV's column header. Returns all."""
    data = load_canvas_assignments(root)
    for spec in specs:
        a, sep, value = spec.partition("=")
        a, value = a.strip(), value.strip()
        if not sep or a not in known:
            raise GradeError(f"--canvas-assignment {spec}: 「課題=Canvas の課題 id」か「課題=課題名 (id)」の形にしてください"
                             f"（課題: {', '.join(known)}）")
        if value.isdigit():
            value = f"{a} ({value})"
        if not _TITLE_AND_ID.match(value):
            raise GradeError(f"--canvas-assignment {spec}: Canvas の課題 id（数字）がありません。Canvas の課題の URL "
                             "…/assignments/12345 の数字を「課題=12345」か「課題=課題名 (12345)」で指定してください")
        data[a] = value
    path = Path(root) / CANVAS_FILE
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True), encoding="utf-8")
    return data


def load_canvas_assignments(root: Path) -> dict[str, str]:
    """assignment -> the Canvas gradebook header ``Title (id)`` recorded in the course root."""
    try:
        return json.loads((Path(root) / CANVAS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def answer_sheets(course: Path, assignments: list[str]) -> tuple[str, ...]:
    """The assignments whose feedback shows the correct answers: their source carries an
    answer key (``*.key.yaml``, e.g. 09's knowledge check)."""
    return tuple(a for a in assignments if any((Path(course) / SOURCE_DIR / a).glob("*.key.yaml")))


def _score(s: dict) -> str:
    return f"{s['score']:g}"


def export(root: Path, assignments: list[str], answer_sheets: tuple[str, ...] = (),
           release_answers: bool = False) -> dict:
    """Write the LMS files of ``assignments`` (every assignment of the course, in order) into
    ``ROOT/lms/``, replacing an earlier run's. ``answer_sheets`` are assignments whose
    feedback shows the correct answers: their feedback joins the zip only with
    ``release_answers`` (after the deadline). Returns what was written: ``files`` (paths),
    ``held`` (submissions left out: written answers not graded yet), ``without_id`` (graded
    learners the files cannot name: no LMS id or email), ``anonymous`` and ``groups``
    (graded, but the LMS id is not a person's: Canvas anonymous grading, Moodle group
    submissions), ``answers_held`` (assignments whose answer-sheet feedback was held),
    ``gradebook`` (assignments in a Moodle gradebook CSV), ``marked``."""
    root = Path(root)
    subs = submissions(root)
    people = load_lms_ids(root)
    stale = stale_feedback(root)
    out_dir = root / EXPORT_DIR
    rmtree(out_dir)   # generated: nothing of an earlier run may linger
    files: list[Path] = []
    held = sorted(k for k, s in subs.items() if s["pending"] and k[1] in assignments)
    ready = {k: s for k, s in subs.items() if not s["pending"] and k[1] in assignments}
    # Moodle reads this column with PHP's strtotime and skips a row older than the grade it holds:
    # ISO 8601 with the offset is read the same in every server time zone
    now = datetime.now(timezone.utc).astimezone().isoformat(timespec="seconds")
    placed: set[tuple[str, str]] = set()
    answers_held: list[str] = []
    gradebook: list[str] = []
    titles, untitled = load_canvas_assignments(root), []
    for a in assignments:
        mine = {lid: s for (lid, name), s in sorted(ready.items()) if name == a}
        rows, entries = [], []
        for lid, s in mine.items():
            info = people.get(lid, {})
            pid = info.get("ids", {}).get(a, "")
            if info.get("layout") != "moodle" or not pid:
                continue
            placed.add((lid, a))
            rows.append([f"Participant {pid}", spreadsheet_safe(info.get("name", "")), info.get("email", ""),
                         _score(s), f"{s['max']:g}", now])
            if (lid, a) in stale:   # feedback older than the grade: never sent beside it
                continue
            for html in sorted((root / "feedback" / lid / a).glob("*.html")):
                entries.append((f"{moodle_folder(info.get('name', ''), pid)}/{html.name}", html))
        if rows:
            rows.sort(key=lambda r: int(r[0].split()[-1]))   # participant id order, as Moodle lists them
            files.append(write_csv(out_dir / "moodle" / f"{a}_worksheet.csv", _MOODLE_HEAD, rows))
        if entries and a in answer_sheets and not release_answers:
            answers_held.append(a)
        elif entries:
            path = out_dir / "moodle" / f"{a}_feedback.zip"
            with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
                for arc, html in entries:
                    zf.write(html, arc)
            files.append(path)
        # the course gradebook by email, only where no worksheet carries the assignment
        by_email = [lid for lid in mine if people.get(lid, {}).get("email") and (lid, a) not in placed]
        if by_email and not rows:
            files.append(write_csv(out_dir / f"moodle_grades_{a}.csv", ["Email address", a],
                                   [[people[lid]["email"], _score(mine[lid])] for lid in by_email]))
            placed.update((lid, a) for lid in by_email)
            gradebook.append(a)
        canvas = [lid for lid in mine if people.get(lid, {}).get("layout") == "canvas"
                  and people[lid].get("ids", {}).get(a)]
        if canvas:
            header = titles.get(a) or a
            if a not in titles:
                untitled.append(a)
            files.append(write_csv(out_dir / f"canvas_grades_{a}.csv", [*_CANVAS_HEAD, header],
                                   [[spreadsheet_safe(people[lid].get("name", "")), people[lid]["ids"][a], "", "", "",
                                     _score(mine[lid])] for lid in canvas]))
            placed.update((lid, a) for lid in canvas)
            comments = [(canvas_feedback_name(people[lid], a, html), html) for lid in canvas if (lid, a) not in stale
                        and people[lid].get("attachments", {}).get(a)
                        for html in sorted((root / "feedback" / lid / a).glob("*.html"))]
            if comments and a in answer_sheets and not release_answers:
                answers_held += [] if a in answers_held else [a]
            elif comments:
                path = out_dir / f"canvas_feedback_{a}.zip"
                with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
                    for arc, html in comments:
                        zf.write(html, arc)
                files.append(path)
    unplaced = {k for k in ready if k not in placed}
    kinds = {k: people.get(k[0], {}).get("layout", "") for k in unplaced}
    return {"files": files, "held": held, "canvas_untitled": untitled, "stale_feedback": sorted(k for k in stale if k in ready), "dir": out_dir, "answers_held": answers_held, "gradebook": gradebook,
            "anonymous": sorted(k for k, v in kinds.items() if v == "canvas_anon"),
            "groups": sorted(k for k, v in kinds.items() if v == "moodle_group"),
            "without_id": sorted({k[0] for k, v in kinds.items() if v not in ("canvas_anon", "moodle_group")}),
            "marked": mark_pending_feedback(root, subs)}
