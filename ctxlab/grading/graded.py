"""Grading: the tests run outside the learner's process (autograde with two kernels per submission).

Why it holds. nbgrader runs every cell of a submission in one kernel, so a learner's code would
run beside the hidden tests' source, their expected values, their helpers and their output, and
could read, rebind or copy them. :class:`GradedExecute` (named in ``nbgrader_config.py``) keeps
nbgrader's flow (cells in order, outputs, errors = 0 points, feedback) but uses two kernels:

- the learner's kernel, in the sandbox (:mod:`~ctxlab.grading.isolation`), runs every cell that
  is not a graded test cell;
- a grader kernel (unsandboxed, offline, no secrets) never executes learner code. Each graded test
  cell runs there: nbclient's kernel client is swapped for that cell, so outputs, errors and
  tracebacks arrive as usual. Before a test cell the grader kernel runs, from the instructor's
  source notebook, the lesson cells (not answer cells, not tests) the test depends on (a
  name-dependency slice, :class:`Plan`, with names counted by Python's own scoping), and binds
  the names the learner's answer cells define at the top level
  (:func:`ctxlab.grading.harness.bind`): functions as proxies whose calls cross as data, values
  fetched as data (:mod:`~ctxlab.grading.codec`). The lesson cells that read no learner name and
  share no name with what must wait before them (:attr:`Plan.early`) are sent as soon as the
  grader kernel starts, so they run while the learner's kernel runs its cells.

So the test cell's source, its expected values and helpers, the lesson objects it compares
against and its output never enter the learner's process, and whatever the learner's process
does to itself (hooks, patched builtins or library, frames, audit hooks) cannot reach them. What
remains: a learner's function sees its own arguments (and the results of a test's function it is
handed), and can answer anything: only a value that matches the test earns points.

Without a source notebook (``nbgrader validate``, self-study) the cells run as before, in one kernel.
"""
from __future__ import annotations

import builtins
import json
import os
import shutil
import symtable
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from queue import Empty

import nbformat
from jupyter_client.manager import AsyncKernelManager
from nbclient.util import run_sync
from nbformat.v4 import new_output
from traitlets import Bool, Float

from ctxlab.grading.isolation import KEEP_ENV, IsolatedExecute

REVIEW_KEY = "ctxlab_review"          # notebook metadata (autograded copy): why it is held (tamper.FlagForReview)
REVIEW_ENAME = "GradingHeldForReview"  # the error output each test cell of a held submission gets
REVIEW_NOTE = ("この提出は、採点側の準備がうまくいかなかったため自動採点していません（提出した人の問題ではありません）。"
               "講師が原因を確かめて採点し直します。")
_BUILTINS = set(dir(builtins)) | {"get_ipython", "display", "In", "Out", "exit", "quit"}


def is_test_cell(cell) -> bool:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return cell.get("cell_type") == "code" and bool(meta.get("grade")) and not meta.get("solution")


def is_answer_cell(cell) -> bool:
    return cell.get("cell_type") == "code" and bool(cell.get("metadata", {}).get("nbgrader", {}).get("solution"))


def _table(source: str) -> symtable.SymbolTable | None:
    lines = [("pass  # " + ln) if ln.lstrip().startswith(("%", "!")) else ln for ln in source.splitlines()]
    try:
        return symtable.symtable("\n".join(lines), "<cell>", "exec")
    except (SyntaxError, ValueError):
        return None


def scan(source: str) -> tuple[set[str], set[str]]:
    """The global names a cell reads and binds, with Python's own scoping (:mod:`symtable`).

    Reads: names referenced at the top level or, as globals, in any function, class or
    comprehension of the cell. Binds: names assigned, imported, defined or deleted at the top
    level, and names a function declares ``global`` and assigns. A function's parameters and
    locals are neither (a helper's parameter named like a lesson global is not that global)."""
    top = _table(source)
    reads: set[str] = set()
    binds: set[str] = set()
    if top is None:
        return reads, binds
    for sym in top.get_symbols():
        if sym.is_referenced():
            reads.add(sym.get_name())
        if sym.is_assigned() or sym.is_imported() or sym.is_namespace():
            binds.add(sym.get_name())
    stack = list(top.get_children())
    while stack:
        table = stack.pop()
        stack.extend(table.get_children())
        for sym in table.get_symbols():
            if sym.is_global() and sym.is_referenced():
                reads.add(sym.get_name())
            if sym.is_declared_global() and sym.is_assigned():
                binds.add(sym.get_name())
    return reads - _BUILTINS, binds


