"""Grading: tests the learner's code cannot silence, and a submission that tried is held for review.

Why it holds. nbgrader runs the learner's cells and the hidden tests in one IPython kernel, so
a learner's cell can install what later rewrites or hides the tests: an input transformer that
empties every cell, an AST transformer that wraps cells in ``try/except`` or drops ``assert``,
a ``pre_run_cell`` hook that reads the expected answer out of a hidden test, a patched
``showtraceback`` or ``ExecutionResult.success``, a custom exception handler, a trace function,
patched builtins or a patched library. Three layers close that, each with its own job:

1. **Restore before every test cell, by a path the learner's hooks do not see.**
   :class:`GuardedExecute` (nbgrader's ``Execute`` with the sandboxed kernel of
   :mod:`~ctxlab.grading.isolation`) snapshots every hook point before the first cell runs,
   and before each graded test cell compares and restores them
   (:mod:`~ctxlab.grading._guard`). It reaches the kernel through an ``execute_request`` with
   empty code and a ``user_expressions`` call: IPython returns before any transformer or
   ``pre_run_cell`` hook on an empty cell, and evaluates the expression with ``eval``. So the
   test cell runs through IPython's own transformers, with IPython's own traceback display.
2. **A trace of having run.** During the test cell a ``post_run_cell`` callback of the
   guard's records the cell's result. After the cell the grader checks: the cell IPython ran
   is the test cell, an error was shown if the cell raised, and nothing changed the hook points
   (a trace function included) while the test called the learner's function.
3. **The learner's cells are read before they run** (:mod:`~ctxlab.grading._scan`): the
   names that reach the shell, the interpreter's hooks, frames, code objects or the guard
   itself (``get_ipython``, ``sys.settrace``, ``_getframe``, ``exec``, ``getattr``, dunder
   attributes, assignment into an imported module…). Layer 1 lives in the learner's process,
   so a learner could in principle tamper with the guard itself; doing so needs those names.

A finding of any layer means: every autograded test cell of the notebook gets an error output
that says the submission is held (so it earns 0 automatic points, nbgrader's own rule), and
:class:`FlagForReview` (after ``SaveAutoGrades``) marks those grades ``needs_manual_grade``
and writes the findings into the autograded notebook's metadata (``ctxlab_review``), from which
``ctxlab grade`` reports them in the summary and the grades CSV. The instructor reviews and
grades by hand in formgrader; the LMS files hold the submission back until then.
"""
from __future__ import annotations

import ast
import hashlib
import json
from pathlib import Path

import nbformat
from nbformat.v4 import new_output
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Bool

from ctxlab.grading import _scan
from ctxlab.grading.isolation import IsolatedExecute

REVIEW_KEY = "ctxlab_review"          # notebook metadata (autograded copy): the findings
REVIEW_ENAME = "GradingHeldForReview"  # the error output each test cell gets
REVIEW_NOTE = ("この提出は自動採点していません。採点の仕組み（IPython のフック・組み込み関数・トレースなど）に"
               "手を加えるコードが見つかったため、講師が確認して採点します。")
_GUARD = '__import__("ctxlab.grading._guard", fromlist=["_"]).'


def is_test_cell(cell) -> bool:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return cell.get("cell_type") == "code" and bool(meta.get("grade")) and not meta.get("solution")


def ctxlab_imports(nb) -> list[str]:
    """The ctxlab modules any code cell imports (the guard imports them before the learner's code)."""
    out: list[str] = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            out += [n for n in names if n.startswith("ctxlab") and n not in out]
    return out


def _source_notebook(config, resources) -> Path | None:
    from nbgrader.coursedir import CourseDirectory

    info = resources.get("nbgrader") if isinstance(resources, dict) else None
    if not info or "assignment" not in info:
        return None
    coursedir = CourseDirectory(config=config)
    path = Path(coursedir.format_path(coursedir.source_directory, ".", info["assignment"])) / f"{info['notebook']}.ipynb"
    return path if path.exists() else None


