"""Reading an LMS export: which learner and which assignment every notebook is, and what is wrong.

Layouts recognized (the assignment comes from a known assignment id in the path):

- a folder per learner: ``LEARNER/00_start_here.ipynb`` or ``LEARNER/00_start_here/00_start_here.ipynb``
  (what ``nbgrader collect`` leaves in ``submitted/``; its ``timestamp.txt`` and
  ``submission_secret.txt`` travel with the notebook, so ``nbgrader release_feedback`` works)
- Moodle: ``氏名_12345_assignsubmission_file_/00_start_here.ipynb`` or, downloaded without
  folders, ``氏名_12345_assignsubmission_file_00_start_here.ipynb`` (12345 is a per-assignment
  participant id)
- Moodle blind marking: ``Participant_12345_assignsubmission_file_/…`` (the name is Moodle's
  word for "participant": each participant id is its own learner); group submissions
  (``--moodle-groups``): ``グループ名_678_assignsubmission_file_/…`` where 678 is the group id
- Canvas (``lib/content_zipper.rb``: ``sortable name[_LATE]_userid_fileid_file``):
  ``learnername_12345_67890_00_start_here.ipynb``, ``learnername_LATE_12345_…`` (a late
  submission: reported), a sortable name may keep ``_`` (``o_brienpat_12345_…``); anonymous
  grading: ``anon_<id>_67890_…``, ``LATE_anon_<id>_…`` (each anonymous id, per assignment, is
  its own learner; it is not a user id, so it never reaches the Canvas grades file)

Who a learner is (:func:`key_learners`): two submissions of one assignment are the same
learner only when their LMS id is the same; names are labels, compared exactly as the LMS
wrote them (no folding of case, width, spacing or punctuation). The LMS's own id where it
names a person (Canvas's user id); a roster (``--roster roster.csv``: id, name, email;
:func:`read_roster`) maps any LMS id, Moodle's per-assignment participant ids included, to a
person (keyed by email). Without a roster a Moodle learner is the exact name across
assignments, unless two participant ids share a name in one assignment: then each id is a
learner of its own and the name is reported.

Zips are extracted with their names decoded (CP932 from Japanese Windows) and safe paths, a
folder is copied without following links, and a notebook is checked before nbgrader sees it
(:mod:`~ctxlab.grading._files`). The issues found (and those of earlier runs) are kept in the
course root's ``issues.json``.
"""
from __future__ import annotations

import csv
import json
import re
import unicodedata
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath

from ctxlab.errors import GradeError
from ctxlab.grading._files import MAX_FILE_MB, check_notebook, copy_tree, extract_zip  # noqa: F401 (their home is _files)
from ctxlab.grading._identity import Upload, identify, learner_id, wrapper_depth  # noqa: F401 (their home is _identity)

# Moodle's get_string('participant', 'assign') in blind marking (English and Japanese language packs)
BLIND_NAMES = ("Participant", "参加者")
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
    "same_name": "同名の受講者（id ごとに別の受講者として採点・要確認）",
    "same_name_distinct": "同名の受講者（LMS のユーザー id で区別済み）",
    "manual_dropped": "再提出で記述が変わったため手動採点を取り消し（採点し直してください）",
    "sandbox_limit": "サンドボックスが拒否・制限した操作あり（採点済み）",
    "gradebook_discarded": "gradebook への採点以外の変更を破棄",
    "no_sandbox": "サンドボックスなしで採点（--no-sandbox）",
    "link": "リンク（シンボリックリンク）は読まずに除外",
    "skipped_file": "読み込めないファイルを除外",
    "late": "遅れた提出（LMS のファイル名に LATE）",
    "review": "自動採点を保留・要確認（採点の仕組みに手を加えるコード。テストは 0 点、formgrader で手動採点）",
}
PROBLEMS = {"unknown_assignment", "unknown_learner", "broken_notebook", "autograde_failed", "same_name",
            "link", "skipped_file", "review"}



# --------------------------------------------------------------------------- learners

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


# --------------------------------------------------------------------------- reading an upload

