"""Submissions that should earn nothing on lessons 00-05's autograded exercises (no nbgrader process).

For every autograded exercise of lessons 00-05, two bad submissions are graded against the
exercise's test cell, hidden tests included, in a kernel that ran the whole solution notebook:

* **always equal**: the function returns an object whose ``__eq__`` (and every comparison and
  arithmetic) answers "yes", so a test that compares values only would pass it;
* **library twin**: where ``ctxlab`` has a function that does the exercise (``first_paying_call``,
  ``crossover_tokens``, ``compare``), the function just calls it. (04's exercises are defended by
  the graded build instead: their twins are recorded results there, tests/test_graded_build.py.)

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
from ctxlab.labs._twins import TwinUsed, reached, refuse_twins
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
    ("05_crossover", "rag_crossover_tokens"): '''
def rag_crossover_tokens(profile, max_tokens):
    return crossover.crossover_tokens(profile, max_tokens=max_tokens)
''',
}

#: (lesson, function) -> {form: a submission that reaches the twin by a name bound before the test
#: patches it} (the forms issue 27 names: an alias, a partial, a wrapper, a module under another name)
TWIN_ALIASES = {
    ("02_pricing", "monthly_by_path"): {
        "alias": ("from ctxlab.costs.compare import compare as _cc\n"
                  "def monthly_by_path(doc_tokens, questions_per_month, hit_rate, db_monthly, model='claude-opus-5'):\n"
                  "    p = compare.Profile(model=model, questions_per_month=questions_per_month, hit_rate=hit_rate, db_monthly=db_monthly)\n"
                  "    m = _cc(doc_tokens, 50, p).monthly\n"
                  "    return {'long_context': m['long_context'], 'filter': m['filter'], 'rag': m['rag']}\n"),
        "partial": ("import functools\n_cc = functools.partial(compare.compare)\n"
                    "def monthly_by_path(doc_tokens, questions_per_month, hit_rate, db_monthly, model='claude-opus-5'):\n"
                    "    p = compare.Profile(model=model, questions_per_month=questions_per_month, hit_rate=hit_rate, db_monthly=db_monthly)\n"
                    "    m = _cc(doc_tokens, 50, p).monthly\n"
                    "    return {'long_context': m['long_context'], 'filter': m['filter'], 'rag': m['rag']}\n"),
    },
    ("03_prompt_caching", "first_paying_call"): {
        "wrapper": ("import functools\n_f = functools.wraps(formulas.first_paying_call)(lambda *a: formulas.first_paying_call(*a))\n"
                    "_g = functools.lru_cache(formulas.first_paying_call)\n"
                    "def first_paying_call(w, r):\n    return _g(w, r)\n"),
    },
    ("05_crossover", "rag_crossover_tokens"): {
        "instance_call": ("class _Solver:\n    def __init__(self):\n        self.f = crossover.crossover_tokens\n"
                          "    def __call__(self, profile, max_tokens):\n        return self.f(profile, max_tokens=max_tokens)\n"
                          "_solve = _Solver()\n"
                          "def rag_crossover_tokens(profile, max_tokens):\n    return _solve(profile, max_tokens)\n"),
    },
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
        for form, code in TWIN_ALIASES.get((lesson, name), {}).items():
            variants[f"library_twin_{form}"] = code
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
    assert sum(":library_twin_" in k for k in keys) == sum(len(v) for (les, _), v in TWIN_ALIASES.items() if les == lesson)


# --------------------------------------------------------------------------- every way of reaching a twin

#: form -> a notebook cell defining ``answer(times)`` that reaches ``ctxlab.costs.traffic.model_hits``
#: (04's old exercise 1 twin, kept here as an example library function) without naming it where a test patches it
REACH_FORMS = {
    "alias": "from ctxlab.costs.traffic import model_hits as _mh\ndef answer(times):\n    return _mh(times)\n",
    "module_alias": "import ctxlab.costs.traffic as _lib\ndef answer(times):\n    return _lib.model_hits(times)\n",
    "dotted": "import ctxlab\ndef answer(times):\n    return ctxlab.costs.traffic.model_hits(times)\n",
    "partial": ("import functools\nfrom ctxlab.costs import traffic\n_p = functools.partial(traffic.model_hits)\n"
                "def answer(times):\n    return _p(times)\n"),
    "wrapper": ("import functools\nfrom ctxlab.costs import traffic\n"
                "def _wrap(f):\n    @functools.wraps(f)\n    def inner(*a, **k):\n        return f(*a, **k)\n    return inner\n"
                "_w = _wrap(traffic.model_hits)\ndef answer(times):\n    return _w(times)\n"),
    "lru_cache": ("import functools\nfrom ctxlab.costs import traffic\n_c = functools.lru_cache(traffic.model_hits)\n"
                  "def answer(times):\n    return _c(tuple(times))\n"),
    "default": "from ctxlab.costs import traffic\ndef answer(times, _f=traffic.model_hits):\n    return _f(times)\n",
    "kwdefault": "from ctxlab.costs import traffic\ndef answer(times, *, _f=traffic.model_hits):\n    return _f(times)\n",
    "closure": ("from ctxlab.costs import traffic\ndef _make():\n    f = traffic.model_hits\n"
                "    def inner(times):\n        return f(times)\n    return inner\nanswer = _make()\n"),
    "instance_call": ("from ctxlab.costs import traffic\nclass _C:\n    def __init__(self):\n        self.f = traffic.model_hits\n"
                      "    def __call__(self, times):\n        return self.f(times)\nanswer = _C()\n"),
    "bound_method": ("from ctxlab.costs import traffic\nclass _B:\n    def run(self, times):\n        return traffic.model_hits(times)\n"
                     "_b = _B().run\ndef answer(times):\n    return _b(times)\n"),
    "staticmethod": ("from ctxlab.costs import traffic\nclass _S:\n    f = staticmethod(traffic.model_hits)\n"
                     "def answer(times):\n    return _S.f(times)\n"),
    "container": "from ctxlab.costs import traffic\n_table = {'x': [traffic.model_hits]}\ndef answer(times):\n    return _table['x'][0](times)\n",
    "local_import": "def answer(times):\n    import ctxlab.costs.traffic as t\n    return t.model_hits(times)\n",
    "local_from_import": "def answer(times):\n    from ctxlab.costs.traffic import model_hits as m\n    return m(times)\n",
    "helper_function": ("from ctxlab.costs import traffic as _t\ndef _helper(times):\n    return _t.model_hits(times)\n"
                        "def answer(times):\n    return _helper(times)\n"),
    "lambda": "from ctxlab.costs.traffic import model_hits as _mh\nanswer = lambda times: _mh(times)\n",
}

HONEST = """
from ctxlab.costs import traffic, compare

