"""What one submission may cost the grader: cells, notebook size and time (issue 42 item 4).

A notebook of 100,000 cells (15 MB) took 17 worker-minutes and 2.6 GB in the grader's tree,
most of it nbgrader's own work on every cell, outside the kernel's limits. :func:`over_caps`
reads a submission before it is graded: one over :class:`Caps` is not graded at all, and its
outcome says which cap and what to do. :attr:`Caps.seconds` bounds the whole grading of one
submission (autograde with every kernel it starts, and its feedback): ``parallel.py`` stops it
there. The caps fit every lesson many times over (the largest has 85 cells and under 100 kB).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Caps:
    """The caps of one submission (``ctxlab grade --max-cells/--max-notebook-mb/--max-seconds``)."""
    cells: int = 1_000          # cells in one notebook
    notebook_mb: int = 40       # size of one notebook file (outputs included: intake reads up to 50 MB)
    seconds: int = 1_800        # grading of the whole submission, feedback included


NEXT = "受講者に課題のノートブックから作り直して出し直してもらうか、教員が中身を確かめてください"


def over_caps(folder: Path, caps: Caps) -> str:
    """Empty when the submission in ``folder`` is within ``caps``; else which cap, in the summary's
    words (nothing in it is graded then). A notebook nbgrader cannot read is left to nbgrader."""
    for nb in sorted(Path(folder).glob("*.ipynb")):
        size = nb.stat().st_size
        if size > caps.notebook_mb * 2**20:
            return (f"提出物が上限を超えたため自動採点していません: {nb.name} は {size / 2**20:,.1f} MB"
                    f"（1 ノートブックの上限 {caps.notebook_mb:,} MB）。{NEXT}")
        try:
            cells = json.loads(nb.read_text(encoding="utf-8")).get("cells")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(cells, list) and len(cells) > caps.cells:
            return (f"提出物が上限を超えたため自動採点していません: {nb.name} のセルが {len(cells):,} 個"
                    f"（上限 {caps.cells:,} 個）。{NEXT}")
    return ""


def over_time(seconds: int) -> str:
    """Why a submission stopped at :attr:`Caps.seconds` (the summary's words)."""
    return (f"1 件あたりの採点時間の上限（{seconds:,} 秒）を超えたため止めました（ほかの提出物の採点は待たせていません）。"
            "終わらないループや重すぎるセルがないか、受講者と確かめてください")
