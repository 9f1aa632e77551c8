"""Grading kernels, inside: the hook points of the IPython shell, snapshotted before the learner's code and restored before every test cell.

The grader (:class:`~ctxlab.grading.tamper.GuardedExecute`) calls this module through an
``execute_request`` whose code is empty and whose ``user_expressions`` hold the call: IPython
returns early on an empty cell (no input transformer, AST transformer or ``pre_run_cell``
hook of the learner's sees it) and evaluates the expression with ``eval``.

- :func:`install`, before the first cell (no learner statement has run): imports the
  ``ctxlab`` modules the test cells use and snapshots every hook point: the shell's input
  transformers (cleanup, line, token, post), AST transformers, event callbacks, custom
  exception handlers, the methods of the shell, the kernel, its session, the display
  publisher and hook, ``ExecutionResult`` (instance overrides and class attributes),
  ``sys`` hooks (trace, profile, excepthook, displayhook, stdout, stderr, meta_path,
  path_hooks), ``builtins``, builtin names shadowed in the user namespace, the ``ctxlab``
  modules in ``sys.modules`` and their functions;
- :func:`before`, before every graded test cell: compares every hook point with the
  snapshot, restores what differs and says what it found; then registers a ``post_run_cell``
  callback that records the test cell's result;
- :func:`after`, after the cell: reports whether the cell raised and which cell IPython ran
  (a missing record means the callback was removed); then checks and restores again (what the
  learner's function changed while the test called it, a trace function included).

A line tracer on the test cell (to prove every statement ran) was tried and dropped: a global
trace function costs a Python call on every function call, and hidden tests that call the
library thousands of times ran past the cell time limit.

A learner's code runs in the same process, so it can reach this module too: what it does to
the guard itself is caught by the grader-side source scan (:mod:`~ctxlab.grading._scan`)
and by the grader's checks of the answers (a missing or malformed answer is a finding).
Every answer is a JSON string.
"""
from __future__ import annotations

import builtins
import hashlib
import importlib
import json
import os
import sys
import sysconfig
import types

_P: dict = {}            # the pristine snapshot
_RESULT: list = []        # the ExecutionResult of the test cell (the post_run_cell callback's record)
_IGNORED_BUILTINS = {"_", "__", "___"}   # IPython's displayhook sets builtins._


def _ip():
    from IPython import get_ipython
    return get_ipython()


def _callable_entries(obj) -> dict:
    try:
        d = vars(obj)
    except TypeError:
        return {}
    return {k: v for k, v in list(d.items())
            if callable(v) or isinstance(v, (property, classmethod, staticmethod))}


def _classes(ip) -> list[type]:
    from IPython.core.interactiveshell import ExecutionInfo, ExecutionResult

    roots = [type(ip), type(getattr(ip, "kernel", None)), type(getattr(getattr(ip, "kernel", None), "session", None)),
             type(ip.display_pub), type(ip.displayhook), type(ip.events), type(ip.input_transformer_manager),
             type(ip.InteractiveTB), type(ip.compile), ExecutionResult, ExecutionInfo, type(sys.stdout), type(sys.stderr)]
    out: list[type] = []
    for root in roots:
        for cls in getattr(root, "__mro__", ()):
            if cls is not object and cls is not type(None) and cls not in out:
                out.append(cls)
    return out


def _instances(ip) -> dict[str, object]:
    kernel = getattr(ip, "kernel", None)
    return {"shell": ip, "kernel": kernel, "session": getattr(kernel, "session", None), "display_pub": ip.display_pub,
            "displayhook": ip.displayhook, "events": ip.events, "transformer_manager": ip.input_transformer_manager,
            "traceback": ip.InteractiveTB, "compiler": ip.compile, "stdout": sys.stdout, "stderr": sys.stderr}


