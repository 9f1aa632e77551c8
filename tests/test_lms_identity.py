"""Identity cannot be spoofed through the file layout, and one damaged zip entry costs one learner.

A submission belongs to the learner whose top-level entry of the export holds it (a Moodle
folder, a Moodle flat file prefix, a Canvas file name, the top folder of a folder export);
the names of nested folders and files are data. Each spoof below is a layout a tester
built: the victim keeps their own submission (the bytes graded are theirs) and the
attacker's notebook is reported as the attacker's only, or as nobody's when its name cannot
say whose it is. A zip with altered deflate data in one entry reports that entry's learner
and places everyone else.
"""
from __future__ import annotations

import json
import shutil
import zipfile
import zlib
from pathlib import Path

import pytest

from ctxlab.errors import GradeError
from ctxlab.grading import lms, workflow
from ctxlab.grading._manual import record_feedback, stale_feedback
from tests.test_lms import KNOWN, ROOT, venv_path  # noqa: F401 (venv_path is a fixture)

A = "00_start_here"
RELEASED = ROOT / "course" / A / f"{A}.ipynb"


def _notebook(path: Path, owner: str) -> bytes:
    """The released notebook, marked with its author (so the bytes placed say whose it is)."""
    nb = json.loads(RELEASED.read_text(encoding="utf-8"))
    nb["metadata"]["author_for_test"] = owner
    data = json.dumps(nb, ensure_ascii=False).encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return data


def _placed(root: Path, learner: str) -> bytes:
    return (root / "submitted" / learner / A / f"{A}.ipynb").read_bytes()


def test_a_moodle_subfolder_named_like_another_participant_is_data(tmp_path, venv_path):
    up = tmp_path / "upload"
    bob = _notebook(up / "Bob Victim_20482_assignsubmission_file_" / f"{A}.ipynb", "bob")
    evil = _notebook(up / "Mallory Evil_20484_assignsubmission_file_" / "Bob Victim_20482_assignsubmission_file_"
                     / f"{A}.ipynb", "mallory")
    report = workflow.intake(up, tmp_path / "root", KNOWN)
    b, m = lms.learner_id("Bob Victim"), lms.learner_id("Mallory Evil")
    assert sorted(report.placed) == sorted([(b, A), (m, A)])
    assert _placed(tmp_path / "root", b) == bob, "Bob keeps his own submission"
    assert _placed(tmp_path / "root", m) == evil, "the attacker's notebook is the attacker's"
    ids = lms.load_lms_ids(tmp_path / "root")
    assert ids[b]["ids"] == {A: "20482"} and ids[m]["ids"] == {A: "20484"}
    assert not [i for i in report.issues if i.kind == "duplicate"]


def test_a_moodle_folder_whose_name_holds_another_marker_is_its_last_marker(tmp_path, venv_path):
    up = tmp_path / "upload"
    carol = _notebook(up / "Carol Victim_20483_assignsubmission_file_" / f"{A}.ipynb", "carol")
    evil = _notebook(up / "Carol Victim_20483_assignsubmission_file__20484_assignsubmission_file_" / f"{A}.ipynb",
                     "mallory")
    report = workflow.intake(up, tmp_path / "root", KNOWN)
    c = lms.learner_id("Carol Victim")
    assert _placed(tmp_path / "root", c) == carol
    ids = lms.load_lms_ids(tmp_path / "root")
    (other,) = [lid for lid in ids if lid != c]
    assert ids[other]["ids"] == {A: "20484"} and _placed(tmp_path / "root", other) == evil
    assert ids[c]["ids"] == {A: "20483"} and len(report.placed) == 2


