"""An unsolved exercise reads as one line, and is still a failure for nbgrader.

The release's stub is ``raise ctxlab.Unsolved("演習 N")`` (ctxlab/grading/preprocessors.py
LearnerRunAll). IPython renders an exception that has ``_render_traceback_`` through it, so the
kernel's error output carries one line (JupyterLab shows it; nbgrader's Validate prints it) where
a NotImplementedError showed a 12-18-line traceback with the message twice. The browser side is
tests/browser/test_run_all.py.
"""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

import ctxlab
from ctxlab.errors import CtxlabError, Unsolved
from ctxlab.grading import _nbgrader

ROOT = Path(__file__).resolve().parent.parent
ANSI = re.compile(r"\x1b\[[0-9;]*m")
LESSON = "01_count_tokens"


def one_line(err) -> str:
    lines = [ANSI.sub("", t) for t in err.traceback]
    assert len(lines) == 1 and "\n" not in lines[0], f"more than one line: {lines}"
    return lines[0]


def test_unsolved_is_a_not_implemented_error_of_the_course():
    e = ctxlab.Unsolved("演習 2")
    assert isinstance(e, NotImplementedError) and isinstance(e, CtxlabError) and type(e) is Unsolved
    line = ANSI.sub("", e._render_traceback_()[0])
    assert line.startswith("演習 2 はまだ解かれていません: ") and "Run All は止まりません" in line
    assert len(e._render_traceback_()) == 1


def test_the_kernel_shows_one_line_and_the_cell_still_fails(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("import ctxlab\ndef f():\n    # YOUR CODE HERE\n    raise ctxlab.Unsolved('演習 1')"),
        nbformat.v4.new_code_cell("assert f() == 1", metadata={"tags": ["raises-exception"]}),
        nbformat.v4.new_code_cell("print('next')"),
    ])
    NotebookClient(nb, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    [err] = nb.cells[1].outputs
    assert err.output_type == "error" and err.ename == "Unsolved"
    assert one_line(err).startswith("演習 1 はまだ解かれていません")
    assert nb.cells[2].outputs[0].text == "next\n"   # Run All goes on past the tagged cell


def test_every_released_stub_raises_unsolved():
    stubs = [c.source for p in sorted((ROOT / "course").glob("*/*.ipynb"))
             for c in nbformat.read(p, as_version=4).cells if c.cell_type == "code" and "YOUR CODE HERE" in c.source]
    assert stubs
    left = [s for s in stubs if "NotImplementedError" in s]
    assert not left, f"a released stub still raises NotImplementedError: {left[0][:200]}"


@pytest.mark.slow
def test_autograde_scores_the_unsolved_lesson_zero_and_validate_prints_one_line(tmp_path):
    """nbgrader's autograde of an untouched release: every test cell 0 points, each failure one line;
    its Validate lists the same one-line messages."""
    root = _nbgrader.make_course_root(tmp_path / "root", [LESSON])
    released = root / "course" / LESSON / f"{LESSON}.ipynb"
    _nbgrader.place_submission(root, "learner1", LESSON, released)
    proc = _nbgrader.autograde(root, LESSON, "learner1")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    src = nbformat.read(released, as_version=4)
    tests = {c.metadata["nbgrader"]["grade_id"] for c in src.cells
             if c.metadata.get("nbgrader", {}).get("grade") and c.cell_type == "code"}
    scores = _nbgrader.cell_scores(root, "learner1", LESSON)
    assert tests and all(scores[t][0] == 0 and scores[t][1] > 0 for t in tests), scores
    graded = nbformat.read(root / "autograded" / "learner1" / LESSON / f"{LESSON}.ipynb", as_version=4)
    errors = [o for c in graded.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    unsolved = [o for o in errors if o.ename == "Unsolved"]
    assert unsolved and all("はまだ解かれていません" in one_line(o) for o in unsolved)

    copy = tmp_path / f"{LESSON}.ipynb"
    shutil.copy(released, copy)
    result = _nbgrader.validate(copy, isolate=False)
    failed = result["failed"]
    assert failed and any("はまだ解かれていません" in f["raw_error"] for f in failed)
    for f in failed:
        if "はまだ解かれていません" in f["raw_error"]:
            assert len(ANSI.sub("", f["raw_error"]).strip().splitlines()) == 1, f["raw_error"]


def test_an_unanswered_quiz_question_reads_as_its_message_and_still_fails(tmp_path):
    """09's check cells (ctxlab.quiz.check_answers) on a question left open: the message alone, in red, not a
    traceback; still an AssertionError, so the test cell scores 0."""
    from ctxlab.errors import AnswerMissing

    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("from ctxlab.quiz import check_answers, load\nanswers = {}"),
        nbformat.v4.new_code_cell("check_answers(load(), answers, only='q1')", metadata={"tags": ["raises-exception"]}),
        nbformat.v4.new_code_cell("print('next')"),
    ])
    NotebookClient(nb, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    [err] = nb.cells[1].outputs
    assert err.output_type == "error" and err.ename == "AnswerMissing"
    assert one_line(err).startswith("q1 に答えがありません")
    assert issubclass(AnswerMissing, AssertionError)
    assert nb.cells[2].outputs[0].text == "next\n"