def _trusted_roots() -> tuple[str, ...]:
    roots = {os.path.dirname(os.path.dirname(os.path.abspath(__file__))), sys.prefix, sys.base_prefix, sys.exec_prefix}
    roots |= {p for p in sysconfig.get_paths().values() if p}
    return tuple(sorted(os.path.realpath(r) for r in roots))


def _origin_ok(value) -> bool:
    """Whether a function was defined in an installed file (not in a notebook cell)."""
    fn = getattr(value, "func", value)            # functools.partial
    fn = getattr(fn, "__func__", fn)              # bound method
    code = getattr(fn, "__code__", None)
    if code is None:
        return True
    return os.path.realpath(code.co_filename).startswith(_P["roots"])


def _installed_code(value) -> bool:
    """Whether a callable is Python code from an installed file (a function or a bound method;
    a builtin, a partial or a notebook's function is not)."""
    fn = getattr(value, "__func__", value)
    code = getattr(fn, "__code__", None)
    return code is not None and os.path.realpath(code.co_filename).startswith(_P["roots"])


def _notebook_code(value) -> bool:
    """Whether a callable (a function, a bound method, a partial, an object with ``__call__``) was defined by
    code run in the notebook: a cell's file is ``<ipython-input-…>`` or ipykernel's ``/tmp/ipykernel_…/…``."""
    fn = getattr(value, "func", value)          # functools.partial
    fn = getattr(fn, "__func__", fn)            # bound method
    code = getattr(fn, "__code__", None) or getattr(getattr(type(fn), "__call__", None), "__code__", None)
    return code is not None and (code.co_filename.startswith("<") or "ipykernel_" in code.co_filename)


def _ctxlab_modules() -> dict[str, types.ModuleType]:
    return {n: m for n, m in list(sys.modules.items())
            if isinstance(m, types.ModuleType) and (n == "ctxlab" or n.startswith("ctxlab."))}


def _sys_hooks() -> dict:
    return {"excepthook": sys.excepthook, "displayhook": sys.displayhook, "breakpointhook": sys.breakpointhook,
            "unraisablehook": sys.unraisablehook, "stdout": sys.stdout, "stderr": sys.stderr}


def install(modules: list[str] = ()) -> str:
    """Snapshot every hook point (call before any learner statement runs)."""
    ip = _ip()
    for name in ["ctxlab.labs._twins", *modules]:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a module a test names but that does not import is the test's failure
            pass
    manager = ip.input_transformer_manager
    _P.clear()
    _P.update(
        roots=_trusted_roots(),
        manager=manager,
        lists={"cleanup": (manager, "cleanup_transforms", list(manager.cleanup_transforms)),
               "line": (manager, "line_transforms", list(manager.line_transforms)),
               "token": (manager, "token_transformers", list(manager.token_transformers)),
               "post": (ip, "input_transformers_post", list(ip.input_transformers_post)),
               "ast": (ip, "ast_transformers", list(ip.ast_transformers)),
               "meta_path": (sys, "meta_path", list(sys.meta_path)),
               "path_hooks": (sys, "path_hooks", list(sys.path_hooks))},
        events_obj=ip.events,
        events={k: list(v) for k, v in ip.events.callbacks.items()},
        custom_exceptions=ip.custom_exceptions,
        classes={cls: dict(vars(cls)) for cls in _classes(ip)},
        instances={k: (o, _callable_entries(o)) for k, o in _instances(ip).items() if o is not None},
        handlers={k: dict(getattr(ip.kernel, k, None) or {}) for k in ("shell_handlers", "control_handlers")},
        sys=_sys_hooks(),
        trace=sys.gettrace(),
        profile=sys.getprofile(),
        builtins=dict(vars(builtins)),
        user_builtins={k: v for k, v in ip.user_ns.items() if k in vars(builtins)},
        user_builtins_module=ip.user_ns.get("__builtins__"),
        modules={n: (m, _callable_entries(m)) for n, m in _ctxlab_modules().items()},
    )
    _P["list_objects"] = {k: getattr(o, a) for k, (o, a, _) in _P["lists"].items()}
    return json.dumps({"ok": True})