def defined(source: str) -> set[str]:
    """Global names a cell binds (:func:`scan`)."""
    return scan(source)[1]


def loaded(source: str) -> set[str]:
    """Global names a cell reads that it does not bind itself (nor are built in)."""
    reads, binds = scan(source)
    return reads - binds


@dataclass
class Plan:
    """What the grader kernel runs before each test cell: lesson cells of the source notebook
    (by a name-dependency slice) and the learner's names to bind (see the module docstring)."""
    lesson: list[str] = field(default_factory=list)          # source's lesson cells, in order
    before: dict[str, list[int]] = field(default_factory=dict)  # grade_id -> lesson cells to run first
    learner_names: set[str] = field(default_factory=set)     # names the answer cells define
    needs: dict[str, list[str]] = field(default_factory=dict)   # grade_id -> learner names the test reads
    early: list[int] = field(default_factory=list)           # lesson cells to send as soon as the kernel is up

    @classmethod
    def of(cls, source_nb) -> "Plan":
        plan = cls()
        cells = [c for c in source_nb.cells if c.cell_type == "code"]
        for c in cells:
            if is_answer_cell(c):
                plan.learner_names |= defined(c.source)
        # lesson cells, each with the index of the test cells before it
        positions: list[tuple[int, str]] = []   # (lesson index, source)
        tests: list[tuple[str, int, str]] = []  # (grade_id, lesson cells before it, source)
        for c in cells:
            if is_test_cell(c):
                tests.append((c.metadata["nbgrader"]["grade_id"], len(positions), c.source))
            elif not is_answer_cell(c) and c.source.strip():
                positions.append((len(positions), c.source))
        plan.lesson = [s for _, s in positions]
        for gid, upto, src in tests:
            need = loaded(src)
            plan.needs[gid] = sorted(need & plan.learner_names)
            chosen: set[int] = set()
            want = set(need - plan.learner_names)
            for i in range(upto - 1, -1, -1):
                src_i = plan.lesson[i]
                if defined(src_i) & want:
                    chosen.add(i)
                    want |= loaded(src_i) - plan.learner_names
            plan.before[gid] = sorted(chosen)
        plan.early = plan._early([(gid, src) for gid, _, src in tests])
        return plan

    def _early(self, tests: list[tuple[str, str]]) -> list[int]:
        """The lesson cells that can run as soon as the grader kernel is up, in order: those that read
        no learner name and commute with everything that must wait before them (the cells that read a
        learner name, the learner's names bound, the test cells). Walking the order the grader runs
        cells in (each test's slice, then the test), a cell is early when it shares no global name
        with what waits before it (it neither reads nor binds a name those read or bind: a shared
        name could be mutated by either), so moving it ahead changes no value any cell sees."""
        early: list[int] = []
        waiting: set[str] = set()      # every global name the waiting cells read or bind
        done: set[int] = set()
        for gid, src in tests:
            for i in self.before[gid]:
                if i in done:
                    continue
                done.add(i)
                reads, binds = scan(self.lesson[i])
                if reads & self.learner_names or (reads | binds) & waiting:
                    waiting |= reads | binds
                else:
                    early.append(i)
            reads, binds = scan(src)
            waiting |= reads | binds | set(self.needs[gid])
        return early


def source_notebook(config, resources) -> Path | None:
    """The instructor's source notebook of the submission being autograded (None outside autograde)."""
    from nbgrader.coursedir import CourseDirectory

    info = resources.get("nbgrader") if isinstance(resources, dict) else None
    if not info or "assignment" not in info or "notebook" not in info:
        return None
    coursedir = CourseDirectory(config=config)
    path = Path(coursedir.format_path(coursedir.source_directory, ".", info["assignment"])) / f"{info['notebook']}.ipynb"
    return path if path.exists() else None


