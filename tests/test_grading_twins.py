"""Submissions that should earn nothing on lessons 00-05's autograded exercises (no nbgrader process).

For every autograded exercise of lessons 00-05, two bad submissions are graded against the
exercise's test cell, hidden tests included, in a kernel that ran the whole solution notebook:

* **always equal**: the function returns an object whose ``__eq__`` (and every comparison and
  arithmetic) answers "yes", so a test that compares values only would pass it;
* **library twin**: where ``ctxlab`` has a function that does the exercise (``first_paying_call``,
  ``hit_rate``, ``compare_ttls``, ``crossover_tokens``, ``compare``), the function just calls it.

nbgrader gives a test cell its points only when it runs without an error, so "the test cell
raises" is "0 points on that exercise". The solution itself must still pass (run again after each
bad submission), so the test cells are what tell them apart.
"""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell

import nbfixtures
from nbfixtures import answer_cells, grade_id

ROOT = Path(__file__).resolve().parent.parent
LESSONS = ["00_start_here", "01_count_tokens", "02_pricing", "03_prompt_caching", "04_ttl", "05_crossover"]

ANYTHING = '''
class _Anything:
    """Equal to everything, smaller and larger than everything, closed under arithmetic."""
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __lt__(self, other): return True
    __le__ = __gt__ = __ge__ = __lt__
    def __hash__(self): return 0
    def __bool__(self): return True
    def __abs__(self): return self
    def __neg__(self): return self
    def _same(self, other): return self
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _same
    def __round__(self, n=None): return self
    def __getitem__(self, key): return self
    def __contains__(self, key): return True
    def __len__(self): return 2
    def __iter__(self): return iter([self, self])
    def __format__(self, spec): return "anything"
    def __float__(self): return 0.0
    def __int__(self): return 0
    def __index__(self): return 0


def {name}(*args, **kwargs):
    return _Anything()
'''

#: (lesson, function) -> a submission that only calls the library's own version
TWINS = {
    ("02_pricing", "monthly_by_path"): '''
def monthly_by_path(doc_tokens, questions_per_month, hit_rate, db_monthly, model="claude-opus-5"):
    p = compare.Profile(model=model, questions_per_month=questions_per_month, hit_rate=hit_rate, db_monthly=db_monthly)
    m = compare.compare(doc_tokens, 50, p).monthly
    return {"long_context": m["long_context"], "filter": m["filter"], "rag": m["rag"]}
''',
    ("03_prompt_caching", "first_paying_call"): '''
def first_paying_call(w, r):
    return formulas.first_paying_call(w, r)
''',
    ("04_ttl", "ttl_hit_rate"): '''
from ctxlab.costs import traffic as _library_traffic

def ttl_hit_rate(times, ttl_s):
    return _library_traffic.hit_rate(times, ttl_s)
''',
    ("04_ttl", "ttl_costs"): '''
def ttl_costs(times, doc_tokens, model="claude-opus-5", question_tokens=400, output_tokens=700):
    c = traffic.compare_ttls(times, doc_tokens, model=model, question_tokens=question_tokens,
                             output_tokens=output_tokens)
    return {k: v["cost_usd"] for k, v in c.items()}
''',
    ("05_crossover", "rag_crossover_tokens"): '''
def rag_crossover_tokens(profile, max_tokens):
    return crossover.crossover_tokens(profile, max_tokens=max_tokens)
''',
}


def _exercises(nb) -> list[tuple[int, str, int]]:
    """(answer cell index, function name, test cell index) for every autograded function exercise."""
    out = []
    tests = nbfixtures.test_cells(nb)
    for a in answer_cells(nb):
        src = nb.cells[a].source
        names = [line.split("(")[0][4:] for line in src.splitlines() if line.startswith("def ")]
        after = [t for t in tests if t > a]
        if names and after:
            out.append((a, names[0], after[0]))
    return out


def _trial(key: str, submission: str, test_src: str, restore: str) -> list:
    run = textwrap.dedent(f"""
    _bad_outcome = None
    try:
        exec(compile({submission!r}, "submission", "exec"), globals())
        exec(compile({test_src!r}, "test cell", "exec"), globals())
        _bad_outcome = "passed"
    except Exception as _e:
        _bad_outcome = "raised " + type(_e).__name__
    exec(compile({restore!r}, "solution", "exec"), globals())
    try:
        exec(compile({test_src!r}, "test cell", "exec"), globals())
        _good_outcome = "passed"
    except Exception as _e:
        _good_outcome = "raised " + type(_e).__name__ + ": " + str(_e)[:200]
    _outcomes[{key!r}] = [_bad_outcome, _good_outcome]
    """)
    return [new_code_cell(run)]


def _grade(lesson: str) -> tuple[dict, list[str]]:
    nb = nbformat.read(ROOT / "solutions" / lesson / f"{lesson}.ipynb", as_version=4)
    for c in nb.cells:
        if c.cell_type == "code":
            c.outputs, c.execution_count = [], None
    keys, extra = [], [new_code_cell("_outcomes = {}")]
    for a, name, t in _exercises(nb):
        restore, test_src = nb.cells[a].source, nb.cells[t].source
        variants = {"always_equal": ANYTHING.format(name=name)}
        if (lesson, name) in TWINS:
            variants["library_twin"] = TWINS[(lesson, name)]
        for kind, sub in variants.items():
            key = f"{grade_id(nb.cells[t])}:{kind}"
            keys.append(key)
            extra += _trial(key, sub, test_src, restore)
    extra.append(new_code_cell("import json\nprint('OUTCOMES' + json.dumps(_outcomes))"))
    nb.cells += extra
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(ROOT / "solutions" / lesson)}}).execute()
    text = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    return json.loads(text.split("OUTCOMES", 1)[1]), keys


@pytest.mark.slow
@pytest.mark.parametrize("lesson", LESSONS)
def test_always_equal_and_library_twin_submissions_earn_nothing(lesson):
    outcomes, keys = _grade(lesson)
    assert set(outcomes) == set(keys) and keys
    earned = {k: bad for k, (bad, _good) in outcomes.items() if bad == "passed"}
    assert not earned, f"these bad submissions would get the exercise's points: {sorted(earned)}"
    broken = {k: good for k, (_bad, good) in outcomes.items() if good != "passed"}
    assert not broken, f"the solution no longer passes after a bad submission: {broken}"
    # every exercise was tried as an always-equal submission; the twins listed for the lesson too
    assert sum(k.endswith(":always_equal") for k in keys) == len(_exercises(
        nbformat.read(ROOT / "solutions" / lesson / f"{lesson}.ipynb", as_version=4)))
    assert sum(k.endswith(":library_twin") for k in keys) == sum(les == lesson for les, _ in TWINS)
