"""Who is who in an LMS export, and the files that go back to the LMS.

Fast tests (no autograde): a roster, learners keyed by the LMS's own id (two learners of the
same name stay two), Moodle's grading worksheet and feedback zip, Canvas's gradebook CSV,
held-back submissions whose written answers are not graded yet. The slow test grades a
resubmission after manual grading: a changed written answer loses its manual grade, an
unchanged one keeps it.
"""
from __future__ import annotations

import csv
import os
import shutil
import sys
import warnings
import zipfile
from pathlib import Path

import nbformat
import pytest

from ctxlab.errors import GradeError
from ctxlab.grading import lms, lms_export, workflow
from ctxlab.grading._manual import record_feedback
from ctxlab.grading._nbgrader import gradebook_url, sync_course_root
from ctxlab.grading.report import format_summary

ROOT = Path(__file__).resolve().parent.parent
KNOWN = ["00_start_here", "01_count_tokens"]
RELEASED = ROOT / "course" / "00_start_here" / "00_start_here.ipynb"


@pytest.fixture
def venv_path(monkeypatch):
    # nbgrader's gradebook runs the venv's `alembic` when it creates the database
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")


def write_upload(folder: Path, rels: list[str]) -> Path:
    for rel in rels:
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        name = next(a for a in KNOWN if a in rel)
        shutil.copy(ROOT / "course" / name / f"{name}.ipynb", folder / rel)
    return folder


# --------------------------------------------------------------------------- roster

def test_roster_reads_plain_csv_and_moodle_worksheet_columns(tmp_path):
    plain = tmp_path / "roster.csv"
    plain.write_text("id,name,email\n20481,佐藤 花子,Hanako.A@example.com\n20499,佐藤　花子,hanako.b@example.com\n",
                     encoding="utf-8-sig")
    got = lms.read_roster(plain)
    assert got["20481"] == lms.Person("20481", "佐藤 花子", "Hanako.A@example.com")  # Moodle matches it exactly
    assert got["20499"].name == "佐藤 花子"  # full-width space normalized
    sheet = tmp_path / "worksheet.csv"
    sheet.write_text("Identifier,Full name,Email address,Status\nParticipant 30001,佐藤 花子,hanako.a@example.com,x\n",
                     encoding="utf-8")
    assert lms.read_roster(sheet)["30001"].email == "hanako.a@example.com"
    bare = tmp_path / "bare.csv"
    bare.write_text("5,Alice,alice@example.com\n", encoding="utf-8")
    assert lms.read_roster(bare)["5"].name == "Alice"


@pytest.mark.parametrize("text, says", [
    ("name,email\nAlice,a@example.com\n", "id の列がありません"),
    ("id,name,email\nabc,Alice,a@example.com\n", "数字の id がありません"),
    ("id,name,email\n1,Alice,a@example.com\n1,Bob,b@example.com\n", "2 人に割り当て"),
    ("id,name,email\n1,,\n", "名前もメールアドレスもありません"),
])
def test_bad_roster_says_what_to_fix(tmp_path, text, says):
    path = tmp_path / "roster.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(GradeError, match=says):
        lms.read_roster(path)


# --------------------------------------------------------------------------- keying learners

MOODLE_TWINS = ["佐藤 花子_20481_assignsubmission_file_/00_start_here.ipynb",
                "佐藤 花子_20499_assignsubmission_file_/00_start_here.ipynb",
                "佐藤 花子_30001_assignsubmission_file_/01_count_tokens.ipynb",
                "山田 太郎_20500_assignsubmission_file_/00_start_here.ipynb",
                "山田 太郎_30002_assignsubmission_file_/01_count_tokens.ipynb"]


