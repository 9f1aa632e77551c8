"""Grading with nbgrader: a course root, parallel autograde, scores from the gradebook.

Used by the tests (solution as a submission gets full autograded marks, the untouched
release gets 0, adversarial submissions are graded without stopping the batch), by the
benchmark and by ``ctxlab grade``. Grading always runs offline: the sandbox is forced by
``NBGRADER_EXECUTION`` and ``CTXLAB_OFFLINE``, and the API key is removed from the
environment of every nbgrader process.

Parallel grading (nbgrader grades one notebook after another, jupyter/nbgrader#174):
:func:`grade_parallel` shards the submissions across N worker course roots, each a copy
of ``nbgrader_config.py``, the source and release folders and the master ``gradebook.db``;
runs ``nbgrader autograde`` and ``nbgrader generate_feedback`` in every worker at the same
time (subprocesses); then merges the workers' results into the master gradebook one after
another with the nbgrader :class:`~nbgrader.api.Gradebook` API and copies the
``autograded/`` and ``feedback/`` folders. Only the merge writes to the master gradebook,
so SQLite never sees two writers.
"""
from __future__ import annotations

import copy
import json
import os
import re
import shutil
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE_DIR = "solutions"   # CourseDirectory.source_directory in nbgrader_config.py
RELEASE_DIR = "course"     # CourseDirectory.release_directory
DEFAULT_TIMESTAMP = "2026-11-30 09:00:00.000000 UTC"


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


# --------------------------------------------------------------------------- course root

def _copy_solutions(source_root: Path, dest: Path, names: list[str]) -> None:
    for name in names:
        target = dest / SOURCE_DIR / name
        if target.exists():
            _rmtree(target)
        shutil.copytree(source_root / SOURCE_DIR / name, target,
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))


def generate_assignments(root: Path, names: list[str]) -> None:
    """``nbgrader generate_assignment`` for ``names`` in ``root``, in one nbgrader process
    when the names are every assignment of the root (``'*'``): an nbgrader process costs
    seconds of imports before it does anything."""
    root = Path(root)
    present = sorted(p.name for p in (root / SOURCE_DIR).iterdir() if p.is_dir())
    if sorted(names) == present:
        nbgrader(root, "generate_assignment", "*", "--force", "--log-level=WARN")
    else:
        for name in names:
            nbgrader(root, "generate_assignment", name, "--force", "--log-level=WARN")


def make_course_root(dest: Path, assignments: list[str], source_root: Path = ROOT) -> Path:
    """A throwaway course root with nbgrader_config.py and the source notebooks, assignments in the gradebook."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy(source_root / "nbgrader_config.py", dest / "nbgrader_config.py")
    _copy_solutions(source_root, dest, assignments)
    generate_assignments(dest, assignments)
    return dest


def _same_tree(a: Path, b: Path) -> bool:
    import filecmp

    if not b.exists():
        return False
    cmp = filecmp.dircmp(a, b, ignore=[".ipynb_checkpoints", "__pycache__"])
    if cmp.left_only or cmp.right_only or cmp.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(a, b, cmp.common_files, shallow=False)
    return not (mismatch or errors) and all(_same_tree(a / d, b / d) for d in cmp.common_dirs)


def sync_course_root(root: Path, assignments: list[str], source_root: Path = ROOT) -> list[str]:
    """Create or update a persistent course root (``ctxlab grade``): copy nbgrader_config.py
    and the solutions that changed, regenerate those assignments. Returns what was (re)generated."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy(source_root / "nbgrader_config.py", root / "nbgrader_config.py")
    fresh = not (root / "gradebook.db").exists()
    stale = [n for n in assignments
             if fresh or not _same_tree(source_root / SOURCE_DIR / n, root / SOURCE_DIR / n)
             or not (root / RELEASE_DIR / n).exists()]
    if stale:
        _copy_solutions(source_root, root, stale)
        generate_assignments(root, stale)
    return stale


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


def cell_scores(root: Path, student: str, assignment: str) -> dict[str, tuple[float, float]]:
    """grade_id -> (score, max) of every grade cell of one submission (autograded code cells
    and written answers)."""
    from nbgrader.api import Gradebook

    out = {}
    with Gradebook(f"sqlite:///{Path(root) / 'gradebook.db'}") as gb:
        sub = gb.find_submission(assignment, student)
        for nb in sub.notebooks:
            for g in nb.grades:
                out[g.name] = (float(g.score), float(g.max_score))
    return out


