"""nbgrader preprocessors of the course: hidden tests stay out of feedback, outputs stay small.

:class:`HideHiddenTestTracebacks` closes the second leak of hidden tests in feedback:
``ClearHiddenTests`` removes the hidden lines from a test cell's source, but the failing
cell's traceback still prints the failing line and the lines around it, hidden ones
included. Run before ``ClearHiddenTests`` in ``GenerateFeedback.preprocessors``, it
replaces the traceback of every error in a grade cell by the exception and its message,
plus the failing line only when that line is a visible test; a failure inside the hidden
region says only that a hidden test failed (the assertion message, which is part of the
hidden line, is dropped too). In any other cell, traceback entries that point into a
cell with hidden tests are dropped. Last, any output of any cell that quotes a line of a
hidden test (a kernel that read or captured the hidden tests and printed them) is replaced
by a note: the feedback never shows a hidden test's source. Markers quoted in a learner's
own cells are defused first (``BEGIN-HIDDEN-TESTS``): unbalanced, they made nbgrader's
``ClearHiddenTests`` fail and the learner got no feedback.

:class:`LimitOutputSize` complements nbgrader's ``LimitOutput``, which counts lines only:
a learner printing a 10 MB list (one line) would otherwise put 10 MB into the autograded
notebook, the gradebook's formgrader view and the feedback HTML. It caps the characters
of each cell's stream output and drops rich outputs above a size, saying what it did.

:class:`InsertRubrics` puts each written answer's rubric where the instructor grades it. The
rubric is written in the source notebook inside the answer cell's solution region, between
``### BEGIN RUBRIC`` and ``### END RUBRIC`` (what earns full, half and no marks), so nbgrader's
ClearSolutions removes it from the release with the model answer. At autograde (last in
``Autograde.autograde_preprocessors``) it reads the source notebook of the assignment and
inserts, right after the learner's answer cell, a read-only markdown cell holding the
rubric: formgrader shows the autograded notebook, so the rubric sits next to the answer
being graded. Feedback is generated from the autograded notebook, so the learner reads the
rubric after grading too (the course's choice: the criteria explain the written mark);
:class:`DropRubrics` in ``GenerateFeedback.preprocessors`` takes it out of the feedback.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
from nbgrader.coursedir import CourseDirectory
from nbformat.v4 import new_output
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Integer, Unicode

from ctxlab.grading.tamper import REVIEW_ENAME
from ctxlab.quiz.written import RUBRIC_BEGIN, RUBRIC_END, rubric_of  # noqa: F401  (one parser of rubrics)

HIDDEN_NOTE = "非公開のテストが失敗しました（中身は表示されません）。課題の説明と公開テストを見直してください。"
#: errors that show their message as one line and carry nothing of a test: an exercise not solved (the codec rebuilds
#: a learner's Unsolved with its fixed message) and a knowledge-check answer missing or not a choice id (the message
#: names the question and the learner's own answer). Their feedback shows the message, not the hidden-test note.
ONE_LINE_ERRORS = frozenset({"Unsolved", "AnswerMissing"})
TIMEOUT_NOTE = ("制限時間内に終わりませんでした（無限ループや、終わらない待ちがないか確かめてください）。"
                "このセルのテストは不合格として採点されています。")
LEAK_NOTE = "（この出力は非公開のテストの中身を含むため表示しません）"
TRUNCATED_NOTE = "\n… 出力が長すぎるため、ここで省略しました（全 {total:,} 文字のうち先頭 {kept:,} 文字を表示）…\n"
DROPPED_NOTE = "出力が大きすぎるため省略しました（{size:,} バイトの {kind}）。"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_LINE = re.compile(r"(?:Cell In\s*\[[^\]]*\], line|line) (\d+)")
_CELL_REF = re.compile(r"(?:Cell In\s*\[\s*(\d+)\s*\]|<ipython-input-(\d+)-)")


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


def secret_lines(nb, begin: str, end: str, shortest: int = 8) -> set[str]:
    """The lines of every hidden test of a notebook (markers left out), stripped, of at
    least ``shortest`` characters (shorter ones could match an honest output by chance)."""
    out = set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        lines = cell.source.split("\n")
        for n in hidden_lines(cell.source, begin, end):
            line = lines[n - 1].strip()
            if len(line) >= shortest and begin not in line and end not in line:
                out.add(line)
    return out


def _strings(value) -> list[str]:
    """Every string inside an output (stream text, each data type, error value, traceback)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [x for v in value.values() for x in _strings(v)]
    if isinstance(value, list):
        return [x for v in value for x in _strings(v)]
    return []


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


