"""Grading's parts without an nbgrader process: one generate_assignment for all, submission caps,
nbgrader's failure log, the gradebook merge, tree comparison (fast).

The nbgrader round trip itself (the solution as a submission gets full autograded marks,
the untouched release 0) is graded once with the whole class: tests/test_grading_e2e.py,
``test_solution_untouched_partial``.
"""
from __future__ import annotations

import warnings

import pytest
from nbgrader import api as nbgrader_api
from nbgrader.api import Gradebook
from sqlalchemy.exc import SAWarning

from ctxlab.grading import _nbgrader, parallel

_ALEMBIC_HEAD = "e43177bfe90b"  # `alembic heads` of nbgrader 0.9.6


def _solutions(root, names):
    for name in names:
        (root / "solutions" / name).mkdir(parents=True)


@pytest.fixture
def calls(monkeypatch):
    made = []
    monkeypatch.setattr(_nbgrader, "nbgrader", lambda root, *args, **kw: made.append(args))
    return made


def test_every_assignment_is_generated_in_one_nbgrader_process(tmp_path, calls):
    _solutions(tmp_path, ["a", "b", "c"])
    _nbgrader.generate_assignments(tmp_path, ["c", "a", "b"])
    assert calls == [("generate_assignment", "*", "--force", "--log-level=WARN")]


def test_some_assignments_are_generated_one_by_one_and_without_db_on_request(tmp_path, calls):
    _solutions(tmp_path, ["a", "b", "c"])
    _nbgrader.generate_assignments(tmp_path, ["a", "c"], db=False)
    assert calls == [("generate_assignment", n, "--force", "--log-level=WARN", "--no-db") for n in ("a", "c")]


def _notebook(folder, cells: int, pad: int = 0):
    import json

    folder.mkdir(parents=True, exist_ok=True)
    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": "x = 1"}
    nb = {"cells": [cell] * cells, "metadata": {"pad": "x" * pad}, "nbformat": 4, "nbformat_minor": 5}
    (folder / "a1.ipynb").write_text(json.dumps(nb, indent=1), encoding="utf-8")


def test_a_submission_over_the_caps_says_which_cap_and_what_to_do(tmp_path):
    """Issue 42 item 4: a notebook of 100,000 cells took 17 worker-minutes; caps on cells and
    size are checked before anything is graded, in words that say which cap and what to do."""
    from ctxlab.grading._caps import Caps, over_caps, over_time

    caps = Caps(cells=50, notebook_mb=20)   # the 100,000-cell notebook is 14.4 MB, as the 15 MB
    _notebook(tmp_path / "ok", 50)
    assert over_caps(tmp_path / "ok", caps) == ""
    _notebook(tmp_path / "many", 100_000)
    why = over_caps(tmp_path / "many", caps)
    assert "セルが 100,000 個（上限 50 個）" in why and "出し直して" in why, why
    _notebook(tmp_path / "big", 1, pad=21 * 2**20)
    assert "（1 ノートブックの上限 20 MB）" in over_caps(tmp_path / "big", caps)
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "a1.ipynb").write_text("{not json", encoding="utf-8")
    assert over_caps(tmp_path / "broken", caps) == ""   # nbgrader reports a notebook it cannot read
    assert "1,800 秒" in over_time(Caps().seconds)
    assert Caps().cells >= 10 * 85   # the largest lesson has 85 cells


def test_failure_reasons_are_the_last_line_of_each_traceback():
    log = "\n".join([
        "[AutogradeApp | INFO] Grading submission /w/submitted/s1/a1",
        "[AutogradeApp | ERROR] There was an error processing assignment: /w/submitted/s1/a1",
        "[AutogradeApp | ERROR] Traceback (most recent call last):",
        '  File "x.py", line 1, in run',
        "nbclient.exceptions.DeadKernelError: Kernel died",
        "",
        "[AutogradeApp | INFO] Grading submission /w/submitted/s2/a1",
        "[AutogradeApp | ERROR] There was an error processing assignment: /w/submitted/s2/a1",
        "[AutogradeApp | INFO] next",
    ])
    reasons = parallel._failure_reasons(log)
    assert reasons == {"/w/submitted/s1/a1": "nbclient.exceptions.DeadKernelError: Kernel died",
                       "/w/submitted/s2/a1": "nbgrader autograde failed (see the log)"}