def extract_zips(folder: Path, into: Path) -> list[tuple[Path, list[tuple[str, str]]]]:
    """A folder of LMS zips (Moodle gives one per assignment): each zip directly in ``folder``
    extracted into a folder of its own under ``into`` (named after the zip). Returns each
    folder with the entries left out of it (:func:`~ctxlab.grading._files.extract_zip`)."""
    out = []
    for z in sorted(folder.glob("*.zip")):
        try:
            out.append((into / z.stem, extract_zip(z, into / z.stem)))
        except zipfile.BadZipFile:
            raise GradeError(f"{z} は zip として読めません（LMS からもう一度ダウンロードしてください）") from None
    return out


def scan(folder: Path, known: list[str], links: list[str] = (), left_out: list[tuple[str, str]] = (),
         prefix: str = "") -> tuple[list[Upload], list[Issue], int]:
    """Every notebook in an upload folder, identified by the upload's top-level entries
    (:func:`~ctxlab.grading._identity.identify`); issues for what cannot be used, what was
    not read (``links``, ``left_out``: :func:`unread_issues`) included; the number of other
    files ignored. ``prefix`` is put before every path reported (``zip名.zip/``)."""
    uploads, issues, ignored, found = [], [], 0, []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        relp = path.relative_to(folder)
        if any(p in _SKIP_PARTS or p.startswith(".") for p in relp.parts):
            continue
        if path.suffix.lower() != ".ipynb":
            if path.name in NBGRADER_FILES and any(path.parent.glob("*.ipynb")):
                continue
            ignored += 1
            continue
        found.append((path, relp.as_posix()))
    unread = [r for r in links] + [r for r, _ in left_out if _unread_counts(r)]
    top = wrapper_depth([r for _, r in found] + unread, known)
    for path, rel in found:
        up = identify(rel, known, top)
        up.rel = prefix + rel
        up.file, up.mtime = path, path.stat().st_mtime
        up.extras = [path.parent / n for n in NBGRADER_FILES if (path.parent / n).is_file()]
        if up.ambiguous:
            issues.append(Issue("unknown_learner", None, up.assignment,
                                f"{up.rel}: ファイル名に Moodle の提出者の印が {len(up.ambiguous)} つあり（id "
                                f"{', '.join(up.ambiguous)}）、誰の提出か決められないため採点していません。"
                                "Moodle から「フォルダ付き」でダウンロードし直すか、本人に確かめてください", up.rel))
        elif up.learner is None:
            issues.append(Issue("unknown_learner", None, up.assignment,
                                "受講者のフォルダの中にありません（LEARNER/課題.ipynb の形にしてください）", up.rel))
        elif up.assignment is None:
            issues.append(Issue("unknown_assignment", up.learner, None,
                                f"{up.rel}（ファイル名かフォルダ名に課題 id（{known[0]} など）を含めてください）", up.rel))
        uploads.append(up)
    issues += unread_issues(links, left_out, known, top, prefix)
    return uploads, issues, ignored


def scan_zips(folder: Path, into: Path, known: list[str]) -> tuple[list, list[Issue], int]:
    """:func:`scan` of each zip directly in ``folder`` (extracted by :func:`extract_zips` into
    ``into``): the uploads (named ``zip/path``), the issues (what extraction left out included)
    and the change to the count of ignored files (each zip was counted there)."""
    uploads, issues, ignored = [], [], 0
    for sub, left_out in extract_zips(folder, into):
        more, more_issues, ign = scan(sub, known, left_out=left_out, prefix=f"{sub.name}.zip/")
        uploads, issues, ignored = uploads + more, issues + more_issues, ignored + ign - 1
    return uploads, issues, ignored


def _unread_counts(rel: str) -> bool:
    name = PurePosixPath(rel).name
    return name.lower().endswith(".ipynb") or name in NBGRADER_FILES


def unread_issues(links: list[str], left_out: list[tuple[str, str]], known: list[str], top: int = 0,
                  prefix: str = "") -> list[Issue]:
    """The issues for what an upload held and intake did not read: every link (a link is
    data: never followed, its target never shown) and every notebook or nbgrader file left
    out (:func:`~ctxlab.grading._files.extract_zip`, :func:`~ctxlab.grading._files.copy_tree`),
    each with the learner and assignment its path names (``top``: the upload's wrapping
    folders). Other files left out are ignored."""
    issues = []
    for rel in links:
        up = identify(rel, known, top)
        issues.append(Issue("link", up.learner, up.assignment,
                            f"{prefix}{rel}: リンクなので読んでいません。ファイルそのものを提出し直してください",
                            prefix + rel))
    for rel, why in left_out:
        if _unread_counts(rel):
            up = identify(rel, known, top)
            where = (prefix + rel)[:200]
            issues.append(Issue("skipped_file", up.learner, up.assignment, f"{where}: {why}", where))
    return issues


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


