"""The layout of ctxlab: imports only go downward, no cycles, modules say what they are for.

Layers, bottom to top (a module may import from its own layer's package and from lower
layers only). Within one package, the module-level import graph must have no cycle.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "ctxlab"

#: bottom to top; a name is a top-level module or package of ctxlab
LAYERS = [
    {"errors", "_paths", "_text", "_progress", "_schema", "estimate", "published", "_recorded"},
    {"_table"},
    {"costs"},
    {"corpus", "retrieval", "quiz"},
    {"sandbox"},
    {"api"},
    {"evaluation"},
    {"labs"},
    {"plots"},
    {"widgets"},
    {"grading"},
    {"decide"},
    {"cli", "__init__", "__main__"},
]
RANK = {name: i for i, layer in enumerate(LAYERS) for name in layer}
MAX_LINES = 450  # "about 400": a module far over it holds several ideas


def _modules() -> dict[str, Path]:
    out = {}
    for path in PKG.rglob("*.py"):
        rel = path.relative_to(PKG.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1] if len(parts) > 1 else parts
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(path: Path, module: str) -> list[tuple[str, bool]]:
    """(imported ctxlab module, at module level?) for every import of a file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {id(n) for n in tree.body}
    found = []
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            names = [base] + [f"{base}.{a.name}" for a in node.names]
        for name in names:
            if name.startswith("ctxlab"):
                # the longest prefix that is a module of ours
                while name not in MODULES and "." in name:
                    name = name.rpartition(".")[0]
                if name in MODULES and name != "ctxlab":
                    found.append((name, id(node) in top))
    return found


def _layer_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_top_level_name_has_a_layer():
    missing = sorted({_layer_of(m) for m in MODULES} - set(RANK))
    assert not missing, f"add these ctxlab modules/packages to LAYERS in {__file__}: {missing}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_only_go_downward(module):
    mine = RANK[_layer_of(module)]
    bad = []
    for target, _ in _imports(MODULES[module], module):
        theirs = RANK[_layer_of(target)]
        if theirs > mine:
            bad.append(f"{module} imports {target} (layer {_layer_of(target)!r} is above {_layer_of(module)!r})")
    assert not bad, "\n".join(bad)


def test_no_import_cycle_between_modules():
    graph = {m: {t for t, top in _imports(p, m) if top and t != m} for m, p in MODULES.items()}
    # packages' __init__ re-exporting their own modules is not a cycle of ideas
    for m in graph:
        graph[m] = {t for t in graph[m] if not (MODULES[m].name == "__init__.py" and t.startswith(m + "."))}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for t in sorted(graph.get(m, ())):
            if t.startswith(m + ".") and MODULES[m].name == "__init__.py":
                continue
            target = t
            if state.get(target) == 1:
                cycle = stack[stack.index(target):] + [target]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if state.get(target) is None:
                visit(target)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if state.get(m) is None:
            visit(m)


#: modules that import ctxlab code inside functions on purpose, and why
LAZY_ON_PURPOSE = {
    "ctxlab.cli": "a subcommand's implementation loads when it runs, so `ctxlab compare` does not pay for nbgrader",
}


def test_no_function_level_import_of_a_ctxlab_module():
    """A function-level import of a ctxlab module is how a cycle hides: there should be none.

    (Importing a heavy third-party library inside a function is fine; this checks ctxlab only.)
    """
    bad = [f"{m}: imports {t} inside a function" for m, p in MODULES.items()
           for t, top in _imports(p, m) if not top and m not in LAZY_ON_PURPOSE]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_module_has_a_docstring_and_a_reasonable_size(module):
    path = MODULES[module]
    text = path.read_text(encoding="utf-8")
    lines = text.count("\n")
    assert lines <= MAX_LINES, f"{path.relative_to(PKG.parent)} has {lines} lines: split it by idea"
    if path.name == "__init__.py" and not text.strip():
        pytest.fail(f"{path.relative_to(PKG.parent)}: an empty __init__ should say what the package holds")
    doc = ast.get_docstring(ast.parse(text))
    assert doc, f"{path.relative_to(PKG.parent)} has no module docstring"


def test_lesson_modules_name_their_lesson():
    for module, path in MODULES.items():
        if module.startswith("ctxlab.labs.") and not path.name.startswith("_"):
            first = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))).splitlines()[0]
            assert first.startswith("Lesson "), f"{module}: first docstring line should name its lesson: {first!r}"


def test_one_error_root():
    from ctxlab import errors

    roots = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(
                isinstance(b, ast.Name) and b.id in {"Exception", "ValueError", "RuntimeError", "TypeError"}
                for b in node.bases
            ) and module != "ctxlab.errors":
                if not any(isinstance(b, ast.Name) and b.id.endswith("Error") and b.id not in
                           {"ValueError", "RuntimeError", "TypeError"} for b in node.bases):
                    roots.append(f"{module}.{node.name}")
    assert not roots, f"errors not under ctxlab.errors.CtxlabError: {roots}"
    assert issubclass(errors.BudgetExceeded, errors.CtxlabError)
