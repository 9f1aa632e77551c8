"""Grading speed: nbgrader autograde per submission (serial), and a class of L learners x all
assignments graded serially (one nbgrader process, one notebook after another) and in
parallel (ctxlab.grading.parallel.grade_parallel: shards in worker course roots, merged after).

    .venv/bin/python bench/bench_grading.py                 # L = 30 (takes a while)
    .venv/bin/python bench/bench_grading.py --learners 4    # a quick look
    .venv/bin/python bench/bench_grading.py --sandbox-only  # the sandbox's cost only
    .venv/bin/python bench/bench_grading.py --design-only   # the grader kernel's cost only

The grader kernel's cost (ctxlab/grading/graded.py: every test cell in a kernel that never runs
learner code): one submission (the solution) of every assignment autograded with the tests in the
grader kernel and with every cell in the learner's kernel, alternately, ``--design-runs`` times;
prints the medians and the ratio (goal: at most 1.15).

The sandbox's cost: one submission (the solution) of every assignment autograded with the
kernel in the bubblewrap sandbox and without it (``--IsolatedKernelManager.isolate=False``),
alternately, ``--sandbox-runs`` times; prints the median per submission of each and the
ratio (goal: the sandbox adds at most 10%).

Goal: 30 learners x 10 assignments (300 submissions) in under 10 minutes on a 2-core
machine. Prints wall and CPU time, the load average (other work on the machine slows
every figure) and the speedup; never fails on time. Submissions are a realistic mix:
the solution, a partly correct one (one answer broken) and the untouched release.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import report  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
from nbfixtures import make_variant  # noqa: E402

from ctxlab.grading import _nbgrader, parallel, release  # noqa: E402

GOAL_S, GOAL_N = 600.0, 300   # 300 submissions (30 x 10) in 10 minutes


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def make_class(root: Path, names: list[str], learners: int, tmp: Path) -> int:
    """Place learners x assignments submissions: solution, partial, untouched in turn."""
    n = 0
    for name in names:
        src = nbformat.read(ROOT / "solutions" / name / f"{name}.ipynb", as_version=4)
        partial, _ = make_variant(src, "partial")
        files = {"solution": tmp / f"{name}-solution.ipynb", "partial": tmp / f"{name}-partial.ipynb",
                 "untouched": root / "course" / name / f"{name}.ipynb"}
        nbformat.write(make_variant(src, "solution")[0], files["solution"])
        nbformat.write(partial, files["partial"])
        for i in range(learners):
            kind = ("solution", "partial", "untouched")[(i + names.index(name)) % 3]
            _nbgrader.place_submission(root, f"learner{i:03d}", name, files[kind])
            n += 1
    return n


def alternately(root: Path, names: list[str], runs: int, prefix: str, label: str,
                args: Callable[[bool], list[str]]) -> dict[tuple[str, bool], list[float]]:
    """Autograde each assignment's solution ``runs`` times in both modes (``args(True)`` and
    ``args(False)``, in alternating order), as learners ``{prefix}1`` / ``{prefix}0``: seconds per
    (assignment, mode)."""
    per: dict[tuple[str, bool], list[float]] = {}
    for r in range(runs):
        for name in names:
            for mode in ((True, False) if (r + names.index(name)) % 2 == 0 else (False, True)):
                student = f"{prefix}{int(mode)}"
                _nbgrader.place_submission(root, student, name, ROOT / "solutions" / name / f"{name}.ipynb")
                t = time.perf_counter()
                proc = _nbgrader.nbgrader(root, "autograde", name, f"--student={student}", "--force", "--create",
                                          "--log-level=WARN", *args(mode), check=False)
                dt = time.perf_counter() - t
                if proc.returncode != 0:
                    print(f"  {name} {label}={mode}: autograde failed: {proc.stderr[-300:]}")
                per.setdefault((name, mode), []).append(dt)
    return per


def sandbox_overhead(root: Path, names: list[str], runs: int) -> None:
    """Median per-submission autograde time with and without the sandbox, and the ratio."""
    from ctxlab.grading import isolation

    reason = isolation.unavailable_reason()
    if reason:
        print(f"sandbox: not measured ({reason})")
        return
    per = alternately(root, names, runs, "sbx", "isolate",
                      lambda isolate: isolation.limits_config_args(isolate=isolate))
    times = {mode: [t for (_, m), ts in per.items() if m == mode for t in ts] for mode in (True, False)}
    print(f"\nsandbox cost: {len(names)} assignments x {runs} runs, each mode alternately; {load()}")
    for name in names:
        on, off = statistics.median(per[(name, True)]), statistics.median(per[(name, False)])
        print(f"    {name:24s} sandbox {on:6.2f} s   no sandbox {off:6.2f} s   ratio {on / off:5.3f}")
    on, off = statistics.median(times[True]), statistics.median(times[False])
    total_on = sum(statistics.median(per[(n, True)]) for n in names)
    total_off = sum(statistics.median(per[(n, False)]) for n in names)
    report("autograde per submission, in the sandbox", times[True])
    report("autograde per submission, no sandbox (--no-sandbox)", times[False])
    print(f"    median per submission: sandbox {on:.2f} s, no sandbox {off:.2f} s, ratio {on / off:.3f}; "
          f"sum of per-assignment medians: ratio {total_on / total_off:.3f} "
          f"(goal <= 1.10: {'met' if total_on / total_off <= 1.10 else 'NOT met'})")


def design_cost(root: Path, names: list[str], runs: int) -> None:
    """Median per-submission autograde time with the tests in a grader kernel (the design of
    ctxlab/grading/graded.py) and with every cell in the learner's kernel (one kernel, no guard:
    ``--GradedExecute.tests_outside=False``), alternately, and the ratio (goal: at most 1.15)."""
    per = alternately(root, names, runs, "dsg", "tests_outside",
                      lambda outside: [f"--GradedExecute.tests_outside={outside}"])
    print(f"\ntests outside the learner's kernel: {len(names)} assignments x {runs} runs, each design alternately; {load()}")
    for name in names:
        new, old = statistics.median(per[(name, True)]), statistics.median(per[(name, False)])
        print(f"    {name:24s} grader kernel {new:6.2f} s   one kernel {old:6.2f} s   ratio {new / old:5.3f}")
    total_new = sum(statistics.median(per[(n, True)]) for n in names)
    total_old = sum(statistics.median(per[(n, False)]) for n in names)
    print(f"    sum of per-assignment medians: grader kernel {total_new:.1f} s, one kernel {total_old:.1f} s, "
          f"ratio {total_new / total_old:.3f} (goal <= 1.15: {'met' if total_new / total_old <= 1.15 else 'NOT met'})")


def grade_class(root: Path, workers: int) -> tuple[float, float, parallel.GradeRun]:
    cpu0, t0 = children_cpu(), time.perf_counter()
    run = parallel.grade_parallel(root, workers=workers, progress=True, desc=f"workers={workers}")
    return time.perf_counter() - t0, children_cpu() - cpu0, run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--learners", type=int, default=30, help="learners in the class (default 30)")
    ap.add_argument("--workers", default=str(os.cpu_count()),
                    help=f"comma-separated worker counts for the parallel runs (default {os.cpu_count()})")
    ap.add_argument("--skip-serial", action="store_true", help="skip the serial class run (estimate it instead)")
    ap.add_argument("--assignments", nargs="*", help="assignment ids (default: all in solutions/)")
    ap.add_argument("--sandbox-runs", type=int, default=3, help="runs of the sandbox-cost measurement (default 3)")
    ap.add_argument("--sandbox-only", action="store_true", help="measure the sandbox's cost only")
    ap.add_argument("--design-runs", type=int, default=3,
                    help="runs of the tests-outside-the-learner's-kernel measurement (default 3)")
    ap.add_argument("--design-only", action="store_true", help="measure the grader kernel's cost only")
    args = ap.parse_args()
    names = args.assignments or release.assignments(ROOT)
    workers = [int(w) for w in args.workers.split(",")]
    print(f"{len(names)} assignments, {args.learners} learners, {os.cpu_count()} CPUs, {load()}")

    with tempfile.TemporaryDirectory(prefix="ctxlab-bench-grading-") as tmpdir:
        tmp = Path(tmpdir)
        t0, cpu0 = time.perf_counter(), children_cpu()
        base = _nbgrader.make_course_root(tmp / "base", names)
        print(f"generate_assignment, all {len(names)} in one nbgrader process: "
              f"{time.perf_counter() - t0:.1f} s wall, {children_cpu() - cpu0:.1f} s CPU")

        parallel.copy_db(base / "gradebook.db", tmp / "pristine.db")  # before any submission

        if args.design_runs > 0:
            design_cost(base, names, args.design_runs)
        if args.design_only:
            return
        if args.sandbox_runs > 0:
            sandbox_overhead(base, names, args.sandbox_runs)
        if args.sandbox_only:
            return

        # 1. one submission per nbgrader process (how `nbgrader autograde A --student S` runs)
        single = base
        times, per = [], {}
        for name in names:
            _nbgrader.place_submission(single, "one", name, ROOT / "solutions" / name / f"{name}.ipynb")
            t = time.perf_counter()
            proc = _nbgrader.autograde(single, name, "one")
            per[name] = time.perf_counter() - t
            times.append(per[name])
            if proc.returncode != 0:
                print(f"  {name}: autograde failed: {proc.stderr[-300:]}")
        report("autograde, 1 submission per nbgrader process (serial)", times)
        for name, t in sorted(per.items(), key=lambda kv: -kv[1]):
            print(f"    {name:24s} {t:6.1f} s")

        # 2. the class, serial and parallel, from identical course roots

        results = {}
        runs = ([] if args.skip_serial else [1]) + [w for w in workers if w != 1]
        for w in runs:
            root = tmp / f"class-w{w}"
            shutil.copytree(base, root, ignore=shutil.ignore_patterns("submitted", "autograded", "feedback", "logs"))
            parallel.copy_db(tmp / "pristine.db", root / "gradebook.db")
            n = make_class(root, names, args.learners, tmp)
            print(f"\nclass: {n} submissions, workers={w}, {load()}")
            wall, cpu, run = grade_class(root, w)
            bad = [o for o in run.outcomes if not o.graded]
            results[w] = (wall, cpu, n, {(s.student, s.assignment): s.code_score for s in _nbgrader.scores(root)})
            report(f"class of {args.learners} x {len(names)}, workers={w} (autograde + feedback)", [wall])
            print(f"    per submission {wall / n:.2f} s wall, {cpu / n:.2f} s CPU; failed {len(bad)}; "
                  f"300-submission equivalent {wall * GOAL_N / n / 60:.1f} min "
                  f"(goal {GOAL_S / 60:.0f} min: {'met' if wall * GOAL_N / n < GOAL_S else 'NOT met'}); {load()}")

        print()
        if 1 in results:
            serial = results[1][0]
        else:
            serial = statistics.median(times) * results[runs[0]][2]
            print(f"serial class time estimated from the per-process median: {serial / 60:.1f} min")
        for w in runs:
            if w == 1:
                continue
            wall, cpu, n, sc = results[w]
            print(f"speedup workers={w} vs serial: {serial / wall:.2f}x  ({serial / 60:.1f} min -> {wall / 60:.1f} min)")
            if 1 in results:
                print(f"    scores identical to the serial run: {'yes' if sc == results[1][3] else 'NO'}")


if __name__ == "__main__":
    main()
