"""``ctxlab grade``: grade a class's submissions as the LMS exports them.

One command takes a folder or a zip of submissions, recognizes the learner and the
assignment of every notebook, places the notebooks where nbgrader expects them in a
course root (default ``grading/``, git-ignored), autogrades them in parallel
(:func:`ctxlab.grading.grade_parallel`), generates feedback and writes a grades CSV with
one row per learner. What could not be graded is reported with the reason, and the
learner still gets a row. The upload is only read, never modified (a zip is extracted to
a temporary folder).

Layouts recognized (the assignment comes from a known assignment id in the path):

- a folder per learner: ``LEARNER/00_start_here.ipynb`` or ``LEARNER/00_start_here/00_start_here.ipynb``
  (what ``nbgrader collect`` leaves in ``submitted/``; its ``timestamp.txt`` and
  ``submission_secret.txt`` travel with the notebook, so ``nbgrader release_feedback`` works)
- Moodle: ``氏名_12345_assignsubmission_file_/00_start_here.ipynb`` (the number is a
  per-assignment participant id, so the learner is the name)
- Canvas: ``learnername_12345_67890_00_start_here.ipynb`` (also ``learnername_LATE_...``;
  the learner is the user id 12345)
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import time
import unicodedata
import zipfile
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath

from . import grading
from .grading import ROOT

DESCRIPTION = """提出物を採点する（LMS から書き出したフォルダか zip）。

受講者ごとのフォルダ（LEARNER/00_start_here.ipynb、LEARNER/00_start_here/00_start_here.ipynb）、
Moodle（氏名_12345_assignsubmission_file_/00_start_here.ipynb）、
Canvas（learnername_12345_67890_00_start_here.ipynb）の形を読み、課題はパスに含まれる課題 id で見分けます。
採点は nbgrader の autograde を並列に実行し（常にオフライン）、成績 CSV とフィードバックを作ります。
元の提出物は読むだけで、変更しません。
"""

EPILOG = """例:
  ctxlab grade ~/Downloads/submissions.zip            # grading/ に採点し、grading/grades.csv を書く
  ctxlab grade exports/ --workers 4 --timeout 60
  ctxlab grade --export                               # 手動採点の後: CSV だけ書き直す
  ctxlab grade --export --feedback                    # 手動採点の点とコメントをフィードバックに反映
  ctxlab grade --validate course/00_start_here/00_start_here.ipynb   # 1 冊だけテストが通るか確かめる

終了コード: 0 すべて採点できた / 1 採点できなかった提出がある（理由は要約と CSV の notes 列）・--validate でテストが失敗 / 2 入力の誤り
"""

_CANVAS = re.compile(r"^(?P<name>[^_/]+?)(?:_LATE)?_(?P<uid>\d+)_(?P<sub>\d+)_(?P<file>.+)$")
_MOODLE = re.compile(r"^(?P<name>.+?)_(?P<pid>\d+)_assignsubmission_(?:file|onlinetext)_?$")
_SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_SKIP_PARTS = {"__MACOSX", ".ipynb_checkpoints", "__pycache__"}
# files `nbgrader collect` puts next to a submission: kept with it (release_feedback needs the secret)
NBGRADER_FILES = ("timestamp.txt", "submission_secret.txt")

KIND_TEXT = {
    "unknown_assignment": "課題が分からない",
    "unknown_learner": "受講者が分からない",
    "broken_notebook": "壊れたノートブック",
    "duplicate": "重複（新しいものを採点）",
    "autograde_failed": "採点できなかった",
    "timeout": "時間切れのセルあり（採点済み・そのセルは不合格）",
    "no_grade_cells": "採点セルが見つからない（配布版と別のノートブック？）",
}
PROBLEMS = {"unknown_assignment", "unknown_learner", "broken_notebook", "autograde_failed"}


class GradeError(ValueError):
    """Bad input to ``ctxlab grade`` (reported in one line, exit code 2)."""


# --------------------------------------------------------------------------- learners

def learner_id(name: str) -> str:
    """An nbgrader student id for a learner name: the name itself when it is a safe ASCII
    identifier (spaces and other ASCII punctuation become ``_``), otherwise ``u`` and 10 hex
    digits of its hash (Japanese names: the name stays in the CSV's name column)."""
    text = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", name)).strip()
    if text.isascii():
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_.-")
        if slug and _SAFE.match(slug):
            return slug
    return "u" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:10]


