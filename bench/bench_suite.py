"""Where the test suite's time goes, and how long a fresh clone's `make test` takes.

    python bench/bench_suite.py [--runs N] [--workers N] [--fast] [--fresh] [--per-test-cpu] [--top 40]

Each run executes the suite (``make test``, or ``make test-fast`` with ``--fast``) and prints its wall
time, the CPU time the machine spent meanwhile (/proc/stat, every process: run it on a quiet machine;
the floor of the wall time on this machine is that CPU divided by the number of cores). Every test's
start, wall time and the machine's CPU over it are recorded (bench/_machine_cpu.py), and the
machine's CPU is sampled every second. From these it prints the longest tests and the units of work
that the parallel workers share out (a file, or the files that share the graded class:
tests/conftest.py) with their summed times; with parallel workers, the idle core-seconds (cores
times wall minus CPU) and which units were running while cores sat idle (each second's idle share
split among the tests running in it); with ``--per-test-cpu`` (and ``--workers 0``: in a serial run
each test has the machine to itself), the units and tests that used the most CPU.
``--fresh`` clones this checkout's HEAD into a temporary folder first and times ``make test``
there, setup (the venv and npm) included, as a new user would run it. With several runs the
medians are printed. No figure is asserted: docs/benchmarks.md records them.

Why not the CPU time of the process tree (``RUSAGE_CHILDREN``): a sandboxed grading kernel lives in a
PID namespace of its own and is killed with it, never waited for by the tree, so its CPU time is
never counted there (the graded class alone: 70 s of user + sys against 389 s on /proc/stat).
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine_cpu import busy_seconds  # noqa: E402
from _util import ROOT  # noqa: E402

sys.path.insert(0, str(ROOT / "tests"))
from conftest import unit  # noqa: E402


def run_once(args, where: Path, cpu_log: Path) -> dict:
    target = "test-fast" if args.fast else "test"
    cmd = ["make", target, f"TEST_WORKERS={args.workers}", f"FAST_WORKERS={args.workers}", f"PYTHON={args.python}"]
    # tests/conftest.py registers bench/_machine_cpu.py, which writes one line per test to cpu_log
    env = {**os.environ, "CTXLAB_BENCH_CPU_LOG": str(cpu_log)}
    samples: list[tuple[float, float]] = []
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            samples.append((time.time(), busy_seconds()))
            done.wait(1.0)

    sampler = threading.Thread(target=sample, daemon=True)
    cpu0, t0 = busy_seconds(), time.perf_counter()
    sampler.start()
    proc = subprocess.run(cmd, cwd=where, env=env, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - t0, busy_seconds() - cpu0
    done.set()
    sampler.join()
    tail = proc.stdout.strip().splitlines()[-1:] or [""]
    return {"wall": wall, "cpu": cpu, "rc": proc.returncode, "last": tail[0], "out": proc.stdout[-3000:],
            "full": proc.stdout + proc.stderr, "samples": samples}


def idle_by_unit(samples: list[tuple[float, float]], tests: list[dict], cores: int) -> dict[str, float]:
    """Idle core-seconds of each sampled second, split equally among the tests running then, summed by
    unit of work; the part when no test ran (collection, start-up, fixtures between tests) is "(none)"."""
    out: collections.Counter = collections.Counter()
    for (ta, ca), (tb, cb) in zip(samples, samples[1:]):
        idle = max(0.0, cores * (tb - ta) - (cb - ca))
        mid = (ta + tb) / 2
        running = [unit(r["nodeid"]) for r in tests if r["start"] <= mid < r["start"] + r["wall"]]
        for u in running or ["(none)"]:
            out[u] += idle / max(1, len(running))
    return dict(out)


def by_unit(tests: list[dict]) -> dict[str, list[float]]:
    """Unit of work -> [summed wall time, summed machine CPU] of its tests."""
    out: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0])
    for rec in tests:
        u = out[unit(rec["nodeid"])]
        u[0] += rec["wall"]
        u[1] += rec["cpu"]
    return dict(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--workers", default="2", help="TEST_WORKERS, or FAST_WORKERS with --fast (0: one process)")
    ap.add_argument("--fast", action="store_true", help="make test-fast instead of make test")
    ap.add_argument("--fresh", action="store_true", help="a fresh clone of HEAD, setup included")
    ap.add_argument("--python", default="python3", help="the Python make setup builds the venv from")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--per-test-cpu", action="store_true", help="the CPU time per test and unit (serial runs only)")
    args = ap.parse_args()
    if args.per_test_cpu and args.workers != "0":
        ap.error("--per-test-cpu needs --workers 0: with parallel workers the machine's CPU time is not one test's")
    runs = []
    for i in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="ctxlab-bench-suite-") as tmp:
            os.chmod(tmp, 0o755)   # the classroom tests' accounts must reach the clone
            where = ROOT
            if args.fresh:
                where = Path(tmp) / "clone"
                subprocess.run(["git", "clone", "-q", str(ROOT), str(where)], check=True)
            cpu_log = Path(tmp) / "cpu.jsonl"
            r = run_once(args, where, cpu_log)
            r["tests"] = ([json.loads(line) for line in cpu_log.read_text(encoding="utf-8").splitlines()]
                          if cpu_log.exists() else [])
            runs.append(r)
            print(f"run {i + 1}: {'fresh clone, setup included, ' if args.fresh else ''}make "
                  f"{'test-fast FAST' if args.fast else 'test TEST'}_WORKERS={args.workers}: wall {r['wall']:.0f} s, "
                  f"machine CPU {r['cpu']:.0f} s (floor on {os.cpu_count()} cores: {r['cpu'] / os.cpu_count():.0f} s), "
                  f"exit {r['rc']}: {r['last']}")
            if r["rc"] != 0:
                log = Path(tempfile.gettempdir()) / f"bench_suite-run{i + 1}.log"
                log.write_text(r["full"], encoding="utf-8")
                print(r["out"] + f"\n(the whole output: {log})")
    if len(runs) > 1:
        print(f"median of {len(runs)}: wall {statistics.median(r['wall'] for r in runs):.0f} s, "
              f"CPU {statistics.median(r['cpu'] for r in runs):.0f} s")
    last = runs[-1]
    if not last["tests"]:
        return
    units = by_unit(last["tests"])
    print(f"\nunits of work (sum of their tests' times, last run; the total is "
          f"{sum(w for w, _ in units.values()):.0f} s):")
    for name, (wall, _) in sorted(units.items(), key=lambda kv: -kv[1][0])[:20]:
        print(f"  {wall:7.1f} s  {name}")
    print(f"\nthe {args.top} longest tests (setup, call and teardown together, last run):")
    for rec in sorted(last["tests"], key=lambda r: -r["wall"])[:args.top]:
        print(f"  {rec['wall']:7.1f} s  {rec['nodeid']}")
    cores = os.cpu_count() or 1
    if args.workers != "0":
        idle = idle_by_unit(last["samples"], last["tests"], cores)
        print(f"\nidle core-seconds (last run: {cores} cores x {last['wall']:.0f} s wall - {last['cpu']:.0f} s CPU = "
              f"{cores * last['wall'] - last['cpu']:.0f} s), by the units running while cores sat idle:")
        for name, t in sorted(idle.items(), key=lambda kv: -kv[1])[:20]:
            print(f"  {t:7.1f} s  {name}")
    if args.per_test_cpu:
        print("\nunits of work by the machine's CPU time over their tests (serial run; cores busy = CPU / wall):")
        for name, (wall, cpu) in sorted(units.items(), key=lambda kv: -kv[1][1])[:25]:
            print(f"  {cpu:7.1f} s CPU  {wall:7.1f} s wall  {cpu / wall if wall else 0:4.2f} cores  {name}")
        print(f"\nthe {args.top} tests that used the most CPU (setup, call and teardown):")
        for rec in sorted(last["tests"], key=lambda r: -r["cpu"])[:args.top]:
            print(f"  {rec['cpu']:7.1f} s CPU  {rec['wall']:7.1f} s wall  {rec['nodeid']}")


if __name__ == "__main__":
    main()
