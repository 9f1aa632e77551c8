"""The graded build of ctxlab (ctxlab/grading/graded_build.py): no exercise's twin as code, and grading kernels import it.

The build is made once per change of the course's sources (cached; about a minute on two cores:
it runs every lesson's solution notebook to record the narrative's calls). The search unpacks
it and looks for each twin's code (every statement of the real function's body, by AST, and its
distinctive lines) in every Python file; the positive control runs the same search on the
checkout's package, where each twin is found. A sandboxed kernel, started as nbgrader starts it,
imports the graded build: the twin's source is the lookup, ``runpy`` yields no working twin, and no
file the kernel can read on its import path holds the twin's code; the same probe without the
sandbox (``--no-sandbox``) sees the code, so the probe can tell.
"""
from __future__ import annotations

import ast
import functools
import json
import pickle
import time
from pathlib import Path

import nbformat
import pytest
from traitlets.config import Config

from ctxlab._paths import PACKAGE_DIR
from ctxlab._recorded import EXERCISES
from ctxlab.grading import graded_build, isolation

#: code of a twin that stays in the graded build on purpose, and why (the report lists the change each needs)
KNOWN: dict = {}

#: statements of a twin that say nothing of its exercise (found in unrelated code too)
GENERIC = {"return sum(values) / len(values)"}   # a mean


@pytest.fixture(scope="module")
def graded() -> Path:
    return graded_build.graded_package()


def _func(package: Path, module: str, name: str) -> ast.FunctionDef:
    tree = ast.parse((package.parent / graded_build.rel_path(module)).read_text(encoding="utf-8"))
    return next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)


def _body(func: ast.FunctionDef, keep: int) -> list[ast.stmt]:
    return (func.body[1:] if ast.get_docstring(func) else func.body)[keep:]


def _bare_call(line: str) -> bool:
    try:
        tree = ast.parse(line)
    except SyntaxError:
        return False
    return len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr) and isinstance(tree.body[0].value, ast.Call)


def _distinctive(func: ast.FunctionDef, keep: int) -> set[str]:
    """Lines of the twin's body long enough to be its own (not `return out`), as written."""
    lines = set()
    for stmt in _body(func, keep):
        for line in ast.unparse(stmt).splitlines():
            line = line.strip()
            if len(line) >= 28 and line not in GENERIC and not line.startswith(("return lookup(", "from ctxlab._recorded", "raise ")) \
                    and not _bare_call(line):   # an input check such as nonneg('x', x) is no answer
                lines.add(line)
    return lines


def _statements(func: ast.FunctionDef, keep: int) -> set[str]:
    """The twin's statements that compute (a loop, a branch, arithmetic or a comprehension), as AST dumps."""
    computing = (ast.BinOp, ast.Compare, ast.comprehension, ast.BoolOp)
    return {ast.dump(s) for stmt in _body(func, keep) for s in ast.walk(stmt)
            if isinstance(s, (ast.For, ast.While, ast.If)) or (
                isinstance(s, (ast.Assign, ast.AugAssign, ast.Return)) and
                any(isinstance(n, computing) for n in ast.walk(s))) and ast.unparse(s) not in GENERIC}


def _where(package: Path, func: ast.FunctionDef, keep: int) -> set[tuple[str, str]]:
    """(file, function) in ``package`` whose code holds a statement or a distinctive line of ``func``'s body."""
    stmts = _statements(func, keep)
    lines = _distinctive(func, keep)
    return {(rel, fname) for rel, fname, dumps, text in _functions(package) if dumps & stmts or text & lines}


@functools.lru_cache(maxsize=4)
def _functions(package: Path) -> list[tuple[str, str, set[str], set[str]]]:
    """Every function of ``package``: (file, name, its statements as AST dumps, its lines)."""
    out = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append((path.relative_to(package.parent).as_posix(), node.name,
                            {ast.dump(s) for s in ast.walk(node) if isinstance(s, ast.stmt)},
                            {line.strip() for line in ast.unparse(node).splitlines()}))
    return out