def _check(found: list[str]) -> None:
    """Compare every hook point with the snapshot; restore and describe what differs."""
    ip = _ip()
    if ip.input_transformer_manager is not _P["manager"]:
        found.append("input_transformer_manager を置き換え")
        ip.input_transformer_manager = _P["manager"]
    for key, (owner, attr, items) in _P["lists"].items():
        current = getattr(owner, attr)
        if current is not _P["list_objects"][key] or list(current) != items:
            found.append({"cleanup": "input_transformers_cleanup", "line": "入力の行変換",
                          "token": "入力のトークン変換", "post": "input_transformers_post", "ast": "ast_transformers",
                          "meta_path": "sys.meta_path", "path_hooks": "sys.path_hooks"}[key] + " を変更")
            original = _P["list_objects"][key]
            original[:] = items
            setattr(owner, attr, original)
    if ip.events is not _P["events_obj"]:
        found.append("events を置き換え")
        ip.events = _P["events_obj"]
    callbacks = ip.events.callbacks
    for event in set(callbacks) | set(_P["events"]):
        before = _P["events"].get(event, [])
        now = callbacks.get(event, [])
        extra = [cb for cb in now if not any(cb is b or cb == b for b in before)]
        # a library's own callback (``%matplotlib inline`` registers flush_figures) is not the learner's
        foreign = [cb for cb in extra if _notebook_code(cb)]
        # a library may take its own callback away (matplotlib's pyplot unregisters its post_execute hook when
        # the backend changes): only callbacks the notebook's own code defined count; a learner who removes a
        # library's callback needs get_ipython, which the source scan holds
        if foreign:
            found.append(f"イベント {event} のコールバックを変更")
            callbacks[event] = list(before) + [cb for cb in extra if cb not in foreign]
    if ip.custom_exceptions != _P["custom_exceptions"]:
        found.append("set_custom_exc（例外の表示の差し替え）")
        ip.custom_exceptions = _P["custom_exceptions"]
    for cls, attrs in _P["classes"].items():
        now = vars(cls)
        for k in set(now) | set(attrs):
            old, new = attrs.get(k, _MISSING), now.get(k, _MISSING)
            if old is new or not (_hooklike(old) or _hooklike(new)):
                continue
            found.append(f"{cls.__name__}.{k} を変更")
            try:
                if old is _MISSING:
                    delattr(cls, k)
                else:
                    setattr(cls, k, old)
            except (TypeError, AttributeError):
                pass
    for name, (obj, entries) in _P["instances"].items():
        _restore_entries(obj, entries, name, found, shadow_only=True)
    for k, before in _P["handlers"].items():
        table = getattr(ip.kernel, k, None)
        if table is not None and any(table.get(m) is not f for m, f in before.items()):
            found.append(f"kernel.{k} を変更")
            table.clear()
            table.update(before)
    for k, v in _P["sys"].items():
        if getattr(sys, k) is not v:
            found.append(f"sys.{k} を変更")
            setattr(sys, k, v)
    if sys.getprofile() is not _P["profile"]:
        found.append("sys.setprofile")
        sys.setprofile(_P["profile"])
    now = vars(builtins)
    changed = sorted(k for k in set(now) | set(_P["builtins"]) if k not in _IGNORED_BUILTINS
                     and now.get(k, _MISSING) is not _P["builtins"].get(k, _MISSING))
    if changed:
        found.append("builtins の " + ", ".join(changed[:5]) + " を変更")
        for k in changed:
            if k in _P["builtins"]:
                now[k] = _P["builtins"][k]
            else:
                del now[k]
    ns = ip.user_ns
    if ns.get("__builtins__") is not _P["user_builtins_module"]:
        found.append("__builtins__ を置き換え")
        ns["__builtins__"] = _P["user_builtins_module"]
    shadow = sorted(k for k, v in list(ns.items()) if k in _P["builtins"] and callable(v)
                    and v is not _P["user_builtins"].get(k, _MISSING) and v is not _P["builtins"][k])
    if shadow:
        found.append("組み込み関数と同じ名前の関数 " + ", ".join(shadow[:5]) + " を定義")
        for k in shadow:
            if k in _P["user_builtins"]:
                ns[k] = _P["user_builtins"][k]
            else:
                del ns[k]
    modules = _ctxlab_modules()
    for name, (mod, entries) in list(_P["modules"].items()):
        if modules.get(name) is not mod:
            found.append(f"sys.modules[{name!r}] を置き換え")
            sys.modules[name] = mod
        _restore_entries(mod, entries, name, found, shadow_only=False)
    for name, mod in modules.items():
        if name in _P["modules"]:
            continue
        entries = _callable_entries(mod)
        bad = sorted(k for k, v in entries.items() if not _origin_ok(v))
        if bad:
            found.append(f"{name} の " + ", ".join(bad[:5]) + " をノートブックで定義した関数に置き換え")
        _P["modules"][name] = (mod, {k: v for k, v in entries.items() if k not in bad})


