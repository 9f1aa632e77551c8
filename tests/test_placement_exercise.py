"""Lesson 03, exercise 4 (choose_placement): its hidden tests cannot be passed by a library twin
or by an always-equal object (fast: the section's cells run in-process, without nbgrader).

The section's code cells, from the one that makes the manual-clock lab to the exercise's test
cell, run in one namespace with an offline client; then the solution cell is replaced by each
kind of submission, as nbgrader would grade it, and the test cell is run on it. A test cell
that raises scores 0 under nbgrader (its points are all or nothing).
"""
from __future__ import annotations

from pathlib import Path

import jupytext
import pytest

import nbfixtures as nbf
from ctxlab.api.client import make_client
from ctxlab.labs import _agent_loop, prompt_caching

ROOT = Path(__file__).resolve().parent.parent
LESSON = ROOT / "solutions" / "03_prompt_caching" / "03_prompt_caching.py"
ANSWER, TESTS = "choose_placement", "choose_placement-tests"


def _cells():
    nb = jupytext.read(LESSON)
    code = [c for c in nb.cells if c.cell_type == "code"]
    start = next(i for i, c in enumerate(code) if "prompt_caching.manual_clock(client)" in c.source)
    answer = next(i for i, c in enumerate(code) if nbf.grade_id(c) == ANSWER)
    test = next(i for i, c in enumerate(code) if nbf.grade_id(c) == TESTS)
    assert start < answer < test
    return [c.source for c in code[start:answer]], code[answer].source, code[test].source


@pytest.fixture(scope="module")
def section():
    before, answer, test = _cells()
    from IPython.display import display   # a notebook's builtin; the section shows its tables with it

    ns = {"client": make_client(offline=True), "display": display}
    for src in before:
        exec(compile(src, "<lesson 03>", "exec"), ns)
    return ns, answer, test


def _grade(section, answer_source: str) -> None:
    """Run a submission's answer cell and the test cell (raises when the cell would score 0)."""
    ns, _, test = section
    ns = dict(ns)
    exec(compile(answer_source, "<submission>", "exec"), ns)
    exec(compile(test, "<tests>", "exec"), ns)


def _body(section, lines: list[str]) -> str:
    return nbf.replace_solution(section[1], lines)


# A complete answer except that the library computes the dollars: it keeps every rule the visible test
# checks (errors, the tie rule), so only the hidden tests' twin guard can catch it.
_CALL = 'rows = prompt_caching.compare_placements(runs, model)'
_CHECKS = ['if not isinstance(runs, dict) or len(runs) < 2 or set(runs) - {"auto", "explicit", "both"}:',
           '    raise ValueError("bad runs")',
           'if len({len(v) for v in runs.values()}) != 1 or not all(runs.values()):',
           '    raise ValueError("bad runs")']
_PICK = ['usd = {r["placement"]: float(r["usd"]) for r in rows}',
         'low = min(usd.values())',
         'return min((p for p in usd if usd[p] - low < 1e-9), key=lambda p: ({"both": 2}.get(p, 1), p != "auto")), usd']


def _twin(call: str = _CALL) -> list[str]:
    return _CHECKS + [call] + _PICK


def test_the_solution_passes_and_the_release_fails(section):
    _grade(section, section[1])
    with pytest.raises(NotImplementedError):
        _grade(section, _body(section, ["raise NotImplementedError()"]))


@pytest.mark.parametrize("how", ["module attribute", "imported name", "internal module", "wrapped name"])
def test_a_library_twin_scores_0(section, how):
    if how == "module attribute":
        src = _body(section, _twin())
    elif how == "imported name":
        src = "from ctxlab.labs.prompt_caching import compare_placements as cp\n" + _body(
            section, _twin(_CALL.replace("prompt_caching.compare_placements", "cp")))
    elif how == "internal module":
        src = _body(section, ["from ctxlab.labs import _agent_loop as al"] + _twin(_CALL.replace("prompt_caching", "al")))
    else:
        src = ("import functools\nfrom ctxlab.labs import prompt_caching as pc\n"
               "table = functools.partial(pc.compare_placements)\n"
               + _body(section, _twin(_CALL.replace("prompt_caching.compare_placements", "table"))))
    # refuse_twins names the twin the function reaches (TwinUsed); the runtime guard fails an assertion
    from ctxlab.labs._twins import TwinUsed
    _grade_twin = pytest.raises((AssertionError, TwinUsed), match="compare_placements")
    with _grade_twin:
        _grade(section, src)
    # the hidden tests put the library back as it was
    assert prompt_caching.compare_placements is _agent_loop.compare_placements
    assert prompt_caching.compare_placements.__name__ == "compare_placements"


ALWAYS_EQUAL = [
    "class Same:",
    "    def __eq__(self, other): return True",
    "    def __ne__(self, other): return False",
    "    def __len__(self): return 2",
    "    def __getitem__(self, k): return Same()",
    "    def __iter__(self): return iter([Same(), Same()])",
    "    __hash__ = object.__hash__",
]


@pytest.mark.parametrize("answer", ["Same()", "(Same(), Same())", "(Loose('explicit'), Same())"])
def test_an_always_equal_answer_scores_0(section, answer):
    lines = ALWAYS_EQUAL + ["class Loose(str):", "    __eq__ = lambda self, other: True", "    __hash__ = str.__hash__",
                            f"return {answer}"]
    with pytest.raises(AssertionError):
        _grade(section, _body(section, lines))


def test_the_section_starts_every_demonstration_cold_on_a_manual_clock(section):
    ns = section[0]
    lab = ns["lab"]
    assert lab.manual and lab.sandbox("single-explicit").clock.realtime is False
    for p, calls in ns["single_runs"].items():
        assert calls[0].usage.cache_read_input_tokens == 0, p
        assert [c.at_s for c in calls] == [0, 60, 120], p   # each run on its own clock, as the prose says
