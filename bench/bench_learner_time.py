"""How long a learner needs for each lesson: a reading-and-running model, plus measured execution.

Not a stopwatch on a person: the time is modelled from what the notebook holds, with rates that
are stated here and printed, so the instructor guide's schedule can be checked against them.

* prose (markdown cells, hints and tasks included): read at ``--read`` characters a minute
  (Japanese technical text; 500 by default);
* code cells the learner runs: ``--code`` seconds a line to read (8 by default), plus the cell's
  execution time, measured here (median of ``--runs`` runs of the whole notebook, divided over
  its cells by nbclient's own timings);
* exercises: an autograded exercise takes ``--auto`` minutes a point (3), a written one
  ``--written`` minutes a point (4), reading its task included above.

Usage: python bench/bench_learner_time.py [--runs N] [lesson ...]  (default: lessons 00-05)
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_lessons import run_once  # noqa: E402  (one way to time a notebook run)

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ("00", "01", "02", "03", "04", "05")


def _nb(cell) -> dict:
    return cell.metadata.get("nbgrader", {}) or {}


def _hidden_stripped(src: str) -> str:
    return src.split("### BEGIN HIDDEN TESTS")[0]


def model(path: Path, read: float, code: float, auto: float, written: float) -> dict:
    nb = nbformat.read(path, as_version=4)
    prose = sum(len(c.source) for c in nb.cells if c.cell_type == "markdown" and not _nb(c).get("solution"))
    lines = 0
    for c in nb.cells:
        if c.cell_type != "code":
            continue
        src = c.source
        if _nb(c).get("solution"):
            src = src.split("### BEGIN SOLUTION")[0]  # the learner writes the rest (counted as exercise time)
        lines += sum(1 for line in _hidden_stripped(src).splitlines() if line.strip() and not line.strip().startswith("#"))
    auto_pts = sum(_nb(c).get("points", 0) for c in nb.cells if c.cell_type == "code" and _nb(c).get("grade"))
    written_pts = sum(_nb(c).get("points", 0) for c in nb.cells if c.cell_type == "markdown" and _nb(c).get("grade"))
    return {"prose_min": prose / read, "code_min": lines * code / 60, "auto_min": auto_pts * auto,
            "written_min": written_pts * written, "prose_chars": prose, "code_lines": lines,
            "auto_points": auto_pts, "written_points": written_pts}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--read", type=float, default=500.0, help="prose characters read per minute")
    ap.add_argument("--code", type=float, default=8.0, help="seconds to read one line of code before running it")
    ap.add_argument("--auto", type=float, default=3.0, help="minutes per point of an autograded exercise")
    ap.add_argument("--written", type=float, default=4.0, help="minutes per point of a written exercise")
    ap.add_argument("lessons", nargs="*")
    args = ap.parse_args()
    os.environ.update(CTXLAB_OFFLINE="1", MPLBACKEND="Agg")
    os.environ.pop("ANTHROPIC_API_KEY", None)
    wanted = tuple(args.lessons) or DEFAULT
    paths = [p for p in sorted((ROOT / "solutions").glob("*/*.ipynb")) if p.parent.name.startswith(wanted)]
    print(f"model: prose {args.read:g} chars/min, code {args.code:g} s/line, autograded {args.auto:g} min/point, "
          f"written {args.written:g} min/point; execution measured (median of {args.runs} runs)")
    for path in paths:
        m = model(path, args.read, args.code, args.auto, args.written)
        run_s = statistics.median(run_once(path) for _ in range(args.runs))
        total = m["prose_min"] + m["code_min"] + m["auto_min"] + m["written_min"] + run_s / 60
        print(f"{path.parent.name:22s} total {total:5.1f} min = prose {m['prose_min']:4.1f} ({m['prose_chars']:,} chars)"
              f" + code {m['code_min']:4.1f} ({m['code_lines']} lines) + exercises {m['auto_min']:4.1f}"
              f" ({m['auto_points']} pt) + written {m['written_min']:4.1f} ({m['written_points']} pt)"
              f" + running {run_s:5.1f} s")


if __name__ == "__main__":
    main()
