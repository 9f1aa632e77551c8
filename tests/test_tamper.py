"""Forged submissions score no more than blank answers, and are held for review (issue 31).

One batch, graded as an instructor grades (``ctxlab grade`` on a folder export, two workers, the
sandbox on): for 00_start_here and 09_knowledge_check a blank learner (the release as given),
a guessing one (constant wrong answers, tests/tamper.py ``GUESSES``) and an honest one (the
solution), plus every forgery of tests/tamper.py (the guess with one forging cell after the
first answer cell). Each forgery must score no more than blank, be held
for review (its test grades need manual grading, the reason is in the summary and the CSV
notes), and the honest learners must be graded as before, with no finding.

``python tests/test_tamper.py [--no-guard]`` grades the same batch and prints every learner's
automatic score (``--no-guard``: as the grader did before the guard, for comparison).
"""
from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import nbfixtures  # noqa: E402
import tamper  # noqa: E402
from ctxlab.grading import tamper as guard  # noqa: E402
from ctxlab.grading import workflow  # noqa: E402
from ctxlab.grading._nbgrader import cell_scores, scores, sync_course_root  # noqa: E402
from ctxlab.grading.isolation import unavailable_reason  # noqa: E402
from ctxlab.grading.report import format_summary  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ASSIGNMENTS = sorted({a for a, _, _ in tamper.FORGERIES.values()})


def guess(root: Path, name: str):
    """The release of ``name`` with its answer cells replaced by tests/tamper.py's guesses."""
    nb = nbformat.read(root / "course" / name / f"{name}.ipynb", as_version=4)
    for i in nbfixtures.answer_cells(nb):
        code = tamper.GUESSES[name].get(nbfixtures.grade_id(nb.cells[i]))
        if code is not None:
            nb.cells[i].source = code
    return nb


def build(tmp: Path, guard_on: bool = True) -> dict:
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
    args = [] if guard_on else ["--GuardedExecute.guard=False"]
    report = workflow.grade(export, root, course=ROOT, workers=2, progress=False, config_args=args,
                            assignments=ASSIGNMENTS)
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
def test_every_forgery_scores_no_more_than_blank_and_is_held(batch):
    sc, outcomes = batch["scores"], batch["outcomes"]
    for learner, (name, what, _code) in tamper.FORGERIES.items():
        blank = sc[("blank", name)]
        o = outcomes[(learner, name)]
        assert o.graded, f"{learner} ({what}): {o.error}"
        s = sc[(learner, name)]
        assert s.code_score <= blank.code_score, f"{learner} ({what}): {s.code_score} > blank {blank.code_score}"
        assert o.review, f"{learner} ({what}) was not held for review"
        # its tests wait for the instructor, and the LMS files do not carry it yet
        grades = cell_scores(batch["root"], learner, name)
        assert s.needs_manual_grade and grades
        assert float(batch["rows"][learner]["pending_manual"]) > 0


@pytest.mark.slow
def test_honest_blank_and_guessing_learners_are_not_held(batch):
    sc, outcomes = batch["scores"], batch["outcomes"]
    for name in ASSIGNMENTS:
        honest, blank = sc[("honest", name)], sc[("blank", name)]
        assert honest.code_score == honest.max_code_score > blank.code_score
        for learner in ("honest", "blank", "guess"):
            assert not outcomes[(learner, name)].review, (learner, name, outcomes[(learner, name)].review)
            assert "自動採点を保留" not in batch["rows"][learner]["notes"]


@pytest.mark.slow
def test_the_reason_reaches_the_summary_the_csv_and_the_feedback(batch):
    text = format_summary(batch["report"])
    assert "自動採点を保留した" in text
    for learner, (name, _what, _code) in tamper.FORGERIES.items():
        assert f"- {learner} {name}:" in text.split("自動採点を保留した", 1)[1]
        assert "自動採点を保留" in batch["rows"][learner]["notes"]
        feedback = (batch["root"] / "feedback" / learner / name / f"{name}.html").read_text(encoding="utf-8")
        assert guard.REVIEW_ENAME in feedback and "講師が確認して採点します" in feedback
    # what each layer named, for the two forgeries of the issue that need different layers
    cleanup = " ".join(batch["outcomes"][("tmp_cleanup", "00_start_here")].review)
    assert "input_transformers_cleanup" in cleanup
    peek = " ".join(batch["outcomes"][("tmp_framepeek", "09_knowledge_check")].review)
    assert "_getframe" in peek


# --------------------------------------------------------------------------- no nbgrader run

RUNTIME_ONLY = {"tmp_shadow"}   # plain function definitions: only the runtime guard sees what they shadow


def test_the_source_scan_finds_nothing_in_honest_answers():
    """Every solution cell of every lesson, and every partly correct answer, reads as honest."""
    import nbfixtures
    from ctxlab.grading import _scan

    for path in sorted((ROOT / "solutions").glob("*/*.ipynb")):
        src = nbformat.read(path, as_version=4)
        sources = [c.source for c in src.cells if c.cell_type == "code"]
        for nb in (src, nbfixtures.make_variant(src, "partial")[0]):
            cells = [(i, nb.cells[i].source) for i in nbfixtures.answer_cells(nb) if nb.cells[i].cell_type == "code"]
            assert _scan.findings(cells, set(), sources) == [], path.name


def test_the_source_scan_names_what_each_forgery_uses():
    from ctxlab.grading import _scan

    for learner, (_name, what, code) in tamper.FORGERIES.items():
        found = _scan.findings([(2, code)], set(), ["from ctxlab.costs import compare", code])
        assert bool(found) == (learner not in RUNTIME_ONLY), (learner, what, found)
    # an instructor's cell is not the learner's; a learner's edit of it is
    demo = "from IPython.display import display\nimport inspect\nprint(inspect.getsource(len))"
    assert _scan.findings([(1, demo)], {demo}, [demo]) == []
    assert _scan.findings([(1, demo + "\n")], {demo}, [demo]) == ["コードセル 1: import inspect（2 行目）"]


def main(argv: list[str]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory(prefix="ctxlab-tamper-") as tmp:
        got = build(Path(tmp), guard_on="--no-guard" not in argv)
        sc, outcomes = got["scores"], got["outcomes"]
        rows = [(k, a, w) for k, w in (("blank", "空欄のまま"), ("guess", "決め打ちの答え（偽装の土台）"), ("honest", "模範解答"))
                for a in ASSIGNMENTS]
        rows += [(k, a, w) for k, (a, w, _) in tamper.FORGERIES.items()]
        for learner, name, what in rows:
            s, o = sc.get((learner, name)), outcomes.get((learner, name))
            score = f"{s.code_score:g}/{s.max_code_score:g}" if s else "未採点"
            held = "保留" if o and o.review else ("採点不能" if o and not o.graded else "-")
            print(f"{learner:15} {name:19} {score:>6} {held:4} {what}")


if __name__ == "__main__":
    main(sys.argv[1:])
