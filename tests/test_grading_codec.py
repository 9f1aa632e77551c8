"""Values that cross between the grader and the learner's kernel (ctxlab/grading/codec.py), and the
grader kernel's plan of each lesson (ctxlab/grading/graded.py Plan): no nbgrader run."""
from __future__ import annotations

import json
import math
from pathlib import Path

import nbformat
import pytest

from ctxlab.grading import codec
from ctxlab.grading._learner import call, value
from ctxlab.grading.graded import Plan, defined, loaded

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("v", [None, True, 0, -3, 1.5, "日本語", [1, "a"], (1, (2, 3)), {"q1": "a", 3: [1.0]},
                               {1, 2}, frozenset({"x"}), {(1, 2): {"k": None}}, [], (),
                               __import__("types").SimpleNamespace(a=1, b=__import__("types").SimpleNamespace(c=None))])
def test_plain_values_cross_and_keep_their_exact_type(v):
    got = codec.loads(codec.dumps(v))
    assert got == v and type(got) is type(v)


def test_nan_and_inf_cross():
    got = codec.loads(codec.dumps([math.nan, math.inf, -math.inf]))
    assert math.isnan(got[0]) and got[1:] == [math.inf, -math.inf]


def test_the_courses_own_types_cross_and_others_are_refused_with_a_japanese_message():
    from anthropic.types import Usage

    u = Usage(input_tokens=20, output_tokens=100, cache_read_input_tokens=5000, cache_creation_input_tokens=0)
    got = codec.loads(codec.dumps([u]))[0]
    assert type(got) is Usage and got == u

    class Same(str):
        def __eq__(self, other):
            return True
        __hash__ = str.__hash__

    class Mine:
        pass

    for bad in (Same("a"), Mine(), {"q1": Same("a")}, object()):
        with pytest.raises(codec.Unsupported, match="採点で受け取れません"):
            codec.dumps(bad)


def test_a_forged_type_name_is_refused_and_nothing_is_imported_outside_the_allowlist():
    for name in ("os:system", "builtins:eval", "subprocess:Popen", "ctxlab.grading.harness:Proxy"):
        with pytest.raises(codec.Unsupported):
            codec.loads(json.dumps({"$o": name, "f": {}}))
    with pytest.raises(codec.Unsupported):
        codec.loads(json.dumps({"$m": [[[1], 2]]}))   # an unhashable key
    with pytest.raises(codec.Unsupported):
        codec.loads("[" * 100 + "]" * 100)            # too deep


def test_numpy_scalars_arrive_as_python_numbers():
    import numpy as np

    assert codec.loads(codec.dumps([np.float64(0.5), np.int64(3)])) == [0.5, 3]
    assert [type(x) for x in codec.loads(codec.dumps([np.float64(0.5), np.int64(3)]))] == [float, int]


def test_the_learner_side_answers_results_and_errors_as_data():
    def f(a, b=1):
        if a < 0:
            raise ValueError("a must be >= 0")
        return (a + b, {"x": [a]})

    assert codec.decode(json.loads(call(f, codec.dumps([[2], {"b": 3}])))["ok"]) == (5, {"x": [2]})
    err = json.loads(call(f, codec.dumps([[-1], {}])))
    rebuilt = codec.rebuild_error(err)
    assert type(rebuilt) is ValueError and "a must be >= 0" in str(rebuilt)

    class MyError(KeyError):
        pass

    def g():
        raise MyError("nope")

    rebuilt = codec.rebuild_error(json.loads(call(g, codec.dumps([[], {}]))))
    assert type(rebuilt) is KeyError and "MyError" in str(rebuilt)
    assert json.loads(value(f)) == {"callable": True}
    assert codec.decode(json.loads(value({"q1": "c"}))["ok"]) == {"q1": "c"}
    # a value the codec refuses comes back as a TypeError with the Japanese message
    refused = json.loads(value(object()))
    assert refused["$e"] == "TypeError" and "採点で受け取れません" in refused["msg"]


def test_defined_and_loaded_names():
    src = "def _check(args, path, reasons):\n    got = f(*args)\n    assert got[0] == path\n_check((1,), 'a', {'b'})\nprint(K)\n"
    assert defined(src) == {"_check"}   # parameters and locals are not globals
    assert loaded(src) == {"f", "K"}
    assert loaded("%time x = y\nz") == {"z"}   # a magic line is not Python
    # a helper's parameter named like a lesson global does not hide the global the cell reads
    src = "def _check(doc_tokens):\n    return doc_tokens > 0\nassert _check(doc_tokens)\n"
    assert loaded(src) == {"doc_tokens"}
    # what a function declares global and assigns is bound; a comprehension's or class's free names are read
    src = "def f():\n    global G\n    G = [y for y in xs if y > Z]\nclass C:\n    a = W\nimport os as o\n"
    assert defined(src) == {"f", "G", "C", "o"}
    assert loaded(src) == {"xs", "Z", "W"}


def test_early_cells_commute_with_what_waits_before_them():
    """A lesson cell runs ahead (while the learner's kernel runs) only when moving it changes no value
    any cell sees: one that reads a learner's name, or shares a name with a test or a waiting cell
    before it (either could mutate it), waits for its test."""
    def code(src, **nbgrader):
        cell = nbformat.v4.new_code_cell(src)
        if nbgrader:
            cell.metadata["nbgrader"] = {"schema_version": 3, "points": 1, **nbgrader}
        return cell

    nb = nbformat.v4.new_notebook(cells=[
        code("import math\nbase = 10"),                                   # 0: early
        code("def f(x):\n    return x", solution=True, grade_id="f", grade=False),
        code("table = [f(1)]"),                                           # 1: reads a learner name: waits
        code("assert f(base) == 10 and table == [1]", grade=True, grade_id="t1"),
        code("other = math.sqrt(4)"),                                     # 2: early (shares no name with t1)
        code("table = [2]"),                                              # 3: rebinds a name t1 reads: waits
        code("got = base + 1"),                                           # 4: reads a name t1 reads: waits
        code("assert other and table == [2] and got == 11 and f(0) == 0", grade=True, grade_id="t2"),
    ])
    plan = Plan.of(nb)
    assert plan.learner_names == {"f"}
    assert plan.before == {"t1": [0, 1], "t2": [0, 1, 2, 3, 4]}
    assert plan.early == [0, 2]


@pytest.mark.parametrize("path", sorted((ROOT / "solutions").glob("*/*.ipynb")), ids=lambda p: p.parent.name)
def test_every_test_cell_gets_every_lesson_name_it_reads_from_its_slice(path):
    nb = nbformat.read(path, as_version=4)
    plan = Plan.of(nb)
    tests = [c for c in nb.cells if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("grade")
             and not c.metadata["nbgrader"].get("solution")]
    for cell in tests:
        gid = cell.metadata["nbgrader"]["grade_id"]
        have = set().union(*(defined(plan.lesson[i]) for i in plan.before[gid]))
        missing = loaded(cell.source) - plan.learner_names - have
        assert not missing, (gid, missing)
        assert set(plan.needs[gid]) <= plan.learner_names
