"""Forged submissions score no more than blank answers, honest ones full marks, and nobody is held (issues 31, 42).

One batch, graded as an instructor grades (``ctxlab grade`` on a folder export, two workers, the
sandbox on), with no in-process guard: the tests run in a grader kernel that never runs learner
code (ctxlab/grading/graded.py). For 00_start_here, 03_prompt_caching and 09_knowledge_check a blank
learner (the release as given), a guessing one (constant wrong answers, tests/tamper.py ``GUESSES``)
and an honest one (the solution); every forgery of tests/tamper.py (the guess with one forging cell
after the first answer cell); and every honest-but-unusual solution (``HONEST_UNUSUAL``: the
solution with one more cell after the answer cell it redefines). Each forgery scores no more than
the guess it is built on; the honest learners, usual or not, score full marks; nobody is held for review.

``python tests/test_tamper.py`` grades the same batch and prints every learner's automatic score.
"""
from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import nbfixtures  # noqa: E402
import tamper  # noqa: E402
from ctxlab.grading import workflow  # noqa: E402
from ctxlab.grading._nbgrader import scores, sync_course_root  # noqa: E402
from ctxlab.grading.graded import defined  # noqa: E402
from ctxlab.grading.isolation import unavailable_reason  # noqa: E402

# the first test pays for grading the whole batch (about 50 submissions): minutes on a quiet machine, more under load
pytestmark = pytest.mark.timeout(1800)
ROOT = Path(__file__).resolve().parent.parent
ASSIGNMENTS = sorted({a for a, _, _ in [*tamper.FORGERIES.values(), *tamper.HONEST_UNUSUAL.values()]}
                     | {a for a, *_ in tamper.TWIN_CALLS.values()})


def guess(root: Path, name: str):
    """The release of ``name`` with its answer cells replaced by tests/tamper.py's guesses."""
    nb = nbformat.read(root / "course" / name / f"{name}.ipynb", as_version=4)
    for i in nbfixtures.answer_cells(nb):
        code = tamper.GUESSES.get(name, {}).get(nbfixtures.grade_id(nb.cells[i]))
        if code is not None:
            nb.cells[i].source = code
    return nb


def unusual(name: str, code: str):
    """The solution of ``name`` with ``code`` after the answer cell that defines the same names (else the first)."""
    nb = nbformat.read(ROOT / "solutions" / name / f"{name}.ipynb", as_version=4)
    cells = nbfixtures.answer_cells(nb)
    mine = defined(code)
    at = next((i for i in cells if defined(nb.cells[i].source) & mine), cells[0]) + 1
    nb.cells.insert(at, nbformat.v4.new_code_cell(code))
    return nb


def build(tmp: Path) -> dict:
    root = tmp / "grading"
    sync_course_root(root, ASSIGNMENTS, ROOT)
    export = tmp / "export"
    for name in ASSIGNMENTS:
        release = nbformat.read(root / "course" / name / f"{name}.ipynb", as_version=4)
        for learner, nb in (("blank", release), ("guess", guess(root, name)),
                            ("honest", nbformat.read(ROOT / "solutions" / name / f"{name}.ipynb", 4))):
            (export / learner).mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, export / learner / f"{name}.ipynb")
    for learner, (name, _what, code) in tamper.FORGERIES.items():
        nb = guess(root, name)
        at = nbfixtures.answer_cells(nb)[0] + 1
        nb.cells.insert(at, nbformat.v4.new_code_cell(code))
        (export / learner).mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, export / learner / f"{name}.ipynb")
    for learner, (name, _what, code) in tamper.HONEST_UNUSUAL.items():
        (export / learner).mkdir(parents=True, exist_ok=True)
        nbformat.write(unusual(name, code), export / learner / f"{name}.ipynb")
    for learner, (name, _test, _what, code) in tamper.TWIN_CALLS.items():
        (export / learner).mkdir(parents=True, exist_ok=True)
        nbformat.write(unusual(name, code), export / learner / f"{name}.ipynb")
    name, recorder, reporter = tamper.SPY
    nb = nbformat.read(ROOT / "solutions" / name / f"{name}.ipynb", as_version=4)
    nb.cells.insert(nbfixtures.answer_cells(nb)[0], nbformat.v4.new_code_cell(recorder))
    nb.cells.append(nbformat.v4.new_code_cell(reporter))
    (export / "spy").mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, export / "spy" / f"{name}.ipynb")
    report = workflow.grade(export, root, course=ROOT, workers=2, progress=False, assignments=ASSIGNMENTS)
    import csv
    with open(report.csv, encoding="utf-8-sig", newline="") as fh:
        rows = {r["learner_id"]: r for r in csv.DictReader(fh)}
    return {"root": root, "report": report, "rows": rows,
            "scores": {(s.student, s.assignment): s for s in scores(root)},
            "outcomes": {(o.student, o.assignment): o for o in report.run.outcomes}}


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    if unavailable_reason() is not None:
        pytest.skip("bubblewrap is not usable here")
    return build(tmp_path_factory.mktemp("tamper"))


