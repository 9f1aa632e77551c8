"""The parallel schedule of `make test` (tests/conftest.py): units of work and what is slow."""
from __future__ import annotations

import ast
from pathlib import Path

import conftest

TESTS = Path(__file__).resolve().parent


def test_a_file_is_a_unit_and_the_files_sharing_the_graded_class_are_one():
    assert conftest.unit("tests/test_cli.py::test_x[a::b]") == "test_cli.py"
    assert conftest.unit("tests/browser/test_lab_smoke.py::t") == "browser/test_lab_smoke.py"
    assert {conftest.unit(f"tests/{f}::t") for f in conftest.SHARED["graded_class"]} == {"graded_class"}


def _takes(path: Path, fixture: str) -> bool:
    """Whether a function of the file (a test or a fixture) takes ``fixture`` as an argument."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(fixture in {a.arg for a in node.args.args} for node in ast.walk(tree)
               if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)))


def test_every_test_of_a_shared_session_fixture_is_in_its_unit():
    """A test that reads the graded class from a file outside its unit would make a second
    worker build the whole class again: every file whose tests or fixtures take it is in the unit."""
    users = {p.relative_to(TESTS).as_posix() for p in TESTS.rglob("test_*.py") if _takes(p, "graded_class")}
    assert users, "no test takes graded_class: update SHARED in tests/conftest.py"
    assert users <= set(conftest.SHARED["graded_class"]), sorted(users - set(conftest.SHARED["graded_class"]))


def test_the_heavy_first_list_names_units_that_exist():
    files = {p.relative_to(TESTS).as_posix() for p in TESTS.rglob("test_*.py")}
    for name in conftest.HEAVY_FIRST:
        assert name in files or name in conftest.SHARED, f"{name}: no such test file or shared unit (update HEAVY_FIRST)"
    for files_of_group in conftest.SHARED.values():
        assert set(files_of_group) <= files
