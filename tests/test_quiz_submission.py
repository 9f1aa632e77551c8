"""Lesson 09 answered only through the quiz widget, as a front end drives it, reaches the grade (issue 39, item 1).

A learner clicks the quiz in JupyterLab and runs 演習 1's released line ``answers = quiz.write_answers()``.
Here a live kernel gets what JupyterLab sends: the widget protocol's comm messages (a radio button's
``index``, a button's ``click``) and the execute request of that cell; the reply's ``set_next_input``
payload (``replace``) is applied to the cell as JupyterLab applies it, and the notebook is saved.
Then nbgrader's Validate and ``ctxlab grade`` (autograde in the sandbox) re-run it in fresh kernels,
where nobody clicks: the score is what the learner clicked (8 of 9 here). A notebook whose cell was
not rewritten (the learner clicked but the line never wrote the cell) scores 0: the grade comes from
the notebook, never from the kernel that clicked.
"""
from __future__ import annotations

import json
import os
import queue
import shutil
from pathlib import Path

import nbformat
import pytest
from jupyter_client import KernelManager

from ctxlab import quiz as qz
from ctxlab.grading import _nbgrader, workflow
from ctxlab.grading.isolation import unavailable_reason
from ctxlab.widgets.quiz import WRITE_LINE, Quiz, answers_source

ROOT = Path(__file__).resolve().parent.parent
NAME = "09_knowledge_check"
RELEASE = ROOT / "course" / NAME / f"{NAME}.ipynb"


def _wrong_on_q4(bank) -> dict[str, str]:
    """What the learner clicks: right on every question but q4."""
    picks = {q.id: q.correct_id() for q in bank}
    picks["q4"] = next(c for c in bank.question("q4").choice_ids if c != picks["q4"])
    return picks


class FrontEnd:
    """A kernel driven the way JupyterLab drives it: execute requests and ipywidgets comm messages."""

    def __init__(self, folder: Path):
        env = dict(os.environ, CTXLAB_OFFLINE="1")
        env.pop("ANTHROPIC_API_KEY", None)
        self.km = KernelManager(kernel_name="python3")
        self.km.start_kernel(cwd=str(folder), env=env)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=120)

    def run(self, code: str) -> tuple[dict, str]:
        """Execute ``code``; return the execute reply and the stdout it printed."""
        out = []

        def hook(msg):
            if msg["msg_type"] == "stream":
                out.append(msg["content"]["text"])
        reply = self.kc.execute_interactive(code, timeout=180, output_hook=hook, allow_stdin=False)
        assert reply["content"]["status"] == "ok", reply["content"]
        return reply, "".join(out)

    def comm(self, model_id: str, data: dict) -> None:
        """A comm message from the front end to a widget's model (processed in order with execute requests)."""
        msg = self.kc.session.msg("comm_msg", {"comm_id": model_id, "data": data})
        self.kc.shell_channel.send(msg)

    def click(self, model_id: str) -> None:
        self.comm(model_id, {"method": "custom", "content": {"event": "click"}})

    def set_index(self, model_id: str, index: int) -> None:
        self.comm(model_id, {"method": "update", "state": {"index": index}, "buffer_paths": []})

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


def answer_in_the_widget(folder: Path, picks: dict[str, str], write: bool) -> Path:
    """The released 09 in ``folder``, run to the quiz, answered by clicks; with ``write``, 演習 1's cell
    is executed and rewritten as JupyterLab rewrites it. Returns the saved notebook."""
    path = folder / f"{NAME}.ipynb"
    nb = nbformat.read(path, as_version=4)
    cells = [c for c in nb.cells if c.cell_type == "code"]
    quiz_at = next(i for i, c in enumerate(cells) if c.source.strip().endswith("quiz = Quiz(bank)\nquiz"))
    answer_cell = next(c for c in cells if c.metadata.get("nbgrader", {}).get("grade_id") == "answers")
    assert WRITE_LINE in answer_cell.source   # the line the exercise tells learners to run
    bank = qz.load(qz.KNOWLEDGE_CHECK)        # display order needs no key
    fe = FrontEnd(folder)
    try:
        for cell in cells[:quiz_at + 1]:
            fe.run(cell.source)
        _, ids = fe.run("import json; print(json.dumps({k: getattr(quiz, k).model_id for k in "
                        "('choices', 'submit_button', 'next_button')}))")
        ids = json.loads(ids.strip().splitlines()[-1])
        for q in bank:
            shown = [c.id for c in q.shuffled()]
            fe.set_index(ids["choices"], shown.index(picks[q.id]))
            fe.click(ids["submit_button"])
            fe.click(ids["next_button"])
        _, recorded = fe.run("print(json.dumps(quiz.answers))")
        assert json.loads(recorded.strip().splitlines()[-1]) == picks   # the kernel got every click
        if write:
            reply, printed = fe.run(answer_cell.source)
            payload = [p for p in reply["content"].get("payload", []) if p.get("source") == "set_next_input"]
            assert len(payload) == 1 and payload[0]["replace"] is True, reply["content"]
            answer_cell.source = payload[0]["text"]   # what JupyterLab does with it (handlePayload)
            assert "保存（Ctrl+S）してから提出" in printed
    finally:
        fe.close()
    nbformat.write(nb, path)
    return path