@pytest.mark.slow
def test_every_forgery_scores_no_more_than_its_answers_earn(batch):
    """A forgery is the guess plus one forging cell: it scores no more than the guess alone (what its
    constant answers earn: 0 on 00, 09's "a" everywhere is right by chance on some questions)."""
    sc, outcomes = batch["scores"], batch["outcomes"]
    for learner, (name, what, _code) in tamper.FORGERIES.items():
        base = sc[("guess", name)]
        assert base.code_score < sc[("honest", name)].code_score
        o = outcomes[(learner, name)]
        assert o.graded, f"{learner} ({what}): {o.error}"
        s = sc[(learner, name)]
        assert s.code_score <= base.code_score, f"{learner} ({what}): {s.code_score} > guess {base.code_score}"
        assert not o.review, (learner, o.review)   # nothing to review: the tests were out of its reach


@pytest.mark.slow
def test_honest_blank_and_guessing_learners_are_graded_as_before(batch):
    sc, outcomes = batch["scores"], batch["outcomes"]
    for name in ASSIGNMENTS:
        honest, blank = sc[("honest", name)], sc[("blank", name)]
        assert honest.code_score == honest.max_code_score > blank.code_score, name
        for learner in ("honest", "blank") + (("guess",) if name in tamper.GUESSES else ()):
            assert not outcomes[(learner, name)].review, (learner, name, outcomes[(learner, name)].review)
            assert "自動採点を保留" not in batch["rows"][learner]["notes"]


@pytest.mark.slow
def test_honest_but_unusual_solutions_score_full_marks_and_are_not_held(batch):
    sc, outcomes = batch["scores"], batch["outcomes"]
    for learner, (name, what, _code) in tamper.HONEST_UNUSUAL.items():
        s, o = sc[(learner, name)], outcomes[(learner, name)]
        assert o.graded and not o.review, (learner, what, o.error, o.review)
        assert s.code_score == s.max_code_score, f"{learner} ({what}): {s.code_score}/{s.max_code_score}"


@pytest.mark.slow
def test_an_answer_that_calls_the_librarys_version_earns_nothing_for_that_exercise(batch):
    """The solution with one exercise answered by the library's own function (called, or copied with runpy):
    the graded build answers only the lesson's inputs, so that exercise's hidden tests fail and the rest of
    the solution keeps its points; nobody is held."""
    sc, outcomes = batch["scores"], batch["outcomes"]
    for learner, (name, test_id, what, _code) in tamper.TWIN_CALLS.items():
        nb = nbformat.read(ROOT / "solutions" / name / f"{name}.ipynb", as_version=4)
        points = next(c.metadata["nbgrader"]["points"] for c in nb.cells if nbfixtures.grade_id(c) == test_id)
        s, o = sc[(learner, name)], outcomes[(learner, name)]
        assert o.graded and not o.review, (learner, what, o.error, o.review)
        assert s.code_score == sc[("honest", name)].code_score - points, f"{learner} ({what}): {s.code_score}"


@pytest.mark.slow
def test_no_test_code_reaches_the_learners_kernel(batch):
    """A learner that records every source its kernel compiles or runs saw none of the test cells,
    visible or hidden, and still scores full marks with its honest answers."""
    name = tamper.SPY[0]
    nb = nbformat.read(batch["root"] / "autograded" / "spy" / name / f"{name}.ipynb", 4)
    said = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    assert "SPY saw" in said and ", 0 of them test code" in said, said
    assert int(said.split("SPY saw ")[1].split()[0]) > 10   # it did see the learner's own cells
    s = batch["scores"][("spy", name)]
    assert s.code_score == s.max_code_score and not batch["outcomes"][("spy", name)].review


def main(argv: list[str]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory(prefix="ctxlab-tamper-") as tmp:
        got = build(Path(tmp))
        sc, outcomes = got["scores"], got["outcomes"]
        rows = [(k, a, w) for k, w in (("blank", "空欄のまま"), ("guess", "決め打ちの答え（偽装の土台）"), ("honest", "模範解答"))
                for a in ASSIGNMENTS]
        rows += [(k, a, w) for k, (a, w, _) in tamper.FORGERIES.items()]
        rows += [(k, a, "（正直）" + w) for k, (a, w, _) in tamper.HONEST_UNUSUAL.items()]
        rows += [(k, a, "（ライブラリ）" + w) for k, (a, _t, w, _) in tamper.TWIN_CALLS.items()]
        for learner, name, what in rows:
            s, o = sc.get((learner, name)), outcomes.get((learner, name))
            score = f"{s.code_score:g}/{s.max_code_score:g}" if s else "未採点"
            held = "保留" if o and o.review else ("採点不能" if o and not o.graded else "-")
            print(f"{learner:15} {name:19} {score:>6} {held:4} {what}")


if __name__ == "__main__":
    main(sys.argv[1:])