def test_same_name_with_two_moodle_ids_is_two_learners_and_reported(tmp_path, venv_path):
    upload = write_upload(tmp_path / "upload", MOODLE_TWINS)
    report = workflow.intake(upload, tmp_path / "root", KNOWN)
    twins = {lms.learner_id("佐藤 花子_20481"), lms.learner_id("佐藤 花子_20499"), lms.learner_id("佐藤 花子_30001")}
    yamada = lms.learner_id("山田 太郎")
    assert set(report.placed) == {
        (lms.learner_id("佐藤 花子_20481"), "00_start_here"), (lms.learner_id("佐藤 花子_20499"), "00_start_here"),
        (lms.learner_id("佐藤 花子_30001"), "01_count_tokens"), (yamada, "00_start_here"), (yamada, "01_count_tokens")}
    assert not [i for i in report.issues if i.kind == "duplicate"], "two people are not one learner's duplicates"
    same = [i for i in report.issues if i.kind == "same_name"]
    assert {i.learner for i in same} == twins and "--roster" in same[0].detail and "20481, 20499" in same[0].detail
    assert report.problems, "an unresolved name must make the run exit 1"
    text = format_summary(report)
    assert "同名の受講者" in text and "--roster" in text
    ids = lms.load_lms_ids(tmp_path / "root")
    assert ids[lms.learner_id("佐藤 花子_20499")]["ids"] == {"00_start_here": "20499"}
    assert ids[yamada]["ids"] == {"00_start_here": "20500", "01_count_tokens": "30002"}


def test_a_roster_maps_moodle_ids_to_people(tmp_path, venv_path):
    upload = write_upload(tmp_path / "upload", MOODLE_TWINS)
    roster = tmp_path / "roster.csv"
    roster.write_text("id,name,email\n20481,佐藤 花子,hanako.a@example.com\n30001,佐藤 花子,hanako.a@example.com\n"
                      "20499,佐藤 花子,hanako.b@example.com\n", encoding="utf-8")
    report = workflow.intake(upload, tmp_path / "root", KNOWN, roster=lms.read_roster(roster))
    a, b = lms.learner_id("hanako.a@example.com"), lms.learner_id("hanako.b@example.com")
    assert {(a, "00_start_here"), (a, "01_count_tokens"), (b, "00_start_here")} <= set(report.placed)
    assert not [i for i in report.issues if i.kind.startswith("same_name")] and not report.problems
    from nbgrader.api import Gradebook

    with Gradebook(gradebook_url(tmp_path / "root")) as gb:
        assert gb.find_student(a).email == "hanako.a@example.com"


def test_canvas_user_ids_keep_two_learners_of_one_name_apart(tmp_path, venv_path):
    upload = write_upload(tmp_path / "upload", ["satohanako_1001_5001_00_start_here.ipynb",
                                                "satohanako_1002_5002_00_start_here.ipynb"])
    report = workflow.intake(upload, tmp_path / "root", KNOWN)
    assert set(report.placed) == {("1001", "00_start_here"), ("1002", "00_start_here")}
    assert {i.kind for i in report.issues} == {"same_name_distinct"} and not report.problems


# --------------------------------------------------------------------------- back to the LMS

def _gradebook(root: Path, subs: dict[str, tuple[float, float | None]], assignment: str = "00_start_here") -> None:
    """A gradebook with one assignment (a 3-point test, a 2-point written answer) and one
    submission per learner: (autograded points, manual points or None = not graded yet).
    Called again with another assignment, it adds that one."""
    from nbgrader.api import Gradebook
    from sqlalchemy.exc import SAWarning

    root.mkdir(parents=True, exist_ok=True)
    a = assignment
    with Gradebook(gradebook_url(root)) as gb, warnings.catch_warnings():
        warnings.simplefilter("ignore", SAWarning)  # nbgrader's add_submission trips autoflush (harmless)
        gb.add_assignment(a)
        gb.add_notebook(a, a)
        gb.add_grade_cell("test", a, a, max_score=3, cell_type="code")
        gb.add_grade_cell("why", a, a, max_score=2, cell_type="markdown")
        for learner, (auto, manual) in subs.items():
            gb.update_or_create_student(learner)
            gb.add_submission(a, learner)
            test = gb.find_grade("test", a, a, learner)
            why = gb.find_grade("why", a, a, learner)
            test.auto_score, test.needs_manual_grade = auto, False
            why.manual_score, why.needs_manual_grade = manual, manual is None
        gb.db.commit()
    for learner in subs:
        fb = root / "feedback" / learner / a
        fb.mkdir(parents=True)
        (fb / f"{a}.html").write_text("<html><body><p>Written response 0.0 / 2.0</p></body></html>", encoding="utf-8")
    record_feedback(root, {(learner, a) for learner in subs})   # the feedback shows this state