def test_a_flat_moodle_name_with_two_markers_is_nobodys(tmp_path, venv_path):
    up = tmp_path / "upload"
    carol = _notebook(up / f"Carol Victim_20483_assignsubmission_file_{A}.ipynb", "carol")
    _notebook(up / f"Carol Victim_20483_assignsubmission_file__20484_assignsubmission_file_{A}.ipynb", "mallory")
    # the other way round: a learner's own file named like another participant's download
    _notebook(up / f"Dave Evil_20485_assignsubmission_file_Erin Victim_20486_assignsubmission_file_{A}.ipynb",
              "dave")
    erin = _notebook(up / f"Erin Victim_20486_assignsubmission_file_{A}.ipynb", "erin")
    report = workflow.intake(up, tmp_path / "root", KNOWN)
    c, e = lms.learner_id("Carol Victim"), lms.learner_id("Erin Victim")
    assert sorted(report.placed) == sorted([(c, A), (e, A)]), "only the unambiguous files are graded"
    assert _placed(tmp_path / "root", c) == carol and _placed(tmp_path / "root", e) == erin
    unknown = [i for i in report.issues if i.kind == "unknown_learner"]
    assert len(unknown) == 2 and all(i.learner is None for i in unknown)
    assert "20483, 20484" in unknown[0].detail + unknown[1].detail and "フォルダ付き" in unknown[0].detail
    assert report.problems, "an ambiguous file makes the run exit 1"
    assert not [i for i in report.issues if i.kind == "duplicate"]


def test_a_folder_export_subfolder_named_like_another_learner_is_data(tmp_path, venv_path):
    up = tmp_path / "upload"
    bob = _notebook(up / "bob" / f"{A}.ipynb", "bob")
    evil = _notebook(up / "mallory" / A / "bob" / f"{A}.ipynb", "mallory")
    # a Canvas-shaped or Moodle-shaped name inside a learner's folder is data too
    _notebook(up / "mallory" / "carol_1001_5001_00_start_here.ipynb", "mallory-canvas")
    report = workflow.intake(up, tmp_path / "root", KNOWN)
    assert {lid for lid, _ in report.placed} == {"bob", "mallory"}
    assert _placed(tmp_path / "root", "bob") == bob
    dup = [i for i in report.issues if i.kind == "duplicate"]
    assert [i.learner for i in dup] == ["mallory"], "mallory's two notebooks are mallory's duplicates, not bob's"
    assert _placed(tmp_path / "root", "mallory") in (evil, (up / "mallory" / "carol_1001_5001_00_start_here.ipynb")
                                                      .read_bytes())
    assert "1001" not in lms.load_lms_ids(tmp_path / "root")


def test_a_wrapping_folder_is_skipped_but_one_learners_folder_is_not_a_wrapper(tmp_path):
    assert lms.wrapper_depth(["export/alice/00_start_here.ipynb", "export/bob/00_start_here.ipynb"], KNOWN) == 1
    assert lms.wrapper_depth(["a/Carol_1_assignsubmission_file_/x/00_start_here.ipynb"], KNOWN) == 1
    assert lms.wrapper_depth(["export/Carol_1_assignsubmission_file_00_start_here.ipynb"], KNOWN) == 1
    # one learner's folder holding a folder named like another learner: not a wrapper
    assert lms.wrapper_depth(["mallory/bob/00_start_here.ipynb"], KNOWN) == 0
    assert lms.identify("mallory/bob/00_start_here.ipynb", KNOWN, 0).learner == "mallory"


def _corrupt_entry(path: Path, entry: str) -> None:
    """Alter the deflate data of one entry in place (its header and the directory stay valid)."""
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo(entry)
    data = bytearray(path.read_bytes())
    start = info.header_offset + 30 + len(info.orig_filename.encode("utf-8")) + len(info.extra)
    for k in range(start + 10, start + min(info.compress_size, 400), 7):
        data[k] ^= 0x5A
    path.write_bytes(bytes(data))


