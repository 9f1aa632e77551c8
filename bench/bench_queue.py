"""Static shards against one queue (issue 42 item 4): the same class graded by each design, alternately.

The design before issue 42 (``ctxlab/grading/parallel.py`` at commit 539c28b) split the
submissions into one shard per worker up front and ran ``nbgrader autograde`` and ``nbgrader
generate_feedback`` once per worker. The queue hands one submission at a time to an idle worker,
each worker one long-lived nbgrader process (``ctxlab/grading/_worker.py``).

    .venv/bin/python bench/bench_queue.py --assignments 00_start_here 03_prompt_caching 08_measure --learners 2 --rounds 2

Prints wall and CPU per submission of each run and the load average (CPU: user + sys of every
process the run waited for; as in bench_grading.py the sandboxed kernels are partly missed, the
same for both designs). Needs the repository's git history. Never fails on time.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))
from bench_grading import make_class  # noqa: E402

from ctxlab.grading import _nbgrader, parallel  # noqa: E402

BEFORE = "539c28b"   # the last commit with static shards


def sharded():
    """parallel.py as it was at :data:`BEFORE`, as a module of its own."""
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{BEFORE}:ctxlab/grading/parallel.py"],
                            capture_output=True, text=True, check=True).stdout
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader("parallel_sharded", loader=None))
    sys.modules["parallel_sharded"] = module   # dataclasses look their module up
    exec(compile(source, "parallel_sharded.py", "exec"), module.__dict__)
    return module


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--assignments", nargs="+", default=["00_start_here", "03_prompt_caching", "08_measure"])
    ap.add_argument("--learners", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    designs = (("shards", sharded()), ("queue", parallel))
    with tempfile.TemporaryDirectory(prefix="ctxlab-bench-queue-") as tmpdir:
        tmp = Path(tmpdir)
        base = _nbgrader.make_course_root(tmp / "base", args.assignments)
        parallel.copy_db(base / "gradebook.db", tmp / "pristine.db")
        for r in range(args.rounds):
            for label, module in designs:
                root = tmp / f"{label}{r}"
                shutil.copytree(base, root, ignore=shutil.ignore_patterns("submitted", "autograded", "feedback", "logs"))
                parallel.copy_db(tmp / "pristine.db", root / "gradebook.db")
                n = make_class(root, args.assignments, args.learners, tmp)
                cpu0, t0 = children_cpu(), time.perf_counter()
                run = module.grade_parallel(root, workers=args.workers, progress=False)
                wall, cpu = time.perf_counter() - t0, children_cpu() - cpu0
                failed = sum(1 for o in run.outcomes if not o.graded)
                print(f"round {r} {label:6s}: {n} submissions, {wall:.1f} s wall ({wall / n:.2f} per submission), "
                      f"{cpu:.1f} s CPU ({cpu / n:.2f}), failed {failed}, load average {os.getloadavg()[0]:.1f}",
                      flush=True)


if __name__ == "__main__":
    main()
