"""Feedback never reveals hidden tests: not in a test cell's source, not in a failing traceback.

nbgrader leaks hidden tests in two places (FACTS.md): the feedback shows a test cell's
hidden lines unless ClearHiddenTests runs, and even then the traceback of a failing test
prints the failing (hidden) line and its neighbours. nbgrader_config.py adds
ClearHiddenTests and ctxlab.grading.preprocessors.HideHiddenTestTracebacks. Here, for each
of two assignments, one submission fails a hidden test (the visible ones pass) and one
fails a visible test (both in the class graded once for the session, tests/graded_class.py);
the feedback HTML, reduced to its text, must contain none of the hidden test lines of the
source notebook, while the visible test's message is there.
"""
from __future__ import annotations

import html
import json
import re
from pathlib import Path

import nbformat
import pytest

from ctxlab.grading._nbgrader import cell_scores
from ctxlab.grading.preprocessors import HIDDEN_NOTE, TIMEOUT_NOTE, HideHiddenTestTracebacks, LimitOutputSize, hidden_lines
from graded_class import FEEDBACK_NAMES as NAMES
from graded_class import source
from nbfixtures import BEGIN_HIDDEN as BEGIN
from nbfixtures import END_HIDDEN as END
from nbfixtures import grade_id as gid
from nbfixtures import visible_part


def secret_lines(src_nb, release_text: str) -> list[str]:
    """The hidden test lines of a source notebook that say something (markers, blank lines,
    brackets and lines that also occur in the release are not secrets).

    ``release_text`` is the release's cell sources or its notebook file's text; a file's JSON is read
    into sources first, or a line with a quote in it (escaped in JSON) would never match the release
    and a visible line that a hidden test repeats would count as a secret."""
    try:
        release_text = cell_sources(release_text)
    except (ValueError, KeyError, TypeError):
        pass   # already the sources
    out = []
    for c in src_nb.cells:
        if c.cell_type != "code":
            continue
        lines = c.source.split("\n")
        for n in sorted(hidden_lines(c.source, BEGIN, END)):
            line = lines[n - 1].strip()
            if len(line) >= 8 and BEGIN not in line and END not in line and line not in release_text:
                out.append(line)
    return out


def cell_sources(notebook_json: str) -> str:
    """Every cell's source of a notebook file's text."""
    nb = json.loads(notebook_json)
    return "\n".join("".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in nb["cells"])


def html_text(path: Path) -> str:
    """The text a reader sees (code is highlighted token by token, so search the text, not the markup)."""
    s = path.read_text(encoding="utf-8")
    s = re.sub(r"<(script|style)\b.*?</\1>", " ", s, flags=re.S | re.I)
    return html.unescape(re.sub(r"<[^>]+>", "", s))


@pytest.fixture(scope="module")
def feedback(graded_class):
    """The class's course root and, per assignment, the test cell the "hidden" learner fails
    and the hidden test lines of the source notebook."""
    root = graded_class["root"]
    cases = {}
    for name in NAMES:
        release_text = (root / "course" / name / f"{name}.ipynb").read_text(encoding="utf-8")
        cases[name] = {"cell": graded_class["hidden_cells"][name],
                       "secrets": secret_lines(source(name), cell_sources(release_text))}
    for student in ("hidden", "visible"):
        for name in NAMES:
            o = graded_class["outcomes"][(student, name)]
            assert o.graded and o.feedback, o
    return root, cases


def autograded(root, student, name):
    return nbformat.read(root / "autograded" / student / name / f"{name}.ipynb", as_version=4)


