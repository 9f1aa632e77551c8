"""Grading with nbgrader: a scratch course root, autograde, scores from the gradebook.

Used by the tests (solution as a submission gets full autograded marks, the untouched
release gets 0) and by the instructor commands. Grading always runs offline: the sandbox
is forced by ``NBGRADER_EXECUTION`` and ``CTXLAB_OFFLINE``.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Score:
    student: str
    assignment: str
    code_score: float
    max_code_score: float
    written_score: float
    max_written_score: float
    needs_manual_grade: bool

    @property
    def score(self) -> float:
        return self.code_score + self.written_score


def grading_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env.update(CTXLAB_OFFLINE="1", CTXLAB_TIME_SCALE="0", MPLBACKEND="Agg", PYTHONIOENCODING="utf-8")
    # nbgrader runs `alembic` and `jupyter` from PATH: put this interpreter's bin folder first.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def nbgrader(root: Path, *args: str, check: bool = True, timeout: float | None = None) -> subprocess.CompletedProcess:
    """Run an nbgrader command in a course root (offline environment)."""
    proc = subprocess.run([sys.executable, "-m", "nbgrader", *args, f"--CourseDirectory.root={root}"],
                          cwd=root, capture_output=True, text=True, env=grading_env(), timeout=timeout)
    if check and proc.returncode != 0:
        raise RuntimeError(f"nbgrader {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


def make_course_root(dest: Path, assignments: list[str], source_root: Path = ROOT) -> Path:
    """A throwaway course root with nbgrader_config.py and the source notebooks, assignments in the gradebook."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy(source_root / "nbgrader_config.py", dest / "nbgrader_config.py")
    for name in assignments:
        shutil.copytree(source_root / "solutions" / name, dest / "solutions" / name, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
        nbgrader(dest, "generate_assignment", name, "--force", "--log-level=WARN")
    return dest


def place_submission(root: Path, student: str, assignment: str, notebook: Path) -> Path:
    """Put a notebook where nbgrader expects a submission (submitted/STUDENT/ASSIGNMENT/NAME.ipynb)."""
    target = Path(root) / "submitted" / student / assignment
    target.mkdir(parents=True, exist_ok=True)
    dest = target / f"{assignment}.ipynb"
    shutil.copy(notebook, dest)
    (target / "timestamp.txt").write_text("2026-11-30 09:00:00.000000 UTC\n", encoding="utf-8")
    return dest


def autograde(root: Path, assignment: str, student: str | None = None) -> subprocess.CompletedProcess:
    args = ["autograde", assignment, "--force", "--create", "--log-level=INFO"]
    if student:
        args.append(f"--student={student}")
    return nbgrader(root, *args, check=False)


def scores(root: Path, assignment: str | None = None) -> list[Score]:
    """Scores of every graded submission in the course root's gradebook."""
    from nbgrader.api import Gradebook

    out = []
    with Gradebook(f"sqlite:///{Path(root) / 'gradebook.db'}") as gb:
        for a in gb.assignments:
            if assignment and a.name != assignment:
                continue
            for sub in a.submissions:
                out.append(Score(sub.student.id, a.name, float(sub.code_score), float(sub.max_code_score),
                                 float(sub.written_score), float(sub.max_written_score),
                                 bool(sub.needs_manual_grade)))
    return out


def roundtrip(names: list[str], workdir: Path, source_root: Path = ROOT) -> dict[tuple[str, str], Score]:
    """Autograde, for each assignment, the solution notebook and the untouched release.

    Returns scores keyed by (student, assignment) with students "solution" and "untouched".
    """
    root = make_course_root(Path(workdir), names, source_root)
    for name in names:
        place_submission(root, "solution", name, source_root / "solutions" / name / f"{name}.ipynb")
        place_submission(root, "untouched", name, source_root / "course" / name / f"{name}.ipynb")
        for student in ("solution", "untouched"):
            proc = autograde(root, name, student)
            if proc.returncode != 0:
                raise RuntimeError(f"autograde {name} {student} failed:\n{proc.stderr[-3000:]}")
    return {(s.student, s.assignment): s for s in scores(root)}


def main(argv: list[str] | None = None) -> int:
    """python -m ctxlab.grading NAME ...: autograde solution and release of each assignment, print scores."""
    import argparse
    import tempfile

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