@dataclass
class Upload:
    rel: str                 # path inside the upload (as reported)
    file: Path               # where it is readable now
    mtime: float
    learner: str | None = None
    name: str = ""
    lms_id: str = ""
    layout: str = ""         # folder, moodle, canvas
    assignment: str | None = None
    extras: list[Path] = field(default_factory=list)   # nbgrader's timestamp.txt, submission_secret.txt


@dataclass
class Issue:
    kind: str
    learner: str | None
    assignment: str | None
    detail: str
    file: str = ""

    def text(self) -> str:
        where = f"{self.assignment}: " if self.assignment else ""
        return f"{KIND_TEXT.get(self.kind, self.kind)}: {where}{self.detail}"


def _assignment_in(text: str, known: list[str]) -> str | None:
    found = [a for a in known if re.search(rf"(?<![A-Za-z0-9]){re.escape(a)}(?![A-Za-z0-9])", text)]
    return max(found, key=len) if found else None


def identify(rel: str, known: list[str]) -> Upload:
    """Learner, name, LMS id, layout and assignment of one notebook path inside an upload."""
    parts = PurePosixPath(rel).parts
    fname = parts[-1]
    up = Upload(rel=rel, file=Path(), mtime=0.0)
    m = _CANVAS.match(fname)
    moodle = next((p for p in reversed(parts[:-1]) if _MOODLE.match(p)), None)
    if moodle:
        mm = _MOODLE.match(moodle)
        name = unicodedata.normalize("NFKC", mm.group("name")).strip()
        up.name, up.lms_id, up.layout, up.learner = name, mm.group("pid"), "moodle", learner_id(name)
    elif m and _assignment_in(m.group("file"), known) or (m and len(parts) == 1):
        up.name, up.lms_id, up.layout, up.learner = m.group("name"), m.group("uid"), "canvas", m.group("uid")
    else:
        folders = list(parts[:-1])
        if folders and folders[-1] in known:
            folders.pop()
        if folders:
            up.name, up.layout = unicodedata.normalize("NFKC", folders[-1]), "folder"
            up.learner = learner_id(folders[-1])
    up.assignment = _assignment_in(PurePosixPath(fname).stem, known)
    if up.assignment is None:
        for p in reversed(parts[:-1]):
            up.assignment = _assignment_in(p, known)
            if up.assignment:
                break
    return up


# --------------------------------------------------------------------------- reading an upload

def _zip_name(info: zipfile.ZipInfo) -> str:
    """The entry's real name: zips without the UTF-8 flag (Windows, some LMS) store
    cp437-decoded bytes, which are usually UTF-8 or CP932 (Japanese Windows)."""
    if info.flag_bits & 0x800:
        return info.filename
    raw = info.filename.encode("cp437", errors="replace")
    for enc in ("utf-8", "cp932"):
        try:
            return raw.decode(enc)
        except UnicodeDecodeError:
            continue
    return info.filename


def extract_zip(path: Path, dest: Path) -> None:
    """Extract a zip into dest with decoded names, safe paths and the entries' times."""
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            if info.is_dir():
                continue
            parts = [p for p in PurePosixPath(_zip_name(info).replace("\\", "/")).parts
                     if p not in ("", ".", "..", "/")]
            if not parts:
                continue
            target = dest.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src, open(target, "wb") as out:
                shutil.copyfileobj(src, out)
            try:
                t = time.mktime(info.date_time + (0, 0, -1))
                os.utime(target, (t, t))
            except (OverflowError, ValueError):
                pass