def error_of(nb, grade_id):
    cell = next(c for c in nb.cells if gid(c) == grade_id)
    return next(o for o in cell.outputs if o.get("output_type") == "error")


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_hidden_failure_does_not_leak(feedback, name):
    root, cases = feedback
    case = cases[name]
    assert case["secrets"], "the source notebook must have hidden tests"
    # nbgrader alone would leak: the raw traceback prints the failing hidden line
    err = error_of(autograded(root, "hidden", name), case["cell"])
    raw = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(err.traceback))
    assert any(s in raw for s in case["secrets"]), "the autograded traceback should show a hidden line"
    text = html_text(root / "feedback" / "hidden" / name / f"{name}.html")
    leaked = [s for s in case["secrets"] if s in text]
    assert not leaked, f"hidden test lines in the feedback: {leaked[:3]}"
    if err.evalue:
        assert err.evalue not in text  # a hidden assertion's message is part of the hidden line
    assert HIDDEN_NOTE in text
    # the search works: the visible lines of the same test cell are in the feedback
    src_cell = next(c for c in source(name).cells if gid(c) == case["cell"])
    first_visible = next(line.strip() for line in visible_part(src_cell.source).split("\n") if len(line.strip()) >= 8)
    assert first_visible in text
    # and only that cell's points are lost
    cells = cell_scores(root, "hidden", name)
    assert cells[case["cell"]][0] == 0
    assert all(s == m for g, (s, m) in cells.items() if g != case["cell"] and g in {gid(c) for c in source(name).cells
                                                                                 if c.cell_type == "code"})


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_visible_failure_shows_its_message(feedback, name):
    root, cases = feedback
    case = cases[name]
    err = error_of(autograded(root, "visible", name), case["cell"])
    # 09's open question fails as AnswerMissing, an AssertionError shown as its message alone
    assert err.ename in ("AssertionError", "AnswerMissing") and err.evalue.strip(), "the visible test should fail with a message"
    text = html_text(root / "feedback" / "visible" / name / f"{name}.html")
    assert err.evalue.strip().split("\n")[0] in text
    assert "失敗した行" in text or err.ename == "AnswerMissing"   # a one-line error names no line
    leaked = [s for s in case["secrets"] if s in text]
    assert not leaked, f"hidden test lines in the feedback: {leaked[:3]}"


# --------------------------------------------------------------------------- the preprocessors alone (fast)

def _nb(test_source, outputs, other_outputs=()):
    nb = nbformat.v4.new_notebook()
    answer = nbformat.v4.new_code_cell("def f(x):\n    return x", execution_count=1)
    test = nbformat.v4.new_code_cell(test_source, execution_count=2, outputs=outputs)
    test.metadata["nbgrader"] = {"grade": True, "grade_id": "f-tests", "points": 1, "solution": False,
                                 "locked": True, "schema_version": 3, "task": False}
    other = nbformat.v4.new_code_cell("g()", execution_count=3, outputs=list(other_outputs))
    nb.cells = [answer, test, other]
    return nb


TEST_SRC = ('assert f(1) == 1, "f(1) は 1"\n### BEGIN HIDDEN TESTS\nassert f(2) == 3, "secret message"\n'
            'def g():\n    assert f(5) == 6, "secret g"\n### END HIDDEN TESTS')


def _err(line, evalue, count=2):
    return nbformat.v4.new_output("error", ename="AssertionError", evalue=evalue, traceback=[
        "\x1b[0;31mAssertionError\x1b[0m  Traceback (most recent call last)",
        f"Cell \x1b[0;32mIn[{count}], line {line}\x1b[0m\n----> {line} " + TEST_SRC.split("\n")[line - 1],
        f"\x1b[0;31mAssertionError\x1b[0m: {evalue}"])


def test_hidden_line_traceback_is_replaced():
    nb = _nb(TEST_SRC, [_err(3, "secret message")])
    HideHiddenTestTracebacks().preprocess(nb, {})
    out = nb.cells[1].outputs[0]
    assert out.evalue == "" and "secret" not in "\n".join(out.traceback) and HIDDEN_NOTE in out.traceback[0]


def test_visible_line_traceback_keeps_line_and_message():
    nb = _nb(TEST_SRC, [_err(1, "f(1) は 1")])
    HideHiddenTestTracebacks().preprocess(nb, {})
    tb = nb.cells[1].outputs[0].traceback
    assert tb == ['失敗した行 1: assert f(1) == 1, "f(1) は 1"', "AssertionError: f(1) は 1"]


