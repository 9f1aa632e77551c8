"""Grading: the learner's side of a call from the grader (runs in the learner's kernel).

The grader-side harness (:mod:`~ctxlab.grading.harness`) sends an ``execute_request`` with empty
code and one ``user_expressions`` entry, e.g. ``__import__(...).call(choose_path, '<json>')``:
IPython evaluates it in the learner's namespace (no input transformer, no cell hook), this module
rebuilds the arguments (:mod:`~ctxlab.grading.codec`), calls the learner's function and answers
with its result as JSON text. A callable argument (a test that hands the learner a function, as
11's ``holds`` does) is a stub that asks the grader through the kernel's stdin channel, so the
test's function runs in the grader, never here.

Nothing here is a defence: the learner's kernel is the learner's, and whatever it answers is
only data that the grader decodes with its own codec.
"""
from __future__ import annotations

import builtins
import json
from typing import Any

from ctxlab.grading import codec

CALLBACK_PROMPT = "\x00ctxlab-callback "


def _ask(prompt: str) -> str:
    """An input_request to the grader (ipykernel restores ``input`` before it evaluates
    ``user_expressions``, so this asks the kernel itself)."""
    from IPython import get_ipython

    kernel = getattr(get_ipython(), "kernel", None)
    return kernel.raw_input(prompt) if kernel is not None else builtins.input(prompt)


def _callback(ident: int):
    def test_function(*args, **kwargs):
        reply = _ask(CALLBACK_PROMPT + json.dumps({"id": ident, "args": codec.encode(list(args)),
                                                              "kwargs": codec.encode(kwargs)}, ensure_ascii=False))
        data = json.loads(reply)
        if isinstance(data, dict) and "$e" in data:
            raise codec.rebuild_error(data)
        return codec.decode(data)
    return test_function


def _answer(fn) -> str:
    try:
        result = fn()
    except BaseException as exc:  # noqa: BLE001 - the learner's error goes back as data
        return json.dumps(codec.error_data(exc), ensure_ascii=False)
    try:
        return json.dumps({"ok": codec.encode(result)}, ensure_ascii=False, allow_nan=False)
    except (codec.Unsupported, ValueError, RecursionError) as exc:
        return json.dumps({"$e": "TypeError", "msg": str(exc), "type": "TypeError"}, ensure_ascii=False)


def call(fn: Any, payload: str) -> str:
    """Call the learner's ``fn`` with the arguments in ``payload`` (``[args, kwargs]``); the result as JSON text."""
    args, kwargs = codec.loads(payload, _callback)
    return _answer(lambda: fn(*args, **kwargs))


def value(obj: Any) -> str:
    """A learner's value (not a function) as JSON text; a function answers ``{"callable": true}``."""
    if callable(obj):
        return json.dumps({"callable": True})
    return _answer(lambda: obj)
