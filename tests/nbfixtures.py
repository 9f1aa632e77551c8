"""Synthetic submissions built from the source (instructor) notebooks, for the grading tests.

Used by the shared graded class (conftest.py), the feedback and end-to-end tests and the
grading benchmark. Also a script: ``.venv/bin/python tests/nbfixtures.py 00_start_here``
autogrades the solution and the untouched release of each assignment named and says
whether the solution gets full marks and the release 0.
"""
from __future__ import annotations

import argparse
import ast
import copy
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from ctxlab.grading._nbgrader import RELEASE_DIR, SOURCE_DIR, Score, make_course_root, place_submission, scores  # noqa: E402
from ctxlab.grading.parallel import grade_parallel  # noqa: E402

BEGIN_HIDDEN, END_HIDDEN = "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"


def grade_id(cell) -> str | None:
    return cell.metadata.get("nbgrader", {}).get("grade_id")


def visible_part(src: str) -> str:
    """A test cell's source before its hidden tests."""
    return src.split("### " + BEGIN_HIDDEN)[0]


BEGIN_SOLUTION, END_SOLUTION = "### BEGIN SOLUTION", "### END SOLUTION"


def _nbmeta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def answer_cells(nb) -> list[int]:
    """Indexes of autograded answer cells (code, solution, not graded themselves)."""
    return [i for i, c in enumerate(nb.cells) if c.cell_type == "code"
            and _nbmeta(c).get("solution") and not _nbmeta(c).get("grade")]


def test_cells(nb) -> list[int]:
    """Indexes of autograded test cells (code, graded, not a solution)."""
    return [i for i, c in enumerate(nb.cells) if c.cell_type == "code"
            and _nbmeta(c).get("grade") and not _nbmeta(c).get("solution")]


def replace_solution(source: str, lines: list[str]) -> str:
    """Replace every solution region of a cell by ``lines`` at the region's indentation
    (what generate_assignment does with ``raise NotImplementedError()``)."""
    src = source.split("\n")
    out, i = [], 0
    while i < len(src):
        if BEGIN_SOLUTION in src[i]:
            indent = src[i][: len(src[i]) - len(src[i].lstrip())]
            j = i
            while j < len(src) and END_SOLUTION not in src[j]:
                j += 1
            out += [indent + line for line in lines]
            i = j + 1
        else:
            out.append(src[i])
            i += 1
    return "\n".join(out)


def _clean(nb):
    nb = copy.deepcopy(nb)
    for c in nb.cells:
        if c.cell_type == "code":
            c.outputs, c.execution_count = [], None
    return nb


_QUIZ_ENTRY = re.compile(r'"(\w+)"\s*:\s*"([a-z])"')
#: 09's solution clicks the quiz's choices in bank order: ``for choice in ("c", "d", ...)``; the first is q1's
_QUIZ_CLICKS = re.compile(r'for choice in \("([a-z])"')

VARIANTS = ("solution", "partial", "timeout", "import_error", "edited_test", "deleted_cells",
            "big_output", "kernel_dies")


