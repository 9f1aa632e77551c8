"""Grading: the grader-side kernel's link to the learner's kernel (proxies for the learner's names).

At autograde (:class:`~ctxlab.grading.graded.GradedExecute`) each test cell runs in a kernel of the
grader's that never executes learner code. The names a test needs from the lesson come from the
instructor's source notebook, run in that kernel; the names the learner's answer cells define
are bound here, just before the cell runs (:func:`bind`):

- a learner's function becomes a proxy: calling it sends the arguments, as data
  (:mod:`~ctxlab.grading.codec`), in an ``execute_request`` with empty code and one
  ``user_expressions`` entry (IPython evaluates it with no input transformer and no cell hook);
  the learner's function runs in the learner's kernel and its result comes back as data, or its
  exception as the same built-in exception type with its message;
- a learner's value (09's ``answers``) is fetched as data, once per test cell;
- a function the test hands to the learner's function (11's ``holds``) stays here: the learner's
  kernel gets a stub that asks for each call over the kernel's stdin channel.

So the test's source, its expected values and helpers, and its output stay in this process.
"""
from __future__ import annotations

import ast
import json
import sys
import time
from typing import Any

import zmq
from jupyter_client import BlockingKernelClient

from ctxlab.errors import CtxlabError
from ctxlab.grading import codec
from ctxlab.grading._learner import CALLBACK_PROMPT

CALL_SECONDS = 120   # one call of a learner's function (the cell's own timeout is nbgrader's)
_LEARNER = '__import__("ctxlab.grading._learner", fromlist=["_"])'
_state: dict[str, Any] = {}


class LearnerCodeError(CtxlabError, RuntimeError):
    """The learner's kernel did not answer a call as data (message for the learner)."""


def connect(connection_file: str) -> None:
    """Open a client on the learner's kernel (its connection file, readable by the grader only)."""
    kc = BlockingKernelClient()
    kc.load_connection_file(connection_file)
    kc.start_channels()
    _state["kc"] = kc


def _client() -> BlockingKernelClient:
    if "kc" not in _state:
        raise LearnerCodeError("採点の準備ができていません（受講者のカーネルにつながっていません）。")
    return _state["kc"]


def _callbacks() -> dict[int, Any]:
    return _state.setdefault("callbacks", {})


def _register(fn) -> int:
    table = _callbacks()
    table[len(table) + 1] = fn
    return len(table)


def _answer_input(kc: BlockingKernelClient, msg: dict) -> None:
    """A stub of a test's function asked for a call: run it here, answer with the result as data."""
    prompt = msg["content"].get("prompt", "")
    try:
        if not prompt.startswith(CALLBACK_PROMPT):
            raise LearnerCodeError("採点中は input() を使えません。")
        req = json.loads(prompt[len(CALLBACK_PROMPT):])
        fn = _callbacks()[int(req["id"])]
        args, kwargs = codec.decode(req["args"]), codec.decode(req["kwargs"])
        reply = json.dumps(codec.encode(fn(*args, **kwargs)), ensure_ascii=False)
    except BaseException as exc:  # noqa: BLE001 - goes back to the learner's function as its exception
        reply = json.dumps(codec.error_data(exc), ensure_ascii=False)
    kc.input(reply)


def _drain_output(kc: BlockingKernelClient, msg_id: str, deadline: float) -> None:
    """Show what the learner's function printed, in this cell's output (until its kernel is idle)."""
    while time.monotonic() < deadline:
        try:
            msg = kc.get_iopub_msg(timeout=max(0.01, deadline - time.monotonic()))
        except Exception:  # noqa: BLE001 - queue.Empty
            return
        if msg.get("parent_header", {}).get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "stream":
            stream = sys.stderr if msg["content"].get("name") == "stderr" else sys.stdout
            stream.write(str(msg["content"].get("text", ""))[:100_000])
        elif msg["msg_type"] == "status" and msg["content"].get("execution_state") == "idle":
            return