@pytest.fixture(scope="module")
def learner(tmp_path_factory):
    """A graded-kit learner (no key beside the notebook: the quiz only records) who answered 8 of 9 rightly."""
    bank = qz.instructor_bank()
    picks = _wrong_on_q4(bank)
    out = {}
    for written in (True, False):
        folder = tmp_path_factory.mktemp("written" if written else "clicked_only")
        shutil.copy(RELEASE, folder / RELEASE.name)
        out[written] = answer_in_the_widget(folder, picks, write=written)
    return picks, out


def test_the_written_cell_holds_exactly_the_clicks(learner):
    picks, notebooks = learner
    nb = nbformat.read(notebooks[True], as_version=4)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "answers")
    namespace: dict = {}
    exec(compile(cell.source, "answers", "exec"), namespace)
    assert namespace["answers"] == picks
    assert WRITE_LINE in cell.source.splitlines()[1]   # the comment says how to write it again


def test_validate_passes_the_written_notebook_and_fails_the_clicked_only_one(learner):
    """Validate's failures, less 演習 2's unwritten text answer (nbgrader: "You did not provide a response")."""
    _, notebooks = learner

    def failures(path):
        return [f for f in _nbgrader.validate(path)["failed"] if f["raw_error"] != "You did not provide a response."]
    assert failures(notebooks[True]) == []
    failed = failures(notebooks[False])
    assert len(failed) == 9 and all("に答えがありません" in f["raw_error"] for f in failed), failed


@pytest.mark.skipif(bool(unavailable_reason()), reason="the grading sandbox (bubblewrap) is not available")
def test_autograde_scores_what_was_clicked(learner, tmp_path):
    """8 of the 9 points for the written notebook; 0 for the one whose cell still holds the line only."""
    _, notebooks = learner
    export = tmp_path / "export"
    for learner_name, written in (("alice", True), ("bob", False)):
        (export / learner_name).mkdir(parents=True)
        shutil.copy(notebooks[written], export / learner_name / f"{NAME}.ipynb")
    root = tmp_path / "grading"
    workflow.grade(export, root, course=ROOT, workers=1, progress=False, assignments=[NAME])
    got = {s.student: s for s in _nbgrader.scores(root, NAME)}
    assert set(got) == {"alice", "bob"}, got
    assert (got["alice"].code_score, got["alice"].max_code_score) == (8.0, 9.0)
    assert got["bob"].code_score == 0.0


def test_write_answers_without_an_answer_leaves_the_cell(capsys):
    quiz = Quiz(qz.load(qz.KNOWLEDGE_CHECK))
    assert quiz.write_answers() == {}
    assert "まだ答えていません" in capsys.readouterr().out


def test_answers_source_writes_only_the_banks_ids():
    """The written cell is code the grader runs: nothing but the bank's ids and each question's choice ids."""
    bank = qz.load(qz.KNOWLEDGE_CHECK)
    hostile = {"q1": "a", "q2": "__import__('os')", "q3": 7, "zz": "a", "q4\"": "b"}
    source = answers_source(bank, hostile)
    namespace: dict = {}
    exec(compile(source, "answers", "exec"), namespace)
    assert namespace["answers"] == {"q1": "a"}
    assert "__import__" not in source and "zz" not in source
