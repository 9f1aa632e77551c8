"""Running nbgrader: the offline environment, course roots, autograde, scores and validation.

Every nbgrader process of the course starts here, always offline: the sandbox is forced
by ``CTXLAB_OFFLINE`` and the API key is removed from the environment of every nbgrader
process. :func:`build_course_root` is the one builder of a course root, used by the
release (a scratch root without gradebook), by ``ctxlab grade`` (a persistent root,
:func:`sync_course_root`) and by the tests and the benchmark (:func:`make_course_root`).
Generating every assignment of a root takes one nbgrader process (an nbgrader process
costs seconds of imports before it does anything).
"""
from __future__ import annotations

import filecmp
import json
import os
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ctxlab._paths import REPO_ROOT

SOURCE_DIR = "solutions"   # CourseDirectory.source_directory in nbgrader_config.py
RELEASE_DIR = "course"     # CourseDirectory.release_directory
CONFIG = "nbgrader_config.py"
DEFAULT_TIMESTAMP = "2026-11-30 09:00:00.000000 UTC"
#: not part of an assignment: editor and interpreter caches, and what a run of a lesson writes beside it
#: (lesson 11's decision memo, also in .gitignore). Copied into a release, a run of lesson 11 in solutions/
#: made course/ look stale whenever a test had executed it before the staleness check.
_NOT_SOURCES = (".ipynb_checkpoints", "__pycache__", "memo_11")


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
    """The environment of an nbgrader process: offline, no API key, no simulated latency."""
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env.update(CTXLAB_OFFLINE="1", CTXLAB_TIME_SCALE="0", MPLBACKEND="Agg", PYTHONIOENCODING="utf-8")
    # nbgrader runs `alembic` and `jupyter` from PATH: put this interpreter's bin folder first.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def nbgrader_command(root: Path, *args: str) -> list[str]:
    """The command line of ``nbgrader ARGS`` in the course root ``root``."""
    return [sys.executable, "-m", "nbgrader", *args, f"--CourseDirectory.root={root}"]


