"""Lessons 06–10, hidden tests: the library's twin of an exercise is unusable while the learner's function is graded.

Where ``ctxlab`` already computes what an exercise asks for (10's ``rrf`` is
:func:`ctxlab.retrieval.rrf`; 08's accuracy per method is :func:`ctxlab.labs.measure.by_method`),
a submission could return the library's result and learn nothing. A hidden test grades the
learner's function inside :func:`twins_disabled`: every twin, wherever a ``ctxlab`` module or the
notebook holds it, raises :class:`TwinUsed` until the block ends, and is restored afterwards.

:func:`exact_type` is the other half: a hidden test compares types before values, so an object
whose ``__eq__`` always answers True earns nothing.
"""
from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Any, Iterator

from ctxlab.errors import CtxlabError

__all__ = ["TwinUsed", "twins_disabled", "exact_type"]


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