def _evaluate(expression: str) -> Any:
    """Evaluate one expression in the learner's kernel; its answer, decoded."""
    kc = _client()
    msg_id = kc.execute("", silent=False, store_history=False, allow_stdin=True, user_expressions={"r": expression})
    poller = zmq.Poller()
    poller.register(kc.shell_channel.socket, zmq.POLLIN)
    poller.register(kc.stdin_channel.socket, zmq.POLLIN)
    deadline = time.monotonic() + CALL_SECONDS
    reply = None
    while reply is None:
        left = deadline - time.monotonic()
        if left <= 0:
            kc.control_channel.send(kc.session.msg("interrupt_request", {}))
            raise TimeoutError(f"受講者の関数が {CALL_SECONDS} 秒で終わりませんでした（無限ループになっていませんか）。")
        for sock, _ in poller.poll(min(left, 1.0) * 1000):
            if sock is kc.stdin_channel.socket:
                msg = kc.get_stdin_msg(timeout=0)
                if msg.get("parent_header", {}).get("msg_id") == msg_id and msg["msg_type"] == "input_request":
                    _answer_input(kc, msg)
            else:
                msg = kc.get_shell_msg(timeout=0)
                if msg.get("parent_header", {}).get("msg_id") == msg_id:
                    reply = msg
    _drain_output(kc, msg_id, time.monotonic() + 5)
    value = reply["content"].get("user_expressions", {}).get("r", {})
    if value.get("status") != "ok":
        if value.get("ename") == "NameError":
            raise NameError(value.get("evalue", ""))
        raise LearnerCodeError(f"受講者のカーネルが答えを返せませんでした: {value.get('ename')}: {value.get('evalue')}")
    try:
        shown = value.get("data", {}).get("text/plain", "")
        if type(shown) is not str or len(shown) > 4 * codec.MAX_CHARS:
            raise ValueError("too long")
        text = ast.literal_eval(shown)
        data = json.loads(text) if type(text) is str and len(text) <= codec.MAX_CHARS else None
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        data = None
    if type(data) is not dict:
        raise LearnerCodeError("受講者のカーネルの答えを読めませんでした（表示の仕組みを変えていませんか）。")
    return data


def _result(data: dict) -> Any:
    if "$e" in data:
        raise codec.rebuild_error(data)
    if "ok" not in data:
        raise LearnerCodeError("受講者のカーネルの答えを読めませんでした。")
    return codec.decode(data["ok"])


class Proxy:
    """A learner's function, called across the boundary (see the module docstring)."""

    def __init__(self, name: str):
        self.__name__ = self.__qualname__ = name

    def __call__(self, *args, **kwargs):
        payload = json.dumps(codec.encode([list(args), kwargs], callback=_register), ensure_ascii=False, allow_nan=False)
        return _result(_evaluate(f"{_LEARNER}.call({self.__name__}, {payload!r})"))

    def __repr__(self) -> str:
        return f"<受講者の関数 {self.__name__}>"


def bind(namespace: dict, names: list[str]) -> None:
    """Bind each of the learner's ``names`` in ``namespace``: a function as a :class:`Proxy`, a
    value as data; a name the learner's kernel does not have is removed (the test's NameError)."""
    for name in names:
        if not name.isidentifier():
            continue
        try:
            data = _evaluate(f"{_LEARNER}.value({name})")
        except NameError:
            namespace.pop(name, None)
            continue
        if data.get("callable") is True:
            namespace[name] = Proxy(name)
            continue
        try:
            namespace[name] = _result(data)
        except BaseException as exc:  # noqa: BLE001 - the test that uses it fails with this message
            namespace[name] = _Unusable(name, exc)


class _Unusable:
    """A learner's value that could not cross: any use of it raises the reason."""

    def __init__(self, name: str, exc: BaseException):
        self._why = f"{name}: {exc}"

    def _fail(self, *a, **k):
        raise TypeError(self._why)

    __getattr__ = __getitem__ = __call__ = __eq__ = __iter__ = __len__ = __bool__ = __contains__ = _fail
    __hash__ = None  # type: ignore[assignment]