class GuardedExecute(IsolatedExecute):
    """nbgrader's ``Execute`` in the sandbox, with the hook points restored before every test
    cell and every finding recorded (see the module docstring)."""

    guard = Bool(True, help="restore the shell's hook points before every test cell and hold "
                            "submissions that changed them for review").tag(config=True)

    def preprocess(self, nb, resources=None, km=None):
        self._findings: list[str] = []
        self._installed = False
        if self.guard:
            self._modules = ctxlab_imports(nb)
            source = _source_notebook(self.config, resources or {})
            if source is not None:
                instructor = {c.source for c in nbformat.read(source, as_version=4).cells if c.cell_type == "code"}
                code = [c for c in nb.cells if c.cell_type == "code"]
                cells = [(i + 1, c.source) for i, c in enumerate(code) if not is_test_cell(c)]
                self._findings += [f"受講者のコード: {x}" for x in
                                   _scan.findings(cells, instructor, [c.source for c in code])]
        nb, resources = super().preprocess(nb, resources, km)
        if self.guard and self._findings:
            held(nb, self._findings)
            resources[REVIEW_KEY] = list(dict.fromkeys(self._findings))
        return nb, resources

    def _call(self, expr: str) -> dict | None:
        """Evaluate ``ctxlab.grading._guard.<expr>`` in the kernel, past the shell's hooks."""
        try:
            msg_id = self.kc.execute("", silent=True, store_history=False, allow_stdin=False,
                                     user_expressions={"guard": _GUARD + expr})
            reply = self.wait_for_reply(msg_id)
            value = (reply or {}).get("content", {}).get("user_expressions", {}).get("guard", {})
            if value.get("status") != "ok":
                return None
            return json.loads(ast.literal_eval(value["data"]["text/plain"]))
        except Exception:  # noqa: BLE001 - a kernel that does not answer is itself a finding
            return None

    def preprocess_cell(self, cell, resources, index):
        if not self.guard or cell.cell_type != "code":
            return super().preprocess_cell(cell, resources, index)
        if not self._installed:
            self._installed = True
            answer = self._call(f"install({json.dumps(self._modules)})")
            if not (answer and answer.get("ok")):
                self._findings.append("採点の見張りを準備できませんでした（カーネルが答えません）")
        test = is_test_cell(cell)
        gid = cell.metadata.get("nbgrader", {}).get("grade_id", f"cell {index}")
        if test:
            answer = self._call("before()")
            if not (answer and answer.get("ok")):
                self._findings.append(f"{gid} の前: 採点の見張りが答えません")
            elif answer["found"]:
                self._findings.append(f"{gid} の前に復元: " + ", ".join(answer["found"]))
        cell, resources = super().preprocess_cell(cell, resources, index)
        if test:
            self._judge(cell, gid, self._call("after()"))
        return cell, resources

    def _judge(self, cell, gid: str, answer: dict | None) -> None:
        """What the run of one test cell left: a trace of having run, and nothing changed."""
        if not (answer and answer.get("ok")):
            self._findings.append(f"{gid} の後: 採点の見張りが答えません")
            return
        if answer["found"]:
            self._findings.append(f"{gid} の実行中に: " + ", ".join(answer["found"]))
        if answer.get("cell") != hashlib.sha256(cell.source.encode("utf-8")).hexdigest():
            self._findings.append(f"{gid}: テストセルが実行された記録がありません")
            return
        shown = any(o.get("output_type") == "error" for o in cell.get("outputs", []))
        if answer.get("error") and not shown:
            self._findings.append(f"{gid}: テストは失敗したのに、エラーが表示されませんでした")


def held(nb, findings: list[str]) -> None:
    """Every autograded test cell gets an error output first: 0 automatic points, and the feedback says why."""
    for cell in nb.cells:
        if is_test_cell(cell):
            cell.outputs.insert(0, new_output("error", ename=REVIEW_ENAME, evalue=REVIEW_NOTE,
                                              traceback=[f"{REVIEW_ENAME}: {REVIEW_NOTE}"]))


def review_of(notebook: Path) -> list[str]:
    """The findings :class:`FlagForReview` wrote into an autograded notebook (empty: none)."""
    try:
        meta = json.loads(Path(notebook).read_text(encoding="utf-8")).get("metadata", {})
    except (OSError, ValueError):
        return []
    found = meta.get(REVIEW_KEY) or []
    return [str(x) for x in found] if isinstance(found, list) else []


class FlagForReview(NbGraderPreprocessor):
    """After ``SaveAutoGrades``: a held submission's test grades need manual grading, and the
    autograded notebook says why (``metadata.ctxlab_review``; any value the submission
    brought is dropped)."""

    def preprocess(self, nb, resources):
        from nbgrader.api import Gradebook

        nb.metadata.pop(REVIEW_KEY, None)
        found = resources.get(REVIEW_KEY)
        if not found:
            return nb, resources
        nb.metadata[REVIEW_KEY] = list(found)
        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gb:
            for cell in nb.cells:
                if is_test_cell(cell):
                    grade = gb.find_grade(cell.metadata["nbgrader"]["grade_id"], info["notebook"],
                                          info["assignment"], info["student"])
                    grade.needs_manual_grade = True
            gb.db.commit()
        return nb, resources
