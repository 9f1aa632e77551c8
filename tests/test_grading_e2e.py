"""End-to-end grading of a class, as an instructor runs it (modelled on nbgrader's app tests).

The class (tests/graded_class.py: every assignment's solution, untouched release and partly
correct submission, the adversarial kinds for representative assignments, a broken file, a
stray notebook, a duplicate) is graded once for the session, in parallel, through
:func:`ctxlab.grading.workflow.grade` (the ``graded_class`` fixture); the tests then read
the gradebook, the autograded notebooks, the feedback, the CSV and the summary. The second
half reads LMS exports without nbgrader (fast).
"""
from __future__ import annotations

import csv
import os
import shutil
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

import nbfixtures as nbf
from ctxlab.grading import _nbgrader, lms, workflow
from ctxlab.grading.report import format_summary
from graded_class import ASSIGNMENTS, CANVAS_UID, MOODLE_NAME, REPRESENTATIVE, ROOT, source


def grade_meta(nb):
    """grade_id -> points of the autograded test cells."""
    return {nb.cells[i].metadata["nbgrader"]["grade_id"]: float(nb.cells[i].metadata["nbgrader"].get("points", 0))
            for i in nbf.test_cells(nb)}


@pytest.fixture(scope="module")
def graded(graded_class):
    return graded_class


def autograded_nb(root: Path, learner: str, name: str):
    return nbformat.read(root / "autograded" / learner / name / f"{name}.ipynb", as_version=4)


def test_an_untouched_release_runs_top_to_bottom_and_each_waiting_exercise_says_so(graded):
    """Run All on a lesson with no exercise solved: every cell runs (nbgrader executed the
    untouched release of every lesson), the only failures are in the answer and test cells that
    carry the raises-exception tag (JupyterLab's Run All goes on past them), and each failure is
    the stub's one-line message naming its exercise, or a visible test's own message (09's
    answers are empty until written) -- never an error in a narrative cell."""
    from ctxlab.grading.preprocessors import RUN_ON

    root = graded["root"]
    for name in ASSIGNMENTS:
        release = nbformat.read(root / "course" / name / f"{name}.ipynb", as_version=4)
        tagged = {c.metadata["nbgrader"]["grade_id"] for c in release.cells
                  if RUN_ON in c.metadata.get("tags", []) and "nbgrader" in c.metadata}
        assert tagged, f"{name}: no answer or test cell carries the {RUN_ON} tag"
        untagged = [c for c in release.cells if c.cell_type == "code" and
                    (c.metadata.get("nbgrader", {}).get("grade") or c.metadata.get("nbgrader", {}).get("solution"))
                    and RUN_ON not in c.metadata.get("tags", [])]
        assert not untagged, f"{name}: answer/test cells without the tag: {[c.source[:60] for c in untagged]}"
        nb = autograded_nb(root, "untouched", name)
        failed = [(c, o) for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
                  if o.output_type == "error"]
        assert failed, f"{name}: the untouched release passed something"
        for cell, err in failed:
            gid = cell.metadata.get("nbgrader", {}).get("grade_id")
            assert gid in tagged, f"{name}: a narrative cell fails before the exercises are solved:\n{cell.source[:300]}\n{err.ename}: {err.evalue[:300]}"
            if err.ename == "Unsolved":
                assert len(err.traceback) == 1, f"{name} {gid}: not one line: {err.traceback}"
                assert "演習" in err.evalue and "はまだ解かれていません" in err.evalue and "Run All" in err.evalue, err.evalue
            elif err.ename == "AnswerMissing":   # 09: a question left open reads as its message alone
                assert len(err.traceback) == 1 and "に答えがありません" in err.evalue, f"{name} {gid}: {err.traceback}"
            else:
                assert err.ename == "AssertionError" and err.evalue.strip(), f"{name} {gid}: {err.ename}: {err.evalue[:200]}"


@pytest.mark.slow
def test_nothing_is_lost_or_skipped_silently(graded):
    report, expected = graded["report"], graded["expected"]
    outcomes = graded["outcomes"]
    assert set(outcomes) == set(expected), "every recognized submission must be graded (or fail with a reason)"
    first = ASSIGNMENTS[0]
    kinds = {(i.kind, i.learner, i.assignment) for i in report.issues}
    assert ("broken_notebook", "broken", first) in kinds
    assert ("unknown_assignment", "stray", None) in kinds
    assert ("duplicate", "7001", first) in kinds
    assert report.ignored == 1  # readme.txt; __MACOSX is skipped
    for key, o in outcomes.items():
        kind = expected[key][0]
        if kind == "kernel_dies":
            assert not o.graded and "Kernel died" in o.error
        else:
            assert o.graded, f"{key}: {o.error}"
            assert o.feedback, f"{key}: no feedback"
            assert list((graded["root"] / "feedback" / key[0] / key[1]).glob("*.html"))