def answer(times, ttl_s=300):
    hits, expiry = [], None
    for t in sorted(times):
        hits.append(expiry is not None and t <= expiry)
        expiry = t + ttl_s
    profile = compare.Profile()          # other library names are fine
    return hits, traffic.__name__, profile.hit_rate
"""


def _define(code: str):
    ns: dict = {"__name__": "__main__"}
    exec(compile(code, "<notebook cell>", "exec"), ns)  # noqa: S102 - the test's own submission
    return ns["answer"]


@pytest.mark.parametrize("form", sorted(REACH_FORMS))
def test_every_form_of_reaching_a_twin_is_refused(form):
    from ctxlab.costs import traffic

    answer = _define(REACH_FORMS[form])
    assert reached(answer, traffic.model_hits), form
    with pytest.raises(TwinUsed, match="model_hits"):
        refuse_twins(answer, traffic.model_hits, traffic.hit_rate)


def test_an_honest_answer_that_uses_other_library_names_is_not_refused():
    from ctxlab.costs import compare, traffic

    answer = _define(HONEST)
    refuse_twins(answer, traffic.model_hits, traffic.hit_rate, compare.compare)
    assert reached(answer, traffic.model_hits, compare.compare) == []


def test_a_twin_given_as_a_method_matches_its_bound_form():
    from ctxlab.labs import rag_lab

    code = "def answer(lab, k):\n    return 1 - _r(k)\n"
    ns = {"__name__": "__main__", "_r": object.__new__(rag_lab.Lab).recall}
    exec(compile(code, "<notebook cell>", "exec"), ns)  # noqa: S102
    assert reached(ns["answer"], (rag_lab.Lab, "recall"))