class GradedExecute(IsolatedExecute):
    """nbgrader's ``Execute`` with the learner's kernel in the sandbox and every graded test cell
    in a grader kernel (see the module docstring)."""

    tests_outside = Bool(True, help="run graded test cells in a grader kernel that never runs learner code").tag(config=True)
    grader_timeout_factor = Float(2.0, help="a test cell's timeout in the grader kernel, and a lesson cell's there, "
                                           "as a multiple of the cell timeout (the learner's function runs within it)").tag(config=True)

    def preprocess(self, nb, resources=None, km=None):
        source = source_notebook(self.config, resources or {}) if self.tests_outside else None
        self._plan = Plan.of(nbformat.read(source, as_version=4)) if source else None
        self._grader = self._grader_kc = None
        self._pending: list[tuple[str, str]] = []
        self._linked = self._readied = False
        self._ran: set[int] = set()
        self._setup_error: str | None = None
        self._workdir = Path(tempfile.mkdtemp(prefix="ctxlab-grader-"))
        try:
            if self._plan is not None:
                try:
                    self._start_grader(source.parent)
                except Exception as exc:  # noqa: BLE001 - held for review with the reason, not a crash
                    self._setup_error = f"採点側のカーネルが起動しませんでした: {type(exc).__name__}: {exc}"
            nb, resources = super().preprocess(nb, resources, km)
        finally:
            self._stop_grader()
        if self._setup_error is not None:   # a cause the instructor can act on: held, not blamed on the learner
            resources[REVIEW_KEY] = [f"採点側の準備: {self._setup_error}"]
        return nb, resources

    # ------------------------------------------------------------------ the grader kernel

    def _start_grader(self, folder: Path) -> None:
        for p in folder.iterdir():   # the lesson's files beside it (data the lesson cells read)
            if p.is_file() and p.suffix not in (".ipynb", ".py"):
                shutil.copy(p, self._workdir / p.name)
        env = {k: v for k, v in os.environ.items() if k in KEEP_ENV or k in ("PATH", "HOME")}
        env.update(CTXLAB_OFFLINE="1", MPLBACKEND="Agg", CTXLAB_TIME_SCALE="0", PYTHONIOENCODING="utf-8")
        km = AsyncKernelManager(kernel_name=self.kernel_name or "python3")
        run_sync(km.start_kernel)(cwd=str(self._workdir), env=env,
                                  extra_arguments=["--HistoryManager.hist_file=:memory:"])
        self._grader = km

    def _stop_grader(self) -> None:
        if self._grader is not None:
            try:
                for client in (self._grader_kc, getattr(self, "_ctl", None)):
                    if client is not None:
                        client.stop_channels()
                run_sync(self._grader.shutdown_kernel)(now=True)
            except Exception:  # noqa: BLE001 - already gone
                pass
            self._grader = None
        shutil.rmtree(self._workdir, ignore_errors=True)

    def _connect(self) -> None:
        """Open clients on the grader kernel (once) and send it, without waiting, the lesson cells that
        can run ahead (:attr:`Plan.early`): they run while the learner's kernel runs. The requests
        wait in the client's queue while the kernel is still starting; :meth:`_ready` waits for it
        before the first test cell."""
        if self._grader_kc is not None or self._setup_error is not None:
            return
        try:
            self._grader_kc = self._grader.client()
            self._grader_kc.start_channels()
            self._grader_kc.allow_stdin = False
            self._ctl = self._grader.blocking_client()
            self._ctl.start_channels()
        except Exception as exc:  # noqa: BLE001 - the tests that need it are held, with the reason
            self._setup_error = f"採点側のカーネルが起動しませんでした: {type(exc).__name__}: {exc}"
            return
        self._send("from ctxlab.grading import harness as _ctxlab_harness", "採点の準備")
        for i in self._plan.early:
            self._run_lesson(i)
        self._prefetch(next(iter(self._plan.before), None))

    def _prefetch(self, gid: str | None) -> None:
        """Send the lesson cells of test ``gid``'s slice that need no learner name, in order, up to the
        first that does: the grader kernel runs them while the learner's kernel runs its cells (a
        learner's name is bound only once the learner's kernel has reached the test)."""
        for i in self._plan.before.get(gid, []) if gid is not None else []:
            if i in self._ran:
                continue
            if loaded(self._plan.lesson[i]) & self._plan.learner_names:
                break
            self._run_lesson(i)

    def _run_lesson(self, i: int) -> None:
        """Queue lesson cell ``i`` of the source notebook, once, after binding the learner's names it reads."""
        self._ran.add(i)
        src = self._plan.lesson[i]
        self._bind(sorted(loaded(src) & self._plan.learner_names))
        self._send(src, f"レッスンのセル（{i + 1} 番目）")

    def _send(self, code: str, what: str) -> None:
        """Queue instructor code in the grader kernel (silent; :meth:`_settle` collects the replies)."""
        if self._setup_error is None:
            msg_id = self._ctl.execute(code, silent=True, store_history=False, allow_stdin=False)
            self._pending.append((msg_id, what))

    def _ready(self) -> None:
        """Wait (once, before the first test cell) until the test cell's client hears the grader kernel
        on both channels: a ``kernel_info`` reply on shell and that request's idle status on iopub (so
        no output of the test is lost). A kernel that died or never answered holds the tests."""
        if self._readied or self._setup_error is not None:
            return
        self._readied = True
        try:
            run_sync(self._async_ready)(self.startup_timeout)
        except Exception as exc:  # noqa: BLE001 - the tests that need it are held, with the reason
            self._setup_error = f"採点側のカーネルが起動しませんでした: {type(exc).__name__}: {exc}"

    async def _async_ready(self, timeout: float) -> None:
        kc, deadline = self._grader_kc, time.monotonic() + timeout
        while time.monotonic() < deadline:
            msg_id = kc.kernel_info()
            if await self._heard(kc.shell_channel, msg_id, None, deadline) and \
                    await self._heard(kc.iopub_channel, msg_id, "idle", min(deadline, time.monotonic() + 1)):
                return
            if not await kc.is_alive():
                raise RuntimeError("カーネルが止まりました")
        raise RuntimeError(f"{timeout:g} 秒たっても応答しませんでした")

    @staticmethod
    async def _heard(channel, msg_id: str, state: str | None, deadline: float) -> bool:
        """Whether ``channel`` delivers a message of request ``msg_id`` (an iopub status ``state``) by ``deadline``."""
        while (left := deadline - time.monotonic()) > 0:
            try:
                msg = await channel.get_msg(timeout=min(left, 1.0))
            except Empty:
                return False
            if msg.get("parent_header", {}).get("msg_id") == msg_id and (
                    state is None or msg.get("content", {}).get("execution_state") == state):
                return True
        return False

    def _settle(self) -> None:
        """Wait for every queued request; the first failure fails (and holds) the tests that need it."""
        wait = (self.timeout or 120) * self.grader_timeout_factor
        deadline = time.monotonic() + wait
        while self._pending and self._setup_error is None:
            try:
                msg = self._ctl.get_shell_msg(timeout=max(0.01, min(5.0, deadline - time.monotonic())))
            except Empty:
                if not run_sync(self._grader.is_alive)():
                    self._setup_error = "採点側のカーネルが止まりました（採点するマシンのメモリが足りているか確かめてください）"
                elif time.monotonic() >= deadline:
                    what = self._pending[0][1]
                    self._setup_error = f"{what}が {wait:g} 秒で終わりませんでした（採点するマシンが混んでいないか確かめてください）"
                continue
            ids = [m for m, _ in self._pending]
            parent = msg.get("parent_header", {}).get("msg_id")
            if parent not in ids:
                continue
            what = self._pending.pop(ids.index(parent))[1]
            deadline = time.monotonic() + wait
            c = msg["content"]
            if c.get("status") != "ok":
                self._setup_error = f"{what}: {c.get('ename', c.get('status'))}: {c.get('evalue', '')}"
        self._pending = []

    def _bind(self, names: list[str]) -> None:
        if names:
            self._send(f"_ctxlab_harness.bind(globals(), {names!r})", "受講者の名前の受け取り")

    def _get_timeout(self, cell):
        timeout = super()._get_timeout(cell)
        if timeout and getattr(self, "_in_grader", False):   # the learner's function runs within the test's time
            return int(timeout * self.grader_timeout_factor)
        return timeout

    def preprocess_cell(self, cell, resources, index):
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if self._plan is None:
            return super().preprocess_cell(cell, resources, index)
        self._connect()
        if not is_test_cell(cell) or gid not in self._plan.before:
            return super().preprocess_cell(cell, resources, index)
        if not self._linked:
            self._linked = True
            self._send(f"_ctxlab_harness.connect({json.dumps(str(self.km.connection_file))})", "受講者のカーネルへの接続")
        for i in self._plan.before[gid]:
            if i not in self._ran:
                self._run_lesson(i)
        self._bind(self._plan.needs[gid])
        self._settle()
        self._ready()
        if self._setup_error is not None:
            cell.outputs = [new_output("error", ename=REVIEW_ENAME, evalue=REVIEW_NOTE,
                                       traceback=[f"{REVIEW_ENAME}: {REVIEW_NOTE}"])]
            return cell, resources
        learner_kc = self.kc
        self.kc, self._in_grader = self._grader_kc, True
        try:
            return super().preprocess_cell(cell, resources, index)
        finally:
            self.kc, self._in_grader = learner_kc, False
            order = list(self._plan.before)
            if gid in order and order.index(gid) + 1 < len(order):
                self._prefetch(order[order.index(gid) + 1])