@pytest.mark.slow
def test_upload_is_never_modified(graded):
    assert graded["before"] == graded["after"]


@pytest.mark.slow
def test_nbgrader_collect_files_travel_with_the_submission(graded):
    """timestamp.txt and submission_secret.txt (nbgrader collect) reach the feedback folder,
    where `nbgrader release_feedback` needs them."""
    name = ASSIGNMENTS[0]
    fb = graded["root"] / "feedback" / "untouched" / name
    assert (fb / "submission_secret.txt").read_text(encoding="utf-8") == f"secret-{name}"
    assert graded["scores"][("untouched", name)] is not None
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{graded['root'] / 'gradebook.db'}") as gb:
        ts = gb.find_submission(name, "untouched").timestamp
    assert (ts.hour, ts.minute) == (10, 15)


@pytest.mark.slow
@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_solution_untouched_partial(graded, name):
    sc = graded["scores"]
    full, zero, part = sc[("solution", name)], sc[("untouched", name)], sc[(graded["moodle_id"], name)]
    assert full.max_code_score > 0 and full.code_score == full.max_code_score
    assert zero.max_code_score == full.max_code_score and zero.code_score == 0
    failing = graded["expected"][(graded["moodle_id"], name)][1]
    meta = grade_meta(source(name))
    assert part.code_score == pytest.approx(full.max_code_score - sum(meta[g] for g in failing))
    if 0 < len(failing) < len(meta):
        assert 0 < part.code_score < part.max_code_score


@pytest.mark.slow
def test_every_test_cell_scored_as_expected(graded):
    """Cell by cell: the tests a submission must fail score 0, all others full points, and
    each score agrees with the autograded notebook (an error output means 0)."""
    root = graded["root"]
    for (learner, name), (kind, failing) in graded["expected"].items():
        if kind == "kernel_dies":
            continue
        meta = grade_meta(source(name))
        cells = _nbgrader.cell_scores(root, learner, name)
        ag = autograded_nb(root, learner, name)
        errored = {c.metadata["nbgrader"]["grade_id"] for c in ag.cells
                   if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("grade")
                   and any(o.get("output_type") == "error" for o in c.get("outputs", []))}
        for gid, pts in meta.items():
            score = cells[gid][0]
            if failing is not None:
                assert score == (0 if gid in failing else pts), f"{learner}/{name} {kind}: {gid} scored {score}"
            if gid in errored or gid not in {c.metadata.get("nbgrader", {}).get("grade_id") for c in ag.cells}:
                assert score == 0, f"{learner}/{name} {kind}: {gid} failed but scored {score}"
            else:
                assert score == pts, f"{learner}/{name} {kind}: {gid} passed but scored {score}"


@pytest.mark.slow
@pytest.mark.parametrize("name", REPRESENTATIVE)
def test_infinite_loop_times_out_and_is_graded(graded, name):
    o = graded["outcomes"][(str(CANVAS_UID["timeout"]), name)]
    assert o.graded and o.timeouts >= 1


@pytest.mark.slow
@pytest.mark.parametrize("name", REPRESENTATIVE)
def test_first_cell_raising_is_graded(graded, name):
    learner = str(CANVAS_UID["import_error"])
    ag = autograded_nb(graded["root"], learner, name)
    first = next(c for c in ag.cells if c.cell_type == "code")
    assert any(o.get("ename") == "ModuleNotFoundError" for o in first.outputs)
    s = graded["scores"][(learner, name)]
    assert 0 <= s.code_score <= s.max_code_score


