"""The grader kernel's own failures hold a submission for a person, with a reason they can act on (issue 42).

At autograde the test cells run in a grader kernel that first runs lesson cells from the instructor's source
notebook (ctxlab/grading/graded.py). If that kernel dies there, the grader notices it by checking the kernel. It
does not wait out the test cell's time limit. Every test cell then gets the hold note, which does not blame the
learner, and the autograded notebook says why it is held.
"""
from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from ctxlab.grading import _nbgrader
from ctxlab.grading.graded import REVIEW_ENAME, REVIEW_NOTE, Plan, is_answer_cell, is_test_cell
from ctxlab.grading.tamper import review_of

ROOT = Path(__file__).resolve().parent.parent
LESSON = "00_start_here"


@pytest.mark.slow
def test_a_grader_kernel_that_dies_in_a_lesson_cell_holds_the_submission_with_the_reason(tmp_path):
    root = _nbgrader.make_course_root(tmp_path / "root", [LESSON])
    source = root / "solutions" / LESSON / f"{LESSON}.ipynb"
    nb = nbformat.read(source, as_version=4)
    lesson = [c for c in nb.cells if c.cell_type == "code" and not is_test_cell(c) and not is_answer_cell(c)]
    assert 0 in Plan.of(nb).early   # the first lesson cell runs grader-side as soon as the kernel starts
    lesson[0].source = "import os\nos._exit(1)\n" + lesson[0].source   # only the grader runs the source's cells
    nbformat.write(nb, source)

    _nbgrader.place_submission(root, "learner1", LESSON, ROOT / "solutions" / LESSON / f"{LESSON}.ipynb")
    proc = _nbgrader.autograde(root, LESSON, "learner1")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]

    graded_path = root / "autograded" / "learner1" / LESSON / f"{LESSON}.ipynb"
    review = review_of(graded_path)
    assert review and "採点側のカーネルが止まりました" in review[0], review   # noticed as a death, not a timeout
    graded = nbformat.read(graded_path, as_version=4)
    tests = [c for c in graded.cells if is_test_cell(c)]
    assert tests
    for cell in tests:
        [out] = cell.outputs
        assert out.output_type == "error" and out.ename == REVIEW_ENAME and out.evalue == REVIEW_NOTE
    assert "提出した人の問題ではありません" in REVIEW_NOTE
    # the learner's own cells ran in the learner's kernel as usual
    assert any(o.output_type == "stream" for c in graded.cells if c.cell_type == "code" and not is_test_cell(c)
               for o in c.outputs)
