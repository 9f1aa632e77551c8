"""The graded build of ctxlab: the package with every exercise's library twin as recorded results.

Grading kernels (:mod:`ctxlab.grading.isolation` binds it over the package's folder) and the graded
laptop kit's wheel (tools/learner_bundle.py) import this build, made by one function,
:func:`graded_package`. In it, each function of :data:`TWINS` (the library functions that compute an
exercise's answer; the inventory is in :mod:`ctxlab._recorded`) keeps its signature and docstring,
and its body becomes a lookup of the results the lessons' narrative got from the real function:
:func:`record` runs every lesson's solution notebook offline with the twins wrapped, and keeps the
calls made outside nbgrader's hidden tests (the narrative's and the visible tests', which the release
shows anyway; a hidden test's inputs never enter the build: a learner who calls a twin gets no result
for them). Private helpers only a twin used go too.

The build is cached under the user's cache folder, keyed by a hash of the package's code, data/,
quizzes/ and the lesson notebooks (:func:`source_hash`), so ``ctxlab grade`` builds it once per
change of the course, not per kernel.
"""
from __future__ import annotations

import ast
import compileall
import contextlib
import fcntl
import functools
import hashlib
import importlib
import inspect
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ctxlab._paths import PACKAGE_DIR, REPO_ROOT
from ctxlab._recorded import Unkeyable, key
from ctxlab.costs import formulas, pricing
from ctxlab.errors import CtxlabError

__all__ = ["TWINS", "BuildError", "NoLessons", "graded_package", "kernel_package", "record", "replace_twins", "source_hash", "stage_package"]

#: the exercises' library twins: (module, function, leading statements kept: the input checks)
TWINS = (
    ("ctxlab.costs.formulas", "first_paying_call", 1),
    ("ctxlab.costs.formulas", "breakeven_reuses", 1),
    ("ctxlab.labs._agent_loop", "shape_costs", 0),
    ("ctxlab.labs._agent_loop", "compare_placements", 0),
    ("ctxlab.labs._agent_loop", "format_comparison", 0),
    ("ctxlab.labs.ttl", "day_cost", 0),
    ("ctxlab.labs.ttl", "compare_ttls", 0),
    ("ctxlab.labs.measure", "by_method", 0),
    ("ctxlab.labs.measure", "table", 0),
    ("ctxlab.evaluation.levels", "accuracy", 4),
    ("ctxlab.evaluation.uncertainty", "accuracy_interval", 2),
    ("ctxlab.retrieval.fusion", "rrf", 1),
    ("ctxlab.retrieval.metrics", "fact_recall", 0),
    ("ctxlab.retrieval.metrics", "hit_recall", 0),
    ("ctxlab.retrieval.metrics", "fact_coverage", 0),
    ("ctxlab.retrieval.metrics", "recall_curve", 0),
    ("ctxlab.retrieval.metrics", "recall_at_k", 0),
    ("ctxlab.retrieval.metrics", "mean_recall_at_k", 0),
)
EXERCISE_NOTE = "An exercise's answer: in the graded build, the results the lessons use (ctxlab/_recorded.py)."
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints", ".*")
#: the recorded results' file inside the built package (ctxlab._recorded.RECORDED)
RECORDED_REL = Path("_data") / "recorded.pkl"


class BuildError(CtxlabError, RuntimeError):
    """The graded build could not be made (a lesson failed while its calls were recorded)."""


class NoLessons(BuildError):
    """No lesson sources where the graded build looked for them."""


def rel_path(module: str) -> Path:
    """The file of a ctxlab module, relative to the package's parent (``ctxlab/costs/traffic.py``)."""
    return Path(*module.split(".")).with_suffix(".py")


# --- recording (runs inside a lesson's kernel) ---------------------------------------------------

_TABLE: dict[str, bytes] = {}
#: the prefix of a table entry that says a narrative call could not be recorded (its grading run will fail there)
FAILED = "!not recorded: "
_ACTIVE = [True]


