"""Shared helpers of the benchmarks: run a callable several times, print median and p95."""
from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def measure(fn, runs: int = 7, warmup: int = 1) -> list[float]:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def p95(times: list[float]) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def report(name: str, times: list[float], goal_s: float | None = None, decimals: int = 1) -> None:
    med = statistics.median(times)
    line = (f"{name:58s} median {med * 1000:9.{decimals}f} ms   p95 {p95(times) * 1000:9.{decimals}f} ms"
            f"   (n={len(times)})")
    if goal_s is not None:
        line += f"   goal < {goal_s * 1000:.0f} ms: {'met' if med < goal_s else 'NOT met'} ({med / goal_s:.2f} of goal)"
    print(line)


def lesson_args(doc: str) -> tuple[argparse.Namespace, list[Path]]:
    """``--runs N [lesson ...]`` of the lesson benchmarks, with the offline environment set (no key,
    no waits, no display); returns the arguments and the solution notebooks chosen (all by default)."""
    ap = argparse.ArgumentParser(description=doc)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("lessons", nargs="*")
    args = ap.parse_args()
    os.environ.update(CTXLAB_OFFLINE="1", CTXLAB_TIME_SCALE="0", MPLBACKEND="Agg")
    os.environ.pop("ANTHROPIC_API_KEY", None)
    paths = sorted((ROOT / "solutions").glob("*/*.ipynb"))
    if args.lessons:
        paths = [p for p in paths if any(p.parent.name.startswith(x) for x in args.lessons)]
    return args, paths