def test_lms_files_name_each_learner_the_way_the_lms_does(tmp_path, venv_path):
    root = tmp_path / "root"
    _gradebook(root, {"u_moodle": (3, 2), "u_pending": (3, None), "2001": (1, 1), "u_email": (0, 2), "alice": (3, 0)})
    lms.save_lms_ids(root, {
        "u_moodle": {"name": "佐藤_花子", "layout": "moodle", "ids": {"00_start_here": "20481"}},
        "u_pending": {"name": "山田 太郎", "layout": "moodle", "ids": {"00_start_here": "20482"}},
        "2001": {"name": "bob", "layout": "canvas", "ids": {"00_start_here": "2001"}},
        "u_email": {"name": "鈴木 一郎", "email": "ichiro@example.com", "layout": "folder", "ids": {"00_start_here": ""}},
        "alice": {"name": "alice", "layout": "folder", "ids": {"00_start_here": ""}},
    })
    ex = lms_export.export(root, ["00_start_here", "01_count_tokens"])
    out = root / "lms"
    with open(out / "moodle" / "00_start_here_worksheet.csv", encoding="utf-8-sig", newline="") as fh:
        sheet = list(csv.DictReader(fh))
    assert [(r["Identifier"], r["Grade"], r["Maximum Grade"]) for r in sheet] == [("Participant 20481", "5", "5")]
    assert {"Identifier", "Grade", "Last modified (grade)"} <= set(sheet[0])  # what Moodle's importer requires
    with zipfile.ZipFile(out / "moodle" / "00_start_here_feedback.zip") as zf:
        names = zf.namelist()
    assert names == ["佐藤 花子_20481_assignfeedback_file_/00_start_here.html"]
    info = names[0].split("/")[0].split("_", 4)  # how Moodle's zip importer reads a folder name
    assert info[1] == "20481" and info[2:4] == ["assignfeedback", "file"]
    with open(out / "canvas_grades_00_start_here.csv", encoding="utf-8-sig", newline="") as fh:
        canvas = list(csv.DictReader(fh))
    assert [(r["Student"], r["ID"], r["00_start_here"]) for r in canvas] == [("bob", "2001", "2")]
    assert list(canvas[0]) == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "00_start_here"]
    # 00 has a worksheet, so no gradebook CSV for 00: the email-only learner is left to the instructor
    assert not (out / "moodle_grades_00_start_here.csv").exists()
    assert not list(out.glob("*01_count_tokens*")), "nothing is graded on 01: no file may carry a blank for it"
    assert ex["held"] == [("u_pending", "00_start_here")] and ex["without_id"] == ["alice", "u_email"]
    pending_html = (root / "feedback" / "u_pending" / "00_start_here" / "00_start_here.html").read_text(encoding="utf-8")
    assert lms_export.PENDING_MARK in pending_html and "まだ採点されていません（2 点分）" in pending_html
    graded_html = (root / "feedback" / "u_moodle" / "00_start_here" / "00_start_here.html").read_text(encoding="utf-8")
    assert lms_export.PENDING_MARK not in graded_html
    assert ex["marked"] == 1 and lms_export.mark_pending_feedback(root) == 1  # marked once, not twice
    report = workflow.Report(root=root, exports=ex)
    text = format_summary(report)
    assert "記述が未採点の提出 1 件" in text and "次に: formgrader で記述を採点" in text