def test_one_corrupted_entry_reports_its_learner_and_everyone_else_is_placed(tmp_path, venv_path):
    staged = tmp_path / "staged"
    names = ["Alice A_101_assignsubmission_file_", "Bob B_102_assignsubmission_file_", "Carol C_103_assignsubmission_file_"]
    for n in names:
        _notebook(staged / n / f"{A}.ipynb", n)
    upload = tmp_path / "export.zip"
    with zipfile.ZipFile(upload, "w", zipfile.ZIP_DEFLATED) as zf:
        for n in names:
            zf.write(staged / n / f"{A}.ipynb", f"{n}/{A}.ipynb")
    _corrupt_entry(upload, f"{names[1]}/{A}.ipynb")
    with pytest.raises((zlib.error, zipfile.BadZipFile)), zipfile.ZipFile(upload) as zf:   # the control
        zf.read(f"{names[1]}/{A}.ipynb")
    report = workflow.intake(upload, tmp_path / "root", KNOWN)
    bob = lms.learner_id("Bob B")
    assert sorted(report.placed) == sorted([(lms.learner_id("Alice A"), A), (lms.learner_id("Carol C"), A)])
    (skipped,) = [i for i in report.issues if i.kind == "skipped_file"]
    assert (skipped.learner, skipped.assignment) == (bob, A) and "壊れていて読めません" in skipped.detail
    assert report.problems
    # grades.csv gives the damaged learner a row with 0 and the reason
    from ctxlab.grading.report import export_csv
    summary = export_csv(tmp_path / "root", tmp_path / "root" / "grades.csv", KNOWN, report.issues)
    text = (tmp_path / "root" / "grades.csv").read_text(encoding="utf-8-sig")
    assert summary["learners"] == 3 and "壊れていて読めません" in text


def test_a_zip_whose_directory_is_broken_is_a_clear_error(tmp_path, venv_path):
    upload = tmp_path / "export.zip"
    with zipfile.ZipFile(upload, "w") as zf:
        zf.writestr(f"alice/{A}.ipynb", "{}")
    data = bytearray(upload.read_bytes())
    cd = data.rfind(b"PK\x01\x02")
    data[cd + 4:cd + 8] = b"\xff\xff\xff\xff"   # the central directory entry's version fields
    data[cd:cd + 4] = b"XX\x01\x02"
    upload.write_bytes(bytes(data))
    with pytest.raises(GradeError, match="zip"):
        workflow.intake(upload, tmp_path / "root", KNOWN)


# --------------------------------------------------------------------------- a roster re-run

def _autograded(root: Path, learners: list[str], assignment: str = A) -> None:
    """What autograde leaves for each placed submission (simulated: a gradebook submission with
    a 3-point test and a 2-point written answer, graded 3 + 1, and a feedback file)."""
    import warnings

    from nbgrader.api import Gradebook
    from sqlalchemy.exc import SAWarning

    from ctxlab.grading._nbgrader import gradebook_url

    with Gradebook(gradebook_url(root)) as gb, warnings.catch_warnings():
        warnings.simplefilter("ignore", SAWarning)
        if assignment not in [a.name for a in gb.assignments]:
            gb.add_assignment(assignment)
            gb.add_notebook(assignment, assignment)
            gb.add_grade_cell("test", assignment, assignment, max_score=3, cell_type="code")
            gb.add_grade_cell("why", assignment, assignment, max_score=2, cell_type="markdown")
        for learner in learners:
            gb.add_submission(assignment, learner)
            test, why = (gb.find_grade(g, assignment, assignment, learner) for g in ("test", "why"))
            test.auto_score, test.needs_manual_grade = 3, False
            why.manual_score, why.needs_manual_grade = 1, False
            (root / "autograded" / learner / assignment).mkdir(parents=True, exist_ok=True)
            shutil.copy(root / "submitted" / learner / assignment / f"{assignment}.ipynb",
                        root / "autograded" / learner / assignment / f"{assignment}.ipynb")
            fb = root / "feedback" / learner / assignment
            fb.mkdir(parents=True, exist_ok=True)
            (fb / f"{assignment}.html").write_text(f"<html><body>{learner}</body></html>", encoding="utf-8")
        gb.db.commit()
    record_feedback(root, {(learner, assignment) for learner in learners})   # the feedback shows this state


