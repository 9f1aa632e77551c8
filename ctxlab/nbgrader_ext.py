"""nbgrader preprocessors of the course.

:class:`HideHiddenTestTracebacks` closes the second leak of hidden tests in feedback:
``ClearHiddenTests`` removes the hidden lines from a test cell's source, but the failing
cell's traceback still prints the failing line and the lines around it, hidden ones
included. Run before ``ClearHiddenTests`` in ``GenerateFeedback.preprocessors``, it
replaces the traceback of every error in a grade cell by the exception and its message,
plus the failing line only when that line is a visible test; a failure inside the hidden
region says only that a hidden test failed.
"""
from __future__ import annotations

import re

from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Unicode

HIDDEN_NOTE = "非公開のテストが失敗しました（中身は表示されません）。課題の説明と公開テストを見直してください。"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_LINE = re.compile(r"(?:Cell In\s*\[[^\]]*\], line|line) (\d+)")


def hidden_lines(source: str, begin: str, end: str) -> set[int]:
    """1-based line numbers inside hidden regions (markers included)."""
    out, inside = set(), False
    for n, line in enumerate(source.split("\n"), 1):
        if begin in line:
            inside = True
        if inside:
            out.add(n)
        if end in line:
            inside = False
    return out


def failing_line(traceback: list[str]) -> int | None:
    """The line of the test cell that failed: the outermost frame that points into a cell
    (inner frames may be the learner's function, defined in another cell)."""
    for entry in traceback:
        text = _ANSI.sub("", entry)
        if "Cell In" in text or "<ipython-input" in text:
            m = _LINE.search(text)
            if m:
                return int(m.group(1))
    return None


class HideHiddenTestTracebacks(NbGraderPreprocessor):
    begin_test_delimeter = Unicode("BEGIN HIDDEN TESTS").tag(config=True)
    end_test_delimeter = Unicode("END HIDDEN TESTS").tag(config=True)

    def preprocess_cell(self, cell, resources, cell_index):
        if cell.cell_type != "code" or not cell.metadata.get("nbgrader", {}).get("grade"):
            return cell, resources
        hidden = hidden_lines(cell.source, self.begin_test_delimeter, self.end_test_delimeter)
        lines = cell.source.split("\n")
        for out in cell.get("outputs", []):
            if out.get("output_type") != "error":
                continue
            ename, evalue = out.get("ename", "Error"), out.get("evalue", "")
            n = failing_line(out.get("traceback", []))
            head = f"{ename}: {evalue}" if evalue else ename
            if n is None or n in hidden or n > len(lines):
                out["evalue"] = "" if (n is None or n in hidden) else evalue
                out["traceback"] = [f"{ename}: {HIDDEN_NOTE}"]
            else:
                out["traceback"] = [f"失敗した行 {n}: {lines[n - 1].strip()}", head]
        return cell, resources