_VALIDATE = """
import json, sys
from traitlets.config import Config
from nbgrader.validator import Validator
c = Config()
if sys.argv[2]:
    c.ExecutePreprocessor.timeout = int(sys.argv[2])
results = Validator(config=c).validate(sys.argv[1])
for cells in results.values():
    for cell in cells:
        cell.pop("error", None)  # the HTML copy of raw_error
print(json.dumps(results, ensure_ascii=False))
"""


def validate(notebook: Path, timeout: int | None = None) -> dict:
    """nbgrader's validation of one notebook, as data: ``{"failed": [{"source", "raw_error"}],
    "changed": [...], "type_changed": [...]}`` (empty when every test passes).

    ``nbgrader validate`` exits 0 even when tests fail, and 0.9.6 has no ``--json`` on the
    command line: this runs nbgrader's Validator (what the JupyterLab "Validate" button
    uses) in an offline subprocess and returns its result.
    """
    notebook = Path(notebook).resolve()
    proc = subprocess.run([sys.executable, "-c", _VALIDATE, str(notebook), str(timeout or "")],
                          cwd=notebook.parent, capture_output=True, text=True, env=grading_env())
    if proc.returncode != 0:
        raise RuntimeError(f"nbgrader could not validate {notebook.name}: {proc.stderr.strip().splitlines()[-1:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------- parallel autograde

@dataclass
class Outcome:
    """What happened to one submission in a grading run."""
    student: str
    assignment: str
    graded: bool
    error: str = ""          # why nbgrader could not grade it (empty when graded)
    timeouts: int = 0        # cells stopped at ExecutePreprocessor.timeout (graded as failing)
    feedback: bool = False   # feedback HTML written
    worker: int = 0


@dataclass
class GradeRun:
    outcomes: list[Outcome]
    workers: int
    seconds: float
    logs: list[Path] = field(default_factory=list)
    feedback: bool = False   # feedback was asked for


_DONE = "Setting destination file permissions"
_FAILED = "There was an error processing assignment:"
_LOG_RECORD = re.compile(r"^\[\w+App \| (\w+)\]")


def submitted_pairs(root: Path) -> list[tuple[str, str]]:
    """(student, assignment) of every submission in ``root/submitted``."""
    sub = Path(root) / "submitted"
    if not sub.exists():
        return []
    return sorted((s.name, a.name) for s in sub.iterdir() if s.is_dir() for a in s.iterdir() if a.is_dir())


def _rmtree(path: Path) -> None:
    def onerror(func, p, _exc):  # nbgrader makes autograded files read-only
        os.chmod(p, stat.S_IWUSR | stat.S_IRUSR | stat.S_IXUSR)
        func(p)

    if Path(path).exists():
        shutil.rmtree(path, onerror=onerror)


def _copy_db(src: Path, dst: Path) -> None:
    """Copy a SQLite database consistently (the backup API, not a file copy)."""
    s, d = sqlite3.connect(src), sqlite3.connect(dst)
    try:
        s.backup(d)
    finally:
        s.close()
        d.close()


def _make_worker_root(master: Path, wroot: Path, pairs: list[tuple[str, str]]) -> Path:
    wroot.mkdir(parents=True)
    shutil.copy(master / "nbgrader_config.py", wroot / "nbgrader_config.py")
    for folder in (SOURCE_DIR, RELEASE_DIR):
        if (master / folder).exists():
            shutil.copytree(master / folder, wroot / folder)
    _copy_db(master / "gradebook.db", wroot / "gradebook.db")
    for student, assignment in pairs:
        shutil.copytree(master / "submitted" / student / assignment, wroot / "submitted" / student / assignment)
    return wroot


def _run_worker(wroot: Path, config_args: list[str], feedback: bool, tick) -> None:
    """nbgrader autograde (and generate_feedback) for everything submitted in a worker root."""
    cmd = [sys.executable, "-m", "nbgrader", "autograde", "*", "--force", "--create", "--log-level=INFO",
           f"--CourseDirectory.root={wroot}", *config_args]
    with open(wroot / "autograde.log", "w", encoding="utf-8") as log:
        proc = subprocess.Popen(cmd, cwd=wroot, env=grading_env(), stdout=log,
                                stderr=subprocess.PIPE, text=True, encoding="utf-8", errors="replace")
        assert proc.stderr is not None
        for line in proc.stderr:
            log.write(line)
            if _DONE in line or _FAILED in line:
                tick()
        rc = proc.wait()
        log.write(f"\n[ctxlab] nbgrader autograde exited with {rc}\n")
    if feedback:
        cmd = [sys.executable, "-m", "nbgrader", "generate_feedback", "*", "--force", "--log-level=WARN",
               f"--CourseDirectory.root={wroot}", *config_args]
        with open(wroot / "feedback.log", "w", encoding="utf-8") as log:
            rc = subprocess.run(cmd, cwd=wroot, env=grading_env(), stdout=log, stderr=subprocess.STDOUT).returncode
            log.write(f"\n[ctxlab] nbgrader generate_feedback exited with {rc}\n")


def _failure_reasons(log_text: str) -> dict[str, str]:
    """submission folder -> the last line of the traceback nbgrader logged for it."""
    out: dict[str, str] = {}
    lines = log_text.splitlines()
    for i, line in enumerate(lines):
        if _FAILED not in line:
            continue
        path = line.split(_FAILED, 1)[1].strip()
        j = i + 1
        if j < len(lines) and _LOG_RECORD.match(lines[j]):
            j += 1  # the record that starts the traceback
        body = []
        while j < len(lines) and not _LOG_RECORD.match(lines[j]):
            body.append(lines[j])
            j += 1
        reason = next((b.strip() for b in reversed(body) if b.strip()), "")
        out[os.path.normpath(path)] = reason or "nbgrader autograde failed (see the log)"
    return out


def _count_timeouts(notebook: Path) -> int:
    try:
        nb = json.loads(notebook.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 0
    return sum(1 for c in nb.get("cells", []) for o in c.get("outputs", []) or []
               if o.get("output_type") == "error" and o.get("ename") == "CellTimeoutError")


def _collect(wroot: Path, pairs: list[tuple[str, str]], worker: int) -> list[Outcome]:
    from nbgrader.api import Gradebook, MissingEntry

    log_text = (wroot / "autograde.log").read_text(encoding="utf-8", errors="replace")
    reasons = _failure_reasons(log_text)
    out = []
    with Gradebook(f"sqlite:///{wroot / 'gradebook.db'}") as gb:
        for student, assignment in pairs:
            ag = wroot / "autograded" / student / assignment
            notebooks = sorted(ag.glob("*.ipynb")) if ag.exists() else []
            try:
                gb.find_submission(assignment, student)
                in_db = True
            except MissingEntry:
                in_db = False
            key = os.path.normpath(str(wroot / "submitted" / student / assignment))
            graded = bool(notebooks) and in_db and key not in reasons
            error = "" if graded else reasons.get(key, "nbgrader autograde produced no graded notebook (see the log)")
            fb = wroot / "feedback" / student / assignment
            out.append(Outcome(student, assignment, graded, error,
                               sum(_count_timeouts(n) for n in notebooks),
                               graded and fb.exists() and any(fb.glob("*.html")), worker))
    return out


def merge_gradebook(master_db: Path, worker_db: Path, pairs: list[tuple[str, str]]) -> None:
    """Copy the graded submissions ``pairs`` from a worker gradebook into the master one.

    Scores, flags and comments are copied cell by cell (``Grade.auto_score``,
    ``extra_credit``, ``needs_manual_grade``, ``Comment.auto_comment``), with the
    submission's timestamp and extension. Manual scores and comments are copied only where
    the master has none: a manual grade given in formgrader during the run is kept.
    """
    import warnings

    from nbgrader.api import Gradebook, MissingEntry
    from sqlalchemy.exc import SAWarning

    with warnings.catch_warnings(), \
            Gradebook(f"sqlite:///{worker_db}") as src, Gradebook(f"sqlite:///{master_db}") as dst:
        # nbgrader's add_submission trips SQLAlchemy's autoflush warning (harmless, as in nbgrader itself)
        warnings.simplefilter("ignore", SAWarning)
        for student, assignment in pairs:
            ssub = src.find_submission(assignment, student)
            st = ssub.student
            attrs = {k: getattr(st, k) for k in ("first_name", "last_name", "email", "lms_user_id")
                     if getattr(st, k, None) is not None}
            dst.update_or_create_student(student, **attrs)
            try:
                dsub = dst.find_submission(assignment, student)
            except MissingEntry:
                dsub = dst.add_submission(assignment, student)
            dsub.timestamp = ssub.timestamp
            dsub.extension = ssub.extension
            for snb in ssub.notebooks:
                dnb = dst.find_submission_notebook(snb.name, assignment, student)
                dnb.flagged = snb.flagged
                dnb.late_submission_penalty = snb.late_submission_penalty
                grades = {g.name: g for g in dnb.grades}
                for g in snb.grades:
                    d = grades[g.name]
                    d.auto_score, d.extra_credit, d.needs_manual_grade = g.auto_score, g.extra_credit, g.needs_manual_grade
                    if d.manual_score is None:
                        d.manual_score = g.manual_score
                comments = {c.name: c for c in dnb.comments}
                for c in snb.comments:
                    d = comments[c.name]
                    d.auto_comment = c.auto_comment
                    if d.manual_comment is None:
                        d.manual_comment = c.manual_comment
            dst.db.commit()


def forget_submission(root: Path, student: str, assignment: str) -> None:
    """Remove one submission's gradebook entry and autograded/feedback folders (a newer
    submission replaced it and could not be graded: stale scores must not stay)."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(f"sqlite:///{Path(root) / 'gradebook.db'}") as gb:
        try:
            gb.remove_submission(assignment, student)
        except MissingEntry:
            pass
    for folder in ("autograded", "feedback"):
        _rmtree(Path(root) / folder / student / assignment)


def shard(pairs: list[tuple[str, str]], n: int) -> list[list[tuple[str, str]]]:
    """Split submissions across n workers: sorted by assignment then learner and dealt out
    in turn, so each worker gets the same mix of (light and heavy) assignments."""
    ordered = sorted(pairs, key=lambda p: (p[1], p[0]))
    return [s for s in (ordered[i::n] for i in range(n)) if s]


def grade_parallel(root: Path, pairs: list[tuple[str, str]] | None = None, workers: int | None = None,
                   config_args: list[str] | tuple[str, ...] = (), feedback: bool = True,
                   progress: bool = True, desc: str = "採点") -> GradeRun:
    """Autograde (and generate feedback for) submissions already placed in ``root/submitted``.

    ``pairs`` (student, assignment) defaults to everything submitted; ``workers`` to
    ``os.cpu_count()``. ``config_args`` are extra nbgrader command-line settings (for
    example ``--ExecutePreprocessor.timeout=10``). Every pair gets an :class:`Outcome`:
    a submission nbgrader cannot grade is reported with the reason, never dropped.
    """
    from tqdm.auto import tqdm

    root = Path(root).resolve()
    pairs = sorted(set(pairs if pairs is not None else submitted_pairs(root)))
    t0 = time.perf_counter()
    if not pairs:
        return GradeRun([], 0, 0.0)
    n = max(1, min(workers or os.cpu_count() or 1, len(pairs)))
    shards = shard(pairs, n)
    base = root / ".workers" / f"run-{os.getpid()}-{time.strftime('%Y%m%d-%H%M%S')}"
    _rmtree(base)
    wroots = [_make_worker_root(root, base / f"w{i}", s) for i, s in enumerate(shards)]
    bar = tqdm(total=len(pairs), desc=desc, unit="件", disable=not progress, dynamic_ncols=True)
    lock = threading.Lock()
    counts = [0] * len(shards)

    def run(i: int) -> None:
        def tick() -> None:
            with lock:
                if counts[i] < len(shards[i]):
                    counts[i] += 1
                    bar.update(1)

        try:
            _run_worker(wroots[i], list(config_args), feedback, tick)
        finally:
            with lock:
                bar.update(len(shards[i]) - counts[i])
                counts[i] = len(shards[i])

    with ThreadPoolExecutor(max_workers=len(shards)) as ex:
        for f in [ex.submit(run, i) for i in range(len(shards))]:
            f.result()
    bar.close()

    outcomes: list[Outcome] = []
    logs_dir = root / "logs"
    logs_dir.mkdir(exist_ok=True)
    logs = []
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for i, (wroot, spairs) in enumerate(zip(wroots, shards)):
        got = _collect(wroot, spairs, i)
        outcomes += got
        ok = [(o.student, o.assignment) for o in got if o.graded]
        merge_gradebook(root / "gradebook.db", wroot / "gradebook.db", ok)
        for o in got:
            if not o.graded:
                forget_submission(root, o.student, o.assignment)
                continue
            for folder in ("autograded", "feedback"):
                src = wroot / folder / o.student / o.assignment
                dst = root / folder / o.student / o.assignment
                _rmtree(dst)
                if src.exists():
                    shutil.copytree(src, dst)
        for name in ("autograde.log", "feedback.log"):
            if (wroot / name).exists():
                target = logs_dir / f"{stamp}-w{i}-{name}"
                shutil.copy(wroot / name, target)
                logs.append(target)
    _rmtree(base)
    try:
        (root / ".workers").rmdir()
    except OSError:
        pass
    return GradeRun(sorted(outcomes, key=lambda o: (o.student, o.assignment)), len(shards),
                    time.perf_counter() - t0, logs, feedback)


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


# --------------------------------------------------------------------------- synthetic submissions
# Used by the end-to-end test and the benchmark: submissions built from the source notebook.

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


def points(nb, indexes) -> float:
    return float(sum(_nbmeta(nb.cells[i]).get("points", 0) or 0 for i in indexes))


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