def test_a_roster_rerun_leaves_one_learner_per_lms_id(tmp_path, venv_path):
    from nbgrader.api import Gradebook

    from ctxlab.grading import lms_export
    from ctxlab.grading._nbgrader import gradebook_url
    from ctxlab.grading.report import export_csv

    up, root = tmp_path / "upload", tmp_path / "root"
    rels = {"佐藤 花子_20481_assignsubmission_file_": "hanako.a@example.com",
            "佐藤 花子_20499_assignsubmission_file_": "hanako.b@example.com",
            "山田 太郎_20500_assignsubmission_file_": "taro@example.com"}
    for folder in rels:
        _notebook(up / folder / f"{A}.ipynb", folder)
    first = workflow.intake(up, root, KNOWN)      # no roster: the twins are keyed by name and id
    _autograded(root, [lid for lid, _ in first.placed])
    before = {lid for lid, _ in first.placed}
    assert len(before) == 3 and any(i.kind == "same_name" for i in first.issues)
    roster = tmp_path / "roster.csv"
    roster.write_text("id,name,email\n" + "".join(f"{f.split('_')[1]},{f.split('_')[0]},{e}\n" for f, e in rels.items()),
                      encoding="utf-8")
    second = workflow.intake(up, root, KNOWN, roster=lms.read_roster(roster))
    after = {lms.learner_id(e) for e in rels.values()}
    assert len(second.converged) == 3 and set(second.converged.values()) == after
    assert second.placed == [] and len(second.unchanged) == 3, "the graded copies moved: nothing to grade again"
    with Gradebook(gradebook_url(root)) as gb:
        assert {s.id for s in gb.students} == after
        assert {s.student.id: s.score for s in gb.find_assignment(A).submissions} == dict.fromkeys(after, 4.0)
    for folder in ("submitted", "autograded", "feedback"):
        assert {p.name for p in (root / folder).iterdir()} == after, folder
    ids = lms.load_lms_ids(root)
    assert set(ids) == after and sorted(v["ids"][A] for v in ids.values()) == ["20481", "20499", "20500"]
    workflow._record(root, second)
    summary = export_csv(root, root / "grades.csv", KNOWN)
    assert summary["learners"] == 3 and summary["pending"] == 0
    assert not [i for i in lms.load_issues(root) if i.learner in before - after]
    ex = lms_export.export(root, [A])
    sheet = (root / "lms" / "moodle" / f"{A}_worksheet.csv").read_text(encoding="utf-8-sig").splitlines()[1:]
    assert sorted(r.split(",")[0] for r in sheet) == ["Participant 20481", "Participant 20499", "Participant 20500"]
    with zipfile.ZipFile(root / "lms" / "moodle" / f"{A}_feedback.zip") as zf:
        folders = [n.split("/")[0] for n in zf.namelist()]
    assert len(folders) == len(set(folders)) == 3 and ex["held"] == []
    assert not stale_feedback(root), "the moved feedback still shows the moved grades"
    # and back: a run without the roster converges the other way, still one learner per id
    third = workflow.intake(up, root, KNOWN)
    assert len(third.converged) == 3 and len(lms.load_lms_ids(root)) == 3


# --------------------------------------------------------------------------- two classes, one grading/

