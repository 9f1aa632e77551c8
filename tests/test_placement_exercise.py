"""Lesson 03, exercise 4 (choose_placement): the points grade the decision, which placement is cheapest for
a request shape (turns per conversation, conversations on the same documents), on shapes the visible test
does not show; the hidden tests take the answer from the sandbox's simulation, not from typed-in values.

The section's code cells, from the one that makes the manual-clock lab to the exercise's test cell, run in
one namespace with an offline client; then the solution cell is replaced by each kind of submission, as
nbgrader would grade it, and the test cell is run on it. A test cell that raises scores 0 under nbgrader
(its points are all or nothing).
"""
from __future__ import annotations

from pathlib import Path

import jupytext
import pytest

import nbfixtures as nbf
from ctxlab.labs import _agent_loop, prompt_caching

ROOT = Path(__file__).resolve().parent.parent
LESSON = ROOT / "solutions" / "03_prompt_caching" / "03_prompt_caching.py"
ANSWER, TESTS = "choose_placement", "choose_placement-tests"


def _cells():
    nb = jupytext.read(LESSON)
    code = [c for c in nb.cells if c.cell_type == "code"]
    # the lesson's setup (client, ask) and section 2's questions, which section 8 reuses
    setup = [c.source for c in code if "def ask(" in c.source or c.source.startswith("import uuid")
             or c.source.startswith("QUESTIONS = [")]
    start = next(i for i, c in enumerate(code) if "prompt_caching.manual_clock(client)" in c.source)
    answer = next(i for i, c in enumerate(code) if nbf.grade_id(c) == ANSWER)
    test = next(i for i, c in enumerate(code) if nbf.grade_id(c) == TESTS)
    assert start < answer < test
    return setup + [c.source for c in code[start:answer]], code[answer].source, code[test].source


@pytest.fixture(scope="module")
def section():
    before, answer, test = _cells()
    from IPython.display import display   # a notebook's builtin; the section shows its tables with it

    import ctxlab
    ns = {"display": display}
    ctxlab.show_cost = lambda *a, **k: None   # the lesson's one-line banner is not under test here
    for src in before:
        exec(compile(src, "<lesson 03>", "exec"), ns)
    assert ctxlab.is_offline(ns["client"])
    return ns, answer, test


def _grade(section, answer_source: str, hidden: bool = True) -> None:
    """Run a submission's answer cell and the test cell (raises when the cell would score 0);
    ``hidden=False`` runs only what the learner's release shows."""
    ns, _, test = section
    ns = dict(ns)
    if not hidden:
        test = test.split("### BEGIN HIDDEN TESTS")[0]
    exec(compile(answer_source, "<submission>", "exec"), ns)
    exec(compile(test, "<tests>", "exec"), ns)


def _body(section, lines: list[str]) -> str:
    return nbf.replace_solution(section[1], lines)


def test_the_solution_passes_and_the_release_fails(section):
    _grade(section, section[1])
    with pytest.raises(NotImplementedError):
        _grade(section, _body(section, ["raise NotImplementedError()"]))


# The table above the exercise, typed in: right on every shape the visible test shows, wrong on short
# conversations (two turns), which the table does not list. Only the hidden tests can catch it.
TABLE_ONLY = ['if turns == 1:', '    return "explicit"', 'return "auto" if conversations == 1 else "both"']


def test_the_table_typed_in_passes_the_visible_test_and_fails_the_hidden_ones(section):
    _grade(section, _body(section, TABLE_ONLY), hidden=False)
    with pytest.raises(AssertionError, match=r"\(2, "):
        _grade(section, _body(section, TABLE_ONLY))


@pytest.mark.parametrize("always", ["auto", "explicit", "both"])
def test_one_placement_for_every_shape_scores_0(section, always):
    with pytest.raises(AssertionError):
        _grade(section, _body(section, [f"return {always!r}"]))


def test_the_visible_message_shows_the_measured_dollars(section):
    with pytest.raises(AssertionError, match=r"1 ターン × 3 人.*explicit.*測った合計: auto \$"):
        _grade(section, _body(section, ['return "auto"']), hidden=False)


def test_the_library_totals_of_a_shape_are_recorded_twins_in_the_graded_build():
    """Grading kernels import the graded build, where the functions that total a shape answer only the inputs the
    lesson and its visible test pass (tests/test_graded_build.py checks the build holds none of their code); the
    hidden test computes its expected answers grader-side and patches nothing in the learner's kernel."""
    from ctxlab.grading.graded_build import TWINS
    twins = {(m, n) for m, n, _ in TWINS}
    assert {("ctxlab.labs._agent_loop", "shape_costs"), ("ctxlab.labs._agent_loop", "compare_placements")} <= twins
    assert prompt_caching.shape_costs is _agent_loop.shape_costs   # one function: the record covers both names
    _, _, test = _cells()
    assert "setattr(" not in test and "_twins" not in test


def test_measuring_with_run_conversation_is_a_way_to_full_marks(section):
    """The task allows measuring: sending each placement with run_conversation and pricing the usage."""
    measure = [
        "import uuid",
        "sim = prompt_caching.manual_clock(ctxlab.make_client(offline=True))",
        "qs = CONVERSATION + SECOND",
        "tag = uuid.uuid4().hex[:6]",
        "usd = {}",
        "for p in PLACEMENTS:",
        "    calls = []",
        "    for c in range(conversations):",
        "        mine = [qs[(2 * c + t) % len(qs)] for t in range(turns)]",
        "        calls += prompt_caching.run_conversation(sim, cache_docs, mine, p, model=CACHE_MODEL, system=BASE_SYSTEM,",
        "                                                 tag=tag, gap_s=45, lead_s=45 if c else 0)",
        "    usd[p] = sum(pricing.usage_cost(x.usage, CACHE_MODEL).total for x in calls)",
        "return min(usd, key=usd.get)",
    ]
    _grade(section, _body(section, measure))


ALWAYS_EQUAL = ["class Loose(str):", "    __eq__ = lambda self, other: True", "    __hash__ = str.__hash__"]


def test_an_always_equal_answer_scores_0(section):
    with pytest.raises(AssertionError):
        _grade(section, _body(section, ALWAYS_EQUAL + ["return Loose('explicit')"]))


def test_the_exercise_measures_on_the_sandbox_even_with_an_api_key():
    """The visible and hidden tests send their shapes to an offline sandbox of their own, never to ``lab``
    (which is the real client when a key is set): grading and a learner's Run All cost nothing online."""
    _, _, test = _cells()
    assert "sim = prompt_caching.manual_clock(ctxlab.make_client(offline=True))" in test
    assert "shape_costs(lab" not in test and "_shape_costs(lab" not in test


def test_the_section_starts_every_demonstration_cold_on_a_manual_clock(section):
    ns = section[0]
    lab = ns["lab"]
    assert lab.manual and lab.sandbox("single-explicit").clock.realtime is False
    for p, calls in ns["single_runs"].items():
        assert calls[0].usage.cache_read_input_tokens == 0, p
        assert [c.at_s for c in calls] == [0, 60, 120], p   # each run on its own clock, as the prose says
