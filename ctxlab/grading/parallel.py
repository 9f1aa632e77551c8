"""Parallel autograde: submissions sharded across worker course roots, merged into one gradebook.

nbgrader grades one notebook after another (jupyter/nbgrader#174). :func:`grade_parallel`
shards the submissions across N worker course roots, each a copy of ``nbgrader_config.py``,
the source and release folders and the master ``gradebook.db``; runs ``nbgrader autograde``
and ``nbgrader generate_feedback`` in every worker at the same time (subprocesses); then
merges the workers' results into the master gradebook one after another with the nbgrader
:class:`~nbgrader.api.Gradebook` API and copies the ``autograded/`` and ``feedback/``
folders. Only the merge writes to the master gradebook, so SQLite never sees two writers.

A worker gradebook is not trusted: before the merge, :func:`~ctxlab.grading._audit.audit`
compares it with the copy the worker started from, and the merge copies only what autograde
sets for that worker's submissions (automatic scores within ``[0, max]``, flags, automatic
comments, late penalty, timestamp). Anything else it finds is discarded and reported on the
outcome (``discarded``) or the run (``GradeRun.discarded``). One submission cannot take its
worker's others down: where nbgrader stops its whole run at one, that one is retried alone
and the rest graded in a new run (:func:`_run_worker`). Each outcome also says what the
sandbox refused or limited in the notebook (``limits``) and why feedback failed.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ctxlab._progress import progress as progress_bar
from ctxlab.grading._audit import audit, notebook_scores
from ctxlab.grading._nbgrader import CONFIG, RELEASE_DIR, SOURCE_DIR, gradebook_url, grading_env, nbgrader_command, rmtree
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


_DONE = "Setting destination file permissions"
_FAILED = "There was an error processing assignment:"
_LOG_RECORD = re.compile(r"^\[\w+App \| (\w+)\]")
_CONVERTING = re.compile(r"Converting notebook (.+\.ipynb)\s*$", re.MULTILINE)


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


def _make_worker_root(master: Path, wroot: Path, pairs: list[tuple[str, str]]) -> Path:
    wroot.mkdir(parents=True)
    shutil.copy(master / CONFIG, wroot / CONFIG)
    for folder in (SOURCE_DIR, RELEASE_DIR):
        if (master / folder).exists():
            shutil.copytree(master / folder, wroot / folder)
    copy_db(master / "gradebook.db", wroot / "gradebook.db")
    for student, assignment in pairs:
        shutil.copytree(master / "submitted" / student / assignment, wroot / "submitted" / student / assignment)
    return wroot


def _autograde(wroot: Path, config_args: list[str], log, tick) -> int:
    """One ``nbgrader autograde`` of everything in ``wroot/submitted``, logged; its exit code."""
    cmd = nbgrader_command(wroot, "autograde", "*", "--force", "--create", "--log-level=INFO", *config_args)
    log.flush()
    proc = subprocess.Popen(cmd, cwd=wroot, env=grading_env(), stdout=log,
                            stderr=subprocess.PIPE, text=True, encoding="utf-8", errors="replace")
    assert proc.stderr is not None
    for line in proc.stderr:
        log.write(line)
        if _DONE in line or _FAILED in line:
            tick()
    rc = proc.wait()
    log.write(f"\n[ctxlab] nbgrader autograde exited with {rc}\n")
    log.flush()
    return rc


def _move(wroot: Path, pairs, src: str, dst: str) -> None:
    for student, assignment in pairs:
        a, b = wroot / src / student / assignment, wroot / dst / student / assignment
        if a.exists():
            b.parent.mkdir(parents=True, exist_ok=True)
            a.rename(b)


def _run_worker(wroot: Path, pairs: list[tuple[str, str]], config_args: list[str], feedback: bool,
                tick) -> dict[tuple[str, str], str]:
    """nbgrader autograde (and generate_feedback) for everything submitted in a worker root.

    Some errors stop nbgrader's whole run (``SchemaTooOldError`` from broken nbgrader
    metadata: every later submission of the worker is left ungraded). Then the submission
    it stopped at is retried alone, and the ones after it are graded in a new run; returns
    the submissions that stop nbgrader even alone, with nbgrader's reason."""
    stopped: dict[tuple[str, str], str] = {}
    log_path = wroot / "autograde.log"
    with open(log_path, "w", encoding="utf-8") as log:
        rc = _autograde(wroot, config_args, log, tick)
        for _ in range(len(pairs)):
            text = log_path.read_text(encoding="utf-8", errors="replace")
            reasons = _failure_reasons(text)
            left = [p for p in pairs if p not in stopped and not _graded(wroot, p)
                    and _key(wroot, p) not in reasons]
            if rc == 0 or not left:
                break
            at = _stopped_at(text, wroot)
            if at is None:   # it stopped before any submission: nothing to single out
                break
            culprit = at if at in left else min(left, key=lambda p: _key(wroot, p))
            _move(wroot, pairs, "submitted", ".held")
            _move(wroot, [culprit], ".held", "submitted")
            log.write(f"\n[ctxlab] nbgrader stopped the whole run at {culprit[0]} {culprit[1]}: retried alone\n")
            log.flush()
            mark = log_path.stat().st_size
            _autograde(wroot, config_args, log, tick)
            alone = log_path.read_bytes()[mark:].decode("utf-8", errors="replace")
            if not _graded(wroot, culprit) and _key(wroot, culprit) not in _failure_reasons(alone):
                stopped[culprit] = ("この提出物で nbgrader の採点全体が止まりました（単独で再試行しても同じ）: "
                                    + _first_error(alone))
            _move(wroot, [culprit], "submitted", ".held")
            _move(wroot, [p for p in left if p != culprit], ".held", "submitted")
            log.write("\n[ctxlab] the submissions after it, in a new run\n")
            rc = _autograde(wroot, config_args, log, tick)
        _move(wroot, pairs, ".held", "submitted")
    if feedback:
        cmd = nbgrader_command(wroot, "generate_feedback", "*", "--force", "--log-level=WARN", *config_args)
        with open(wroot / "feedback.log", "w", encoding="utf-8") as log:
            rc = subprocess.run(cmd, cwd=wroot, env=grading_env(), stdout=log, stderr=subprocess.STDOUT).returncode
            log.write(f"\n[ctxlab] nbgrader generate_feedback exited with {rc}\n")
    return stopped