def make_variant(source_nb, kind: str):
    """A submission built from the source (instructor) notebook, and the grade ids of the
    autograded test cells it must fail (None: not known in advance).

    - solution: the source as it is (full autograded marks).
    - partial: with two or more answer cells, the last one's solution region becomes
      ``raise NotImplementedError()``: the test cells after it fail. With one answer cell
      holding a quiz dictionary, the first answer is changed: that question's cell fails.
    - timeout: an infinite loop at the top of the last answer cell (the cell times out,
      the tests after it fail).
    - import_error: the first code cell raises ModuleNotFoundError (which tests fail depends
      on the notebook: None).
    - edited_test: the partial submission, with the test cells it fails replaced by ``pass``
      (nbgrader restores them from the gradebook: they still fail).
    - deleted_cells: the last answer cell and the first test cell after it removed.
    - big_output: the solution, with an answer cell printing 10 MB on one line.
    - kernel_dies: the first answer cell ends the kernel process (``os._exit``): nbgrader
      cannot grade it and must say so.
    """
    nb = _clean(source_nb)
    answers, tests = answer_cells(nb), test_cells(nb)
    last = answers[-1] if answers else None
    after_last = [_nbmeta(nb.cells[i])["grade_id"] for i in tests if last is not None and i > last]
    if kind == "solution":
        return nb, []
    if kind == "partial":
        if len(answers) >= 2:
            nb.cells[last].source = replace_solution(nb.cells[last].source, ["raise NotImplementedError()"])
            return nb, after_last
        cell = nb.cells[last]
        clicks = _QUIZ_CLICKS.search(cell.source)
        if clicks:   # a wrong click on the first question (q1), the others right
            wrong = "a" if clicks.group(1) != "a" else "b"
            cell.source = cell.source[: clicks.start(1)] + wrong + cell.source[clicks.end(1):]
            return nb, [_nbmeta(nb.cells[i])["grade_id"] for i in tests if 'only="q1"' in nb.cells[i].source]
        m = _QUIZ_ENTRY.search(cell.source)
        if m:
            wrong = "a" if m.group(2) != "a" else "b"
            cell.source = cell.source[: m.start(2)] + wrong + cell.source[m.end(2):]
            key = f'"{m.group(1)}"'
            return nb, [_nbmeta(nb.cells[i])["grade_id"] for i in tests if key in nb.cells[i].source]
        cell.source = replace_solution(cell.source, ["raise NotImplementedError()"])
        return nb, after_last
    if kind == "timeout":
        nb.cells[last].source = "while True:  # never ends\n    pass\n" + nb.cells[last].source
        return nb, after_last
    if kind == "import_error":
        first = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
        nb.cells[first].source = "import ctxlab_missing_package  # simulated: a package is missing\n" + nb.cells[first].source
        return nb, None
    if kind == "edited_test":
        nb, failing = make_variant(source_nb, "partial")
        for c in nb.cells:
            if _nbmeta(c).get("grade_id") in failing and c.cell_type == "code":
                c.source = "pass"
        return nb, failing
    if kind == "deleted_cells":
        first_test = next(i for i in tests if i > last)
        del nb.cells[first_test]
        del nb.cells[last]
        return nb, after_last
    if kind == "big_output":
        nb.cells[answers[0]].source += '\nprint("0123456789" * 1_000_000)  # 10 MB on one line\n'
        return nb, []
    if kind == "kernel_dies":
        nb.cells[answers[0]].source = "import os\nos._exit(1)\n" + nb.cells[answers[0]].source
        return nb, None
    raise ValueError(f"unknown variant {kind!r}; one of {', '.join(VARIANTS)}")


# --------------------------------------------------------------------------- hidden-test failures (feedback)

def _calls(tree, fname):
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == fname]


def function_submissions(src_nb):
    """For an exercise whose visible test calls the learner's function with literal arguments
    only: a submission whose function answers right exactly for those calls (passes the
    visible test, fails the hidden one), and one whose function always answers wrong."""
    answers, tests = answer_cells(src_nb), test_cells(src_nb)
    for a in answers:
        try:
            defs = [n.name for n in ast.parse(src_nb.cells[a].source).body if isinstance(n, ast.FunctionDef)]
        except SyntaxError:
            continue
        for t in (t for t in tests if t > a):
            test_src = src_nb.cells[t].source
            if BEGIN_HIDDEN not in test_src:
                continue
            for fname in defs:
                try:
                    vis = _calls(ast.parse(visible_part(test_src)), fname)
                    hid = _calls(ast.parse(test_src), fname)
                    seen = [(tuple(ast.literal_eval(x) for x in c.args),
                             tuple(sorted((k.arg, ast.literal_eval(k.value)) for k in c.keywords))) for c in vis]
                except (SyntaxError, ValueError):
                    continue
                if not vis or len(hid) <= len(vis):
                    continue

                def wrapped(visible):
                    nb = copy.deepcopy(src_nb)
                    nb.cells[a].source += (
                        f"\n\n_real_{fname} = {fname}\n_visible_calls = {visible!r}\n\n"
                        f"def {fname}(*args, **kwargs):\n"
                        f"    if (args, tuple(sorted(kwargs.items()))) in _visible_calls:\n"
                        f"        return _real_{fname}(*args, **kwargs)\n"
                        f"    return ('wrong', 'wrong')\n")
                    return nb
                return wrapped(seen), wrapped([]), grade_id(src_nb.cells[t])
    return None


