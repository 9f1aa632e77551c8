"""Build the nbgrader source notebooks in solutions/ from tools/lessons/*.py.

Each lesson script calls the helpers below (markdown, code, an answer cell with a solution
region, a test cell with hidden tests, a written answer) and ``save()``. Notebooks are
written without outputs, with python3 kernelspec metadata and stable cell ids, so that the
same script gives byte-identical files. Run ``make notebooks`` (or this file) after editing
a lesson script; a test fails when solutions/ is out of date.

Usage: python tools/nbbuild.py [--check] [lesson ...]
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LESSONS = ROOT / "tools" / "lessons"
SOLUTIONS = ROOT / "solutions"

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
LANGUAGE_INFO = {"name": "python", "pygments_lexer": "ipython3"}


def _src(text: str) -> list[str]:
    text = textwrap.dedent(text).strip("\n")
    lines = text.split("\n")
    return [line + "\n" for line in lines[:-1]] + [lines[-1]]


class Notebook:
    """A lesson notebook under construction."""

    def __init__(self, assignment: str):
        self.assignment = assignment
        self.cells: list[dict] = []
        self._ids: set[str] = set()
        self._points = 0.0

    # -- cells -------------------------------------------------------------
    def _id(self, wanted: str | None) -> str:
        if wanted is None:
            wanted = f"cell-{len(self.cells):03d}"
        if wanted in self._ids:
            raise ValueError(f"{self.assignment}: duplicate cell id {wanted}")
        self._ids.add(wanted)
        return wanted

    def _add(self, cell_type: str, source: str, cell_id: str | None = None, nbgrader: dict | None = None):
        cell = {"cell_type": cell_type, "id": self._id(cell_id), "metadata": {}, "source": _src(source)}
        if nbgrader is not None:
            cell["metadata"]["nbgrader"] = {"schema_version": 3, **nbgrader}
        if cell_type == "code":
            cell["execution_count"] = None
            cell["outputs"] = []
        self.cells.append(cell)
        return cell

    def md(self, text: str):
        """Prose (Japanese)."""
        return self._add("markdown", text)

    def code(self, src: str):
        """An ordinary code cell the learner runs."""
        return self._add("code", src)

    def task_md(self, grade_id: str, text: str):
        """The statement of an exercise (read-only in nbgrader)."""
        return self._add("markdown", text, grade_id, {"grade": False, "grade_id": grade_id, "locked": True,
                                                        "solution": False, "task": False})

    def answer(self, grade_id: str, src: str):
        """Autograded answer cell: must contain ### BEGIN SOLUTION / ### END SOLUTION."""
        if "### BEGIN SOLUTION" not in src:
            raise ValueError(f"{self.assignment}/{grade_id}: an answer cell needs a solution region")
        return self._add("code", src, grade_id, {"grade": False, "grade_id": grade_id, "locked": False,
                                                  "solution": True, "task": False})

    def tests(self, grade_id: str, points: float, src: str):
        """Test cell: visible asserts, then ### BEGIN HIDDEN TESTS / ### END HIDDEN TESTS."""
        if "### BEGIN HIDDEN TESTS" not in src:
            raise ValueError(f"{self.assignment}/{grade_id}: a test cell needs hidden tests")
        self._points += points
        return self._add("code", src, grade_id, {"grade": True, "grade_id": grade_id, "locked": True,
                                                  "points": points, "solution": False, "task": False})

    def written(self, grade_id: str, points: float, prompt: str, model_answer: str):
        """A manually graded written answer: the prompt, then the answer cell (model answer hidden)."""
        self.task_md(f"{grade_id}-prompt", prompt)
        self._points += points
        src = "### BEGIN SOLUTION\n" + textwrap.dedent(model_answer).strip() + "\n### END SOLUTION"
        return self._add("markdown", src, grade_id, {"grade": True, "grade_id": grade_id, "locked": False,
                                                      "points": points, "solution": True, "task": False})

    def hint(self, text: str, title: str = "ヒント（開くと表示）"):
        """A hint on demand: a collapsed block the learner opens when stuck."""
        body = textwrap.dedent(text).strip()
        return self.md(f"<details><summary>{title}</summary>\n\n{body}\n\n</details>")

    # -- output ------------------------------------------------------------
    @property
    def points(self) -> float:
        return self._points

    def to_json(self) -> str:
        nb = {
            "cells": self.cells,
            "metadata": {"kernelspec": KERNELSPEC, "language_info": LANGUAGE_INFO},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
        return json.dumps(nb, ensure_ascii=False, indent=1, sort_keys=True) + "\n"

    def path(self) -> Path:
        return SOLUTIONS / self.assignment / f"{self.assignment}.ipynb"

    def save(self):
        # Lesson scripts call save(); build() collects the notebook instead of writing when checking.
        _BUILT.append(self)


_BUILT: list[Notebook] = []


def load_lesson(script: Path) -> list[Notebook]:
    _BUILT.clear()
    spec = importlib.util.spec_from_file_location(f"lesson_{script.stem}", script)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("nbbuild", sys.modules[__name__])
    spec.loader.exec_module(module)
    return list(_BUILT)


def build(names: list[str] | None = None, check: bool = False) -> list[str]:
    """Build (or, with check, compare) the notebooks; return the paths that differ."""
    stale = []
    for script in sorted(LESSONS.glob("[0-9][0-9]_*.py")):
        if names and script.stem not in names:
            continue
        for nb in load_lesson(script):
            text = nb.to_json()
            path = nb.path()
            current = path.read_text(encoding="utf-8") if path.exists() else None
            if current != text:
                stale.append(str(path.relative_to(ROOT)))
                if not check:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(text, encoding="utf-8")
    return stale


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("lessons", nargs="*")
    ap.add_argument("--check", action="store_true", help="only report notebooks that are out of date")
    args = ap.parse_args()
    stale = build(args.lessons, check=args.check)
    for s in stale:
        print(("out of date: " if args.check else "wrote ") + s)
    return 1 if (args.check and stale) else 0


if __name__ == "__main__":
    sys.exit(main())