def _cell_refs(entry: str) -> set[int]:
    text = _ANSI.sub("", entry)
    return {int(a or b) for a, b in _CELL_REF.findall(text)}


class HideHiddenTestTracebacks(NbGraderPreprocessor):
    begin_test_delimeter = Unicode("BEGIN HIDDEN TESTS").tag(config=True)
    end_test_delimeter = Unicode("END HIDDEN TESTS").tag(config=True)

    def preprocess(self, nb, resources):
        # a learner's cell that quotes a marker would make ClearHiddenTests fail ("No end hidden
        # tests statement found") and the learner would get no feedback: only the locked test
        # cells (restored from the gradebook by nbgrader) may hold markers
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            if not (meta.get("grade") and not meta.get("solution")):
                for marker in (self.begin_test_delimeter, self.end_test_delimeter):
                    cell.source = cell.source.replace(marker, marker.replace(" ", "-"))
        self._secret_lines = secret_lines(nb, self.begin_test_delimeter, self.end_test_delimeter)
        # execution counts of the cells that hold hidden tests: tracebacks name cells by them
        self._secret_counts = {
            cell.get("execution_count") for cell in nb.cells
            if cell.cell_type == "code" and cell.get("execution_count") is not None
            and hidden_lines(cell.source, self.begin_test_delimeter, self.end_test_delimeter)
        }
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, cell_index):
        if cell.cell_type != "code":
            return cell, resources
        if not cell.metadata.get("nbgrader", {}).get("grade"):
            self._filter_other_cell(cell)
        else:
            self._rewrite_grade_cell(cell)
        self._drop_leaks(cell)
        return cell, resources

    def _rewrite_grade_cell(self, cell) -> None:
        hidden = hidden_lines(cell.source, self.begin_test_delimeter, self.end_test_delimeter)
        lines = cell.source.split("\n")
        for out in cell.get("outputs", []):
            if out.get("output_type") != "error":
                continue
            ename, evalue = out.get("ename", "Error"), out.get("evalue", "")
            if ename == REVIEW_ENAME:
                continue  # the grader's own note: the submission is held for review
            if ename == "CellTimeoutError":
                out["evalue"] = ""
                out["traceback"] = [f"{ename}: {TIMEOUT_NOTE}"]
                continue
            n = failing_line(out.get("traceback", []))
            if n is None and ename in ONE_LINE_ERRORS:   # the course's own one-line errors: the message is the learner's
                out["traceback"] = [f"{ename}: {evalue}"]
                continue
            head = f"{ename}: {evalue}" if evalue else ename
            if n is None or n in hidden or n > len(lines):
                out["evalue"] = "" if (n is None or n in hidden) else evalue
                out["traceback"] = [f"{ename}: {HIDDEN_NOTE}"]
            else:
                out["traceback"] = [f"失敗した行 {n}: {lines[n - 1].strip()}", head]

    def _drop_leaks(self, cell) -> None:
        secret = getattr(self, "_secret_lines", set())
        for i, out in enumerate(cell.get("outputs", [])):
            text = _ANSI.sub("", "\n".join(_strings(out)))
            if secret and any(line in text for line in secret):
                cell.outputs[i] = new_output("stream", name="stdout", text=LEAK_NOTE + "\n")

    def _filter_other_cell(self, cell) -> None:
        secret = getattr(self, "_secret_counts", set())
        if not secret:
            return
        for out in cell.get("outputs", []):
            if out.get("output_type") != "error":
                continue
            tb = out.get("traceback", [])
            kept = [e for e in tb if not (_cell_refs(e) & secret)]
            if len(kept) != len(tb):
                out["traceback"] = kept + ["（非公開のテストを含むセルの行は表示しません）"]


