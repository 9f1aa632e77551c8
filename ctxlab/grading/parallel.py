"""Parallel autograde: submissions handed out to worker course roots, merged into one gradebook.

nbgrader grades one notebook after another (jupyter/nbgrader#174). :func:`grade_parallel`
makes N worker course roots, each a copy of ``nbgrader_config.py``, the source and release
folders and the master ``gradebook.db``, and hands the submissions out from one queue: a
worker that is done takes the next one, copies it in and runs ``nbgrader autograde`` and
``nbgrader generate_feedback`` for it alone (subprocesses), so a slow submission holds one
worker, never the submissions queued behind it (:mod:`~ctxlab.grading._worker`: one nbgrader
process per worker, restarted only after a failure). A submission over the caps of
:mod:`~ctxlab.grading._caps` (cells, notebook size) is not graded; one that runs past
:attr:`~ctxlab.grading._caps.Caps.seconds` is stopped there (both say why). Then it
merges the workers' results into the master gradebook one after another with the nbgrader
:class:`~nbgrader.api.Gradebook` API and copies the ``autograded/`` and ``feedback/``
folders. Only the merge writes to the master gradebook, so SQLite never sees two writers.

A worker gradebook is not trusted: before the merge, :func:`~ctxlab.grading._audit.audit`
compares it with the copy the worker started from, and the merge copies only what autograde
sets for that worker's submissions (automatic scores within ``[0, max]``, flags, automatic
comments, late penalty, timestamp). Anything else it finds is discarded and reported on the
outcome (``discarded``) or the run (``GradeRun.discarded``). One submission cannot take its
worker's others down: each is graded by nbgrader runs of its own (:func:`_run_worker`). Each
outcome also says what the sandbox refused or limited in the notebook (``limits``), why
feedback failed, and when its grading ended (``finished``).
"""
from __future__ import annotations

import collections
import json
import os
import re
import shutil
import sqlite3
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ctxlab._progress import progress as progress_bar
from ctxlab.grading._audit import audit, notebook_scores
from ctxlab.grading._caps import Caps, over_caps, over_time
from ctxlab.grading._nbgrader import CONFIG, RELEASE_DIR, SOURCE_DIR, gradebook_url, rmtree
from ctxlab.grading._worker import Worker
from ctxlab.grading.isolation import WALL_MARK, denials
from ctxlab.grading.tamper import review_of


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
    limits: list[str] = field(default_factory=list)     # what the sandbox refused or limited
    feedback_error: str = ""                            # why feedback could not be made
    discarded: list[str] = field(default_factory=list)  # gradebook changes autograde does not make
    review: list[str] = field(default_factory=list)     # why it is held for review (tamper.py), not autograded
    finished: float = 0.0    # seconds from the start of the run to the end of its grading


@dataclass
class GradeRun:
    """A grading run: one outcome per submission, in learner then assignment order."""
    outcomes: list[Outcome]
    workers: int
    seconds: float
    logs: list[Path] = field(default_factory=list)
    feedback: bool = False   # feedback was asked for
    #: changes a worker gradebook made outside its own submissions (discarded), per worker
    discarded: list[str] = field(default_factory=list)


_FAILED = "There was an error processing assignment:"
_LOG_RECORD = re.compile(r"^\[\w+App \| (\w+)\]")


def submitted_pairs(root: Path) -> list[tuple[str, str]]:
    """(student, assignment) of every submission in ``root/submitted``."""
    sub = Path(root) / "submitted"
    if not sub.exists():
        return []
    return sorted((s.name, a.name) for s in sub.iterdir() if s.is_dir() for a in s.iterdir() if a.is_dir())


def copy_db(src: Path, dst: Path) -> None:
    """Copy a SQLite database consistently (the backup API, not a file copy)."""
    s, d = sqlite3.connect(src), sqlite3.connect(dst)
    try:
        s.backup(d)
    finally:
        s.close()
        d.close()


def _make_worker_root(master: Path, wroot: Path) -> Path:
    wroot.mkdir(parents=True)
    shutil.copy(master / CONFIG, wroot / CONFIG)
    for folder in (SOURCE_DIR, RELEASE_DIR):
        if (master / folder).exists():
            shutil.copytree(master / folder, wroot / folder)
    copy_db(master / "gradebook.db", wroot / "gradebook.db")
    return wroot


def _move(wroot: Path, pairs, src: str, dst: str) -> None:
    for student, assignment in pairs:
        a, b = wroot / src / student / assignment, wroot / dst / student / assignment
        if a.exists():
            b.parent.mkdir(parents=True, exist_ok=True)
            a.rename(b)


