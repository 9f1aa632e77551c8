"""How long a learner needs for a lesson: a reading-and-running model (one home for bench and tests).

Not a stopwatch on a person: the time is modelled from what the notebook holds, with rates stated
here, so the time a lesson states, the course map and the instructor guide's schedules can be checked
against one model (tests/test_site.py keeps them within :data:`TOLERANCE`).

* prose (markdown cells, hints and tasks included): read at :data:`READ` characters a minute;
* code cells the learner runs: :data:`CODE` seconds a line to read, plus the cell's execution time
  (nbclient's own timings in an executed notebook);
* printed output: its text read at :data:`READ` characters a minute (HTML reduced to its text; a
  stream as the notebook shows it, a progress bar that redraws its line with ``\\r`` as its last state),
  :data:`FIGURE` seconds a figure, :data:`WIDGET` seconds a widget to try;
* exercises: an autograded exercise takes :data:`AUTO` minutes a point, a written one :data:`WRITTEN`
  minutes a point.

A lesson's **core** is everything outside its optional sections: a level-2 heading (``## ``) that holds
:data:`OPTIONAL` starts an optional part, which runs to the next level-2 heading without it. A workshop
schedule can skip the optional parts; the lesson states both times.
"""
from __future__ import annotations

import html as _html
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import nbformat

READ = 500.0        # prose characters a minute (Japanese technical text)
CODE = 8.0          # seconds to read a line of code before running it
AUTO = 3.0          # minutes a point of an autograded exercise
WRITTEN = 4.0       # minutes a point of a written answer
FIGURE = 20.0       # seconds to look at a figure
WIDGET = 60.0       # seconds to try a widget
OPTIONAL = "（任意）"
TOLERANCE = 0.10    # stated times agree with the model within this fraction
CORE_LIMIT = 75.0   # minutes: a lesson's core takes at most about this
_STATED = re.compile(r"\*\*所要時間\*\*\s*約\s*(\d+)\s*分(?:（[^）]*?約\s*(\d+)\s*分[^）]*）)?")


@dataclass
class Part:
    prose_chars: int = 0
    code_lines: int = 0
    run_s: float = 0.0
    output_chars: int = 0
    figures: int = 0
    widgets: int = 0
    auto_points: float = 0.0
    written_points: float = 0.0

    def minutes(self) -> float:
        return (self.prose_chars / READ + self.code_lines * CODE / 60 + self.run_s / 60
                + self.output_chars / READ + self.figures * FIGURE / 60 + self.widgets * WIDGET / 60
                + self.auto_points * AUTO + self.written_points * WRITTEN)


@dataclass
class LessonTime:
    name: str
    core: Part = field(default_factory=Part)
    optional: Part = field(default_factory=Part)

    @property
    def core_min(self) -> float:
        return self.core.minutes()

    @property
    def total_min(self) -> float:
        return self.core.minutes() + self.optional.minutes()


def _nb(cell) -> dict:
    return cell.metadata.get("nbgrader", {}) or {}


def _run_seconds(cell) -> float:
    ex = cell.metadata.get("execution", {})
    try:
        start = datetime.fromisoformat(ex["iopub.execute_input"].replace("Z", "+00:00"))
        end = datetime.fromisoformat(ex["shell.execute_reply"].replace("Z", "+00:00"))
    except (KeyError, ValueError):
        return 0.0
    return max(0.0, (end - start).total_seconds())


def _output_text(output) -> str:
    if output.get("output_type") == "stream":
        return output.get("text", "")
    data = output.get("data", {})
    if "text/html" in data:
        markup = data["text/html"]
        markup = re.sub(r"<(script|style)\b.*?</\1>", "", markup, flags=re.S | re.I)
        return _html.unescape(re.sub(r"<[^>]+>", " ", markup))
    if "text/markdown" in data:
        return data["text/markdown"]
    if any(k.startswith("image/") or k.startswith("application/vnd.jupyter.widget") for k in data):
        return ""
    return data.get("text/plain", "")


def _displayed(text: str) -> str:
    """A stream's text as a notebook shows it: each line holds only what was written after its last carriage
    return (a progress bar redraws one line many times; the learner reads its last state)."""
    return "\n".join(next((p for p in reversed(line.split("\r")) if p.strip()), "") for line in text.split("\n"))


def _chars(text: str) -> int:
    return len(re.sub(r"\s+", "", text))


def lesson_time(source: Path, executed: Path | None = None) -> LessonTime:
    """The model's time for the lesson whose nbgrader source is ``source``; its outputs and execution times
    come from ``executed`` (the same lesson executed, e.g. the site's build), matched by cell id."""
    nb = nbformat.read(source, as_version=4)
    ran = {c.id: c for c in nbformat.read(executed, as_version=4).cells} if executed else {}
    out = LessonTime(Path(source).parent.name)
    part = out.core
    for cell in nb.cells:
        meta = _nb(cell)
        if cell.cell_type == "markdown":
            heading = re.match(r"^##\s+(?!#)(.*)$", cell.source.strip().splitlines()[0]) if cell.source.strip() else None
            if heading:
                part = out.optional if OPTIONAL in heading.group(1) else out.core
            if meta.get("solution") and meta.get("grade"):
                part.written_points += meta.get("points", 0)
                continue
            part.prose_chars += len(cell.source)
            continue
        if cell.cell_type != "code":
            continue
        src = cell.source
        if meta.get("solution"):
            src = src.split("### BEGIN SOLUTION")[0]     # the learner writes the rest (exercise time)
        src = src.split("### BEGIN HIDDEN TESTS")[0]
        part.code_lines += sum(1 for line in src.splitlines() if line.strip() and not line.strip().startswith("#"))
        if meta.get("grade"):
            part.auto_points += meta.get("points", 0)
        done = ran.get(cell.id)
        if done is None:
            continue
        part.run_s += _run_seconds(done)
        streams: dict[str, str] = {}
        for o in done.get("outputs", []):
            data = o.get("data", {})
            part.figures += sum(1 for k in data if k.startswith("image/"))
            part.widgets += 1 if "application/vnd.jupyter.widget-view+json" in data else 0
            if o.get("output_type") == "stream":      # one text per stream, as the notebook joins them
                streams[o.get("name", "stdout")] = streams.get(o.get("name", "stdout"), "") + o.get("text", "")
            elif o.get("output_type") != "error":
                part.output_chars += _chars(_output_text(o))
        part.output_chars += sum(_chars(_displayed(text)) for text in streams.values())
    return out


def stated(source: Path) -> tuple[int, int | None] | None:
    """The time the lesson states in its header: (core minutes, with the optional parts or None)."""
    nb = nbformat.read(source, as_version=4)
    for cell in nb.cells[:3]:
        m = _STATED.search(cell.source)
        if m:
            return int(m.group(1)), int(m.group(2)) if m.group(2) else None
    return None


def rounded(minutes: float) -> int:
    """A time as a lesson states it: to 5 minutes."""
    return int(5 * round(minutes / 5))
