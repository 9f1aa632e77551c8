"""How long a learner needs for each lesson: the reading-and-running model of tools/learner_time.py,
on the lesson executed here (the run of median length out of ``--runs``).

Prints each lesson's core and optional time and what they are made of, the course's totals, and the
time each lesson states (the tests keep the stated times within 10% of the model on the site's
executed lessons; this bench re-measures execution on this machine).

Usage: python bench/bench_learner_time.py [--runs N] [lesson ...]  (default: every lesson)
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import learner_time as lt  # noqa: E402  (one home of the model)


def executed(path: Path, out: Path) -> float:
    nb = nbformat.read(path, as_version=4)
    t0 = time.perf_counter()
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    took = time.perf_counter() - t0
    nbformat.write(nb, out)
    return took


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("lessons", nargs="*")
    args = ap.parse_args()
    os.environ.update(CTXLAB_OFFLINE="1", CTXLAB_TIME_SCALE="0", MPLBACKEND="Agg")
    os.environ.pop("ANTHROPIC_API_KEY", None)
    paths = [p for p in sorted((ROOT / "solutions").glob("*/*.ipynb")) 
             if not args.lessons or p.parent.name.startswith(tuple(args.lessons))]
    print(f"model: prose and printed output {lt.READ:g} chars/min, code {lt.CODE:g} s/line, figure {lt.FIGURE:g} s, "
          f"widget {lt.WIDGET:g} s, autograded {lt.AUTO:g} min/point, written {lt.WRITTEN:g} min/point; "
          f"execution measured (the run of median length of {args.runs})")
    core = optional = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for path in paths:
            runs = []
            for i in range(args.runs):
                out = Path(tmp) / f"{path.stem}-{i}.ipynb"
                runs.append((executed(path, out), out))
            runs.sort()
            m = lt.lesson_time(path, runs[len(runs) // 2][1])
            c = m.core
            core += m.core_min
            optional += m.total_min - m.core_min
            print(f"{m.name:22s} core {m.core_min:5.1f} min (optional +{m.total_min - m.core_min:4.1f}) = prose "
                  f"{c.prose_chars / lt.READ:4.1f} + code {c.code_lines * lt.CODE / 60:4.1f} + output "
                  f"{c.output_chars / lt.READ:4.1f} ({c.figures} fig, {c.widgets} widgets) + exercises "
                  f"{c.auto_points * lt.AUTO:4.1f} + written {c.written_points * lt.WRITTEN:4.1f} + running "
                  f"{c.run_s:5.1f} s; states {lt.stated(path)}; median run {statistics.median(t for t, _ in runs):.1f} s")
    print(f"course: core {core:.0f} min, optional {optional:.0f} min, together {core + optional:.0f} min")


if __name__ == "__main__":
    main()
