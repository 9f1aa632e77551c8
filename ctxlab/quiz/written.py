"""The written answers' rubric and model answer, for self-study learners after they have written their own.

A written answer (a markdown cell that nbgrader grades by hand) carries, in the source notebook,
a model answer and a rubric between ``### BEGIN SOLUTION`` and ``### END SOLUTION``::

    ### BEGIN SOLUTION
    (the model answer)
    ### BEGIN RUBRIC
    - 2 点（満点）: ...
    - 1 点（半分）: ...
    - 0 点: ...
    ### END RUBRIC
    ### END SOLUTION

nbgrader's release replaces the whole region with ``YOUR ANSWER HERE``. The self-study release
(``ctxlab release``) writes both parts into :data:`KEY_FILE` beside the lesson's notebook, so the
reveal widget (:class:`ctxlab.widgets.written.Reveal`) can show them once the learner's own answer is
saved; the graded release, the graded laptop kit and the site never hold that file (its name ends in
``.key.yaml``, which nbgrader_config.py, the kits' and the learner image's checks keep out), and
:func:`leaks` searches files for its text.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import yaml

#: beside a self-study lesson's notebook; the ``.key.yaml`` ending keeps it out of every graded build
KEY_FILE = "written_answers.key.yaml"
SOLUTION_BEGIN, SOLUTION_END = "### BEGIN SOLUTION", "### END SOLUTION"
RUBRIC_BEGIN, RUBRIC_END = "### BEGIN RUBRIC", "### END RUBRIC"
#: what nbgrader's ClearSolutions leaves in a written answer (its default ``text_stub``)
TEXT_STUB = "YOUR ANSWER HERE"
#: an answer shorter than this (after the stub is removed) has not been written yet
MIN_CHARS = 10
_LEVEL = re.compile(r"^\s*[-*]\s*(\d+(?:\.\d+)?)\s*点[^:：]*[:：]")
_HEADING = re.compile(r"^#{2,4}\s*(.+?)\s*$", re.M)


@dataclass(frozen=True)
class Written:
    """One written answer: its id, the task's heading, its points, the model answer and the rubric's lines."""

    grade_id: str
    title: str
    points: float
    model_answer: str
    rubric: tuple[str, ...]

    def levels(self) -> list[tuple[float, str]]:
        """The rubric's scoring levels: (points, the line) for each line that starts with a number of points."""
        out = []
        for line in self.rubric:
            m = _LEVEL.match(line)
            if m:
                out.append((float(m.group(1)), line.lstrip("-* ").strip()))
        return out


def rubric_of(source: str) -> str | None:
    """The rubric of an answer cell's source (between the RUBRIC markers), or None."""
    if RUBRIC_BEGIN not in source:
        return None
    body = source.split(RUBRIC_BEGIN, 1)[1]
    if RUBRIC_END not in body:
        raise ValueError(f"a rubric needs {RUBRIC_END!r} after {RUBRIC_BEGIN!r}")
    return body.split(RUBRIC_END, 1)[0].strip("\n")


def model_answer_of(source: str) -> str:
    """The model answer of an answer cell's source: the solution region without its rubric."""
    body = source.split(SOLUTION_BEGIN, 1)[1] if SOLUTION_BEGIN in source else source
    body = body.split(SOLUTION_END, 1)[0]
    if RUBRIC_BEGIN in body:
        head, rest = body.split(RUBRIC_BEGIN, 1)
        body = head + (rest.split(RUBRIC_END, 1)[1] if RUBRIC_END in rest else "")
    return body.strip("\n")


def _meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def _source(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def from_notebook(nb) -> list[Written]:
    """Every written answer of a source notebook (nbformat node or its JSON as a dict) that has a rubric."""
    out, title = [], ""
    for cell in nb["cells"]:
        meta, src = _meta(cell), _source(cell)
        if cell["cell_type"] != "markdown":
            continue
        if meta.get("grade") and meta.get("solution"):
            rubric = rubric_of(src)
            if rubric is not None:
                lines = tuple(line.strip() for line in rubric.splitlines() if line.strip())
                out.append(Written(meta["grade_id"], title, float(meta.get("points", 0)), model_answer_of(src), lines))
            continue
        found = _HEADING.findall(src)
        if found:
            title = found[-1]
    return out


def write_key(source_notebook: Path, folder: Path) -> Path | None:
    """Write :data:`KEY_FILE` for ``source_notebook``'s written answers into ``folder`` (None when it has none)."""
    items = from_notebook(json.loads(Path(source_notebook).read_text(encoding="utf-8")))
    if not items:
        return None
    data = {"about": "記述問題の採点基準と解答例（自習用の配布にだけ入るファイルです）",
            "answers": [{"grade_id": w.grade_id, "title": w.title, "points": w.points,
                         "model_answer": w.model_answer, "rubric": list(w.rubric)} for w in items]}
    path = Path(folder) / KEY_FILE
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=1000), encoding="utf-8")
    return path


def load_key(folder: Path) -> dict[str, Written]:
    """grade_id -> :class:`Written` from ``folder``'s :data:`KEY_FILE` ({} when there is none)."""
    path = Path(folder) / KEY_FILE
    if not path.is_file():
        return {}
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return {a["grade_id"]: Written(a["grade_id"], a.get("title", ""), float(a.get("points", 0)),
                                   a.get("model_answer", ""), tuple(a.get("rubric", [])))
            for a in data.get("answers", [])}


def notebook_path(folder: Path | None = None) -> Path | None:
    """The notebook this kernel belongs to: Jupyter's ``JPY_SESSION_NAME`` when it names a notebook,
    else the only ``*.ipynb`` of ``folder`` (the working directory) whose name is the folder's."""
    session = os.environ.get("JPY_SESSION_NAME", "")
    if session.endswith(".ipynb") and Path(session).is_file():
        return Path(session)
    folder = Path(folder or Path.cwd())
    own = folder / f"{folder.name}.ipynb"
    if own.is_file():
        return own
    found = sorted(folder.glob("*.ipynb"))
    return found[0] if len(found) == 1 else None


def saved_answer(notebook: Path, grade_id: str) -> str | None:
    """The learner's saved text of the answer cell ``grade_id`` without nbgrader's stub
    (None when the notebook or the cell cannot be read)."""
    try:
        nb = json.loads(Path(notebook).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    for cell in nb.get("cells", []):
        if _meta(cell).get("grade_id") == grade_id and cell.get("cell_type") == "markdown":
            return _source(cell).replace(TEXT_STUB, "").strip()
    return None


def has_answer(text: str | None) -> bool:
    """Whether a saved answer counts as written (at least :data:`MIN_CHARS` characters besides spaces)."""
    return text is not None and len(re.sub(r"\s+", "", text)) >= MIN_CHARS


def leaks(paths: Iterable[Path], items: Iterable[Written], shortest: int = 12) -> list[str]:
    """Every file under ``paths`` that holds a line of a model answer or a rubric (at least ``shortest`` characters)."""
    lines = {line.strip().lstrip("-* ").strip() for w in items
             for line in list(w.rubric) + w.model_answer.splitlines()}
    lines = {line for line in lines if len(line) >= shortest}
    out = []
    for root in paths:
        root = Path(root)
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for path in files:
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            text = text.replace('\\"', '"')   # a notebook's JSON escapes the quotes of its sources
            hit = next((line for line in lines if line in text), None)
            if hit:
                out.append(f"{path}: {hit[:40]}…")
    return out