def _gradebook(path, students):
    """A gradebook with one assignment (a code and a written grade cell) and empty submissions."""
    with warnings.catch_warnings(), Gradebook(f"sqlite:///{path}") as gb:
        warnings.simplefilter("ignore", SAWarning)
        if not gb.assignments:
            gb.add_assignment("a1")
            gb.add_notebook("a1", "a1")
            gb.add_grade_cell("code", "a1", "a1", max_score=2, cell_type="code")
            gb.add_grade_cell("essay", "a1", "a1", max_score=3, cell_type="markdown")
            gb.add_solution_cell("essay", "a1", "a1")
        for student in students:
            gb.update_or_create_student(student)
            gb.add_submission("a1", student)


def test_merge_copies_auto_grades_and_keeps_manual_grades_given_meanwhile(tmp_path, monkeypatch):
    """Only what autograde sets travels from a worker; a manual score found in a worker
    gradebook (autograde never writes one) is not trusted (tests/test_attacks.py has more)."""
    # a new gradebook asks the `alembic` command for the schema version to stamp (seconds
    # of imports): these throwaway gradebooks get the head of nbgrader 0.9.6 without it
    monkeypatch.setattr(nbgrader_api, "get_alembic_version", lambda: _ALEMBIC_HEAD)
    master, worker = tmp_path / "master.db", tmp_path / "worker.db"
    _gradebook(master, ["s1"])
    parallel.copy_db(master, worker)  # as a worker root starts
    _gradebook(worker, ["s2"])
    with Gradebook(f"sqlite:///{master}") as gb:  # graded by hand in formgrader during the run
        gb.find_grade("essay", "a1", "a1", "s1").manual_score = 2.5
        gb.find_comment("essay", "a1", "a1", "s1").manual_comment = "よく書けています"
        gb.db.commit()
    with Gradebook(f"sqlite:///{worker}") as gb:
        for student in ("s1", "s2"):
            gb.find_grade("code", "a1", "a1", student).auto_score = 2.0
            gb.find_grade("essay", "a1", "a1", student).needs_manual_grade = True
            gb.find_comment("essay", "a1", "a1", student).auto_comment = "auto"
        gb.find_grade("essay", "a1", "a1", "s2").manual_score = 1.0
        gb.db.commit()
    parallel.merge_gradebook(master, worker, [("s1", "a1"), ("s2", "a1")])
    with Gradebook(f"sqlite:///{master}") as gb:
        for student in ("s1", "s2"):
            assert gb.find_grade("code", "a1", "a1", student).auto_score == 2.0
            assert gb.find_comment("essay", "a1", "a1", student).auto_comment == "auto"
        assert gb.find_grade("essay", "a1", "a1", "s1").manual_score == 2.5
        assert gb.find_comment("essay", "a1", "a1", "s1").manual_comment == "よく書けています"
        assert gb.find_grade("essay", "a1", "a1", "s2").manual_score is None  # not autograde's: discarded
        assert gb.find_submission("a1", "s2").score == 2.0


def test_same_tree_compares_bytes_and_ignores_what_it_is_told(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        (d / "sub").mkdir(parents=True)
        (d / "sub" / "x.ipynb").write_text("{}", encoding="utf-8")
    assert _nbgrader.same_tree(a, b)
    # a JupyterLab session leaves checkpoints beside the notebooks: not content, ignored by default
    (b / ".ipynb_checkpoints").mkdir()
    (b / "sub" / ".ipynb_checkpoints").mkdir()
    (b / "sub" / ".ipynb_checkpoints" / "x-checkpoint.ipynb").write_text("{}", encoding="utf-8")
    assert _nbgrader.same_tree(a, b)
    assert not _nbgrader.same_tree(a, b, [])
    (b / "extra.txt").write_text("x", encoding="utf-8")
    assert not _nbgrader.same_tree(a, b)
    assert _nbgrader.same_tree(a, b, ["extra.txt", ".ipynb_checkpoints"])
    (b / "extra.txt").unlink()
    (b / "sub" / "x.ipynb").write_text("{ }", encoding="utf-8")
    assert not _nbgrader.same_tree(a, b)
    assert not _nbgrader.same_tree(a, tmp_path / "missing")


def test_the_cap_per_submission_is_a_command_line_option(monkeypatch, tmp_path):
    """``ctxlab grade --max-seconds N`` reaches the grading run as Caps(seconds=N); the default is Caps'."""
    from ctxlab.grading import workflow
    from ctxlab.grading._caps import Caps

    seen = []

    def fake_grade(*args, **kw):
        seen.append(kw["caps"])
        raise workflow.GradeError("stop here")

    monkeypatch.setattr(workflow, "grade", fake_grade)
    (tmp_path / "x.zip").write_bytes(b"")
    assert workflow.main([str(tmp_path / "x.zip"), "--max-seconds", "90"]) == 2
    assert workflow.main([str(tmp_path / "x.zip")]) == 2
    assert seen == [Caps(seconds=90), Caps()]