def _recorder(name: str, real):
    sig = inspect.signature(real)

    @functools.wraps(real)
    def wrapper(*args, **kwargs):
        args = tuple(list(a) if isinstance(a, Iterator) else a for a in args)   # a generator is read once
        kwargs = {k: list(v) if isinstance(v, Iterator) else v for k, v in kwargs.items()}
        if not _ACTIVE[0]:
            return real(*args, **kwargs)
        try:
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            k = key(name, dict(bound.arguments))
        except (TypeError, Unkeyable) as exc:
            _TABLE[f"{FAILED}{name}: {type(exc).__name__}: {exc}"[:300]] = b""
            return real(*args, **kwargs)
        try:
            result = real(*args, **kwargs)
        except Exception as exc:
            with contextlib.suppress(Exception):
                _TABLE[k] = pickle.dumps(("raise", exc))
            raise
        kind = "return"
        if inspect.isgenerator(result):   # a generator function's items, handed on as an iterator
            kind, result = "iter", list(result)
        try:
            _TABLE[k] = pickle.dumps((kind, result))
        except Exception as exc:   # noqa: BLE001 (pickle fails in many ways): the build says so
            _TABLE[f"{FAILED}{name}: {type(exc).__name__}: {exc}"[:300]] = b""
        return iter(result) if kind == "iter" else result
    return wrapper


def start_recording() -> None:
    """Wrap every twin (wherever a loaded ctxlab module holds it) so that its calls are recorded."""
    for module, name, _keep in TWINS:
        mod = importlib.import_module(module)
        real = getattr(mod, name)
        fake = _recorder(f"{module}.{name}", real)
        for mod_name, held in list(sys.modules.items()):
            if held is not None and (mod_name == "ctxlab" or mod_name.startswith("ctxlab.")):
                for attr, value in list(vars(held).items()):
                    if value is real:
                        setattr(held, attr, fake)


def recording(on: bool) -> None:
    """Record calls (narrative cells) or not (nbgrader's test cells)."""
    _ACTIVE[0] = on


def save_recording(path: str) -> None:
    with open(path, "wb") as fh:
        pickle.dump(_TABLE, fh)


def _is_test(cell) -> bool:
    return bool(cell.get("metadata", {}).get("nbgrader", {}).get("grade")) and not \
        cell["metadata"]["nbgrader"].get("solution")


HIDDEN_BEGIN = "### BEGIN HIDDEN TESTS"


def split_test(source: str) -> tuple[str, str]:
    """A test cell as (what the release shows, the hidden rest). The visible part's calls are recorded (the
    learner reads those inputs in the release and the graded kit's Validate runs them in the learner's kernel);
    the hidden part's never are. A cell whose hidden block is not at the top level is all hidden."""
    at = source.find(HIDDEN_BEGIN)
    visible, hidden = (source, "") if at < 0 else (source[:at], source[at:])
    try:
        compile(visible, "<visible test>", "exec")
    except SyntaxError:
        return "", source
    return visible, hidden


def _record_one(notebook: Path, out: Path) -> None:
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(notebook, as_version=4)
    cells = [nbformat.v4.new_code_cell("from ctxlab.grading import graded_build as _gb\n_gb.start_recording()")]
    for cell in nb.cells:
        if cell.cell_type == "code" and _is_test(cell):
            visible, hidden = split_test(cell.source)
            cells += [nbformat.v4.new_code_cell(visible), nbformat.v4.new_code_cell("_gb.recording(False)"),
                      nbformat.v4.new_code_cell(hidden), nbformat.v4.new_code_cell("_gb.recording(True)")]
        else:
            cells.append(cell)
    nb.cells = cells + [nbformat.v4.new_code_cell(f"_gb.save_recording({str(out)!r})")]
    with tempfile.TemporaryDirectory(prefix="ctxlab-record-") as tmp:
        work = Path(tmp) / notebook.parent.name
        shutil.copytree(notebook.parent, work, ignore=SKIP)
        NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(work)}}).execute()


def lesson_notebooks(root: Path) -> list[Path]:
    """The lessons' solution notebooks (``solutions/NN_name/NN_name.ipynb``, or an nbgrader course root's ``source/``)."""
    for folder in ("solutions", "source"):
        found = sorted(p for p in (Path(root) / folder).glob("[0-9][0-9]_*/[0-9][0-9]_*.ipynb")
                       if p.stem == p.parent.name)
        if found:
            return found
    raise NoLessons(f"{root} に solutions/（または source/）のレッスンがありません: 採点用の ctxlab を作るには、"
                     "講座のリポジトリ（またはコース・ルート）で実行してください")