def test_summary_says_what_to_upload_when_everything_is_graded(tmp_path, venv_path):
    root = tmp_path / "root"
    _gradebook(root, {"u_moodle": (3, 2)})
    lms.save_lms_ids(root, {"u_moodle": {"name": "佐藤 花子", "layout": "moodle", "ids": {"00_start_here": "7"}}})
    text = format_summary(workflow.Report(root=root, exports=lms_export.export(root, ["00_start_here"])))
    assert "Moodle の評定ワークシート 1 件・フィードバック zip 1 件（moodle/）" in text and "次に: Moodle は課題ごとに" in text


# --------------------------------------------------------------------------- files an import cannot misread

A2 = ["00_start_here", "01_count_tokens"]


def _read(path: Path) -> list[dict]:
    with open(path, encoding="utf-8-sig", newline="") as fh:
        return list(csv.DictReader(fh))


def test_no_lms_file_holds_a_blank_grade_an_import_would_apply(tmp_path, venv_path):
    # a blank cell clears a grade in both LMSs: a learner graded on 00 only must not blank 01
    root = tmp_path / "root"
    _gradebook(root, {"both": (3, 2), "first": (3, 1), "held": (3, None)}, "00_start_here")
    _gradebook(root, {"both": (2, 2), "held": (3, 2)}, "01_count_tokens")
    lms.save_lms_ids(root, {
        "both": {"name": "both", "email": "Both.Learner@Example.com", "layout": "folder", "ids": {}},
        "first": {"name": "first", "email": "first@example.com", "layout": "folder", "ids": {}},
        "held": {"name": "held", "email": "held@example.com", "layout": "folder", "ids": {}},
        "c1": {"name": "c one", "layout": "canvas", "ids": {}},
    })
    ex = lms_export.export(root, A2)
    by_name = {p.name: p for p in ex["files"]}
    assert sorted(by_name) == ["moodle_grades_00_start_here.csv", "moodle_grades_01_count_tokens.csv"]
    for path in by_name.values():
        rows = _read(path)
        assert rows and all(all(v != "" for v in r.values()) for r in rows), f"{path.name} has a blank cell"
    assert _read(by_name["moodle_grades_00_start_here.csv"]) == [
        {"Email address": "Both.Learner@Example.com", "00_start_here": "5"},   # the email as the LMS wrote it
        {"Email address": "first@example.com", "00_start_here": "4"}]
    # 'held' has written answers still to grade on 00: left out of 00, in 01 where its grade is final
    assert [r["Email address"] for r in _read(by_name["moodle_grades_01_count_tokens.csv"])] == [
        "Both.Learner@Example.com", "held@example.com"]
    assert ex["gradebook"] == A2 and ex["held"] == [("held", "00_start_here")]


def test_canvas_files_carry_only_graded_cells(tmp_path, venv_path):
    root = tmp_path / "root"
    _gradebook(root, {"1001": (3, 2), "1002": (1, 0)}, "00_start_here")
    _gradebook(root, {"1001": (3, 0)}, "01_count_tokens")
    lms.save_lms_ids(root, {
        "1001": {"name": "satohanako", "layout": "canvas", "ids": {"00_start_here": "1001", "01_count_tokens": "1001"}},
        "1002": {"name": "=HYPERLINK(\"http://x\")", "layout": "canvas", "ids": {"00_start_here": "1002"}}})
    ex = lms_export.export(root, A2)
    out = root / "lms"
    assert sorted(p.name for p in ex["files"]) == ["canvas_grades_00_start_here.csv", "canvas_grades_01_count_tokens.csv"]
    first = _read(out / "canvas_grades_00_start_here.csv")
    assert [(r["ID"], r["00_start_here"]) for r in first] == [("1001", "5"), ("1002", "1")]
    assert first[1]["Student"] == "'=HYPERLINK(\"http://x\")"   # a label, neutralised; the ID untouched
    assert _read(out / "canvas_grades_01_count_tokens.csv") == [
        {"Student": "satohanako", "ID": "1001", "SIS User ID": "", "SIS Login ID": "", "Section": "",
         "01_count_tokens": "3"}]


