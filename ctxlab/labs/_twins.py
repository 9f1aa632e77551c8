"""Lessons 02–10, hidden tests: the library's twin of an exercise is unusable while the learner's function is graded.

Where ``ctxlab`` already computes what an exercise asks for (10's ``rrf`` is
:func:`ctxlab.retrieval.rrf`; 08's accuracy per method is :func:`ctxlab.labs.measure.by_method`),
a submission could return the library's result and learn nothing. A hidden test grades the
learner's function inside :func:`twins_disabled`: every twin, wherever a ``ctxlab`` module or the
notebook holds it, raises :class:`TwinUsed` until the block ends, and is restored afterwards.

:func:`refuse_twins` closes what patching cannot reach: a name bound before the test runs
(``from ctxlab.costs.traffic import model_hits as _mh``), a ``functools.partial``, a wrapper, a
module imported under another name, a default argument, a closure, an object whose ``__call__``
calls the twin. It resolves everything the learner's function reaches (:func:`reached`) and
compares it by identity with the twins.

:func:`exact_type` is the other half: a hidden test compares types before values, so an object
whose ``__eq__`` always answers True earns nothing.
"""
from __future__ import annotations

import builtins
import dis
import functools
import os
import sys
import types
from contextlib import contextmanager
from typing import Any, Iterator

from ctxlab.errors import CtxlabError

__all__ = ["TwinUsed", "twins_disabled", "exact_type", "reached", "refuse_twins"]


class TwinUsed(CtxlabError, RuntimeError):
    """A graded function called the library function that answers its exercise."""


def _raiser(name: str):
    def twin(*args, **kwargs):
        raise TwinUsed(f"{name} は、この演習の答えそのものを計算するライブラリ関数です。"
                       "採点中は使えません。自分のコードで計算してください。")
    return twin


@contextmanager
def twins_disabled(namespace: dict, *twins: Any) -> Iterator[None]:
    """Within the block, each of ``twins`` raises :class:`TwinUsed`.

    A twin is a function (found by identity in every loaded ``ctxlab`` module and in
    ``namespace``, the notebook's ``globals()``) or an ``(owner, attribute)`` pair (a method of a
    class, an attribute of an object).
    """
    saved: list[tuple[Any, str, Any, bool]] = []  # (holder, name, original, holder is a dict)
    try:
        for twin in twins:
            if isinstance(twin, tuple):
                owner, attr = twin
                original = getattr(owner, attr)
                saved.append((owner, attr, original, False))
                setattr(owner, attr, _raiser(f"{getattr(owner, '__name__', type(owner).__name__)}.{attr}"))
                continue
            fake = _raiser(f"{twin.__module__}.{twin.__qualname__}")
            for mod_name, mod in list(sys.modules.items()):
                if mod is None or not (mod_name == "ctxlab" or mod_name.startswith("ctxlab.")):
                    continue
                for name, value in list(vars(mod).items()):
                    if value is twin:
                        saved.append((mod, name, value, False))
                        setattr(mod, name, fake)
            for name, value in list(namespace.items()):
                if value is twin:
                    saved.append((namespace, name, value, True))
                    namespace[name] = fake
        yield
    finally:
        for holder, name, original, is_dict in reversed(saved):
            if is_dict:
                holder[name] = original
            else:
                setattr(holder, name, original)


def exact_type(value: Any, *types: type) -> bool:
    """Whether ``type(value)`` is one of ``types`` exactly (no subclass, so no always-equal object)."""
    return type(value) in types


_INSTALLED = tuple(sorted({os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix,
                                                        os.path.dirname(os.path.dirname(os.path.abspath(__file__))))}))


def _learners(fn: Any) -> bool:
    """Whether a function was written in the notebook (its code is not in an installed file)."""
    code = getattr(fn, "__code__", None)
    return code is not None and not os.path.realpath(code.co_filename).startswith(_INSTALLED)