def _grid_calls() -> None:
    """Calls a lesson makes for another model than the default one (``CTXLAB_MODEL`` chooses the lesson's model):
    every model's TTLs in 03's and 09's break-even."""
    for m in pricing.models().values():
        for ttl in ("5m", "1h"):
            w, r = m.write_multiplier(ttl), m.cache_read_multiplier
            formulas.breakeven_reuses(w, r)
            formulas.first_paying_call(w, r)


def record(root: Path, workers: int = 2) -> dict[str, bytes]:
    """Run every lesson's solution notebook offline with the twins wrapped; the calls of its narrative."""
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env.update(CTXLAB_OFFLINE="1", CTXLAB_TIME_SCALE="0")
    table: dict[str, bytes] = {}
    with tempfile.TemporaryDirectory(prefix="ctxlab-recorded-") as tmp:
        def one(nb: Path | str) -> tuple[Path, subprocess.CompletedProcess]:
            out = Path(tmp) / f"{Path(nb).stem}.pkl"
            return out, subprocess.run([sys.executable, "-m", "ctxlab.grading.graded_build", str(nb), str(out)],
                                       capture_output=True, text=True, env=env, cwd=tmp)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for out, proc in pool.map(one, ["--grids", *lesson_notebooks(root)]):
                if proc.returncode != 0 or not out.exists():
                    raise BuildError(f"recording {out.stem} failed:\n{proc.stderr[-3000:]}")
                table.update(pickle.loads(out.read_bytes()))
    for failed in sorted(k for k in table if k.startswith(FAILED)):
        print(f"graded build: {failed}", file=sys.stderr)   # tests/test_graded_build.py fails on these
    return table


# --- the build -----------------------------------------------------------------------------------

def _stub(lines: list[str], func: ast.FunctionDef, module: str, keep: int) -> list[str]:
    """The lines of ``func`` with its body after the docstring and ``keep`` statements replaced by a lookup."""
    body = func.body[1:] if ast.get_docstring(func) else func.body
    indent = " " * body[0].col_offset
    a = func.args
    names = [p.arg for p in (*a.posonlyargs, *a.args)] + ([a.vararg.arg] if a.vararg else []) + \
        [p.arg for p in a.kwonlyargs] + ([a.kwarg.arg] if a.kwarg else [])
    kept = lines[body[0].lineno - 1:body[keep - 1].end_lineno] if keep else []
    mapping = "{" + ", ".join(f"{n!r}: {n}" for n in names) + "}"
    return ([f'{indent}"""{EXERCISE_NOTE}"""\n'] + kept + [f"{indent}from ctxlab._recorded import lookup\n",
            f"{indent}return lookup({module + '.' + func.name!r}, {mapping})\n"])


def _unused_helpers(source: str, package_text: str) -> list[ast.FunctionDef]:
    """Module-level private functions that nothing in the module (or the package) names any more."""
    tree = ast.parse(source)
    out = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("_") and not node.name.startswith("__"):
            rest = source.replace(ast.get_source_segment(source, node) or "", "")
            if node.name not in rest and f"{node.name}" not in package_text:
                out.append(node)
    return out


def replace_twins(package: Path, twins=TWINS) -> None:
    """In the package copy ``package`` (the ``ctxlab`` folder), each twin's body becomes a lookup and
    the private helpers nothing else uses are removed."""
    by_file: dict[str, list[tuple[str, int]]] = {}
    for module, name, keep in twins:
        by_file.setdefault(module, []).append((name, keep))
    for module, names in by_file.items():
        path = package.parent / rel_path(module)
        for name, keep in names:
            lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
            func = next(n for n in ast.parse("".join(lines)).body if isinstance(n, ast.FunctionDef) and n.name == name)
            start = func.body[0].lineno - 1
            path.write_text("".join(lines[:start] + _stub(lines, func, module, keep) + lines[func.end_lineno:]),
                            encoding="utf-8")
        others = "".join(p.read_text(encoding="utf-8") for p in package.rglob("*.py") if p != path)
        while True:
            source = path.read_text(encoding="utf-8")
            unused = _unused_helpers(source, others)
            if not unused:
                break
            lines = source.splitlines(keepends=True)
            for node in sorted(unused, key=lambda n: -n.lineno):
                first = min([node.lineno] + [d.lineno for d in node.decorator_list]) - 1
                del lines[first:node.end_lineno]
            path.write_text("".join(lines), encoding="utf-8")


