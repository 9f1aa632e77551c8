"""One class, graded once for the whole test session (the ``graded_class`` fixture of conftest.py).

One LMS export (a zip mixing the three layouts ``ctxlab grade`` reads) holds, for every
assignment in solutions/: the solution (full autograded marks), the untouched release (0)
and a partly correct submission (0 < score < max). For two or three representative
assignments it also holds the adversarial kinds: an infinite loop (times out, graded, the
batch goes on), a first cell that raises, a visible test edited to ``pass`` (nbgrader
restores it: still fails), deleted cells, a 10 MB output; plus a kernel that dies, a broken
file, a notebook of no known assignment and a duplicate. For the feedback tests, learner
"hidden" fails one hidden test only and learner "visible" fails a visible test. The hostile
learners of tests/attacks.py (one extra cell each in a full solution) are graded in the same
batch, with a fake key in ``.env`` files and the environment and a listener on 127.0.0.1
(tests/test_attacks.py reads the outcome), and so are the files of tests/attacks.py that once
stopped a worker or the whole run (broken nbgrader metadata, a duplicated grade id, deep
nesting, a huge file, a name over 255 bytes). The whole export is graded once, in parallel,
through :func:`ctxlab.grading.workflow.grade`: every nbgrader autograde of the grading tests
happens here.
"""
from __future__ import annotations

import csv
import hashlib
import os
import zipfile
from pathlib import Path

import nbformat

import attacks
import nbfixtures as nbf
from ctxlab.grading import lms, workflow
from ctxlab.grading._nbgrader import scores, sync_course_root
from ctxlab.grading.release import assignments

ROOT = Path(__file__).resolve().parent.parent
ASSIGNMENTS = assignments(ROOT)
REPRESENTATIVE = [a for a in ("00_start_here", "05_crossover", "09_knowledge_check") if a in ASSIGNMENTS]
FEEDBACK_NAMES = [a for a in ("00_start_here", "09_knowledge_check") if a in ASSIGNMENTS]
ADVERSARIAL = ("timeout", "import_error", "edited_test", "deleted_cells", "big_output")
TIMEOUT_S = 10
CANVAS_UID = {"timeout": 1001, "import_error": 1002, "edited_test": 1003, "deleted_cells": 1004,
              "big_output": 1005, "kernel_dies": 1006}
MOODLE_NAME = "部分 点子"


def source(name):
    return nbformat.read(ROOT / "solutions" / name / f"{name}.ipynb", as_version=4)


