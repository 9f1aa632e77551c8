"""solutions/ and course/: released, without solutions, and every lesson runs offline top to bottom.

The lesson pairs (NN.ipynb <-> NN.py), their nbgrader metadata and clean notebooks: test_lesson_pairs.py.
"""
import json
import os
import tempfile
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from ctxlab.grading import release

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = sorted((ROOT / "solutions").glob("*/*.ipynb"))
RELEASED = sorted((ROOT / "course").glob("*/*.ipynb"))


def test_there_are_lessons():
    assert SOLUTIONS, "solutions/ holds no notebook"
    assert [p.parent.name for p in SOLUTIONS] == [p.parent.name for p in RELEASED]


@pytest.mark.slow  # runs nbgrader generate_assignment (one process for every lesson)
def test_course_is_up_to_date_with_solutions():
    assert release.stale(ROOT) == [], "run `make release`"


@pytest.mark.slow  # runs nbgrader generate_assignment twice
def test_release_is_deterministic():
    names = release.assignments(ROOT)[:2]
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        release.generate(ROOT, Path(a), names)
        release.generate(ROOT, Path(b), names)
        for name in names:
            for nb in (Path(a) / name).glob("*.ipynb"):
                assert nb.read_bytes() == (Path(b) / name / nb.name).read_bytes()


@pytest.mark.parametrize("path", RELEASED, ids=lambda p: p.parent.name)
def test_release_has_no_solutions_or_hidden_tests(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    text = path.read_text(encoding="utf-8")
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "HIDDEN TESTS"):
        assert marker not in text
    source = json.loads((ROOT / "solutions" / path.parent.name / path.name).read_text(encoding="utf-8"))
    src_cells = {c["id"]: "".join(c["source"]) for c in source["cells"]}
    answers = [c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("solution")]
    assert answers, "a lesson has at least one exercise"
    for c in answers:
        body = "".join(c["source"])
        # a stub, or (09's answer cell, tagged no-stub) the released line that writes the quiz's clicks
        assert "YOUR CODE HERE" in body or "YOUR ANSWER HERE" in body or (
            "no-stub" in c["metadata"].get("tags", []) and "quiz.write_answers()" in body)
        # the solution lines themselves are gone
        solution = src_cells[c["id"]].split("### BEGIN SOLUTION")[1].split("### END SOLUTION")[0]
        for line in solution.strip().splitlines():
            if len(line.strip()) > 12:
                assert line.strip() not in body, f"solution line leaked: {line.strip()}"
    tests = [c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade")
             and c["cell_type"] == "code"]
    for c in tests:
        visible, rest = src_cells[c["id"]].split("### BEGIN HIDDEN TESTS")
        hidden = rest.split("### END HIDDEN TESTS")[0]
        released = "".join(c["source"])
        for line in hidden.strip().splitlines():
            # a line the visible tests hold too is no leak
            if line.strip() and not line.strip().startswith("#") and line.strip() not in visible:
                assert line.strip() not in released, f"hidden test leaked: {line.strip()}"


@pytest.mark.parametrize("path", RELEASED, ids=lambda p: p.parent.name)
def test_release_goes_on_past_unsolved_exercises(path):
    """Run All does not stop at an unsolved exercise: every answer and test cell carries the
    raises-exception tag, and every stub says which exercise waits (an exercise heading of the
    lesson) and how to go on. (That a whole untouched release runs: test_grading_e2e.py.)"""
    import re

    from ctxlab.grading.preprocessors import RUN_ON

    nb = nbformat.read(path, as_version=4)
    first = nb.cells[0].source
    # how Run All and a restart behave is said once, in 00 (and course/README.md), not in every lesson
    said = "Run All" in first and "最初のセルから実行し直して" in first
    assert said == (path.parent.name == "00_start_here"), f"{path.parent.name}: the 進め方 block belongs in 00 only"
    headings = set(re.findall(r"^#{2,4}\s*(演習 \d+)", "\n".join(c.source for c in nb.cells if c.cell_type == "markdown"), re.M))
    stubs = 0
    for c in nb.cells:
        meta = c.metadata.get("nbgrader", {})
        if c.cell_type != "code" or not (meta.get("solution") or meta.get("grade")):
            continue
        assert RUN_ON in c.metadata.get("tags", []), f"{meta.get('grade_id')}: no {RUN_ON} tag"
        assert "NotImplementedError()" not in c.source, f"{meta.get('grade_id')}: a bare stub"
        for named in re.findall(r"raise ctxlab\.Unsolved\('(演習 \d+)'\)", c.source):
            assert named in headings, f"{meta.get('grade_id')}: the stub names {named}, not a heading of the lesson"
            stubs += 1
    assert stubs == sum(c.source.count("raise ctxlab.Unsolved(") + c.source.count("NotImplementedError(")
                        for c in nb.cells if c.cell_type == "code")


@pytest.mark.slow
@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.parent.name)
def test_solution_notebook_runs_offline(path, tmp_path):
    nb = nbformat.read(path, as_version=4)
    env_before = dict(os.environ)
    try:
        os.environ["CTXLAB_OFFLINE"] = "1"
        os.environ["CTXLAB_TIME_SCALE"] = "0"
        os.environ.pop("ANTHROPIC_API_KEY", None)
        client = NotebookClient(nb, timeout=300, kernel_name="python3",
                                resources={"metadata": {"path": str(path.parent)}})
        client.execute()
    finally:
        os.environ.clear()
        os.environ.update(env_before)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