class LimitOutputSize(NbGraderPreprocessor):
    """Cap the size of each code cell's outputs (nbgrader's LimitOutput counts lines only)."""

    max_stream_chars = Integer(
        100_000, help="characters of stream output (stdout + stderr) kept per cell; -1 means no limit"
    ).tag(config=True)
    max_output_bytes = Integer(
        2_000_000, help="a rich output (display data, result, error) larger than this is replaced by a note; -1 means no limit"
    ).tag(config=True)

    def preprocess_cell(self, cell, resources, cell_index):
        if cell.cell_type != "code":
            return cell, resources
        used, truncated, kept_outputs = 0, False, []
        for out in cell.get("outputs", []):
            kind = out.get("output_type")
            if kind == "stream" and self.max_stream_chars >= 0:
                if truncated:
                    continue  # the note is already there
                text = out.get("text", "")
                room = max(self.max_stream_chars - used, 0)
                if len(text) > room:
                    out["text"] = text[:room] + TRUNCATED_NOTE.format(total=len(text), kept=room)
                    truncated = True
                used += min(len(text), room)
            elif kind in ("display_data", "execute_result", "error") and self.max_output_bytes >= 0:
                size = len(json.dumps(out, ensure_ascii=False))
                if size > self.max_output_bytes:
                    note = DROPPED_NOTE.format(size=size, kind=kind)
                    if kind == "error":
                        out["evalue"] = str(out.get("evalue", ""))[:1000]
                        out["traceback"] = [out["evalue"], note]
                    else:
                        out["data"] = {"text/plain": note}
                        out["metadata"] = {}
            kept_outputs.append(out)
        cell.outputs = kept_outputs
        return cell, resources


# --------------------------------------------------------------------------- rubrics of written answers

RUBRIC_TITLE = ("**記述問題の採点基準: {grade_id}（{points} 点）** — 講師が点を付ける基準です"
                "（教材から自動で入る欄で、受講者の答えではありません）。")
RUBRIC_KEY = "ctxlab_rubric"   # cell metadata that marks an inserted rubric (its value: the answer's grade_id)


def rubrics(nb) -> dict[str, tuple[str, float]]:
    """grade_id -> (rubric, points) of every manually graded answer of a source notebook that has one."""
    out = {}
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        text = rubric_of(cell.source) if meta.get("solution") and meta.get("grade") else None
        if text:
            out[meta["grade_id"]] = (text, meta.get("points", 0))
    return out


def rubric_cell(grade_id: str, text: str, points: float):
    """The read-only markdown cell that shows a rubric next to the answer it grades."""
    cell = nbformat.v4.new_markdown_cell(RUBRIC_TITLE.format(grade_id=grade_id, points=f"{points:g}") + "\n\n" + text)
    cell.metadata.update({RUBRIC_KEY: grade_id, "editable": False, "deletable": False})
    # a stable id, so the autograded notebook is the same on every run
    cell.id = f"rubric-{grade_id}"[:64]
    return cell