@pytest.mark.slow
@pytest.mark.parametrize("name", REPRESENTATIVE)
def test_edited_test_cell_is_restored(graded, name):
    learner = str(CANVAS_UID["edited_test"])
    failing = graded["expected"][(learner, name)][1]
    src = {c.metadata["nbgrader"]["grade_id"]: c.source for c in source(name).cells
           if c.metadata.get("nbgrader", {}).get("grade_id")}
    for c in autograded_nb(graded["root"], learner, name).cells:
        gid = c.metadata.get("nbgrader", {}).get("grade_id")
        if gid in failing:
            assert c.source == src[gid] != "pass"
    s, p = graded["scores"][(learner, name)], graded["scores"][(graded["moodle_id"], name)]
    assert s.code_score == p.code_score < s.max_code_score  # as if not solved: same as the partial


@pytest.mark.slow
@pytest.mark.parametrize("name", REPRESENTATIVE)
def test_big_output_is_limited(graded, name):
    learner = str(CANVAS_UID["big_output"])
    s = graded["scores"][(learner, name)]
    assert s.code_score == s.max_code_score
    ag = graded["root"] / "autograded" / learner / name / f"{name}.ipynb"
    fb = graded["root"] / "feedback" / learner / name / f"{name}.html"
    assert ag.stat().st_size < 2_000_000 and fb.stat().st_size < 3_000_000
    assert "出力が長すぎるため" in fb.read_text(encoding="utf-8")


@pytest.mark.slow
def test_csv_has_a_row_per_learner_with_reasons(graded):
    rows, sc = graded["rows"], graded["scores"]
    learners = {k[0] for k in graded["expected"]} | {"broken", "stray"}
    assert learners <= set(rows)
    first = ASSIGNMENTS[0]
    for (learner, name), s in sc.items():
        assert float(rows[learner][name]) == pytest.approx(s.score)
    sol = rows["solution"]
    assert float(sol["total"]) == pytest.approx(sum(sc[("solution", a)].score for a in ASSIGNMENTS))
    written = sum(sc[("solution", a)].max_written_score for a in ASSIGNMENTS)
    assert float(sol["pending_manual"]) == pytest.approx(written) and written > 0
    assert rows["broken"][first] == "0" and "壊れたノートブック" in rows["broken"]["notes"]
    assert "課題が分からない" in rows["stray"]["notes"]
    kd = rows[str(CANVAS_UID["kernel_dies"])]
    assert kd[REPRESENTATIVE[0]] == "0" and "Kernel died" in kd["notes"]
    assert rows[graded["moodle_id"]]["name"] == MOODLE_NAME
    assert rows["untouched"][ASSIGNMENTS[-1]] == "0" and rows["broken"][ASSIGNMENTS[-1]] == ""


@pytest.mark.slow
def test_summary_says_what_failed_and_why(graded):
    text = format_summary(graded["report"])
    assert "採点できなかった: 1 件" in text and "Kernel died" in text
    assert "時間切れのセルあり" in text and "壊れたノートブック" in text and "重複" in text
    print(text)


@pytest.mark.slow
def test_regrading_the_same_export_grades_nothing_again(graded, tmp_path):
    """Submissions identical to the graded ones are skipped; the CSV is the same."""
    again_report = workflow.grade(graded["export"], graded["root"], course=ROOT,
                                  progress=False, feedback=False, csv_path=tmp_path / "again.csv")
    assert again_report.placed == [] and again_report.run.outcomes == []
    assert len(again_report.unchanged) == len(graded["expected"])  # the failed one too: it did not change
    with open(tmp_path / "again.csv", encoding="utf-8-sig", newline="") as fh:
        again = {r["learner_id"]: r for r in csv.DictReader(fh)}
    for lid, row in graded["rows"].items():
        assert {k: v for k, v in again[lid].items() if k != "notes"} == {k: v for k, v in row.items() if k != "notes"}


# --------------------------------------------------------------------------- reading an LMS export (fast)

KNOWN = ["00_start_here", "01_count_tokens", "10_rag_lab"]


