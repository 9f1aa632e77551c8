"""Who a submission belongs to, from the names the LMSs give their downloads.

Each case is built from the LMS's own naming code:
- Canvas ``lib/content_zipper.rb`` (``get_filename``: ``[sortable name, "LATE", user id or
  "anon_<anonymous id>"]`` joined by ``_``, then ``_<attachment id>_<file name>``; the sortable
  name keeps ``_`` but never ``_<digits>_``);
- Moodle ``mod/assign/classes/downloader.php`` (4.1+: ``<prefix>_assignsubmission_file/``,
  blind marking's prefix is ``Participant_<id>``, a team submission's is ``<group name>_<group
  id>``) and ``locallib.php`` before 4.1 (the same with a trailing ``_``).

Identity (two submissions of one assignment are one learner only when their LMS id is the
same) is tested with look-alike names: punctuation, spacing, width and case.
"""
from __future__ import annotations

import csv
import zipfile

import pytest

from ctxlab.errors import GradeError
from ctxlab.grading import lms, lms_export, workflow
from ctxlab.grading.report import export_csv, format_summary
from tests.test_lms import KNOWN, _gradebook, venv_path, write_upload  # noqa: F401 (venv_path is a fixture)

A = "00_start_here"


# --------------------------------------------------------------------------- Canvas

@pytest.mark.parametrize("fname, layout, lms_id, name, late", [
    ("yamadataro_1001_5001_00_start_here.ipynb", "canvas", "1001", "yamadataro", False),
    ("yamadataro_LATE_1001_5002_00_start_here.ipynb", "canvas", "1001", "yamadataro", True),
    ("o_brienpat_1002_5003_00_start_here.ipynb", "canvas", "1002", "o_brienpat", False),       # sortable name keeps _
    ("o_brien_pat_LATE_1003_5004_00_start_here-1.ipynb", "canvas", "1003", "o_brien_pat", True),
    ("山田太郎_1004_5005_00_start_here.ipynb", "canvas", "1004", "山田太郎", False),               # [[:word:]] keeps kanji
    ("anon_Xy7Qz_5006_00_start_here.ipynb", "canvas_anon", "Xy7Qz", "anon_Xy7Qz", False),
    ("LATE_anon_p2Rt9_5007_00_start_here.ipynb", "canvas_anon", "p2Rt9", "anon_p2Rt9", True),
    ("anon_1005_5008_00_start_here.ipynb", "canvas", "1005", "anon", False),                   # a learner named "anon"
])
def test_canvas_names(fname, layout, lms_id, name, late):
    up = lms.identify(fname, KNOWN)
    assert (up.layout, up.lms_id, up.name, up.late, up.assignment) == (layout, lms_id, name, late, A)


def test_canvas_anonymous_and_late_submissions_are_graded_and_reported(tmp_path, venv_path):
    upload = write_upload(tmp_path / "upload", [
        "anon_Xy7Qz_5006_00_start_here.ipynb", "LATE_anon_p2Rt9_5007_00_start_here.ipynb",
        "o_brienpat_LATE_1002_5003_00_start_here.ipynb", "anon_Xy7Qz_6001_01_count_tokens.ipynb"])
    root = tmp_path / "root"
    report = workflow.intake(upload, root, KNOWN)
    anon_00, anon_01 = lms.learner_id("anon_Xy7Qz_00_start_here"), lms.learner_id("anon_Xy7Qz_01_count_tokens")
    assert set(report.placed) == {(anon_00, A), (lms.learner_id("anon_p2Rt9_00_start_here"), A), ("1002", A),
                                  (anon_01, "01_count_tokens")}, "an anonymous id is per assignment: never joined"
    assert not report.problems and "受講者が分からない" not in format_summary(report)
    late = sorted(i.learner for i in report.issues if i.kind == "late")
    assert late == sorted(["1002", lms.learner_id("anon_p2Rt9_00_start_here")])
    assert "遅れた提出" in format_summary(report)
    export_csv(root, root / "grades.csv", KNOWN, report.issues)
    with open(root / "grades.csv", encoding="utf-8-sig", newline="") as fh:
        notes = {r["learner_id"]: r["notes"] for r in csv.DictReader(fh)}
    assert "遅れた提出" in notes["1002"] and "遅れた提出" not in notes[anon_00]
    ids = lms.load_lms_ids(root)
    assert ids[anon_00]["layout"] == "canvas_anon" and ids["1002"]["layout"] == "canvas"


# --------------------------------------------------------------------------- Moodle

def test_moodle_blind_marking_is_one_learner_per_participant(tmp_path, venv_path):
    upload = write_upload(tmp_path / "upload", [
        "Participant_20481_assignsubmission_file_/00_start_here.ipynb",      # before 4.1
        "Participant_20482_assignsubmission_file/00_start_here.ipynb",       # 4.1+
        "Participant_20483_assignsubmission_file_00_start_here.ipynb"])      # without folders
    report = workflow.intake(upload, tmp_path / "root", KNOWN)
    assert sorted(report.placed) == [(f"participant_{n}", A) for n in (20481, 20482, 20483)]
    assert not report.issues and not report.problems, "blind marking is not three learners of one name"
    ids = lms.load_lms_ids(tmp_path / "root")
    assert ids["participant_20482"]["ids"] == {A: "20482"} and ids["participant_20482"]["name"] == "Participant 20482"