def scan(folder: Path, known: list[str]) -> tuple[list[Upload], list[Issue], int]:
    """Every notebook in an upload folder, identified; issues for what cannot be used;
    the number of other files ignored."""
    uploads, issues, ignored = [], [], 0
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        relp = path.relative_to(folder)
        if any(p in _SKIP_PARTS or p.startswith(".") for p in relp.parts):
            continue
        if path.suffix.lower() != ".ipynb":
            if path.name in NBGRADER_FILES and any(path.parent.glob("*.ipynb")):
                continue
            ignored += 1
            continue
        up = identify(relp.as_posix(), known)
        up.file, up.mtime = path, path.stat().st_mtime
        up.extras = [path.parent / n for n in NBGRADER_FILES if (path.parent / n).is_file()]
        if up.learner is None:
            issues.append(Issue("unknown_learner", None, up.assignment,
                                "受講者のフォルダの中にありません（LEARNER/課題.ipynb の形にしてください）", up.rel))
        elif up.assignment is None:
            issues.append(Issue("unknown_assignment", up.learner, None,
                                f"{up.rel}（ファイル名かフォルダ名に課題 id（{known[0]} など）を含めてください）", up.rel))
        uploads.append(up)
    return uploads, issues, ignored


def check_notebook(path: Path) -> tuple[str | None, int]:
    """(why the file cannot be graded or None, number of nbgrader cells)."""
    import nbformat

    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        return "UTF-8 のテキストではありません", 0
    try:
        data = json.loads(text)
    except ValueError as exc:
        return f"JSON として読めません（{exc.msg}, {exc.lineno} 行目）", 0
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        return "ノートブックの形ではありません（cells がありません）", 0
    try:
        nb = nbformat.reads(text, as_version=4)
    except Exception as exc:  # nbformat raises several kinds
        return f"ノートブックとして読めません（{type(exc).__name__}: {str(exc)[:120]}）", 0
    return None, sum(1 for c in nb.cells if c.get("metadata", {}).get("nbgrader"))


def newest(uploads: list[Upload]) -> tuple[list[Upload], list[Issue]]:
    """One upload per (learner, assignment): the newest (file time, then path order)."""
    groups: dict[tuple[str, str], list[Upload]] = {}
    for up in uploads:
        if up.learner and up.assignment:
            groups.setdefault((up.learner, up.assignment), []).append(up)
    kept, issues = [], []
    for (learner, assignment), ups in sorted(groups.items()):
        ups.sort(key=lambda u: (u.mtime, u.rel))
        kept.append(ups[-1])
        if len(ups) > 1:
            issues.append(Issue("duplicate", learner, assignment,
                                f"{ups[-1].rel} を採点し、古い {len(ups) - 1} 件を無視: "
                                + ", ".join(u.rel for u in ups[:-1]), ups[-1].rel))
    return kept, issues


# --------------------------------------------------------------------------- state of a course root

def _load_json(path: Path, default):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return default


def _save_json(path: Path, data) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    tmp.replace(path)


@dataclass
class Report:
    root: Path
    uploads: int = 0
    ignored: int = 0
    placed: list[tuple[str, str]] = field(default_factory=list)
    unchanged: list[tuple[str, str]] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)
    run: grading.GradeRun | None = None
    csv: Path | None = None
    regenerated: list[str] = field(default_factory=list)
    seconds: float = 0.0
    summary: dict | None = None
    names: dict[str, str] = field(default_factory=dict)   # learner id -> name as the LMS wrote it

    def who(self, learner: str | None) -> str:
        name = self.names.get(learner or "", "")
        return f"{name}（{learner}）" if name and name != learner else (learner or "?")

    @property
    def failed(self) -> list[grading.Outcome]:
        return [o for o in (self.run.outcomes if self.run else []) if not o.graded]

    @property
    def problems(self) -> list[Issue]:
        return [i for i in self.issues if i.kind in PROBLEMS]