_MISSING = object()


def _hooklike(value) -> bool:
    return value is not _MISSING and (callable(value) or isinstance(value, (property, classmethod, staticmethod)))


def _restore_entries(obj, entries: dict, name: str, found: list[str], shadow_only: bool) -> None:
    """Callables of an object's own namespace: changed or added ones are put back."""
    try:
        d = vars(obj)
    except TypeError:
        return
    cls = type(obj)
    for k, v in list(d.items()):
        if not _hooklike(v) or entries.get(k, _MISSING) is v:
            continue
        if shadow_only and k not in entries and not hasattr(cls, k):
            continue  # a new private helper of the object, not an override of a method
        if not shadow_only and k not in entries and _origin_ok(v):
            continue  # a module that defines a function lazily
        found.append(f"{name}.{k} を変更")
        try:
            if k in entries:
                setattr(obj, k, entries[k])
            else:
                delattr(obj, k)
        except (TypeError, AttributeError):
            pass
    for k, v in entries.items():
        if k not in d:
            found.append(f"{name}.{k} を削除")
            try:
                setattr(obj, k, v)
            except (TypeError, AttributeError):
                pass


def before() -> str:
    """Restore every hook point, then record the test cell's result (a post_run_cell callback)."""
    prior = sys.gettrace()
    sys.settrace(None)
    found: list[str] = []
    if not _P:
        return json.dumps({"ok": False, "found": ["採点の準備（install）がされていません"]})
    if prior is not None and prior is not _P["trace"]:
        found.append("sys.settrace（トレース関数を設定）")
    _check(found)
    _RESULT.clear()
    _ip().events.register("post_run_cell", _record)
    return json.dumps({"ok": True, "found": found})


def _record(result) -> None:
    _RESULT.append(result)


def after() -> str:
    """Report the cell's run (error, which cell); check and restore again."""
    found: list[str] = []
    if sys.gettrace() is not _P["trace"]:
        found.append("テストの実行中に sys.settrace")
        sys.settrace(_P["trace"])
    ip = _ip()
    try:
        ip.events.unregister("post_run_cell", _record)
    except ValueError:
        found.append("採点の post_run_cell コールバックを外した")
    result = _RESULT[-1] if _RESULT else None
    info = getattr(result, "info", None)
    raw = getattr(info, "raw_cell", None)
    error = bool(result is not None and (result.error_in_exec is not None or result.error_before_exec is not None))
    _check(found)
    return json.dumps({"ok": True, "found": found, "error": error,
                       "cell": hashlib.sha256(raw.encode("utf-8")).hexdigest() if isinstance(raw, str) else None})