def test_gradebook_csv_and_worksheet_are_never_offered_for_one_assignment(tmp_path, venv_path):
    # a gradebook import overrides the assignment's grade: the worksheet is the one for a Moodle assignment
    root = tmp_path / "root"
    _gradebook(root, {"m": (3, 2), "f": (3, 2)}, "00_start_here")
    _gradebook(root, {"f": (3, 2)}, "01_count_tokens")
    lms.save_lms_ids(root, {
        "m": {"name": "佐藤 花子", "email": "hanako@example.com", "layout": "moodle", "ids": {"00_start_here": "20481"}},
        "f": {"name": "鈴木 一郎", "email": "ichiro@example.com", "layout": "folder", "ids": {}}})
    ex = lms_export.export(root, A2)
    names = sorted(p.name for p in ex["files"])
    assert names == ["00_start_here_feedback.zip", "00_start_here_worksheet.csv", "moodle_grades_01_count_tokens.csv"]
    assert ex["gradebook"] == ["01_count_tokens"] and ex["without_id"] == ["f"]   # f's 00: no participant id
    text = format_summary(workflow.Report(root=root, exports=ex))
    nxt = next(line for line in text.splitlines() if line.startswith("次に:"))
    assert "moodle_grades_<課題>.csv（01_count_tokens。" in nxt and "00_start_here" not in nxt.split("moodle_grades")[1]
    assert "上書き" in nxt   # what importing into the gradebook does


FORMULAS = ["=SUM(A1) 高橋 健", "+81 佐藤", "-1 鈴木", "@IMPORT 田中", "\tタブ", "\r改行", "＝全角"]


def test_formula_names_are_neutralised_and_matched_columns_are_not(tmp_path, venv_path):
    root = tmp_path / "root"
    learners = {f"m{i}": (3, 2) for i in range(len(FORMULAS))}
    _gradebook(root, learners)
    lms.save_lms_ids(root, {f"m{i}": {"name": name, "email": f"=m{i}@example.com", "layout": "moodle",
                                      "ids": {"00_start_here": str(30000 + i)}} for i, name in enumerate(FORMULAS)})
    lms_export.export(root, ["00_start_here"])
    sheet = _read(root / "lms" / "moodle" / "00_start_here_worksheet.csv")
    assert [r["Full name"] for r in sheet] == ["'" + n for n in FORMULAS]
    assert [r["Identifier"] for r in sheet] == [f"Participant {30000 + i}" for i in range(len(FORMULAS))]
    assert [r["Email address"] for r in sheet] == [f"=m{i}@example.com" for i in range(len(FORMULAS))]  # matched on
    with zipfile.ZipFile(root / "lms" / "moodle" / "00_start_here_feedback.zip") as zf:
        folders = [n.split("/")[0] for n in zf.namelist()]
    assert folders[0] == "SUM(A1) 高橋 健_30000_assignfeedback_file_"
    assert not any(f.startswith(lms_export._FORMULA_START) for f in folders)
    from nbgrader.api import Gradebook

    with Gradebook(gradebook_url(root)) as gb:
        gb.update_or_create_student("m0", last_name=FORMULAS[0])
    workflow.export_csv(root, root / "grades.csv", ["00_start_here"], [lms.Issue("late", "m0", "00_start_here", "x")])
    rows = {r["learner_id"]: r for r in _read(root / "grades.csv")}
    assert rows["m0"]["name"] == "'" + FORMULAS[0]
    assert lms_export.spreadsheet_safe("佐藤 花子") == "佐藤 花子" and lms_export.spreadsheet_safe("a=b") == "a=b"


def test_every_csv_starts_with_a_bom_for_japanese_excel(tmp_path, venv_path):
    root = tmp_path / "root"
    _gradebook(root, {"m": (3, 2), "c": (3, 2)})
    _gradebook(root, {"f": (3, 2)}, "01_count_tokens")
    lms.save_lms_ids(root, {"m": {"name": "佐藤 花子", "layout": "moodle", "ids": {"00_start_here": "1"}},
                            "c": {"name": "山田太郎", "layout": "canvas", "ids": {"00_start_here": "2"}},
                            "f": {"name": "鈴木", "email": "s@example.com", "layout": "folder", "ids": {}}})
    ex = lms_export.export(root, A2)
    workflow.export_csv(root, root / "grades.csv", A2, [])
    csvs = [p for p in ex["files"] if p.suffix == ".csv"] + [root / "grades.csv"]
    assert len(csvs) == 4 and all(p.read_bytes().startswith(b"\xef\xbb\xbf") for p in csvs)


