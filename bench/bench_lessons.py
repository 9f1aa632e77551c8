"""Time to execute each lesson offline (solution notebooks, nbclient, kernel start included).

Prints the median of several runs per lesson and the totals of lessons 00-04 (goal < 20 s)
and 05-08 (goal < 30 s). Usage: python bench/bench_lessons.py [--runs N] [lesson ...]
"""
from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import lesson_args, p95  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
GROUPS = {"00-04": ("00", "01", "02", "03", "04"), "05-08": ("05", "06", "07", "08")}
GOALS = {"00-04": 20.0, "05-08": 30.0}


def run_once(path: Path) -> float:
    nb = nbformat.read(path, as_version=4)
    t0 = time.perf_counter()
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    return time.perf_counter() - t0


def main() -> None:
    args, paths = lesson_args(__doc__)
    medians = {}
    for p in paths:
        times = [run_once(p) for _ in range(args.runs)]
        medians[p.parent.name] = statistics.median(times)
        print(f"{p.parent.name:24s} median {medians[p.parent.name]:6.1f} s   p95 {p95(times):6.1f} s   (n={len(times)})")
    for group, prefixes in GROUPS.items():
        members = [v for k, v in medians.items() if k[:2] in prefixes]
        if len(members) == len(prefixes):
            total = sum(members)
            print(f"lessons {group}: {total:5.1f} s together (goal < {GOALS[group]:.0f} s: "
                  f"{'met' if total < GOALS[group] else 'NOT met'}, {total / GOALS[group]:.2f} of goal)")
    try:
        load = os.getloadavg()[0]
        print(f"(load average during the run: {load:.1f} on {os.cpu_count()} cores)")
    except OSError:
        pass


if __name__ == "__main__":
    main()
