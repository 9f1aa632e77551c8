"""Lesson 05's widgets, headless: time from a control change to the new figure (PNG in the Image widget).

Each widget is built without a kernel (ipywidgets falls back to a dummy comm), then one
control is changed programmatically N times; a change runs the widget's observer
synchronously: the numbers, the artists updated in place, the blit over the saved
background and the PNG. Goal: median under 50 ms. Also reports how many of the changes
needed a full redraw (axis limits moved) and the CPU share the process got (a loaded
machine inflates wall-clock times).

Usage: python bench/bench_widgets.py [N]
"""
from __future__ import annotations

import itertools
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import measure, report  # noqa: E402

GOAL_S = 0.050


def changer(widget, name, values):
    cycle = itertools.cycle(values)

    def change():
        widget.controls[name].value = next(cycle)
    return change


def main(n: int = 60) -> None:
    t0 = time.perf_counter()
    from ctxlab.widgets.crossover import CrossoverSimulator, RhoKExplorer
    print(f"import ctxlab.widgets.crossover: {(time.perf_counter() - t0) * 1000:.0f} ms")

    t0 = time.perf_counter()
    sim = CrossoverSimulator(hit_rate=0.8)   # "fixed": the hit-rate slider drives the figure
    print(f"build CrossoverSimulator: {(time.perf_counter() - t0) * 1000:.0f} ms")
    t0 = time.perf_counter()
    rk = RhoKExplorer(points=[("使い分けの記事", 5.0, 0.0325)])
    print(f"build RhoKExplorer: {(time.perf_counter() - t0) * 1000:.0f} ms")

    cases = [
        ("simulator: document volume (80k-320k tokens)", sim, "doc_tokens",
         [80_000 + 4_000 * i for i in range(60)]),
        ("simulator: questions per day (5-64)", sim, "questions_per_day", list(range(5, 65))),
        ("simulator: cache hit rate (0-100%)", sim, "hit_rate", [i / 20 for i in range(21)]),
        ("simulator: model (3 models, full redraw each)", sim, "model",
         ["claude-opus-5", "claude-sonnet-5", "claude-haiku-4-5"]),
        ("rho-k map: search cost s (0-0.3)", rk, "s", [i / 100 for i in range(31)]),
        ("rho-k map: write multiplier w (1-2.5)", rk, "w", [1 + i / 20 for i in range(31)]),
    ]
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for name, widget, control, values in cases:
        full_before = widget.full_redraws
        change = changer(widget, control, values)
        cpu = []

        def timed():
            c0 = time.process_time()
            change()
            cpu.append(time.process_time() - c0)

        times = measure(timed, runs=n, warmup=2)
        report(f"{name}", times, goal_s=GOAL_S)
        report("  same changes, CPU time of this process", cpu[2:], goal_s=GOAL_S)
        print(f"{'':58s} full redraws: {widget.full_redraws - full_before} of {n + 2} changes")
    share = (time.process_time() - cpu0) / (time.perf_counter() - wall0)
    print(f"CPU share of this process during the runs: {share:.0%} (load average {os.getloadavg()[0]:.1f}, "
          f"{os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 60)