def _moodle_before_41(path: str) -> tuple[str, str] | None:
    """Moodle 3.x-4.0 importziplib.php: explode('_', filepath . filename, 5), five parts required."""
    info = ("/" + path).split("_", 4)
    if len(info) < 5 or not info[1].isdigit() or (info[2], info[3]) != ("assignfeedback", "file"):
        return None
    return info[1], info[4]


def _moodle_41(path: str) -> tuple[str, str] | None:
    """Moodle 4.1+ importziplib.php: each path part split on '_' (limit 5), four parts enough."""
    parts = ("/" + path).split("/")
    while parts:
        info = parts.pop(0).split("_", 4)
        if len(info) < 4 or not info[1].isdigit() or (info[2], info[3]) != ("assignfeedback", "file"):
            continue
        return info[1], "/".join([info[4] if len(info) == 5 else "", *parts])
    return None


def test_feedback_folders_are_read_by_moodle_before_and_after_41(tmp_path, venv_path):
    root = tmp_path / "root"
    _gradebook(root, {"m": (3, 2)})
    lms.save_lms_ids(root, {"m": {"name": "佐藤 花子", "layout": "moodle", "ids": {"00_start_here": "20481"}}})
    lms_export.export(root, ["00_start_here"])
    with zipfile.ZipFile(root / "lms" / "moodle" / "00_start_here_feedback.zip") as zf:
        (name,) = zf.namelist()
    for importer in (_moodle_before_41, _moodle_41):
        pid, rest = importer(name)
        assert pid == "20481" and rest.rsplit("/", 1)[-1] == "00_start_here.html", importer.__name__
    # the control: the form without the trailing "_" is what Moodle before 4.1 skips
    assert _moodle_before_41(name.replace("_file_/", "_file/")) is None
    assert _moodle_41(name.replace("_file_/", "_file/")) == ("20481", "/00_start_here.html")


def test_answer_sheet_feedback_waits_for_the_deadline(tmp_path, venv_path):
    assert lms_export.answer_sheets(ROOT, ["00_start_here", "09_knowledge_check"]) == ("09_knowledge_check",)
    root = tmp_path / "root"
    _gradebook(root, {"m": (3, 2)})
    lms.save_lms_ids(root, {"m": {"name": "佐藤 花子", "layout": "moodle", "ids": {"00_start_here": "7"}}})
    ex = lms_export.export(root, ["00_start_here"], answer_sheets=("00_start_here",))
    assert [p.name for p in ex["files"]] == ["00_start_here_worksheet.csv"] and ex["answers_held"] == ["00_start_here"]
    assert "--release-answers" in format_summary(workflow.Report(root=root, exports=ex))
    ex = lms_export.export(root, ["00_start_here"], answer_sheets=("00_start_here",), release_answers=True)
    assert "00_start_here_feedback.zip" in [p.name for p in ex["files"]] and not ex["answers_held"]


def test_same_name_run_says_to_rerun_with_a_roster(tmp_path, venv_path):
    upload = write_upload(tmp_path / "upload", MOODLE_TWINS)
    report = workflow.intake(upload, tmp_path / "root", KNOWN)
    report.exports = {"files": [], "held": [("x", "00_start_here")], "without_id": [], "marked": 0,
                      "dir": tmp_path / "root" / "lms"}
    nxt = [line for line in format_summary(report).splitlines() if line.startswith("次に:")]
    assert len(nxt) == 1 and "--roster roster.csv" in nxt[0] and "formgrader" not in nxt[0]


# --------------------------------------------------------------------------- resubmission after manual grading

def _written_answer(nb, text: str):
    nb = nbformat.from_dict(nb)
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "markdown" and meta.get("solution") and meta.get("grade"):
            cell.source = text
            return nb, meta["grade_id"]
    raise AssertionError("00_start_here has no written answer (update this test)")