def nbgrader(root: Path, *args: str, check: bool = True, timeout: float | None = None) -> subprocess.CompletedProcess:
    """Run an nbgrader command in a course root (offline environment)."""
    proc = subprocess.run(nbgrader_command(root, *args), cwd=root, capture_output=True, text=True,
                          env=grading_env(), timeout=timeout)
    if check and proc.returncode != 0:
        raise RuntimeError(f"nbgrader {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


def rmtree(path: Path) -> None:
    """Remove a folder, read-only files included (nbgrader makes autograded files read-only)."""
    def onerror(func, p, _exc):
        os.chmod(p, stat.S_IWUSR | stat.S_IRUSR | stat.S_IXUSR)
        func(p)

    if Path(path).exists():
        shutil.rmtree(path, onerror=onerror)


#: left out when two folders are compared: what JupyterLab or Python leave beside notebooks
NOT_CONTENT = [*filecmp.DEFAULT_IGNORES, *_NOT_SOURCES]


def same_tree(a: Path, b: Path, ignore: list[str] | None = None) -> bool:
    """Whether two folders hold the same files with the same bytes (``ignore``: names left
    out of the comparison; by default :data:`NOT_CONTENT`, so a JupyterLab session that left
    ``.ipynb_checkpoints/`` in course/ does not make a release look stale)."""
    if not b.exists():
        return False
    ignore = NOT_CONTENT if ignore is None else ignore
    cmp = filecmp.dircmp(a, b, ignore=ignore)
    if cmp.left_only or cmp.right_only or cmp.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(a, b, cmp.common_files, shallow=False)
    return not (mismatch or errors) and all(same_tree(a / d, b / d, ignore) for d in cmp.common_dirs)


# --------------------------------------------------------------------------- course roots

def _copy_solutions(source_root: Path, dest: Path, names: list[str]) -> None:
    for name in names:
        target = dest / SOURCE_DIR / name
        rmtree(target)
        shutil.copytree(source_root / SOURCE_DIR / name, target, ignore=shutil.ignore_patterns(*_NOT_SOURCES))


def generate_assignments(root: Path, names: list[str], db: bool = True) -> None:
    """``nbgrader generate_assignment`` for ``names`` in ``root``: one nbgrader process
    (``'*'``) when the names are every assignment of the root, else one per name."""
    root = Path(root)
    flags = ["--force", "--log-level=WARN"] + ([] if db else ["--no-db"])
    present = sorted(p.name for p in (root / SOURCE_DIR).iterdir() if p.is_dir())
    for name in ["*"] if sorted(names) == present else names:
        nbgrader(root, "generate_assignment", name, *flags)


def build_course_root(dest: Path, names: list[str], source_root: Path = REPO_ROOT, db: bool = True) -> Path:
    """Put nbgrader_config.py and the source notebooks of ``names`` into the course root
    ``dest`` and generate those assignments (releases in ``dest/course``; in the gradebook
    too unless ``db`` is False)."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy(Path(source_root) / CONFIG, dest / CONFIG)
    _copy_solutions(Path(source_root), dest, names)
    generate_assignments(dest, names, db=db)
    return dest


def make_course_root(dest: Path, assignments: list[str], source_root: Path = REPO_ROOT) -> Path:
    """A throwaway course root with the assignments generated and in the gradebook."""
    return build_course_root(dest, assignments, source_root)


def sync_course_root(root: Path, assignments: list[str], source_root: Path = REPO_ROOT) -> list[str]:
    """Create or update a persistent course root (``ctxlab grade``): copy nbgrader_config.py
    and the solutions that changed, regenerate those assignments. Returns what was (re)generated."""
    root, source_root = Path(root), Path(source_root)
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy(source_root / CONFIG, root / CONFIG)
    fresh = not (root / "gradebook.db").exists()
    stale = [n for n in assignments
             if fresh or not same_tree(source_root / SOURCE_DIR / n, root / SOURCE_DIR / n, list(_NOT_SOURCES))
             or not (root / RELEASE_DIR / n).exists()]
    if stale:
        build_course_root(root, stale, source_root)
    return stale


# --------------------------------------------------------------------------- submissions and scores

def place_submission(root: Path, student: str, assignment: str, notebook: Path,
                     timestamp: str | None = None) -> Path:
    """Put a notebook where nbgrader expects a submission (submitted/STUDENT/ASSIGNMENT/NAME.ipynb)."""
    target = Path(root) / "submitted" / student / assignment
    target.mkdir(parents=True, exist_ok=True)
    dest = target / f"{assignment}.ipynb"
    shutil.copy(notebook, dest)
    (target / "timestamp.txt").write_text((timestamp or DEFAULT_TIMESTAMP) + "\n", encoding="utf-8")
    return dest


def autograde(root: Path, assignment: str, student: str | None = None) -> subprocess.CompletedProcess:
    """``nbgrader autograde`` of one assignment (one student's submission when given), in one process."""
    args = ["autograde", assignment, "--force", "--create", "--log-level=INFO"]
    if student:
        args.append(f"--student={student}")
    return nbgrader(root, *args, check=False)


def gradebook_url(root: Path) -> str:
    """The SQLAlchemy URL of a course root's gradebook."""
    return f"sqlite:///{Path(root) / 'gradebook.db'}"


def scores(root: Path, assignment: str | None = None) -> list[Score]:
    """Scores of every graded submission in the course root's gradebook."""
    from nbgrader.api import Gradebook

    out = []
    with Gradebook(gradebook_url(root)) as gb:
        for a in gb.assignments:
            if assignment and a.name != assignment:
                continue
            for sub in a.submissions:
                out.append(Score(sub.student.id, a.name, float(sub.code_score), float(sub.max_code_score),
                                 float(sub.written_score), float(sub.max_written_score),
                                 bool(sub.needs_manual_grade)))
    return out


def cell_scores(root: Path, student: str, assignment: str) -> dict[str, tuple[float, float]]:
    """grade_id -> (score, max) of every grade cell of one submission (autograded code cells
    and written answers)."""
    from nbgrader.api import Gradebook

    out = {}
    with Gradebook(gradebook_url(root)) as gb:
        sub = gb.find_submission(assignment, student)
        for nb in sub.notebooks:
            for g in nb.grades:
                out[g.name] = (float(g.score), float(g.max_score))
    return out


_VALIDATE = """
import json, sys
from traitlets.config import Config
from nbgrader.preprocessors import CheckCellMetadata, ClearOutput
from nbgrader.validator import Validator
from ctxlab.grading.isolation import IsolatedExecute
c = Config()
if sys.argv[2]:
    c.ExecutePreprocessor.timeout = int(sys.argv[2])
c.IsolatedKernelManager.isolate = sys.argv[3] == "1"
validator = Validator(config=c)
validator.preprocessors = [CheckCellMetadata, ClearOutput, IsolatedExecute]  # the kernel in the sandbox
results = validator.validate(sys.argv[1])
for cells in results.values():
    for cell in cells:
        cell.pop("error", None)  # the HTML copy of raw_error
print(json.dumps(results, ensure_ascii=False))
"""


def validate(notebook: Path, timeout: int | None = None, isolate: bool = True) -> dict:
    """nbgrader's validation of one notebook, as data: ``{"failed": [{"source", "raw_error"}],
    "changed": [...], "type_changed": [...]}`` (empty when every test passes).

    ``nbgrader validate`` exits 0 even when tests fail, and 0.9.6 has no ``--json`` on the
    command line: this runs nbgrader's Validator (what the JupyterLab "Validate" button
    uses) in an offline subprocess, its kernel in the grading sandbox unless ``isolate`` is
    False (:mod:`~ctxlab.grading.isolation`), and returns its result.
    """
    notebook = Path(notebook).resolve()
    proc = subprocess.run([sys.executable, "-c", _VALIDATE, str(notebook), str(timeout or ""), "1" if isolate else "0"],
                          cwd=notebook.parent, capture_output=True, text=True, env=grading_env())
    if proc.returncode != 0:
        raise RuntimeError(f"nbgrader could not validate {notebook.name}: {proc.stderr.strip().splitlines()[-1:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])