class InsertRubrics(NbGraderPreprocessor):
    """Autograde: insert each written answer's rubric, from the source notebook, after the learner's answer."""

    def _source_notebook(self, resources) -> Path:
        coursedir = CourseDirectory(config=self.config)
        info = resources["nbgrader"]
        folder = coursedir.format_path(coursedir.source_directory, ".", info["assignment"])
        return Path(folder) / f"{info['notebook']}.ipynb"

    def preprocess(self, nb, resources):
        path = self._source_notebook(resources)
        found = rubrics(nbformat.read(path, as_version=4)) if path.exists() else {}
        cells = []
        for cell in nb.cells:
            if RUBRIC_KEY in cell.metadata:
                continue   # only the source's rubric is shown, never a copy that came with the submission
            cells.append(cell)
            gid = cell.metadata.get("nbgrader", {}).get("grade_id")
            if gid in found and cell.metadata["nbgrader"].get("solution"):
                cells.append(rubric_cell(gid, *found.pop(gid)))
        nb.cells = cells
        return nb, resources


class DropRubrics(NbGraderPreprocessor):
    """Feedback without the rubrics (add to ``GenerateFeedback.preprocessors`` to keep them instructor-only)."""

    def preprocess(self, nb, resources):
        nb.cells = [c for c in nb.cells if RUBRIC_KEY not in c.metadata]
        return nb, resources


#: the stub nbgrader's ClearSolutions leaves in a code answer (its default ``code_stub``)
STUB = "raise NotImplementedError()"
#: what a released answer raises instead: ctxlab.errors.Unsolved shows its message as one line
#: (every lesson's first code cell imports ctxlab)
PENDING = "raise ctxlab.Unsolved({exercise!r})"
#: JupyterLab, the classic notebook and nbclient go on past an error in a cell with this tag
RUN_ON = "raises-exception"
#: an answer cell with this tag loses its stub instead (its released lines already do the exercise's
#: step, e.g. 09's ``answers = quiz.write_answers()``, which a raise would stop)
NO_STUB = "no-stub"
#: the comment nbgrader's ClearSolutions puts above the stub (its default ``code_stub``)
STUB_COMMENT = "# YOUR CODE HERE"
_EXERCISE = re.compile(r"^#{2,4}\s*(演習\s*\d+)", re.M)


class LearnerRunAll(NbGraderPreprocessor):
    """A released lesson runs top to bottom before its exercises are solved.

    In ``GenerateAssignment.preprocessors`` right after ``ClearSolutions``. Each stub that
    ClearSolutions left (``raise NotImplementedError()``) becomes ``raise ctxlab.Unsolved("演習 N")``,
    naming the exercise it belongs to (the closest ``### 演習 N`` heading above): IPython shows it
    as one line in Japanese that says how to go on, not a traceback (ctxlab.errors.Unsolved);
    each answer cell and each autograded test cell gets the ``raises-exception`` tag, so Run All
    in JupyterLab goes on past an unsolved exercise instead of stopping there. Grading is
    unchanged: nbgrader executes every cell anyway and scores a test cell by its error (Unsolved is
    a NotImplementedError, so the test cell still fails). An answer
    cell tagged :data:`NO_STUB` loses the stub instead: its released lines are the exercise's step
    (09's ``answers = quiz.write_answers()``), and a raise after them would stop JupyterLab from
    applying what that line asks for (it replaces the cell's text only after a cell that succeeded).
    """

    def preprocess(self, nb, resources):
        exercise = None
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                found = _EXERCISE.findall(cell.source)
                if found:
                    exercise = re.sub(r"\s+", " ", found[-1])
                continue
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type != "code" or not (meta.get("solution") or meta.get("grade")):
                continue
            if meta.get("solution") and STUB in cell.source and NO_STUB in cell.metadata.get("tags", []):
                lines = cell.source.split("\n")
                cell.source = "\n".join(x for x in lines if x.strip() not in (STUB, STUB_COMMENT))
            elif meta.get("solution") and STUB in cell.source:
                cell.source = cell.source.replace(STUB, PENDING.format(exercise=exercise or "この演習"))
            tags = list(cell.metadata.get("tags", []))
            if RUN_ON not in tags:
                cell.metadata["tags"] = tags + [RUN_ON]
        return nb, resources