@pytest.mark.slow
def test_resubmission_drops_the_manual_grade_of_a_changed_answer_only(tmp_path):
    from nbgrader.api import Gradebook

    name = "00_start_here"
    root = tmp_path / "grading"
    sync_course_root(root, [name], ROOT)
    src = nbformat.read(ROOT / "solutions" / name / f"{name}.ipynb", as_version=4)
    first = tmp_path / "first"
    for learner in ("keeps", "changes"):
        (first / learner).mkdir(parents=True)
        nbformat.write(src, first / learner / f"{name}.ipynb")
    workflow.grade(first, root, course=ROOT, progress=False, assignments=[name])
    with Gradebook(gradebook_url(root)) as gb:  # the instructor grades the written answers in formgrader
        written = [g for g in gb.find_submission_notebook(name, name, "keeps").grades if g.cell.cell_type == "markdown"]
        wid, points = written[0].name, float(written[0].max_score)
        for learner in ("keeps", "changes"):
            g = gb.find_grade(wid, name, name, learner)
            g.manual_score, g.needs_manual_grade = points, False
        gb.db.commit()
    second = tmp_path / "second"
    (second / "keeps").mkdir(parents=True)
    (second / "changes").mkdir(parents=True)
    kept_nb = nbformat.from_dict(src)
    kept_nb.cells.append(nbformat.v4.new_markdown_cell("メモ: 見直しました"))  # not an answer cell
    nbformat.write(kept_nb, second / "keeps" / f"{name}.ipynb")
    changed_nb, _ = _written_answer(src, "わかりません")
    nbformat.write(changed_nb, second / "changes" / f"{name}.ipynb")
    report = workflow.grade(second, root, course=ROOT, progress=False, assignments=[name])
    assert sorted(report.placed) == [("changes", name), ("keeps", name)]
    with Gradebook(gradebook_url(root)) as gb:
        keeps, changes = gb.find_grade(wid, name, name, "keeps"), gb.find_grade(wid, name, name, "changes")
        assert (keeps.manual_score, keeps.needs_manual_grade) == (points, False)
        assert (changes.manual_score, changes.needs_manual_grade) == (None, True)
        assert float(changes.score) == 0.0
    with open(report.csv, encoding="utf-8-sig", newline="") as fh:
        rows = {r["learner_id"]: r for r in csv.DictReader(fh)}
    assert float(rows["changes"]["pending_manual"]) == points and float(rows["keeps"]["pending_manual"]) == 0
    assert "手動採点を取り消し" in rows["changes"]["notes"]
    text = format_summary(report)
    assert "手動採点を取り消し" in text and wid in text and "手動採点を引き継ぎました" in text
    fb = (root / "feedback" / "changes" / name / f"{name}.html").read_text(encoding="utf-8")
    assert lms_export.PENDING_MARK in fb


# --------------------------------------------------------------------------- files read safely

