"""No demo cell of a lesson holds an ``assert`` (issue 43): the checks of what a lesson prints live in tests/
(tests/test_prose_claims.py, tests/test_lesson_claims.py), not in the learner's cells, where a failed authoring
check is noise. Test cells (nbgrader ``grade``) and solution regions are the exercises' own and may assert.

Every lesson is checked.
"""
from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted(p.name for p in (ROOT / "solutions").iterdir() if (p / f"{p.name}.ipynb").exists())


def authoring_asserts(nb) -> list[str]:
    """The ids (and first lines) of the code cells that are neither tests nor solutions and hold an assert."""
    found = []
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type != "code" or meta.get("grade") or meta.get("solution"):
            continue
        try:
            tree = ast.parse("\n".join(l for l in cell.source.splitlines() if not l.lstrip().startswith(("%", "!"))))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Assert):
                found.append(f"{cell.get('id')}: {ast.get_source_segment(cell.source, node) or 'assert'}"[:120])
    return found


@pytest.mark.parametrize("lesson", LESSONS)
def test_no_demo_cell_holds_an_assert(lesson):
    nb = nbformat.read(ROOT / "solutions" / lesson / f"{lesson}.ipynb", as_version=4)
    assert authoring_asserts(nb) == [], "move these checks into a test in tests/ that reads the executed lesson"


def test_a_planted_assert_is_found_and_test_cells_are_not():
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("x = 1\nif x:\n    assert x == 1, 'demo'"),
        nbformat.v4.new_code_cell("assert f(1) == 2", metadata={"nbgrader": {"grade": True, "grade_id": "t", "points": 1}}),
        nbformat.v4.new_code_cell("%matplotlib inline\nprint('assert in a string')"),
    ])
    found = authoring_asserts(nb)
    assert len(found) == 1 and "assert x == 1" in found[0]