def test_moodle_group_submissions_never_become_participants(tmp_path, venv_path):
    # Moodle 4.1+ team submission: "<group name>_<group id>_assignsubmission_file/"
    upload = write_upload(tmp_path / "upload", ["Group A_42_assignsubmission_file/00_start_here.ipynb",
                                                "Group_B_43_assignsubmission_file/00_start_here.ipynb"])
    plain = workflow.intake(upload, tmp_path / "plain", KNOWN)
    assert {lms.load_lms_ids(tmp_path / "plain")[lid]["layout"] for lid, _ in plain.placed} == {"moodle"}  # the control
    report = workflow.intake(upload, tmp_path / "root", KNOWN, groups=True)
    assert sorted(report.placed) == [("group_42", A), ("group_43", A)]
    ids = lms.load_lms_ids(tmp_path / "root")
    assert ids["group_42"] == {"name": "Group A", "layout": "moodle_group", "ids": {A: "42"}}


def test_group_grades_stay_out_of_the_worksheet(tmp_path, venv_path):
    root = tmp_path / "root"
    _gradebook(root, {"group_42": (3, 2)})
    lms.save_lms_ids(root, {"group_42": {"name": "Group A", "layout": "moodle_group", "ids": {A: "42"}}})
    ex = lms_export.export(root, [A])
    assert ex["files"] == [] and ex["groups"] == [("group_42", A)] and not ex["without_id"]
    assert "グループ提出 1 件" in format_summary(workflow.Report(root=root, exports=ex))


# --------------------------------------------------------------------------- identity: names are labels

LOOKALIKES = ["Alice Tanaka", "Alice Tanaka!", "alice tanaka", "Ａｌｉｃｅ Ｔａｎａｋａ", "Alice  Tanaka",
              "山田 太郎", "山田  太郎", "山田　太郎", "山田 太郎."]


def test_look_alike_moodle_names_never_take_anothers_submission(tmp_path, venv_path):
    rels = [f"{name}_{30000 + i}_assignsubmission_file_/00_start_here.ipynb" for i, name in enumerate(LOOKALIKES)]
    report = workflow.intake(write_upload(tmp_path / "upload", rels), tmp_path / "root", KNOWN)
    assert len(report.placed) == len(LOOKALIKES), "every participant is graded"
    assert not [i for i in report.issues if i.kind in ("duplicate", "same_name")]
    ids = lms.load_lms_ids(tmp_path / "root")
    assert sorted(v["ids"][A] for v in ids.values()) == [str(30000 + i) for i in range(len(LOOKALIKES))]
    assert {v["name"] for v in ids.values()} == set(LOOKALIKES)   # each keeps the name Moodle wrote


def test_look_alike_folder_names_are_different_learners(tmp_path, venv_path):
    rels = [f"{name}/00_start_here.ipynb" for name in LOOKALIKES[:5]]
    report = workflow.intake(write_upload(tmp_path / "upload", rels), tmp_path / "root", KNOWN)
    assert len(report.placed) == 5 and not [i for i in report.issues if i.kind == "duplicate"]


def test_a_name_forged_to_equal_anothers_learner_id_is_still_two_learners(tmp_path, venv_path):
    # "u" + the hash of a victim's name is a safe identifier: the learner ids collide, the LMS ids do not
    victim = "山田 太郎"
    forged = lms.learner_id(victim)
    rels = [f"{victim}_30001_assignsubmission_file_/00_start_here.ipynb",
            f"{forged}_30002_assignsubmission_file_/00_start_here.ipynb"]
    report = workflow.intake(write_upload(tmp_path / "upload", rels), tmp_path / "root", KNOWN)
    assert len(report.placed) == 2 and not [i for i in report.issues if i.kind == "duplicate"]
    ids = lms.load_lms_ids(tmp_path / "root")
    assert sorted(v["ids"][A] for v in ids.values()) == ["30001", "30002"]


def test_a_roster_matches_emails_whatever_their_case(tmp_path, venv_path):
    rels = ["佐藤 花子_20481_assignsubmission_file_/00_start_here.ipynb",
            "佐藤 花子_30001_assignsubmission_file_/01_count_tokens.ipynb"]
    roster = tmp_path / "roster.csv"
    roster.write_text("id,name,email\n20481,佐藤 花子,Hanako.Sato@Example.com\n30001,佐藤 花子,hanako.sato@example.com\n",
                      encoding="utf-8")
    report = workflow.intake(write_upload(tmp_path / "upload", rels), tmp_path / "root", KNOWN,
                             roster=lms.read_roster(roster))
    assert {lid for lid, _ in report.placed} == {lms.learner_id("hanako.sato@example.com")}
    assert report.lms[lms.learner_id("hanako.sato@example.com")]["email"] in ("Hanako.Sato@Example.com",
                                                                             "hanako.sato@example.com")


# --------------------------------------------------------------------------- a folder of zips

def test_a_folder_of_moodle_zips_is_read_zip_by_zip(tmp_path, venv_path):
    staged = write_upload(tmp_path / "staged", ["佐藤 花子_20481_assignsubmission_file_/00_start_here.ipynb",
                                                "佐藤 花子_30001_assignsubmission_file_/01_count_tokens.ipynb"])
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    for i, (sub, a) in enumerate([("佐藤 花子_20481_assignsubmission_file_", A),
                                  ("佐藤 花子_30001_assignsubmission_file_", "01_count_tokens")]):
        with zipfile.ZipFile(downloads / f"CTX-{a}-{100 + i}.zip", "w") as zf:
            zf.write(staged / sub / f"{a}.ipynb", f"{sub}/{a}.ipynb")
    report = workflow.intake(downloads, tmp_path / "root", KNOWN)
    assert sorted(report.placed) == [(lms.learner_id("佐藤 花子"), "00_start_here"),
                                     (lms.learner_id("佐藤 花子"), "01_count_tokens")]
    assert report.ignored == 0 and report.uploads == 2
    (downloads / "broken.zip").write_bytes(b"not a zip")
    with pytest.raises(GradeError, match="broken.zip は zip として読めません"):
        workflow.intake(downloads, tmp_path / "root2", KNOWN)