def digest(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def build(tmp: Path) -> dict:
    """Write the export, grade it into ``tmp/grading`` and return what the tests read."""
    root = tmp / "grading"
    # the course root first: its release (generate_assignment) is what learners were given
    sync_course_root(root, ASSIGNMENTS, ROOT)
    export = tmp / "export"
    expected: dict[tuple[str, str], tuple[str, list | None]] = {}

    def write(rel: str, nb, mtime: float = 1_764_000_000.0) -> None:
        path = export / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, path)
        os.utime(path, (mtime, mtime))

    moodle_id = lms.learner_id(MOODLE_NAME)
    for i, name in enumerate(ASSIGNMENTS):
        src = source(name)
        # a folder per learner, notebook directly inside
        write(f"solution/{name}.ipynb", src)
        expected[("solution", name)] = ("solution", [])
        # a folder per learner, NN_name/NN_name.ipynb inside, as `nbgrader collect` leaves it
        write(f"untouched/{name}/{name}.ipynb", nbformat.read(root / "course" / name / f"{name}.ipynb", 4))
        (export / "untouched" / name / "timestamp.txt").write_text("2026-11-30 10:15:00.000000 UTC", encoding="utf-8")
        (export / "untouched" / name / "submission_secret.txt").write_text(f"secret-{name}", encoding="utf-8")
        expected[("untouched", name)] = ("untouched", [nbf.grade_id(src.cells[c]) for c in nbf.test_cells(src)])
        # Moodle: one folder per learner and assignment, a participant id per assignment
        nb, failing = nbf.make_variant(src, "partial")
        write(f"{MOODLE_NAME}_{5000 + i}_assignsubmission_file_/{name}.ipynb", nb)
        expected[(moodle_id, name)] = ("partial", failing)
    for name in REPRESENTATIVE:
        for kind in ADVERSARIAL + (("kernel_dies",) if name == REPRESENTATIVE[0] else ()):
            nb, failing = nbf.make_variant(source(name), kind)
            uid = CANVAS_UID[kind]
            # Canvas: flat files, name_userid_submissionid_filename (names have no underscore)
            write(f"{kind.replace('_', '')}_{uid}_{90000 + uid}_{name}.ipynb", nb)
            expected[(str(uid), name)] = (kind, failing)
    # feedback: a hidden test fails (the visible ones pass), a visible test fails
    hidden_cells = {}
    for name in FEEDBACK_NAMES:
        src = source(name)
        made = nbf.quiz_submissions(src) or nbf.function_submissions(src)
        assert made, f"{name}: no exercise to build a hidden-test failure from (update this test)"
        hidden_nb, visible_nb, cell = made
        write(f"hidden/{name}.ipynb", hidden_nb)
        write(f"visible/{name}.ipynb", visible_nb)
        expected[("hidden", name)] = ("hidden_test", [cell])
        expected[("visible", name)] = ("visible_test", None)
        hidden_cells[name] = cell
    # hostile learners: a full solution with one attack cell after the first code cell
    secrets = attacks.Secrets(root)
    if attacks.ASSIGNMENT in ASSIGNMENTS:
        for learner, code in secrets.cells(ROOT).items():
            nb = source(attacks.ASSIGNMENT)
            at = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code") + 1
            nb.cells.insert(at, nbformat.v4.new_code_cell(code))
            write(f"{learner}/{attacks.ASSIGNMENT}.ipynb", nb)
            # an attack held for review (tamper.py) scores 0 on every test cell until an instructor looks
            held = [nbf.grade_id(nb.cells[c]) for c in nbf.test_cells(nb)] if learner in attacks.HELD else []
            expected[(learner, attacks.ASSIGNMENT)] = ("attack", held)
    # files that once stopped a worker or the whole run (issue 31): reported at intake, the rest graded
    breakers = attacks.intake_breakers(source(attacks.ASSIGNMENT)) if attacks.ASSIGNMENT in ASSIGNMENTS else {}
    first = ASSIGNMENTS[0]
    # duplicate: an older untouched copy and a newer solution (Canvas resubmission "-1")
    write(f"dup_7001_1_{first}.ipynb", nbformat.read(root / "course" / first / f"{first}.ipynb", 4), 1_763_000_000.0)
    write(f"dup_7001_2_{first}-1.ipynb", source(first), 1_764_000_000.0)
    expected[("7001", first)] = ("solution", [])
    # not JSON, a notebook of no known assignment, a file that is not a notebook, macOS junk
    (export / "broken").mkdir()
    (export / "broken" / f"{first}.ipynb").write_text('{"cells": [ this is not json', encoding="utf-8")
    (export / "stray").mkdir()
    nbformat.write(nbformat.v4.new_notebook(), export / "stray" / "homework.ipynb")
    (export / "solution" / "readme.txt").write_text("not a notebook", encoding="utf-8")
    (export / "__MACOSX").mkdir()
    (export / "__MACOSX" / f"._{first}.ipynb").write_bytes(b"\x00\x05\x16\x07")

    upload = tmp / "export.zip"
    with zipfile.ZipFile(upload, "w", zipfile.ZIP_DEFLATED) as zf:
        for p in sorted(export.rglob("*")):
            if p.is_file():
                zf.write(p, p.relative_to(export).as_posix())
        for entry, data, _, _ in breakers.values():  # in the zip only: a name over 255 bytes cannot be a file here
            zf.writestr(entry, data)
    before = digest(export), hashlib.sha256(upload.read_bytes()).hexdigest()

    with secrets:
        report = workflow.grade(upload, root, course=ROOT, workers=None, progress=False,
                                config_args=[f"--ExecutePreprocessor.timeout={TIMEOUT_S}"])
    after = digest(export), hashlib.sha256(upload.read_bytes()).hexdigest()
    with open(report.csv, encoding="utf-8-sig", newline="") as fh:
        rows = {r["learner_id"]: r for r in csv.DictReader(fh)}
    return {"root": root, "export": export, "report": report, "expected": expected, "before": before,
            "after": after, "rows": rows, "scores": {(s.student, s.assignment): s for s in scores(root)},
            "outcomes": {(o.student, o.assignment): o for o in report.run.outcomes}, "moodle_id": moodle_id,
            "hidden_cells": hidden_cells, "secrets": secrets,
            "breakers": {learner: (kind, says) for learner, (_, _, kind, says) in breakers.items()}}