def _grade_one(worker: Worker, wroot: Path, pair: tuple[str, str], feedback: bool, caps: Caps) -> str:
    """Autograde (and make feedback for) the one submission in a worker root's ``submitted/``;
    why it was stopped, or empty. It stops at ``caps.seconds`` (:func:`~ctxlab.grading._caps.over_time`).
    Some errors stop nbgrader's whole run (``SchemaTooOldError`` from broken nbgrader metadata):
    one submission per run, they stop that submission only; the worker process starts afresh after."""
    log_path = wroot / "autograde.log"
    mark = log_path.stat().st_size if log_path.exists() else 0
    reply = worker.grade(feedback, time.monotonic() + caps.seconds if caps.seconds > 0 else None)
    if reply is None:
        with open(log_path, "a", encoding="utf-8") as log:
            log.write(f"\n[ctxlab] {pair[0]} {pair[1]} stopped at the cap of {caps.seconds} s per submission\n")
        return over_time(caps.seconds)
    if reply["autograde"] != 0:
        worker.stop()
        this = log_path.read_bytes()[mark:].decode("utf-8", errors="replace")
        if not _graded(wroot, pair) and _key(wroot, pair) not in _failure_reasons(this):
            return "この提出物で nbgrader の採点全体が止まりました: " + _first_error(this)
    return ""


def _key(wroot: Path, pair: tuple[str, str]) -> str:
    """A submission's folder as nbgrader names it (and sorts it) in its log."""
    return os.path.normpath(str(wroot / "submitted" / pair[0] / pair[1]))


def _graded(wroot: Path, pair: tuple[str, str]) -> bool:
    ag = wroot / "autograded" / pair[0] / pair[1]
    return ag.exists() and any(ag.glob("*.ipynb"))


def _first_error(log_text: str) -> str:
    """The first error nbgrader logged, its lines joined (why a run stopped)."""
    lines = log_text.splitlines()
    for i, line in enumerate(lines):
        m = _LOG_RECORD.match(line)
        if m and m.group(1) in ("ERROR", "CRITICAL"):
            body = [line[m.end():].strip()]
            body += [x.strip() for x in lines[i + 1:i + 4] if x.strip() and not _LOG_RECORD.match(x)]
            return " ".join(body)[:300]
    return "nbgrader autograde failed (see the log)"


def _failure_reasons(log_text: str) -> dict[str, str]:
    """submission folder -> the last line of the traceback nbgrader logged for it."""
    out: dict[str, str] = {}
    lines = log_text.splitlines()
    walled = False
    for i, line in enumerate(lines):
        walled = walled or WALL_MARK in line
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
        if walled:
            reason, walled = f"カーネル全体の制限時間を超えたため止めました（{reason}）", False
        out[os.path.normpath(path)] = reason or "nbgrader autograde failed (see the log)"
    return out