# --------------------------------------------------------------------------- who is who

@dataclass(frozen=True)
class Person:
    """One row of a roster: an LMS id and the person it belongs to."""
    lms_id: str
    name: str
    email: str = ""


_ROSTER_COLUMNS = {
    "id": ("id", "identifier", "lms_id", "user id", "participant", "participant id", "識別子", "id番号"),
    "name": ("name", "full name", "fullname", "student", "氏名", "名前", "フルネーム"),
    "email": ("email", "email address", "e-mail", "mail", "メールアドレス"),
}


def read_roster(path: Path) -> dict[str, Person]:
    """A roster CSV (``id, name, email``; a header row with those names, or Moodle's grading
    worksheet columns Identifier / Full name / Email address) as LMS id -> person. An id may
    be written as Moodle writes it (``Participant 20481``); a person may have several ids
    (Moodle gives one per assignment)."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise GradeError(f"名簿 {path} を読めません（{exc.strerror}）") from None
    except UnicodeDecodeError:
        raise GradeError(f"名簿 {path} が UTF-8 ではありません（UTF-8 の CSV で保存してください）") from None
    rows = [r for r in csv.reader(text.splitlines()) if any(c.strip() for c in r)]
    if not rows:
        raise GradeError(f"名簿 {path} が空です（id, name, email の 3 列の CSV にしてください）")
    head = [unicodedata.normalize("NFKC", c).strip().lower() for c in rows[0]]
    cols = {k: next((i for i, h in enumerate(head) if h in names), None) for k, names in _ROSTER_COLUMNS.items()}
    first = 2
    if cols["id"] is None:
        if any(h in n for n in _ROSTER_COLUMNS["name"] + _ROSTER_COLUMNS["email"] for h in head):
            raise GradeError(f"名簿 {path} に id の列がありません（見出し: {', '.join(rows[0])}）")
        cols, first = {"id": 0, "name": 1, "email": 2}, 1   # no header: id, name, email
    else:
        rows = rows[1:]
    out: dict[str, Person] = {}
    for n, row in enumerate(rows, first):
        def cell(key: str) -> str:
            i = cols[key]
            return unicodedata.normalize("NFKC", row[i]).strip() if i is not None and i < len(row) else ""
        digits = re.sub(r"\D", "", cell("id"))
        if not digits:
            raise GradeError(f"名簿 {path} の {n} 行目に数字の id がありません: {row}")
        email = row[cols["email"]].strip() if cols["email"] is not None and cols["email"] < len(row) else ""
        person = Person(digits, re.sub(r"\s+", " ", cell("name")), email)   # the email as the LMS wrote it
        if not (person.name or person.email):
            raise GradeError(f"名簿 {path} の {n} 行目に名前もメールアドレスもありません: {row}")
        if digits in out and out[digits] != person:
            raise GradeError(f"名簿 {path}: id {digits} が 2 人に割り当てられています（{out[digits].name}, {person.name}）")
        out[digits] = person
    return out


def key_learners(uploads: list[Upload], roster: dict[str, Person] | None = None,
                 groups: bool = False) -> list[Issue]:
    """Settle who each upload belongs to (``learner``, ``name``, ``email``) and report names
    shared by different LMS ids. Two uploads of one assignment are one learner only when
    their LMS id is the same. A roster entry wins (the learner is the email, else the name);
    a Canvas user id is a person; a Canvas anonymous id, a Moodle blind-marking participant
    and a Moodle group (``groups``: the numbers are group ids) are each their own learner;
    a Moodle participant id is not a person (one per assignment), so without a roster a
    Moodle learner is the exact name, unless one assignment has that name under two ids:
    then each id is its own learner, and that is reported."""
    roster = roster or {}
    issues: list[Issue] = []
    by_name: dict[tuple[str, str], dict[str, set[str]]] = {}
    for up in uploads:
        person = roster.get(up.lms_id) if up.lms_id and up.layout in ("moodle", "canvas") and not groups else None
        if person:
            up.name, up.email = person.name or up.name, person.email
            up.learner = (up.lms_id if up.layout == "canvas"
                          else learner_id(person.email.lower()) if person.email else learner_id(person.name))
        elif up.layout == "canvas_anon":   # anonymous ids are per assignment
            up.learner = learner_id(f"anon_{up.lms_id}_{up.assignment}" if up.assignment else f"anon_{up.lms_id}")
        elif up.layout == "moodle" and groups:
            up.layout, up.learner = "moodle_group", f"group_{up.lms_id}"
        elif up.layout == "moodle" and up.name in BLIND_NAMES:
            up.name, up.learner = f"{up.name} {up.lms_id}", f"participant_{up.lms_id}"
        elif up.layout in ("moodle", "canvas") and up.assignment:
            by_name.setdefault((up.layout, up.name), {}).setdefault(up.assignment, set()).add(up.lms_id)
    for (layout, name), per_assignment in sorted(by_name.items()):
        shared = {a: ids for a, ids in per_assignment.items() if len(ids) > 1}
        if not shared:
            continue
        where = "、".join(f"{a}: id {', '.join(sorted(ids, key=int))}" for a, ids in sorted(shared.items()))
        mine = [up for up in uploads if up.layout == layout and up.name == name and up.lms_id not in roster]
        if layout == "moodle":
            for up in mine:
                up.learner = learner_id(f"{name}_{up.lms_id}")
            kind, detail = "same_name", (f"{name}（{where}）: id ごとに別の受講者として採点しました。Moodle の id は"
                                         "課題ごとに違うため、課題をまたいで同じ人か分かりません。--roster roster.csv"
                                         "（id, name, email）で id と人を対応させてください")
        else:
            kind, detail = "same_name_distinct", f"{name}（{where}）: Canvas のユーザー id で別の受講者として採点しました"
        for learner in sorted({up.learner for up in mine}):
            issues.append(Issue(kind, learner, None, detail))
    # whatever the names: two LMS ids in one assignment are two learners (a roster is the instructor's word)
    seen: dict[tuple[str, str], set[str]] = {}
    for up in uploads:
        if up.learner and up.assignment and up.lms_id and up.lms_id not in roster:
            seen.setdefault((up.learner, up.assignment), set()).add(up.lms_id)
    for (learner, assignment), ids in sorted(seen.items()):
        if len(ids) > 1:
            for up in uploads:
                if up.learner == learner and up.assignment and up.lms_id in ids:
                    up.learner = learner_id(f"{learner}_{up.lms_id}")
    return issues


# --------------------------------------------------------------------------- the record of issues

ISSUES_FILE = "issues.json"


def load_issues(root: Path) -> list[Issue]:
    """The issues recorded in a course root (none when there is no readable record)."""
    try:
        data = json.loads((Path(root) / ISSUES_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [Issue(**d) for d in data]


def save_issues(root: Path, issues: list[Issue]) -> None:
    """Write the record of issues atomically (a temporary file, then a rename)."""
    path = Path(root) / ISSUES_FILE
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps([asdict(i) for i in issues], ensure_ascii=False, indent=1), encoding="utf-8")
    tmp.replace(path)


LMS_FILE = "lms.json"


def load_lms_ids(root: Path) -> dict[str, dict]:
    """learner -> {name, email, layout, ids: {assignment: LMS id}, attachments: {assignment:
    Canvas attachment id}} as recorded by earlier runs
    (Moodle's participant id differs per assignment; the grading worksheet and the feedback
    zip need it)."""
    try:
        return json.loads((Path(root) / LMS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def save_lms_ids(root: Path, found: dict[str, dict]) -> None:
    """Merge this run's LMS ids into the course root's record (atomically)."""
    data = load_lms_ids(root)
    for learner, info in found.items():
        entry = data.setdefault(learner, {"ids": {}})
        entry.update({k: v for k, v in info.items() if k not in ("ids", "attachments") and v})
        entry.setdefault("ids", {}).update(info.get("ids", {}))
        if info.get("attachments"):   # Canvas: the attachment id per assignment (feedback zip)
            entry.setdefault("attachments", {}).update(info["attachments"])
    write_lms_ids(root, data)


def write_lms_ids(root: Path, data: dict[str, dict]) -> None:
    """Replace the course root's record of LMS ids (atomically)."""
    path = Path(root) / LMS_FILE
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True), encoding="utf-8")
    tmp.replace(path)