def test_a_second_class_in_one_root_is_refused_with_the_root_advice(tmp_path, venv_path):
    root = tmp_path / "grading"
    for n in ("alice", "bob"):
        _notebook(tmp_path / "class_a" / n / f"{A}.ipynb", n)
    for n in ("carol", "dave"):
        _notebook(tmp_path / "class_b" / n / f"{A}.ipynb", n)
    _notebook(tmp_path / "late" / "erin" / f"{A}.ipynb", "erin")
    workflow.intake(tmp_path / "class_a", root, KNOWN)
    with pytest.raises(GradeError, match="--root grading/クラス名"):
        workflow.intake(tmp_path / "class_b", root, KNOWN)
    assert not (root / "submitted" / "carol").exists(), "nothing of the other class is placed"
    late = workflow.intake(tmp_path / "late", root, KNOWN)      # one late learner: not another class
    assert late.placed == [("erin", A)]
    both = workflow.intake(tmp_path / "class_b", root, KNOWN, same_class=True)
    assert sorted(both.placed) == [("carol", A), ("dave", A)]


# --------------------------------------------------------------------------- what the summary and notes say

def test_summary_text_is_one_line_per_cause(tmp_path, venv_path):
    from ctxlab.grading import lms_export
    from ctxlab.grading.parallel import GradeRun, Outcome
    from ctxlab.grading.report import Report, exit_reasons, export_csv, format_summary
    from tests.test_lms import _gradebook

    # a name that begins with a no-break space and then a formula gives a folder that starts with neither
    for name in ("\u00a0=5+6 Mallory", "\u3000＋1 Mallory", "\u200b\u00a0-1 Mallory", " =x"):
        folder = lms_export.moodle_folder(name, "7")
        assert not folder.startswith(lms_export._FORMULA_START) and not folder[0].isspace(), folder
    assert lms_export.moodle_folder("\u00a0=5+6 Mallory", "7") == "5+6 Mallory_7_assignfeedback_file_"
    # one shared name is one line, whatever the number of learners it covers
    detail = "佐藤 花子（00_start_here: id 1, 2, 3）: id ごとに別の受講者として採点しました"
    issues = [lms.Issue("same_name", f"u{i}", None, detail) for i in range(6)]
    text = format_summary(Report(root=tmp_path, issues=issues))
    assert text.count(detail) == 1 and "同名の受講者（id ごとに別の受講者として採点・要確認）: 1 件" in text
    # exit 1 names its real cause: a held submission is not "unreadable files or same names"
    held = Report(root=tmp_path, run=GradeRun([Outcome("x", A, True, review=["grade_override"])], 1, 1.0))
    assert exit_reasons(held) == ["自動採点を保留した提出 1 件（formgrader で手動採点）"]
    assert exit_reasons(Report(root=tmp_path, issues=issues)) == ["名簿で解決していない同名の受講者 1 組（--roster）"]
    assert exit_reasons(Report(root=tmp_path)) == []
    # after the held submission was graded by hand, its note no longer says it is held
    root = tmp_path / "root"
    _gradebook(root, {"graded": (0, 2), "waiting": (0, None)})
    review = [lms.Issue("review", lid, A, "grade_override") for lid in ("graded", "waiting")]
    export_csv(root, root / "grades.csv", KNOWN, review)
    import csv
    with open(root / "grades.csv", encoding="utf-8-sig", newline="") as fh:
        notes = {r["learner_id"]: r["notes"] for r in csv.DictReader(fh)}
    assert "自動採点を保留" not in notes["graded"] and "自動採点を保留" in notes["waiting"]


def test_blind_marking_of_a_second_assignment_is_not_another_class(tmp_path, venv_path):
    root = tmp_path / "grading"
    for pid in (101, 102):
        _notebook(tmp_path / "a00" / f"Participant_{pid}_assignsubmission_file_" / f"{A}.ipynb", str(pid))
    for pid in (201, 202):
        _notebook(tmp_path / "a01" / f"Participant_{pid}_assignsubmission_file_" / "01_count_tokens.ipynb", str(pid))
    workflow.intake(tmp_path / "a00", root, KNOWN)
    assert len(workflow.intake(tmp_path / "a01", root, KNOWN).placed) == 2, "participant ids are per assignment"