def _count_timeouts(notebook: Path) -> int:
    try:
        nb = json.loads(notebook.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 0
    return sum(1 for c in nb.get("cells", []) for o in c.get("outputs", []) or []
               if o.get("output_type") == "error" and o.get("ename") == "CellTimeoutError")


def _collect(wroot: Path, pairs: list[tuple[str, str]], worker: int,
             stopped: dict[tuple[str, str], str] | None = None) -> list[Outcome]:
    from nbgrader.api import Gradebook, MissingEntry

    log_text = (wroot / "autograde.log").read_text(encoding="utf-8", errors="replace")
    reasons = _failure_reasons(log_text)
    fb_log = wroot / "feedback.log"
    fb_reasons = _failure_reasons(fb_log.read_text(encoding="utf-8", errors="replace")) if fb_log.exists() else {}
    out = []
    with Gradebook(gradebook_url(wroot)) as gb:
        for student, assignment in pairs:
            ag = wroot / "autograded" / student / assignment
            notebooks = sorted(ag.glob("*.ipynb")) if ag.exists() else []
            try:
                gb.find_submission(assignment, student)
                in_db = True
            except MissingEntry:
                in_db = False
            key = os.path.normpath(str(wroot / "submitted" / student / assignment))
            graded = bool(notebooks) and in_db and key not in reasons and (student, assignment) not in (stopped or {})
            error = "" if graded else (stopped or {}).get((student, assignment)) or reasons.get(
                key, "nbgrader autograde produced no graded notebook (see the log)")
            fb = wroot / "feedback" / student / assignment
            made = graded and fb.exists() and any(fb.glob("*.html"))
            fb_error = fb_reasons.get(os.path.normpath(str(ag)), "") if graded and not made else ""
            out.append(Outcome(student, assignment, graded, error,
                               sum(_count_timeouts(n) for n in notebooks), made, worker,
                               [x for n in notebooks for x in denials(n)], fb_error,
                               review=[x for n in notebooks for x in review_of(n)]))
    return out


def merge_gradebook(master_db: Path, worker_db: Path, pairs: list[tuple[str, str]],
                    autograded: Path | None = None) -> dict[tuple[str, str], list[str]]:
    """Copy what autograde wrote for the submissions ``pairs`` from a worker gradebook into
    the master one; returns, per submission, the scores that disagreed with the notebook.

    Only the fields autograde sets are copied (``Grade.auto_score``, recomputed from the
    autograded notebook in ``autograded/STUDENT/ASSIGNMENT`` when given, clamped to
    ``[0, max_score]`` of the master's cell, and ``needs_manual_grade``;
    ``Comment.auto_comment``; the notebook's late penalty; the submission's timestamp). Manual
    scores, extra credit, manual comments, flags and extensions stay as the master has them:
    a worker's values for those are never trusted (see :mod:`~ctxlab.grading._audit`).
    """
    from nbgrader.api import Gradebook, MissingEntry
    from sqlalchemy.exc import SAWarning

    mismatch: dict[tuple[str, str], list[str]] = {}
    with warnings.catch_warnings(), \
            Gradebook(f"sqlite:///{worker_db}") as src, Gradebook(f"sqlite:///{master_db}") as dst:
        # nbgrader's add_submission trips SQLAlchemy's autoflush warning (harmless, as in nbgrader itself)
        warnings.simplefilter("ignore", SAWarning)
        for student, assignment in pairs:
            ssub = src.find_submission(assignment, student)
            truth = notebook_scores(autograded / student / assignment) if autograded else {}
            dst.update_or_create_student(student)
            try:
                dsub = dst.find_submission(assignment, student)
            except MissingEntry:
                dsub = dst.add_submission(assignment, student)
            dsub.timestamp = ssub.timestamp
            for snb in ssub.notebooks:
                dnb = dst.find_submission_notebook(snb.name, assignment, student)
                dnb.late_submission_penalty = snb.late_submission_penalty
                grades = {g.name: g for g in dnb.grades}
                for g in snb.grades:
                    d = grades[g.name]
                    score = g.auto_score
                    if (snb.name, g.name) in truth and truth[(snb.name, g.name)] != score:
                        mismatch.setdefault((student, assignment), []).append(f"grade.auto_score（{g.name}: ノートブックと不一致）")
                        score = truth[(snb.name, g.name)]
                    d.auto_score = None if score is None else min(max(float(score), 0.0), float(d.max_score))
                    d.needs_manual_grade = g.needs_manual_grade
                comments = {c.name: c for c in dnb.comments}
                for c in snb.comments:
                    comments[c.name].auto_comment = c.auto_comment
            dst.db.commit()
    return mismatch


def forget_submission(root: Path, student: str, assignment: str) -> None:
    """Remove one submission's gradebook entry and autograded/feedback folders (a newer
    submission replaced it and could not be graded: stale scores must not stay)."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(gradebook_url(root)) as gb:
        try:
            gb.remove_submission(assignment, student)
        except MissingEntry:
            pass
    for folder in ("autograded", "feedback"):
        rmtree(Path(root) / folder / student / assignment)


def grade_parallel(root: Path, pairs: list[tuple[str, str]] | None = None, workers: int | None = None,
                   config_args: list[str] | tuple[str, ...] = (), feedback: bool = True,
                   progress: bool = True, desc: str = "採点", caps: Caps | None = None) -> GradeRun:
    """Autograde (and generate feedback for) submissions already placed in ``root/submitted``.

    ``pairs`` (student, assignment) defaults to everything submitted; ``workers`` to
    ``os.cpu_count()``. ``config_args`` are extra nbgrader command-line settings (for
    example ``--ExecutePreprocessor.timeout=10``); ``caps`` those of one submission
    (:class:`~ctxlab.grading._caps.Caps`). Every pair gets an :class:`Outcome`:
    a submission nbgrader cannot grade is reported with the reason, never dropped.
    """
    root = Path(root).resolve()
    caps = caps or Caps()
    pairs = sorted(set(pairs if pairs is not None else submitted_pairs(root)))
    t0 = time.perf_counter()
    if not pairs:
        return GradeRun([], 0, 0.0)
    refused = {p: why for p in pairs if (why := over_caps(root / "submitted" / p[0] / p[1], caps))}
    # one queue, by assignment then learner; an idle worker takes the next submission
    queue = collections.deque(sorted((p for p in pairs if p not in refused), key=lambda p: (p[1], p[0])))
    n = max(1, min(workers or os.cpu_count() or 1, len(queue)))
    base = root / ".workers" / f"run-{os.getpid()}-{time.strftime('%Y%m%d-%H%M%S')}"
    rmtree(base)
    base.mkdir(parents=True)
    pristine = base / "pristine.db"   # what every worker starts from, to audit what it changed
    copy_db(root / "gradebook.db", pristine)
    wroots = [_make_worker_root(root, base / f"w{i}") for i in range(n)]
    bar = progress_bar(total=len(pairs), desc=desc, unit="件", enabled=progress)
    bar.update(len(refused))
    lock = threading.Lock()
    taken: list[list[tuple[str, str]]] = [[] for _ in range(n)]
    stopped: list[dict[tuple[str, str], str]] = [{} for _ in range(n)]
    finished: dict[tuple[str, str], float] = {p: time.perf_counter() - t0 for p in refused}

    def run(i: int) -> None:
        wroot = wroots[i]
        worker = Worker(wroot, list(config_args))
        while True:
            with lock:
                if not queue:
                    break
                pair = queue.popleft()
                taken[i].append(pair)
            shutil.copytree(root / "submitted" / pair[0] / pair[1], wroot / "submitted" / pair[0] / pair[1])
            try:
                why = _grade_one(worker, wroot, pair, feedback, caps)
                if why:
                    stopped[i][pair] = why
            except BaseException:
                worker.stop()
                raise
            finally:
                _move(wroot, [pair], "submitted", ".done")   # the next autograde "*" sees the next one only
                for folder in ("autograded", "feedback"):
                    _move(wroot, [pair], folder, f".done-{folder}")
                with lock:
                    finished[pair] = time.perf_counter() - t0
                    bar.update(1)
        worker.close()
        _move(wroot, taken[i], ".done", "submitted")
        for folder in ("autograded", "feedback"):
            _move(wroot, taken[i], f".done-{folder}", folder)

    with ThreadPoolExecutor(max_workers=n) as ex:
        for f in [ex.submit(run, i) for i in range(n)]:
            f.result()
    bar.close()

    outcomes: list[Outcome] = []
    logs_dir = root / "logs"
    logs_dir.mkdir(exist_ok=True)
    logs = []
    stamp = time.strftime("%Y%m%d-%H%M%S")
    discarded: list[str] = []
    outcomes += [Outcome(s, a, False, why, finished=finished[(s, a)]) for (s, a), why in refused.items()]
    for i, (wroot, spairs) in enumerate(zip(wroots, taken)):
        got = _collect(wroot, spairs, i, stopped[i])
        for o in got:
            o.finished = finished[(o.student, o.assignment)]
        outcomes += got
        ok = [(o.student, o.assignment) for o in got if o.graded]
        own, other = audit(pristine, wroot / "gradebook.db", spairs)  # a failed one's rows are not merged
        if other:
            who = ", ".join(f"{s} {a}" for s, a in spairs)
            discarded.append(f"ワーカー {i}（{who}）: {', '.join(other)}")
        wrong = merge_gradebook(root / "gradebook.db", wroot / "gradebook.db", ok, wroot / "autograded")
        for o in got:
            o.discarded = own.get((o.student, o.assignment), []) + wrong.get((o.student, o.assignment), [])
        for o in got:
            if not o.graded:
                forget_submission(root, o.student, o.assignment)
                continue
            for folder in ("autograded", "feedback"):
                src = wroot / folder / o.student / o.assignment
                dst = root / folder / o.student / o.assignment
                rmtree(dst)
                if src.exists():
                    shutil.copytree(src, dst)
        for name in ("autograde.log", "feedback.log"):
            if (wroot / name).exists():
                target = logs_dir / f"{stamp}-w{i}-{name}"
                shutil.copy(wroot / name, target)
                logs.append(target)
    rmtree(base)
    try:
        (root / ".workers").rmdir()
    except OSError:
        pass
    for o in outcomes:
        if not o.graded and (o.student, o.assignment) in refused:
            forget_submission(root, o.student, o.assignment)
    return GradeRun(sorted(outcomes, key=lambda o: (o.student, o.assignment)), n,
                    time.perf_counter() - t0, logs, feedback, discarded)