def test_every_twin_names_its_exercise():
    assert {f"{m}.{n}" for m, n, _ in graded_build.TWINS} == set(EXERCISES)


@pytest.mark.slow
def test_the_graded_build_holds_no_code_of_any_exercises_twin(graded):
    checkout = {}
    for module, name, keep in graded_build.TWINS:
        real = _func(PACKAGE_DIR, module, name)
        assert _distinctive(real, keep) or _statements(real, keep), f"{name}: nothing to search for"
        # positive control: the full package holds the twin's code, where it is written
        checkout[name] = _where(PACKAGE_DIR, real, keep)
        assert (graded_build.rel_path(module).as_posix(), name) in checkout[name], (module, name)
        stub = _func(graded, module, name)
        assert [type(s).__name__ for s in _body(stub, keep)] == ["ImportFrom", "Return"], ast.unparse(stub)
        call = _body(stub, keep)[-1].value
        assert ast.unparse(call.func) == "lookup" and call.args[0].value == f"{module}.{name}", ast.unparse(stub)
        hits = _where(graded, real, keep)
        allowed = {KNOWN[(module, name)][:2]} if (module, name) in KNOWN else set()
        assert hits <= allowed, f"{module}.{name}'s code is still in the graded build: {sorted(hits - allowed)}"
    # the search finds copies too: model_hits' loop (a tool, not a twin) is also in the traffic simulation
    copies = _where(PACKAGE_DIR, _func(PACKAGE_DIR, "ctxlab.costs.traffic", "model_hits"), 0)
    assert ("ctxlab/costs/traffic.py", "_simulated_rate") in copies, copies
    table = pickle.loads((graded / "_data" / "recorded.pkl").read_bytes())
    assert len(table) > 1000   # every lesson's narrative calls, recorded
    assert not [k for k in table if k.startswith(graded_build.FAILED)], "a narrative call that grading cannot serve"


@pytest.mark.slow
def test_the_build_is_cached_by_its_sources(graded, tmp_path):
    t = time.perf_counter()
    assert graded_build.graded_package() == graded
    assert time.perf_counter() - t < 5, "a cached build must not be rebuilt on every grading kernel"
    root = tmp_path / "root"
    for nb in graded_build.lesson_notebooks(PACKAGE_DIR.parent)[:2]:
        (root / "solutions" / nb.parent.name).mkdir(parents=True)
        (root / "solutions" / nb.parent.name / nb.name).write_bytes(nb.read_bytes())
    before = graded_build.source_hash(root)
    nb = next((root / "solutions").glob("*/*.ipynb"))
    nb.write_text(nb.read_text(encoding="utf-8").replace("\n", "\n ", 1), encoding="utf-8")
    assert graded_build.source_hash(root) != before


_PROBE = r'''
import inspect, json, os, runpy, sys
import ctxlab
from ctxlab.labs import ttl
from ctxlab.retrieval import fusion
out = {"file": ctxlab.__file__, "source": inspect.getsource(ttl.day_cost)}
try:
    out["runpy"] = repr(runpy.run_module("ctxlab.retrieval.fusion")["rrf"]([[1, 2, 3], [3, 2, 1]], 60))
except Exception as e:
    out["runpy"] = type(e).__name__
lines = json.loads(LINES)
found = []
for entry in sys.path + [os.path.dirname(ctxlab.__file__)]:
    for top, dirs, files in os.walk(entry or "."):
        dirs[:] = [d for d in dirs if d not in ("__pycache__", "node_modules")]
        for f in files:
            if f.endswith(".py") and "ctxlab" in top:
                try:
                    text = open(os.path.join(top, f), encoding="utf-8").read()
                except OSError:
                    continue
                found += [os.path.join(top, f) for line in lines if line in text]
out["found"] = sorted(set(found))
print("PROBE " + json.dumps(out))
'''