def _codes(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def _twin_key(twin: Any) -> Any:
    if isinstance(twin, tuple):
        owner, attr = twin
        twin = getattr(owner, attr)
    return getattr(twin, "__func__", twin)


def _own(obj: Any, name: str) -> Any:
    """An attribute without running a property or ``__getattr__`` (own namespace, then the class's)."""
    spaces = []
    try:
        spaces.append(vars(obj))
    except TypeError:
        pass
    if not isinstance(obj, types.ModuleType):
        spaces += [vars(c) for c in (obj if isinstance(obj, type) else type(obj)).__mro__]
    for space in spaces:
        if name in space:
            return space[name]
    raise AttributeError(name)


def _refs(fn: types.FunctionType) -> Iterator[tuple[Any, str]]:
    """What a function's code names, resolved: globals, builtins, closures and attribute chains
    on them (``a.b.c``), and modules imported inside it (``import x.y as z``, ``from x import y``)."""
    closure = {}
    for n, c in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            closure[n] = c.cell_contents
        except ValueError:
            pass
    for code in _codes(fn.__code__):
        local: dict[str, tuple[Any, str]] = {}
        cur = imp = None
        imp_from, last_const = False, None
        for ins in dis.get_instructions(code):
            op, arg = ins.opname, ins.argval
            if op == "LOAD_CONST":
                last_const, cur = arg, None
            elif op == "IMPORT_NAME":
                imp_from = last_const is not None
                mod = sys.modules.get(arg if imp_from else arg.split(".")[0])
                cur = imp = (mod, arg) if mod is not None else None
            elif op == "IMPORT_FROM":
                cur = None
                if imp is not None:
                    try:   # import a.b as t: the label stays the dotted name; from a import b: a.b
                        cur = (_own(imp[0], arg), imp[1] if not imp_from else f"{imp[1]}.{arg}")
                    except AttributeError:
                        pass
                    if not imp_from:
                        imp = cur   # import a.b.c as t: each IMPORT_FROM goes one level down
            elif op in ("SWAP", "POP_TOP", "NOP", "CACHE", "EXTENDED_ARG", "PRECALL", "PUSH_NULL"):
                continue
            elif op in ("STORE_FAST", "STORE_DEREF", "STORE_NAME"):
                if cur is not None:
                    local[arg] = cur
                cur = None
            elif op in ("LOAD_GLOBAL", "LOAD_NAME"):
                if arg in fn.__globals__:
                    cur = (fn.__globals__[arg], arg)
                elif arg in vars(builtins):
                    cur = (vars(builtins)[arg], f"builtins.{arg}")
                else:
                    cur = None
            elif op in ("LOAD_DEREF", "LOAD_CLASSDEREF", "LOAD_CLOSURE"):
                cur = (closure[arg], f"{arg}（クロージャ）") if arg in closure else local.get(arg)
            elif op == "LOAD_FAST":
                cur = local.get(arg)
            elif op in ("LOAD_ATTR", "LOAD_METHOD") and cur is not None:
                try:
                    cur = (_own(cur[0], arg), f"{cur[1]}.{arg}")
                except AttributeError:
                    cur = None
            else:
                cur = None
            if cur is not None and op != "STORE_FAST":
                yield cur


def reached(fn: Any, *twins: Any, limit: int = 20_000) -> list[str]:
    """How ``fn`` reaches each of ``twins`` (one phrase per twin found; empty: none).

    Followed from ``fn``: what its code (and the code of the functions it defines) names —
    globals, builtins, closures, attribute chains on them, modules it imports — defaults,
    ``__wrapped__``, ``functools.partial`` (function, arguments), bound methods (function and
    object), instances (their class's ``__call__`` and methods, their attributes), classes
    written in the notebook, containers. Functions written in the notebook are followed
    into; installed library code is not (while the test runs, :func:`twins_disabled` makes a
    library function that calls a twin raise). A twin is matched by identity (a method by
    its function)."""
    wanted = {id(_twin_key(t)): t for t in twins}
    found: dict[int, str] = {}
    seen: set[int] = set()
    work: list[tuple[Any, str]] = [(fn, getattr(fn, "__name__", "function"))]
    while work and len(seen) < limit:
        obj, path = work.pop()
        key = getattr(obj, "__func__", obj)
        if id(key) in wanted:
            found.setdefault(id(key), path)
            continue
        if id(obj) in seen or isinstance(obj, (types.ModuleType, str, bytes, int, float, bool, type(None))):
            continue
        seen.add(id(obj))
        if isinstance(obj, types.FunctionType):
            if _learners(obj):
                work += [(v, f"{path} → {p}") for v, p in _refs(obj)]
                work += [(d, f"{path} → 既定値") for d in (*(obj.__defaults__ or ()), *(obj.__kwdefaults__ or {}).values())]
            if hasattr(obj, "__wrapped__"):
                work.append((obj.__wrapped__, f"{path} → __wrapped__"))
        elif isinstance(obj, functools.partial):
            work += [(obj.func, f"{path} → partial")] + [(a, f"{path} → partial の引数")
                                                         for a in (*obj.args, *obj.keywords.values())]
        elif isinstance(obj, types.MethodType):
            work += [(obj.__func__, path), (obj.__self__, f"{path} → self")]
        elif isinstance(obj, (staticmethod, classmethod)):
            work.append((obj.__func__, path))
        elif isinstance(obj, property):
            work += [(f, path) for f in (obj.fget, obj.fset, obj.fdel) if f]
        elif isinstance(obj, dict):
            work += [(v, f"{path}[{k!r}]") for k, v in list(obj.items())[:10_000]]
        elif isinstance(obj, (list, tuple, set, frozenset)):
            work += [(v, f"{path}[{i}]") for i, v in enumerate(list(obj)[:10_000])]
        else:
            cls = obj if isinstance(obj, type) else type(obj)
            if _learners_class(cls):
                work += [(v, f"{path}.{k}") for k, v in vars(cls).items() if not k.startswith("__") or k == "__call__"]
            if hasattr(obj, "__wrapped__"):
                work.append((obj.__wrapped__, f"{path} → __wrapped__"))
            if not isinstance(obj, type):
                try:
                    work += [(v, f"{path}.{k}") for k, v in list(vars(obj).items())]
                except TypeError:
                    pass
    return [f"{_name(wanted[k])}（{path}）" for k, path in found.items()]


def _learners_class(cls: Any) -> bool:
    return isinstance(cls, type) and any(_learners(v) for v in vars(cls).values()
                                         if isinstance(v, types.FunctionType))


def _name(twin: Any) -> str:
    if isinstance(twin, tuple):
        owner, attr = twin
        return f"{getattr(owner, '__name__', type(owner).__name__)}.{attr}"
    return f"{getattr(twin, '__module__', '?')}.{getattr(twin, '__qualname__', repr(twin))}"


def refuse_twins(fn: Any, *twins: Any) -> None:
    """Raise :class:`TwinUsed` when ``fn`` reaches one of ``twins`` by any name (see :func:`reached`)."""
    found = reached(fn, *twins)
    if found:
        raise TwinUsed(f"{getattr(fn, '__name__', fn)} が、この演習の答えそのものを計算するライブラリ関数 "
                       f"{', '.join(found)} に届いています（別名・partial・ラッパー・別名の import も同じです）。"
                       "採点では使えません。自分のコードで計算してください。")
