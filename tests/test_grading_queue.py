"""Issue 42 item 4: one queue and per-submission caps, graded for real (two workers).

A notebook of 100,000 cells took 17 worker-minutes, and an honest learner sharded behind it
waited 15 minutes beside an idle worker. Here a batch of four is graded with two workers and a
cap of :data:`CAP` seconds per submission: a submission that never ends (first in the queue), a
100,000-cell notebook and two honest full solutions. The endless one is stopped at the cap and
the huge one is never graded, each with its reason; both honest learners get full marks from
the other worker before the endless one is stopped.
"""
from __future__ import annotations

import copy
import json

import nbformat
import pytest

from ctxlab.grading import _nbgrader, isolation, parallel
from ctxlab.grading._caps import Caps, over_time
from graded_class import ASSIGNMENTS, ROOT, source

NAME = "00_start_here"
CAP = 150   # seconds per submission: room for two honest gradings on a loaded machine
pytestmark = [pytest.mark.skipif(NAME not in ASSIGNMENTS, reason=f"{NAME} is not in solutions/"),
              pytest.mark.skipif(isolation.unavailable_reason() is not None, reason="bubblewrap is not usable here"),
              pytest.mark.slow]


def _write(path, nb):
    nbformat.write(nb, path)
    return path


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("queue")
    root = tmp / "grading"
    _nbgrader.sync_course_root(root, [NAME], ROOT)
    solution = source(NAME)
    endless = copy.deepcopy(solution)
    first = next(i for i, c in enumerate(endless.cells) if c.cell_type == "code")
    endless.cells.insert(first + 1, nbformat.v4.new_code_cell("import time\nwhile True:\n    time.sleep(1)"))
    huge = json.loads(nbformat.writes(solution))   # written as JSON: nbformat validates 100,000 cells slowly
    huge["cells"] += [{"id": f"c{i}", "cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                       "source": "x = 1"} for i in range(100_000)]
    (tmp / "b_huge.ipynb").write_text(json.dumps(huge, indent=1), encoding="utf-8")
    _nbgrader.place_submission(root, "b_huge", NAME, tmp / "b_huge.ipynb")
    for learner, nb in (("a_endless", endless), ("c_honest", solution), ("d_honest", solution)):
        _nbgrader.place_submission(root, learner, NAME, _write(tmp / f"{learner}.ipynb", nb))
    # the cell time limit is past the cap: only the cap stops the endless cell
    run = parallel.grade_parallel(root, workers=2, progress=False, feedback=True, caps=Caps(seconds=CAP),
                                  config_args=[*isolation.limits_config_args(isolate=True),
                                               f"--ExecutePreprocessor.timeout={CAP * 4}"])
    return {"root": root, "run": run, "out": {o.student: o for o in run.outcomes},
            "scores": {s.student: s for s in _nbgrader.scores(root)}}


def test_a_huge_notebook_is_not_graded_and_says_why(batch):
    huge = batch["out"]["b_huge"]
    assert not huge.graded and "セルが 100,0" in huge.error and "上限 1,000 個" in huge.error, huge
    assert huge.finished < 60, huge.finished   # refused before any grading, not after 17 minutes
    assert "b_huge" not in batch["scores"]
    assert not (batch["root"] / "autograded" / "b_huge").exists()


def test_an_endless_submission_stops_at_the_cap_and_says_why(batch):
    endless = batch["out"]["a_endless"]
    assert not endless.graded and endless.error == over_time(CAP), endless
    assert CAP <= endless.finished < CAP + 60, endless.finished
    assert "a_endless" not in batch["scores"]


def test_an_idle_worker_takes_the_next_submission(batch):
    """The endless submission is first in the queue: both honest learners are graded by the other
    worker, before it is stopped; their wait is bounded by the cap, not by the endless one."""
    out = batch["out"]
    assert batch["run"].workers == 2
    for learner in ("c_honest", "d_honest"):
        o = out[learner]
        assert o.graded and o.feedback, o
        assert o.worker != out["a_endless"].worker, (o.worker, out["a_endless"].worker)
        assert o.finished < out["a_endless"].finished <= CAP + 60, (o.finished, out["a_endless"].finished)
        score = batch["scores"][learner]
        assert score.code_score == score.max_code_score > 0, score