def _probe(tmp_path: Path, isolate: bool) -> dict:
    lines = sorted(_distinctive(_func(PACKAGE_DIR, "ctxlab.retrieval.fusion", "rrf"), 1))
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"LINES = {json.dumps(json.dumps(lines))}\n" + _PROBE)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    ep = isolation.IsolatedExecute(config=Config({"IsolatedKernelManager": {"isolate": isolate}}),
                                   timeout=300, startup_timeout=120)
    ep.preprocess(nb, {"metadata": {"path": str(tmp_path)}})
    text = "".join(o.get("text", "") for o in nb.cells[0].outputs)
    assert "PROBE " in text, nb.cells[0].outputs
    return json.loads(text.split("PROBE ", 1)[1].splitlines()[0])


@pytest.mark.slow
@pytest.mark.skipif(isolation.unavailable_reason() is not None, reason="bubblewrap is not usable here")
def test_a_grading_kernel_imports_the_graded_build_and_finds_no_twin(graded, tmp_path):
    got = _probe(tmp_path, isolate=True)
    assert "from ctxlab._recorded import lookup" in got["source"] and "miss_cost" not in got["source"], got
    assert got["runpy"] == "NotRecorded", got   # a fresh copy of the module holds the lookup too
    assert got["found"] == [], got              # nothing on the import path holds rrf's code
    # control: without the sandbox (--no-sandbox) the kernel imports the checkout, and the probe sees the code
    plain = _probe(tmp_path, isolate=False)
    assert "miss_cost" in plain["source"] and plain["runpy"] == "[1, 3, 2]", plain
    assert any(f.endswith("retrieval/fusion.py") for f in plain["found"]), plain


def test_split_test_keeps_the_visible_part_and_hides_the_rest():
    visible, hidden = graded_build.split_test("x = 1\n### BEGIN HIDDEN TESTS\nassert x\n### END HIDDEN TESTS\n")
    assert visible == "x = 1\n" and hidden.startswith("### BEGIN HIDDEN TESTS") and "assert x" in hidden
    assert graded_build.split_test("y = 2\n") == ("y = 2\n", "")
    # a hidden block inside an indented block cannot be split: all of it stays unrecorded
    nested = "if True:\n    ### BEGIN HIDDEN TESTS\n    z = 3\n    ### END HIDDEN TESTS\n"
    assert graded_build.split_test(nested) == ("", nested)


@pytest.mark.slow
def test_the_record_keeps_the_narratives_and_visible_tests_calls_never_the_hidden_ones(tmp_path):
    """The graded kit's Validate runs the visible tests in the learner's kernel, so a twin they call must answer
    there; a hidden test's inputs must never enter the build (a learner could call the twin with them)."""
    import inspect
    import subprocess
    import sys

    from ctxlab._recorded import key
    from ctxlab.costs import formulas

    nb = nbformat.v4.new_notebook()
    call = "from ctxlab.costs import formulas\nformulas.breakeven_reuses({}, 0.2)\n"
    test = nbformat.v4.new_code_cell(call.format(1.7) + "### BEGIN HIDDEN TESTS\n" + call.format(1.9) + "### END HIDDEN TESTS\n")
    test.metadata["nbgrader"] = {"grade": True, "grade_id": "t", "locked": True, "points": 1, "solution": False,
                                 "schema_version": 3, "task": False}
    nb.cells = [nbformat.v4.new_code_cell(call.format(1.5)), test]
    lesson = tmp_path / "98_probe" / "98_probe.ipynb"
    lesson.parent.mkdir()
    nbformat.write(nb, lesson)
    out = tmp_path / "table.pkl"
    proc = subprocess.run([sys.executable, "-m", "ctxlab.grading.graded_build", str(lesson), str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    table = pickle.loads(out.read_bytes())
    sig = inspect.signature(formulas.breakeven_reuses)

    def recorded(w: float) -> bool:
        bound = sig.bind(w, 0.2)
        bound.apply_defaults()
        return key("ctxlab.costs.formulas.breakeven_reuses", dict(bound.arguments)) in table

    assert recorded(1.5) and recorded(1.7), "the narrative's and the visible test's calls"
    assert not recorded(1.9), "a hidden test's call entered the build"