def _timestamp(mtime: float) -> str:
    return datetime.fromtimestamp(mtime, timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f UTC")


def _graded(root: Path, student: str, assignment: str) -> bool:
    ag = root / "autograded" / student / assignment
    return ag.exists() and any(ag.glob("*.ipynb"))


def intake(upload: Path, root: Path, known: list[str], force: bool = False) -> Report:
    """Read an upload and place the submissions to grade in ``root/submitted``."""
    from nbgrader.api import Gradebook

    report = Report(root=root)
    # a submission that nbgrader could not grade is tried again only when it changed (or --force)
    failed_before = {(d.get("learner"), d.get("assignment")) for d in _load_json(root / "issues.json", [])
                     if d.get("kind") == "autograde_failed"}
    with tempfile.TemporaryDirectory(prefix="ctxlab-upload-") as tmp:
        if upload.is_file():
            if not zipfile.is_zipfile(upload):
                raise GradeError(f"{upload} は zip でもフォルダでもありません")
            folder = Path(tmp) / "upload"
            extract_zip(upload, folder)
        elif upload.is_dir():
            folder = upload
        else:
            raise GradeError(f"{upload} が見つかりません")
        uploads, issues, report.ignored = scan(folder, known)
        report.uploads = len(uploads)
        kept, dups = newest(uploads)
        issues += dups
        learners: dict[str, dict] = {}
        for up in kept:
            reason, n_cells = check_notebook(up.file)
            learners[up.learner] = {"name": up.name, "lms_id": up.lms_id}
            if reason:
                issues.append(Issue("broken_notebook", up.learner, up.assignment, f"{up.rel}: {reason}", up.rel))
                continue
            if n_cells == 0:
                issues.append(Issue("no_grade_cells", up.learner, up.assignment,
                                    f"{up.rel}: nbgrader のセルがありません。0 点になります", up.rel))
            target = root / "submitted" / up.learner / up.assignment / f"{up.assignment}.ipynb"
            same = target.exists() and target.read_bytes() == up.file.read_bytes()
            if same and not force and (_graded(root, up.learner, up.assignment)
                                       or (up.learner, up.assignment) in failed_before):
                report.unchanged.append((up.learner, up.assignment))
                continue
            grading._rmtree(target.parent)
            grading.place_submission(root, up.learner, up.assignment, up.file, _timestamp(up.mtime))
            for extra in up.extras:  # nbgrader's own timestamp wins over the file time
                shutil.copy(extra, target.parent / extra.name)
            report.placed.append((up.learner, up.assignment))
        for issue in issues:
            if issue.learner and issue.learner not in learners:
                up = next((u for u in uploads if u.learner == issue.learner), None)
                learners[issue.learner] = {"name": up.name if up else issue.learner, "lms_id": up.lms_id if up else ""}
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        for lid, info in learners.items():
            attrs = {k: v for k, v in (("last_name", info["name"]), ("lms_user_id", info["lms_id"])) if v}
            gb.update_or_create_student(lid, **attrs)
    report.issues = issues
    report.names = {lid: info["name"] for lid, info in learners.items()}
    return report


def _record(root: Path, report: Report) -> list[Issue]:
    """Keep the issues of earlier runs that still hold, add this run's; return all."""
    path = root / "issues.json"
    graded_now = {(o.student, o.assignment) for o in (report.run.outcomes if report.run else []) if o.graded}
    fresh = [i for i in report.issues if i.kind != "duplicate"]  # duplicates are for this run's summary only
    for o in report.failed:
        fresh.append(Issue("autograde_failed", o.student, o.assignment, o.error))
    for o in (report.run.outcomes if report.run else []):
        if o.graded and o.timeouts:
            fresh.append(Issue("timeout", o.student, o.assignment, f"{o.timeouts} セルが制限時間で止められました"))
    keys = {(i.kind, i.learner, i.assignment, i.file) for i in fresh}
    replaced = graded_now | {(i.learner, i.assignment) for i in fresh if i.assignment}
    old = [Issue(**d) for d in _load_json(path, [])]
    kept = [i for i in old if (i.kind, i.learner, i.assignment, i.file) not in keys
            and not (i.assignment and (i.learner, i.assignment) in replaced)]
    allissues = kept + fresh
    _save_json(path, [asdict(i) for i in allissues])
    return allissues


# --------------------------------------------------------------------------- grades CSV

def export_csv(root: Path, path: Path, known: list[str], issues: list[Issue] | None = None) -> dict:
    """Write the grades CSV: one row per learner, one column per assignment (the score,
    autograded plus any manual points given; empty when nothing was submitted, 0 when a
    submission could not be graded), the total, the written answers' points still to grade
    (pending_manual) and notes. Returns a small summary."""
    from nbgrader.api import Gradebook

    issues = issues if issues is not None else [Issue(**d) for d in _load_json(root / "issues.json", [])]
    rows: dict[str, dict] = {}
    maxima: dict[str, float] = {}
    pending_total = 0.0
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        for a in gb.assignments:
            maxima[a.name] = float(a.max_score)
        for st in gb.students:
            rows[st.id] = {"learner_id": st.id, "name": st.last_name or "", "scores": {}, "pending": {}}
        for a in gb.assignments:
            for sub in a.submissions:
                row = rows.setdefault(sub.student.id, {"learner_id": sub.student.id, "name": "", "scores": {}, "pending": {}})
                row["scores"][a.name] = float(sub.score)
                pend = sum(float(g.max_score) for nb in sub.notebooks for g in nb.grades if g.needs_manual_grade)
                if pend:
                    row["pending"][a.name] = pend
    for i in issues:
        if i.learner is None:
            continue
        row = rows.setdefault(i.learner, {"learner_id": i.learner, "name": "", "scores": {}, "pending": {}})
        if i.kind in ("broken_notebook", "autograde_failed") and i.assignment:
            row["scores"].setdefault(i.assignment, 0.0)
    assignments = [a for a in known if a in maxima] + sorted(a for a in maxima if a not in known)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8-sig") as fh:  # BOM: Excel opens Japanese names right
        w = csv.writer(fh)
        w.writerow(["learner_id", "name", *assignments, "total", "pending_manual", "notes"])
        for lid, row in sorted(rows.items(), key=lambda kv: (kv[1]["name"], kv[0])):
            notes = [i.text() for i in issues if i.learner == lid]
            if row["pending"]:
                pending_total += sum(row["pending"].values())
                notes.append("記述の未採点: " + ", ".join(f"{a} {p:g} 点" for a, p in row["pending"].items()))
            cells = [f"{row['scores'][a]:g}" if a in row["scores"] else "" for a in assignments]
            w.writerow([lid, row["name"], *cells, f"{sum(row['scores'].values()):g}",
                        f"{sum(row['pending'].values()):g}", " / ".join(notes)])
    return {"learners": len(rows), "assignments": assignments, "maxima": maxima, "pending": pending_total}


# --------------------------------------------------------------------------- the command

def course_dir(arg: str | None) -> Path:
    if arg:
        d = Path(arg).resolve()
    else:
        cwd = Path.cwd()
        d = cwd if (cwd / "nbgrader_config.py").exists() and (cwd / grading.SOURCE_DIR).is_dir() else ROOT
    if not (d / "nbgrader_config.py").exists() or not (d / grading.SOURCE_DIR).is_dir():
        raise GradeError(f"{d} に nbgrader_config.py と {grading.SOURCE_DIR}/ がありません（--course で指定してください）")
    return d


class _Lock:
    """One ``ctxlab grade`` at a time per course root (the gradebook has one writer)."""

    def __init__(self, root: Path):
        self.path = root / ".lock"

    def __enter__(self):
        import fcntl

        self.fh = open(self.path, "w")
        try:
            fcntl.flock(self.fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self.fh.close()
            raise GradeError(f"{self.path.parent} では別の ctxlab grade が実行中です") from None
        return self

    def __exit__(self, *exc):
        self.fh.close()


def grade(upload: Path | None, root: Path, course: Path = ROOT, workers: int | None = None,
          timeout: int | None = None, feedback: bool = True, csv_path: Path | None = None,
          force: bool = False, progress: bool = True, config_args: list[str] | None = None,
          assignments: list[str] | None = None) -> Report:
    """The whole run: course root, intake, parallel autograde with feedback, CSV."""
    from .release import assignments as all_assignments

    t0 = time.perf_counter()
    if upload is not None:
        upload = Path(upload)
        if not upload.exists():
            raise GradeError(f"{upload} が見つかりません")
        if upload.is_file() and not zipfile.is_zipfile(upload):
            raise GradeError(f"{upload} は zip でもフォルダでもありません")
    known = all_assignments(course)
    if assignments:
        unknown = [a for a in assignments if a not in known]
        if unknown:
            raise GradeError(f"知らない課題 id: {', '.join(unknown)}（{', '.join(known)}）")
        known = [a for a in known if a in assignments]
    root = Path(root).resolve()
    root.mkdir(parents=True, exist_ok=True)
    args = list(config_args or [])
    if timeout:
        args.append(f"--ExecutePreprocessor.timeout={int(timeout)}")
    with _Lock(root):
        regenerated = grading.sync_course_root(root, known, course)
        if upload is not None:
            report = intake(Path(upload), root, known, force=force)
            report.run = grading.grade_parallel(root, report.placed, workers=workers, config_args=args,
                                                feedback=feedback, progress=progress)
        else:
            report = Report(root=root)
            if feedback:
                report.run = None
                proc = grading.nbgrader(root, "generate_feedback", "*", "--force", "--log-level=WARN", *args,
                                        check=False)
                if proc.returncode != 0:
                    raise GradeError("generate_feedback に失敗しました:\n" + proc.stderr[-2000:])
        report.regenerated = regenerated
        issues = _record(root, report)
        report.csv = Path(csv_path) if csv_path else root / "grades.csv"
        report.summary = export_csv(root, report.csv, known, issues)
    report.seconds = time.perf_counter() - t0
    return report


def _fmt_seconds(s: float) -> str:
    m, s = divmod(int(round(s)), 60)
    return f"{m} 分 {s} 秒" if m else f"{s} 秒"


def format_summary(report: Report, limit: int = 20) -> str:
    lines = []
    if report.regenerated:
        lines.append(f"課題を生成しました（generate_assignment）: {', '.join(report.regenerated)}")
    run = report.run
    if run is not None:
        ok = sum(o.graded for o in run.outcomes)
        lines.append(f"採点 {len(run.outcomes)} 件（成功 {ok} / 失敗 {len(run.outcomes) - ok}）"
                     f"  ワーカー {run.workers}  採点 {_fmt_seconds(run.seconds)}  全体 {_fmt_seconds(report.seconds)}")
    if report.uploads:
        lines.append(f"提出物 {report.uploads} 件を読みました（前回と同じで採点済み {len(report.unchanged)} 件、"
                     f".ipynb 以外で無視 {report.ignored} 件）")

    def block(title: str, items: list[str]) -> None:
        if items:
            lines.append(f"{title}: {len(items)} 件")
            lines.extend(f"  - {x}" for x in items[:limit])
            if len(items) > limit:
                lines.append(f"  …ほか {len(items) - limit} 件（{report.root / 'issues.json'}）")

    block("採点できなかった", [f"{report.who(o.student)} {o.assignment}: {o.error}" for o in report.failed])
    if run is not None and run.feedback:
        block("フィードバックを作れなかった（採点は済み・ログを参照）",
              [f"{report.who(o.student)} {o.assignment}" for o in run.outcomes if o.graded and not o.feedback])
    block("時間切れのセルあり（採点済み）",
          [f"{report.who(o.student)} {o.assignment}: {o.timeouts} セル" for o in (run.outcomes if run else [])
           if o.timeouts])
    for kind in ("broken_notebook", "unknown_assignment", "unknown_learner", "no_grade_cells", "duplicate"):
        block(KIND_TEXT[kind], [f"{report.who(i.learner)}: {i.detail}" for i in report.issues if i.kind == kind])
    summ = report.summary
    if summ and report.csv:
        maxima = ", ".join(f"{a} {summ['maxima'][a]:g}" for a in summ["assignments"])
        lines.append(f"成績: {report.csv}（{summ['learners']} 人、記述の未採点 {summ['pending']:g} 点）")
        lines.append(f"  満点: {maxima}")
    if run is not None and any(o.feedback for o in run.outcomes):
        lines.append(f"フィードバック: {report.root / 'feedback'}/<受講者>/<課題>/<課題>.html")
    return "\n".join(lines)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = DESCRIPTION
    p.epilog = EPILOG
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("submissions", nargs="?", type=Path,
                   help="提出物のフォルダか zip（LMS の一括ダウンロード）。省略すると --export")
    p.add_argument("--root", type=Path, default=Path("grading"),
                   help="採点用のコースルート（既定 grading/、git 管理外）")
    p.add_argument("--course", help="solutions/ と nbgrader_config.py のあるフォルダ（既定: リポジトリ）")
    p.add_argument("--workers", type=int, default=None,
                   help=f"並列に採点する数（既定: CPU 数 = {os.cpu_count()}）")
    p.add_argument("--timeout", type=int, default=None,
                   help="セル 1 つの制限時間（秒、既定は nbgrader_config.py の 120）")
    p.add_argument("--assignment", action="append", help="この課題だけ採点する（繰り返し可）")
    p.add_argument("--csv", type=Path, help="成績 CSV の出力先（既定 ROOT/grades.csv）")
    p.add_argument("--no-feedback", dest="feedback", action="store_false", help="フィードバックを作らない")
    p.add_argument("--feedback", dest="feedback", action="store_true",
                   help="--export と一緒に: すべてのフィードバックを作り直す")
    p.add_argument("--force", action="store_true", help="前回と同じ提出物も採点し直す")
    p.add_argument("--export", action="store_true", help="採点せず、成績 CSV を書き直す（手動採点の後など）")
    p.add_argument("--quiet", action="store_true", help="進捗バーを出さない")
    p.add_argument("--validate", nargs="+", type=Path, metavar="NOTEBOOK",
                   help="採点せず、ノートブックのテストが通るかだけ確かめる（nbgrader validate。失敗があれば終了コード 1）")
    p.set_defaults(feedback=None)


def validate(paths: list[Path], timeout: int | None = None) -> int:
    """``--validate``: nbgrader's validation, with an exit code that says whether tests failed."""
    bad = 0
    for path in paths:
        if not path.exists():
            raise GradeError(f"{path} が見つかりません")
        try:
            res = grading.validate(path, timeout)
        except RuntimeError as exc:
            print(f"{path}: 確かめられませんでした: {exc}")
            bad += 1
            continue
        failed, changed, typed = res.get("failed", []), res.get("changed", []), res.get("type_changed", [])
        if not (failed or changed or typed):
            print(f"{path}: OK（公開テストはすべて通ります）")
            continue
        bad += 1
        if typed or changed:
            print(f"{path}: 編集してはいけないセルが変更されています（{len(typed) + len(changed)} セル）")
        for cell in failed:
            first = cell["source"].strip().split("\n")[0][:80]
            raw = re.sub(r"\x1b\[[0-9;]*m", "", cell.get("raw_error") or "").strip()
            last = raw.split("\n")[-1][:160]
            print(f"{path}: 失敗: {first} … → {last}")
    return 1 if bad else 0


def run(args: argparse.Namespace) -> int:
    if args.validate:
        return validate(args.validate, args.timeout)
    if args.submissions is None and not args.export:
        raise GradeError("提出物のフォルダか zip を指定してください（CSV だけ書き直すときは --export）")
    if args.workers is not None and args.workers < 1:
        raise GradeError("--workers は 1 以上にしてください")
    feedback = args.feedback if args.feedback is not None else (args.submissions is not None)
    report = grade(None if args.export else args.submissions, args.root, course_dir(args.course),
                   workers=args.workers, timeout=args.timeout, feedback=feedback, csv_path=args.csv,
                   force=args.force, progress=not args.quiet, assignments=args.assignment)
    print(format_summary(report))
    return 1 if (report.failed or report.problems) else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="ctxlab grade")
    add_arguments(ap)
    args = ap.parse_args(argv)
    try:
        return run(args)
    except GradeError as exc:
        print(f"ctxlab grade: エラー: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