def test_a_folder_is_copied_without_following_links(tmp_path):
    src, secret = tmp_path / "upload", tmp_path / ".env"
    secret.write_text("KEY=secret", encoding="utf-8")
    write_upload(src, ["bob/00_start_here.ipynb"])
    (src / "eve").mkdir()
    (src / "eve" / "00_start_here.ipynb").symlink_to(src / "bob" / "00_start_here.ipynb")
    (src / "eve" / "timestamp.txt").symlink_to(secret)
    (src / "eve" / "repo").symlink_to(ROOT, target_is_directory=True)
    os.mkfifo(src / "eve" / "pipe")   # would block a reader forever
    os.utime(src / "bob" / "00_start_here.ipynb", (1_700_000_000, 1_700_000_000))
    links, skipped = lms.copy_tree(src, tmp_path / "copy")
    assert sorted(links) == ["eve/00_start_here.ipynb", "eve/repo", "eve/timestamp.txt"]
    assert skipped == [("eve/pipe", "通常のファイルではありません")]
    files = sorted(p.relative_to(tmp_path / "copy").as_posix() for p in (tmp_path / "copy").rglob("*") if p.is_file())
    assert files == ["bob/00_start_here.ipynb"]
    assert (tmp_path / "copy" / "bob" / "00_start_here.ipynb").stat().st_mtime == 1_700_000_000
    issues = lms.unread_issues(links, skipped, KNOWN)
    assert {(i.kind, i.learner, i.assignment) for i in issues} == {("link", "eve", "00_start_here"), ("link", "eve", None)}
    assert lms.copy_tree(src / "eve" / "repo", tmp_path / "copy2") == (["repo"], [])
    deep = src / "mal" / Path(*["d"] * 40)   # deeper than any export: never walked to the bottom
    deep.mkdir(parents=True)
    (deep / "00_start_here.ipynb").write_text("{}", encoding="utf-8")
    links, skipped = lms.copy_tree(src, tmp_path / "copy3")
    assert [why for rel, why in skipped if rel.startswith("mal/")] == ["フォルダが深すぎます（16 段まで）。ノートブックだけを提出し直してください"]


def test_zip_entries_that_cannot_be_written_are_left_out_and_named(tmp_path, monkeypatch):
    monkeypatch.setattr("ctxlab.grading._files.MAX_FILE_MB", 1)
    long_name = f"eve/00_start_here_{'x' * 300}.ipynb"
    upload = tmp_path / "u.zip"
    with zipfile.ZipFile(upload, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("bob/00_start_here.ipynb", RELEASED.read_bytes())
        zf.writestr(long_name, "{}")
        zf.writestr("big/00_start_here.ipynb", b" " * (2 * 2**20))
    skipped = lms.extract_zip(upload, tmp_path / "out")
    assert [s[0] for s in skipped] == [long_name, "big/00_start_here.ipynb"]
    assert "名前が長すぎ" in skipped[0][1] and "大きすぎます（2 MB、上限 1 MB）" in skipped[1][1]
    assert (tmp_path / "out" / "bob" / "00_start_here.ipynb").read_bytes() == RELEASED.read_bytes()
    assert not (tmp_path / "out" / "big").exists()
    issues = lms.unread_issues([], skipped, KNOWN)
    assert [(i.kind, i.learner, i.assignment) for i in issues] == [("skipped_file", "eve", "00_start_here"),
                                                                   ("skipped_file", "big", "00_start_here")]


def test_notebooks_nbgrader_cannot_grade_are_refused_with_the_cell(tmp_path, monkeypatch):
    import copy

    nb = nbformat.read(RELEASED, as_version=4)
    cases = {"deep": b"[" * 100_000}
    empty = copy.deepcopy(nb)
    empty.cells.insert(2, nbformat.v4.new_code_cell("x = 1", metadata={"nbgrader": {}}))
    newer = copy.deepcopy(nb)
    graded = next(c for c in newer.cells if c.metadata.get("nbgrader", {}).get("grade"))
    graded.metadata["nbgrader"]["schema_version"] = 4
    dup = copy.deepcopy(nb)
    twin = copy.deepcopy(graded)
    twin.metadata["nbgrader"]["schema_version"] = 3
    twin["id"] = "twin"
    dup.cells.append(twin)
    for name, n in (("empty", empty), ("newer", newer), ("dup", dup)):
        cases[name] = nbformat.writes(n).encode()
    says = {"deep": "入れ子", "empty": "セル 3 の nbgrader メタデータが壊れています（schema_version が 0",
            "newer": "schema_version が 4", "dup": "grade id が同じ"}
    for name, data in cases.items():
        (tmp_path / f"{name}.ipynb").write_bytes(data)
        reason, _ = lms.check_notebook(tmp_path / f"{name}.ipynb")
        assert reason and says[name] in reason, (name, reason)
    assert lms.check_notebook(RELEASED)[0] is None
    monkeypatch.setattr("ctxlab.grading._files.MAX_FILE_MB", 0)
    assert "大きすぎます" in lms.check_notebook(RELEASED)[0]