def stage_package(target: Path, root: Path = REPO_ROOT, table: dict[str, bytes] | None = None) -> Path:
    """Write the graded build into ``target/ctxlab`` (the package, data/ and quizzes/ as package data,
    the recorded results, the twins as lookups); ``table``: already recorded results."""
    pkg = Path(target) / "ctxlab"
    shutil.copytree(PACKAGE_DIR, pkg, ignore=SKIP)
    for name in ("data", "quizzes"):
        src = Path(root) / name
        shutil.copytree(src if src.is_dir() else PACKAGE_DIR / "_data" / name, pkg / "_data" / name, ignore=SKIP)
    (pkg / RECORDED_REL).write_bytes(pickle.dumps(record(root) if table is None else table))
    replace_twins(pkg)
    return pkg


def source_hash(root: Path = REPO_ROOT) -> str:
    """A hash of what the graded build is made from: the package's code, data/, quizzes/, the lessons, Python."""
    h = hashlib.sha256(sys.version.encode())
    folders = [PACKAGE_DIR] + [Path(root) / n for n in ("data", "quizzes")]
    files = [p for d in folders if d.is_dir() for p in sorted(d.rglob("*"))
             if p.is_file() and "__pycache__" not in p.parts and not p.name.endswith(".pyc")]
    for p in files + lesson_notebooks(root):
        h.update(str(p.relative_to(p.parents[1])).encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:20]


def cache_root() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    d = base / "ctxlab" / "graded"
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError:   # a home the grader cannot write: a private temp folder
        d = Path(tempfile.gettempdir()) / f"ctxlab-cache-{os.getuid()}" / "graded"
        d.mkdir(parents=True, exist_ok=True, mode=0o700)
    return d


def graded_package(root: Path = REPO_ROOT) -> Path:
    """The graded build's ``ctxlab`` folder for the course at ``root``, built once per change of its
    sources (concurrent graders wait for one build); older builds are removed."""
    base = cache_root()
    digest = source_hash(root)
    done = base / digest / "ctxlab"
    if done.is_dir():
        with contextlib.suppress(OSError):
            os.utime(done.parent)   # in use: not a day-old build
        return done
    with open(base / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.is_dir():
            return done
        tmp = Path(tempfile.mkdtemp(prefix=f"{digest}-", dir=base))
        try:
            pkg = stage_package(tmp, root)
            compileall.compile_dir(str(pkg), quiet=1)
            os.replace(tmp, base / digest)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        for old in base.iterdir():   # other checkouts on the machine may grade with theirs: only a day-old build goes
            if old.is_dir() and old.name != digest and time.time() - old.stat().st_mtime > 86_400:
                shutil.rmtree(old, ignore_errors=True)
    return done


def kernel_package(env: dict[str, str] | None = None, course: Path | None = None) -> Path | None:
    """What a grading kernel imports as ctxlab: this package when it is itself a graded build (the graded
    kit), else the graded build of the checkout's lessons (or of the course root's, the working folder,
    where nbgrader runs); None only for a learner's own validation where no lesson source exists (the
    self-study kit, whose learner holds the whole package anyway)."""
    if (PACKAGE_DIR / RECORDED_REL).exists():
        return PACKAGE_DIR
    for root in (REPO_ROOT, Path(course) if course else Path.cwd()):
        with contextlib.suppress(NoLessons):
            lesson_notebooks(root)
            return graded_package(root)
    if (env or {}).get("NBGRADER_EXECUTION") == "validate":
        return None
    raise BuildError("採点用の ctxlab（答えのコードを含まない版）を作れません: 講座のリポジトリか、solutions/ のある"
                     "コース・ルートで採点してください")


if __name__ == "__main__":   # one lesson's recording (or the grids'), in a process of its own (record())
    if sys.argv[1] == "--grids":
        start_recording()
        _grid_calls()
        save_recording(sys.argv[2])
    else:
        _record_one(Path(sys.argv[1]), Path(sys.argv[2]))