@pytest.mark.parametrize("rel, learner, name, layout, assignment", [
    ("alice/00_start_here.ipynb", "alice", "alice", "folder", "00_start_here"),
    ("export/alice/01_count_tokens/01_count_tokens.ipynb", "alice", "alice", "folder", "01_count_tokens"),
    ("Taro Yamada/00_start_here (1).ipynb", lms.learner_id("Taro Yamada"), "Taro Yamada", "folder", "00_start_here"),
    ("山田 太郎_12345_assignsubmission_file_/10_rag_lab.ipynb", lms.learner_id("山田 太郎"), "山田 太郎",
     "moodle", "10_rag_lab"),
    ("山田 太郎_777_assignsubmission_file_/sub/00_start_here.ipynb", lms.learner_id("山田 太郎"), "山田 太郎",
     "moodle", "00_start_here"),
    # Moodle's flat download: no folders, the prefix on the file name
    ("山田 太郎_20481_assignsubmission_file_00_start_here.ipynb", lms.learner_id("山田 太郎"), "山田 太郎",
     "moodle", "00_start_here"),
    ("export/山田 太郎_20481_assignsubmission_file_10_rag_lab (1).ipynb", lms.learner_id("山田 太郎"), "山田 太郎",
     "moodle", "10_rag_lab"),
    ("yamadataro_12345_67890_00_start_here.ipynb", "12345", "yamadataro", "canvas", "00_start_here"),
    ("yamadataro_LATE_12345_67891_00_start_here-1.ipynb", "12345", "yamadataro", "canvas", "00_start_here"),
    ("bob/homework.ipynb", "bob", "bob", "folder", None),
    ("00_start_here.ipynb", None, "", "", "00_start_here"),
])
def test_identify(rel, learner, name, layout, assignment):
    # "export/" is a wrapping folder here (lms.wrapper_depth decides that for a whole upload)
    up = lms.identify(rel, KNOWN, top=1 if rel.startswith("export/") else 0)
    assert (up.learner, up.name, up.layout, up.assignment) == (learner, name, layout, assignment)


def test_assignments_not_chosen_are_skipped_quietly(tmp_path, monkeypatch):
    """`ctxlab grade --assignment 00_start_here`: another assignment's notebooks are neither graded
    nor reported as an unknown assignment; a notebook of no assignment still is."""
    # nbgrader's gradebook runs the venv's `alembic` when it creates the database
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    upload = tmp_path / "upload"
    for rel in ("alice/00_start_here.ipynb", "alice/01_count_tokens.ipynb", "bob/01_count_tokens.ipynb",
                "bob/homework.ipynb"):
        (upload / rel).parent.mkdir(parents=True, exist_ok=True)
        name = Path(rel).stem if Path(rel).stem in KNOWN else "00_start_here"
        shutil.copy(ROOT / "course" / name / f"{name}.ipynb", upload / rel)
    report = workflow.intake(upload, tmp_path / "root", ["00_start_here"], course_assignments=KNOWN)
    assert report.placed == [("alice", "00_start_here")]
    assert report.other_assignments == 2
    kinds = [(i.kind, i.learner) for i in report.issues]
    assert kinds == [("unknown_assignment", "bob")], kinds
    assert "選ばなかった課題の提出 2 件" in format_summary(report)


def test_learner_ids_are_safe_and_stable():
    assert lms.learner_id("alice") == "alice"
    jp = lms.learner_id("山田 太郎")
    assert jp == lms.learner_id("山田 太郎") and jp.startswith("u") and len(jp) == 11 and jp.isascii()
    # names are labels: look-alikes are different learners (spacing, width, case, punctuation)
    looks = ["山田 太郎", "山田　太郎", "山田  太郎", "Taro Yamada", "taro yamada", "Taro Yamada!", "Ｔａｒｏ Yamada",
             "taro@example.com", "taro_example.com"]
    assert len({lms.learner_id(n) for n in looks}) == len(looks)
    assert all(lms.learner_id(n).isascii() for n in looks)


def test_zip_names_in_cp932_are_decoded(tmp_path):
    class RawName(zipfile.ZipInfo):  # what Windows tools write: CP932 bytes, no UTF-8 flag
        def _encodeFilenameFlags(self):
            return self.filename.encode("cp437"), self.flag_bits

    name = "山田_1_assignsubmission_file_/00_start_here.ipynb"
    info = RawName(name.encode("cp932").decode("cp437"))
    upload = tmp_path / "cp932.zip"
    with zipfile.ZipFile(upload, "w") as zf:
        zf.writestr(info, "{}")
    info = zipfile.ZipFile(upload).infolist()[0]
    assert not info.flag_bits & 0x800
    lms.extract_zip(upload, tmp_path / "out")
    assert (tmp_path / "out" / "山田_1_assignsubmission_file_" / "00_start_here.ipynb").exists()


def test_newest_of_duplicates_is_kept():
    a = lms.Upload("x_1_1_00_start_here.ipynb", Path("a"), 100.0, "1", assignment="00_start_here")
    b = lms.Upload("x_1_2_00_start_here-1.ipynb", Path("b"), 200.0, "1", assignment="00_start_here")
    kept, issues = lms.newest([b, a])
    assert kept == [b] and issues[0].kind == "duplicate" and a.rel in issues[0].detail