def _key(wroot: Path, pair: tuple[str, str]) -> str:
    """A submission's folder as nbgrader names it (and sorts it) in its log."""
    return os.path.normpath(str(wroot / "submitted" / pair[0] / pair[1]))


def _graded(wroot: Path, pair: tuple[str, str]) -> bool:
    ag = wroot / "autograded" / pair[0] / pair[1]
    return ag.exists() and any(ag.glob("*.ipynb"))


def _stopped_at(log_text: str, wroot: Path) -> tuple[str, str] | None:
    """The submission nbgrader was converting when its log ends (where a whole run stopped)."""
    found = _CONVERTING.findall(log_text)
    if not found:
        return None
    try:
        rel = Path(os.path.normpath(found[-1].strip())).parent.relative_to(wroot / "submitted")
    except ValueError:
        return None
    return (rel.parts[0], rel.parts[1]) if len(rel.parts) == 2 else None


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
            graded = bool(notebooks) and in_db and key not in reasons
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
    root = Path(root).resolve()
    pairs = sorted(set(pairs if pairs is not None else submitted_pairs(root)))
    t0 = time.perf_counter()
    if not pairs:
        return GradeRun([], 0, 0.0)
    n = max(1, min(workers or os.cpu_count() or 1, len(pairs)))
    shards = shard(pairs, n)
    base = root / ".workers" / f"run-{os.getpid()}-{time.strftime('%Y%m%d-%H%M%S')}"
    rmtree(base)
    base.mkdir(parents=True)
    pristine = base / "pristine.db"   # what every worker starts from, to audit what it changed
    copy_db(root / "gradebook.db", pristine)
    wroots = [_make_worker_root(root, base / f"w{i}", s) for i, s in enumerate(shards)]
    bar = progress_bar(total=len(pairs), desc=desc, unit="件", enabled=progress)
    lock = threading.Lock()
    counts = [0] * len(shards)
    stopped: list[dict[tuple[str, str], str]] = [{} for _ in shards]

    def run(i: int) -> None:
        def tick() -> None:
            with lock:
                if counts[i] < len(shards[i]):
                    counts[i] += 1
                    bar.update(1)

        try:
            stopped[i] = _run_worker(wroots[i], shards[i], list(config_args), feedback, tick)
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
    discarded: list[str] = []
    for i, (wroot, spairs) in enumerate(zip(wroots, shards)):
        got = _collect(wroot, spairs, i, stopped[i])
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
    return GradeRun(sorted(outcomes, key=lambda o: (o.student, o.assignment)), len(shards),
                    time.perf_counter() - t0, logs, feedback, discarded)
