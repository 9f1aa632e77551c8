"""Grading: the learner's own code cells read before they run, for what reaches the grader's machinery.

The exercises of this course need arithmetic, data structures and the ``ctxlab`` functions a
lesson names. Silencing a test needs more: the IPython shell (``get_ipython``), the
interpreter's hooks (``sys.settrace``, ``builtins``, ``sys.modules``), frames and code
objects (``_getframe``, ``f_back``, ``co_consts``, dunder attributes), dynamic code
(``exec``, ``eval``, ``compile``, ``getattr`` with a computed name), threads or the kernel's
own objects, or assigning into an imported module. :func:`findings` lists each such use in
the cells the learner wrote (a cell whose source is not one of the instructor's own cells),
with the cell and line; the grader gives such a submission no automatic credit and asks for
review (:mod:`~ctxlab.grading.tamper`).

It is a tripwire, not a parser of intent: an honest answer never needs these names (the
course's solutions and partial answers are checked to produce no finding), and a hostile
one cannot reach the hook points without one of them, or without the runtime guard
(:mod:`~ctxlab.grading._guard`) seeing the change.
"""
from __future__ import annotations

import ast

#: names whose mere use in a learner's cell is a finding
NAMES = {"get_ipython", "exec", "eval", "compile", "__import__", "globals", "vars", "getattr", "setattr", "delattr",
         "breakpoint", "__builtins__", "__loader__", "__spec__"}
#: attribute names (on any object) that reach hooks, frames, code objects or the kernel
ATTRS = {"settrace", "setprofile", "gettrace", "getprofile", "_getframe", "addaudithook", "excepthook", "displayhook",
         "unraisablehook", "modules", "meta_path", "path_hooks", "f_back", "f_trace", "f_lineno", "f_globals", "f_locals",
         "f_code", "f_builtins", "tb_frame", "tb_next", "gi_frame", "cr_frame", "co_consts", "co_code", "co_names",
         "showtraceback", "_showtraceback", "set_custom_exc", "CustomTB", "custom_exceptions", "InteractiveTB",
         "input_transformers_cleanup", "input_transformers_post", "input_transformer_manager", "ast_transformers",
         "events", "user_expressions", "user_ns", "run_cell", "run_cell_async", "run_ast_nodes", "run_code",
         "transform_cell", "last_execution_result", "display_pub", "iopub_socket", "shell_handlers", "kernel",
         "_exit", "kill", "killpg", "fork", "forkpty", "system", "popen", "execv", "execve", "execl", "spawnv",
         "attrgetter", "methodcaller", "ExecutionResult", "success"}
#: top-level modules a learner's cell may not import
MODULES = {"builtins", "gc", "inspect", "ctypes", "ast", "dis", "types", "importlib", "threading", "_thread",
           "multiprocessing", "concurrent", "signal", "atexit", "subprocess", "IPython", "ipykernel", "zmq",
           "jupyter_client", "nbgrader", "nbformat", "nbclient", "traitlets", "pytest", "unittest", "code",
           "codeop", "pdb", "bdb", "trace", "marshal", "pickle", "copyreg", "shelve", "sysconfig", "site", "asyncio",
           "faulthandler", "tracemalloc", "weakref", "operator"}
#: attribute names that are also ordinary words in data (as strings they are no finding)
COMMON_WORDS = {"events", "success", "system", "kernel", "modules", "kill", "fork", "popen", "compile"}
#: modules of a listed package that only display things
HARMLESS = {"IPython.display"}
#: ctxlab modules only the grader's tests use
PRIVATE = ("ctxlab.grading", "ctxlab.labs._twins")
#: dunder attributes an honest class may use
DUNDER_OK = {"__init__", "__name__", "__doc__", "__qualname__", "__post_init__"}


def _imported(tree: ast.AST) -> set[str]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return out


def notebook_imports(sources: list[str]) -> set[str]:
    """Every name an import statement binds in these cells (a module, or a name from one)."""
    out: set[str] = set()
    for src in sources:
        try:
            out |= _imported(ast.parse(src))
        except SyntaxError:
            continue
    return out


def scan(source: str, imported: set[str] = frozenset()) -> list[tuple[int, str]]:
    """(line, what) for every use in one cell's source of what :data:`NAMES`, :data:`ATTRS`,
    :data:`MODULES` and :data:`PRIVATE` list, of a dunder attribute, and of an assignment to an
    attribute of a name bound by an import (``imported``: monkeypatching a library)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []   # it cannot run either: the cell fails and earns nothing
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Name) and node.id in NAMES:
            found.append((line, node.id))
        elif isinstance(node, ast.Attribute):
            attr = node.attr
            if attr in ATTRS or (attr.startswith("__") and attr.endswith("__") and attr not in DUNDER_OK):
                found.append((line, f".{attr}"))
            elif isinstance(node.ctx, (ast.Store, ast.Del)):
                base = node.value
                while isinstance(base, ast.Attribute):
                    base = base.value
                if isinstance(base, ast.Name) and base.id in imported:
                    found.append((line, f"{ast.unparse(node)} への代入（ライブラリの書き換え）"))
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] in MODULES or a.name.startswith(PRIVATE):
                    found.append((line, f"import {a.name}"))
        elif isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if (mod.split(".")[0] in MODULES and mod not in HARMLESS) or mod.startswith(PRIVATE):
                found.append((line, f"from {mod} import"))
            for a in node.names:
                if a.name in NAMES or a.name in ATTRS or f"{mod}.{a.name}".startswith(PRIVATE):
                    found.append((line, f"from {mod} import {a.name}"))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in (NAMES | ATTRS) - COMMON_WORDS:
            found.append((line, f"文字列 {node.value!r}"))
    return sorted(set(found))


def findings(cells: list[tuple[int, str]], instructor: set[str], all_sources: list[str]) -> list[str]:
    """One phrase per finding in the learner's cells. ``cells``: (code cell number, source) of
    every code cell run; ``instructor``: the sources of the instructor's code cells (those are
    not the learner's); ``all_sources``: every code cell of the notebook (for the imports)."""
    imported = notebook_imports(all_sources)
    out = []
    for number, src in cells:
        if src in instructor or not src.strip():
            continue
        hits = scan(src, imported)
        if hits:
            what = ", ".join(f"{w}（{n} 行目）" for n, w in hits[:6])
            more = f" ほか {len(hits) - 6} 件" if len(hits) > 6 else ""
            out.append(f"コードセル {number}: {what}{more}")
    return out