def test_broken_notebooks_are_recognized(tmp_path):
    cases = {"notjson.ipynb": "{ nope", "notnb.ipynb": "[1, 2]", "binary.ipynb": b"\xff\xfe\x00"}
    for fname, content in cases.items():
        p = tmp_path / fname
        p.write_bytes(content if isinstance(content, bytes) else content.encode())
        reason, _ = lms.check_notebook(p)
        assert reason, fname
    good = tmp_path / "good.ipynb"
    nbformat.write(source("00_start_here") if "00_start_here" in ASSIGNMENTS else nbformat.v4.new_notebook(), good)
    reason, cells = lms.check_notebook(good)
    assert reason is None


def test_grade_command_reports_bad_input(tmp_path, capsys):
    from ctxlab import cli

    assert cli.main(["grade"]) == 2
    assert cli.main(["grade", str(tmp_path / "missing.zip"), "--root", str(tmp_path / "g")]) == 2
    err = capsys.readouterr().err
    assert "見つかりません" in err or "指定してください" in err


@pytest.mark.slow
def test_validate_reports_failures_with_an_exit_code(tmp_path, capsys):
    """`nbgrader validate` exits 0 when tests fail; `ctxlab grade --validate` returns 1 and says which cell."""
    name = ASSIGNMENTS[0]
    nb, failing = nbf.make_variant(source(name), "partial")
    path = tmp_path / f"{name}.ipynb"
    nbformat.write(nb, path)
    assert workflow.validate([path]) == 1  # runs _nbgrader.validate (nbgrader's Validator) once
    out = capsys.readouterr().out
    assert "失敗" in out and "NotImplementedError" in out


@pytest.mark.slow
def test_export_after_manual_grading_sends_feedback_and_grades_from_one_state(graded, tmp_path):
    """Issue 39 item 4: `ctxlab grade --export` without --feedback after manual grading wrote a
    worksheet with the manual points and a feedback zip without them. Now the feedback of what
    was graded by hand since is made again, and the zip and the worksheet agree."""
    from nbgrader.api import Gradebook

    from ctxlab.grading import lms_export
    from ctxlab.grading._manual import stale_feedback
    from ctxlab.grading._nbgrader import gradebook_url

    root = tmp_path / "grading"
    shutil.copytree(graded["root"], root, symlinks=True)
    learner = graded["moodle_id"]
    with Gradebook(gradebook_url(root)) as gb:   # the instructor grades every written answer of the Moodle learner
        graded_by_hand = []
        for a in gb.assignments:
            for sub in a.submissions:
                if sub.student.id != learner:
                    continue
                pending = [g for nb in sub.notebooks for g in nb.grades if g.needs_manual_grade]
                for g in pending:
                    g.manual_score, g.needs_manual_grade = float(g.max_score), False
                if pending:
                    graded_by_hand.append(a.name)
        gb.db.commit()
    assert graded_by_hand, "the graded class has written answers to grade by hand"
    assert {(learner, a) for a in graded_by_hand} <= stale_feedback(root)
    assert workflow.main(["--export", "--root", str(root), "--quiet"]) in (0, 1)
    assert not stale_feedback(root)
    ids = lms.load_lms_ids(root)[learner]["ids"]
    with Gradebook(gradebook_url(root)) as gb:
        score = {a: float(gb.find_submission(a, learner).score) for a in graded_by_hand}
    for a in graded_by_hand:
        sheet = (root / "lms" / "moodle" / f"{a}_worksheet.csv").read_text(encoding="utf-8-sig")
        assert f"Participant {ids[a]},{MOODLE_NAME}" in sheet and f",{score[a]:g}," in sheet
        if a in lms_export.answer_sheets(ROOT, ASSIGNMENTS):
            continue   # its feedback waits for --release-answers
        with zipfile.ZipFile(root / "lms" / "moodle" / f"{a}_feedback.zip") as zf:
            (name,) = [n for n in zf.namelist() if f"_{ids[a]}_" in n]
            html = zf.read(name).decode("utf-8")
        assert lms_export.PENDING_MARK not in html and "まだ採点されていません" not in html
        assert f"{score[a]:g}" in html.replace(".0 ", " ") or f"{score[a]}" in html