@pytest.mark.parametrize("ename, evalue", [("AnswerMissing", "q1 に答えがありません（answers['q1'] に選択肢の id を入れてください）"),
                                           ("Unsolved", "演習 1 はまだ解かれていません: …")])
def test_the_courses_one_line_errors_keep_their_message(ename, evalue):
    """An open question of 09 or an unsolved exercise: the one-line message (no frame to place it) is the learner's
    to read, where any other error without a line gets the hidden-test note."""
    one = nbformat.v4.new_output("error", ename=ename, evalue=evalue, traceback=[f"\x1b[0;31m{evalue}\x1b[0m"])
    nb = _nb(TEST_SRC, [one])
    HideHiddenTestTracebacks().preprocess(nb, {})
    assert nb.cells[1].outputs[0].traceback == [f"{ename}: {evalue}"]
    other = nbformat.v4.new_output("error", ename="ValueError", evalue="secret", traceback=["\x1b[0;31msecret\x1b[0m"])
    nb = _nb(TEST_SRC, [other])
    HideHiddenTestTracebacks().preprocess(nb, {})
    assert HIDDEN_NOTE in nb.cells[1].outputs[0].traceback[0] and "secret" not in "\n".join(nb.cells[1].outputs[0].traceback)


def test_timeout_in_a_test_cell_says_so():
    timeout = nbformat.v4.new_output("error", ename="CellTimeoutError", evalue="",
                                     traceback=["CellTimeoutError: No reply from kernel before timeout"])
    nb = _nb(TEST_SRC, [timeout])
    HideHiddenTestTracebacks().preprocess(nb, {})
    assert TIMEOUT_NOTE in nb.cells[1].outputs[0].traceback[0]


def test_other_cells_drop_frames_inside_hidden_tests():
    frame = "Cell In[2], line 5, in g()\n----> 5     assert f(5) == 6, \"secret g\""
    err = nbformat.v4.new_output("error", ename="AssertionError", evalue="",
                                 traceback=["AssertionError  Traceback", "Cell In[3], line 1\n----> 1 g()", frame])
    nb = _nb(TEST_SRC, [], [err])
    HideHiddenTestTracebacks().preprocess(nb, {})
    tb = "\n".join(nb.cells[2].outputs[0].traceback)
    assert "secret" not in tb and "g()" in tb


def test_limit_output_size_caps_one_long_line():
    nb = nbformat.v4.new_notebook()
    big = nbformat.v4.new_output("stream", name="stdout", text="0123456789" * 1_000_000)
    more = nbformat.v4.new_output("stream", name="stdout", text="after\n")
    image = nbformat.v4.new_output("display_data", data={"image/png": "A" * 3_000_000, "text/plain": "<Figure>"})
    nb.cells = [nbformat.v4.new_code_cell("print(...)", outputs=[big, more, image])]
    LimitOutputSize().preprocess(nb, {})
    outs = nb.cells[0].outputs
    assert len(outs) == 2  # the stream after the cut is dropped
    assert len(outs[0].text) < 101_000 and "省略" in outs[0].text
    assert list(outs[1].data) == ["text/plain"] and "省略" in outs[1].data["text/plain"]


def test_a_marker_quoted_in_a_learner_cell_does_not_break_feedback():
    """A learner's cell that mentions the begin marker (an attack that searches notebooks for
    hidden tests does) made ClearHiddenTests fail: no feedback for that learner."""
    from nbgrader.preprocessors import ClearHiddenTests

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f'text.count("{BEGIN}")'),
                nbformat.v4.new_code_cell(f"assert True\n### {BEGIN}\nassert secret()\n### {END}",
                                          metadata={"nbgrader": {"grade": True, "solution": False, "locked": True,
                                                                 "grade_id": "t1", "points": 1}})]
    nb, _ = HideHiddenTestTracebacks().preprocess(nb, {})
    nb, _ = ClearHiddenTests().preprocess(nb, {})
    assert BEGIN not in nb.cells[0].source and "count(" in nb.cells[0].source
    assert "secret()" not in nb.cells[1].source and "assert True" in nb.cells[1].source