_QUIZ = re.compile(r'^[ \t]*"(\w+)"\s*:\s*"[a-z]",?[ \t]*\n', re.M)


def quiz_submissions(src_nb):
    """For a quiz dictionary: one wrong choice (the shape is right: only the hidden test of
    that question fails) and that question left out (its cell's visible shape check fails;
    each question's cell checks its own answer only)."""
    nb, failing = make_variant(src_nb, "partial")
    if len(failing) != 1:
        return None
    missing = copy.deepcopy(src_nb)
    cell = missing.cells[answer_cells(src_nb)[0]]
    clicks = re.search(r"for choice in \((\s*\"[a-z]\",)", cell.source)
    if clicks and failing[0] == "q1-tests":   # 09 clicks in bank order: step past q1 without answering it
        cell.source = (cell.source[: clicks.start()] + "quiz.next()   # q1: left unanswered\nfor choice in ("
                       + cell.source[clicks.end():].lstrip())
        return nb, missing, failing[0]
    entries = list(_QUIZ.finditer(cell.source))
    if not entries:
        return None
    last = next((e for e in entries if f"{e.group(1)}-tests" == failing[0]), entries[-1])
    cell.source = cell.source[: last.start()] + cell.source[last.end():]
    return nb, missing, failing[0]


# --------------------------------------------------------------------------- the round trip (a script)

def roundtrip(names: list[str], workdir: Path, source_root: Path = ROOT,
              workers: int | None = None) -> dict[tuple[str, str], Score]:
    """Autograde, for each assignment, the solution notebook and the untouched release.

    Returns scores keyed by (student, assignment) with students "solution" and "untouched".
    """
    root = make_course_root(Path(workdir), names, source_root)
    for name in names:
        place_submission(root, "solution", name, source_root / SOURCE_DIR / name / f"{name}.ipynb")
        release = source_root / RELEASE_DIR / name / f"{name}.ipynb"
        if not release.exists():  # a lesson not released yet: the release just generated
            release = root / RELEASE_DIR / name / f"{name}.ipynb"
        place_submission(root, "untouched", name, release)
    run = grade_parallel(root, workers=workers, feedback=False, progress=False)
    failed = [o for o in run.outcomes if not o.graded]
    if failed:
        raise RuntimeError("autograde failed: " + "; ".join(f"{o.assignment} {o.student}: {o.error}" for o in failed))
    return {(s.student, s.assignment): s for s in scores(root)}


def main(argv: list[str] | None = None) -> int:
    """tests/nbfixtures.py NAME ...: autograde solution and release of each assignment, print scores."""
    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("assignments", nargs="+")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ctxlab-grade-") as tmp:
        result = roundtrip(args.assignments, Path(tmp))
    ok = True
    for name in args.assignments:
        sol, unt = result[("solution", name)], result[("untouched", name)]
        good = sol.code_score == sol.max_code_score > 0 and unt.code_score == 0
        ok &= good
        print(f"{name}: solution {sol.code_score:g}/{sol.max_code_score:g}, untouched release "
              f"{unt.code_score:g}/{unt.max_code_score:g}, written {sol.max_written_score:g} pt -> {'OK' if good else 'WRONG'}")
    return 0 if ok else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
