"""Grading: the values that cross between the grader and the learner's kernel, as JSON data.

At grading the tests run in a grader-side kernel and the learner's functions in the learner's
sandboxed kernel (:mod:`~ctxlab.grading.harness`); every argument and every result crosses as
JSON text built here and rebuilt on the other side. Nothing is pickled and nothing is evaluated:
a value is one of

- ``None``, ``bool``, ``int``, ``float`` (``nan`` and ``inf`` too), ``str``: as JSON;
- ``list``: a JSON array; ``tuple``, ``set``, ``frozenset``, ``dict`` (any key this codec
  carries): a tagged object (``{"$t": [...]}``, ``{"$s": ...}``, ``{"$fs": ...}``, ``{"$m": [[k, v], ...]}``);
- an instance of one of the course's own types (:func:`allowed_type`: a dataclass or a pydantic
  model defined in ``ctxlab`` or in the SDK's ``anthropic.types``): ``{"$o": "module:Name", "f": {...}}``,
  rebuilt by calling that type with its fields;
- ``types.SimpleNamespace`` (an SDK-like object of plain attributes, as 03's tests build):
  ``{"$ns": [[name, value], ...]}``;
- numpy's scalars become the Python number they hold.

Only the exact types above are carried (a ``str`` subclass whose ``__eq__`` always answers
True is refused, not passed on), with at most :data:`MAX_DEPTH` levels and :data:`MAX_CHARS`
characters. What cannot be carried raises :class:`Unsupported` with a Japanese message that
names the type and says what to return instead.
"""
from __future__ import annotations

import dataclasses
import importlib
import json
import math
import types
from typing import Any, Callable

from ctxlab.errors import CtxlabError, Unsolved

MAX_DEPTH = 40
MAX_CHARS = 8_000_000
#: the SDK and the course's own packages whose dataclasses and pydantic models may cross
TYPE_MODULES = ("ctxlab.", "anthropic.types.")
#: exception types rebuilt by name on the other side (a learner's own exception arrives as
#: the first of these in its class's MRO, e.g. ``class MyError(ValueError)`` as ValueError);
#: ``Unsolved`` (a released stub) keeps its one-line display
EXCEPTIONS = {e.__name__: e for e in (Unsolved, ValueError, TypeError, KeyError, IndexError, ZeroDivisionError, LookupError,
                                      ArithmeticError, AttributeError, NotImplementedError, RuntimeError,
                                      AssertionError, OverflowError, RecursionError, StopIteration,
                                      TimeoutError, MemoryError, NameError, Exception)}


class Unsupported(CtxlabError, TypeError):
    """A value the codec does not carry (its message is for the learner)."""


def refused(kind: str) -> str:
    return (f"戻り値や引数の型 {kind} は採点で受け取れません。採点ではテストが別のプロセスで動き、値はデータとして"
            "受け渡されます。None・bool・int・float・str・list・tuple・dict・set か、演習が示す型で返してください。")


def allowed_type(cls: type) -> bool:
    """Whether instances of ``cls`` may cross: a dataclass or pydantic model of ``ctxlab`` or ``anthropic.types``."""
    module = getattr(cls, "__module__", "") or ""
    if not module.startswith(TYPE_MODULES):
        return False
    if dataclasses.is_dataclass(cls):
        return True
    return any(f"{b.__module__}.{b.__qualname__}" == "pydantic.main.BaseModel" for b in cls.__mro__)


def _type_name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _resolve(name: str) -> type:
    module, _, qual = name.partition(":")
    if not module.startswith(TYPE_MODULES) or not qual or "<" in qual:
        raise Unsupported(refused(name))
    obj: Any = importlib.import_module(module)
    for part in qual.split("."):
        obj = getattr(obj, part, None)
    if not isinstance(obj, type) or not allowed_type(obj) or _type_name(obj) != name:
        raise Unsupported(refused(name))
    return obj


def _numpy_scalar(value: Any) -> Any:
    cls = type(value)
    if cls.__module__ == "numpy" and hasattr(value, "item") and getattr(value, "shape", None) == ():
        item = value.item()
        if type(item) in (bool, int, float):
            return item
    return None


def encode(value: Any, callback: Callable[[Any], int] | None = None, _depth: int = 0) -> Any:
    """``value`` as JSON-able data (``callback``: turns a callable argument into an id, grader side only)."""
    if _depth > MAX_DEPTH:
        raise Unsupported(f"値の入れ子が深すぎます（{MAX_DEPTH} 段まで）。")
    cls = type(value)
    if value is None or cls in (bool, int, str):
        return value
    if cls is float:
        return value if math.isfinite(value) else {"$x": repr(value)}
    nxt = _depth + 1
    if cls is list:
        return [encode(v, callback, nxt) for v in value]
    if cls is tuple:
        return {"$t": [encode(v, callback, nxt) for v in value]}
    if cls in (set, frozenset):
        return {"$s" if cls is set else "$fs": [encode(v, callback, nxt) for v in value]}
    if cls is dict:
        return {"$m": [[encode(k, callback, nxt), encode(v, callback, nxt)] for k, v in value.items()]}
    if cls is types.SimpleNamespace:
        return {"$ns": [[str(k), encode(v, callback, nxt)] for k, v in vars(value).items()]}
    scalar = _numpy_scalar(value)
    if scalar is not None:
        return encode(scalar, callback, _depth)
    if allowed_type(cls):
        if dataclasses.is_dataclass(value):
            fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        else:
            fields = {k: getattr(value, k) for k in type(value).model_fields}
        return {"$o": _type_name(cls), "f": {k: encode(v, callback, nxt) for k, v in fields.items()}}
    if callback is not None and callable(value) and not isinstance(value, type):
        return {"$cb": callback(value)}
    raise Unsupported(refused(f"{cls.__module__}.{cls.__qualname__}" if cls.__module__ != "builtins" else cls.__qualname__))


def _hashable(v: Any) -> Any:
    try:
        hash(v)
    except TypeError:
        raise Unsupported("dict のキーや set の要素に、ハッシュできない値があります。") from None
    return v


def decode(data: Any, callback: Callable[[int], Any] | None = None, _depth: int = 0) -> Any:
    """The value :func:`encode` made ``data`` from (``callback``: rebuilds a callable argument from its id)."""
    if _depth > MAX_DEPTH:
        raise Unsupported(f"値の入れ子が深すぎます（{MAX_DEPTH} 段まで）。")
    cls = type(data)
    if data is None or cls in (bool, int, str, float):
        return data
    nxt = _depth + 1
    if cls is list:
        return [decode(v, callback, nxt) for v in data]
    if cls is not dict or len(data) not in (1, 2):
        raise Unsupported("採点で受け取った値の形が正しくありません。")
    if "$x" in data and data["$x"] in ("nan", "inf", "-inf"):
        return float(data["$x"])
    if "$t" in data and type(data["$t"]) is list:
        return tuple(decode(v, callback, nxt) for v in data["$t"])
    if "$s" in data and type(data["$s"]) is list:
        return {_hashable(decode(v, callback, nxt)) for v in data["$s"]}
    if "$fs" in data and type(data["$fs"]) is list:
        return frozenset(_hashable(decode(v, callback, nxt)) for v in data["$fs"])
    if "$m" in data and type(data["$m"]) is list:
        out = {}
        for pair in data["$m"]:
            if type(pair) is not list or len(pair) != 2:
                raise Unsupported("採点で受け取った dict の形が正しくありません。")
            out[_hashable(decode(pair[0], callback, nxt))] = decode(pair[1], callback, nxt)
        return out
    if "$ns" in data and type(data["$ns"]) is list:
        if not all(type(p) is list and len(p) == 2 and type(p[0]) is str and p[0].isidentifier() for p in data["$ns"]):
            raise Unsupported("採点で受け取った SimpleNamespace の形が正しくありません。")
        return types.SimpleNamespace(**{k: decode(v, callback, nxt) for k, v in data["$ns"]})
    if "$o" in data and type(data["$o"]) is str and type(data.get("f")) is dict:
        cls_ = _resolve(data["$o"])
        fields = {str(k): decode(v, callback, nxt) for k, v in data["f"].items()}
        try:
            if dataclasses.is_dataclass(cls_):
                init = {f.name for f in dataclasses.fields(cls_) if f.init}
                obj = cls_(**{k: v for k, v in fields.items() if k in init})
                for k, v in fields.items():
                    if k not in init:
                        object.__setattr__(obj, k, v)
                return obj
            return cls_.model_validate(fields)
        except Exception as exc:  # noqa: BLE001 - the type's own validation refused the fields
            raise Unsupported(f"{cls_.__qualname__} を組み立て直せませんでした: {type(exc).__name__}: {exc}") from None
    if "$cb" in data and type(data["$cb"]) is int and callback is not None:
        return callback(data["$cb"])
    raise Unsupported("採点で受け取った値の形が正しくありません。")


def dumps(value: Any, callback: Callable[[Any], int] | None = None) -> str:
    text = json.dumps(encode(value, callback), ensure_ascii=False, allow_nan=False)
    if len(text) > MAX_CHARS:
        raise Unsupported(f"値が大きすぎます（JSON で {len(text):,} 文字。上限は {MAX_CHARS:,} 文字）。")
    return text


def loads(text: str, callback: Callable[[int], Any] | None = None) -> Any:
    if type(text) is not str or len(text) > MAX_CHARS:
        raise Unsupported(f"採点で受け取った値が大きすぎるか、文字列ではありません（上限 {MAX_CHARS:,} 文字）。")
    return decode(json.loads(text), callback)


def error_data(exc: BaseException) -> dict:
    """An exception raised by the learner's function, as data: the first type of
    :data:`EXCEPTIONS` in its MRO, its message, and the learner's own type name."""
    kind = next((c.__name__ for c in type(exc).__mro__ if EXCEPTIONS.get(c.__name__) is c), "Exception")
    if isinstance(exc, KeyboardInterrupt):
        kind = "TimeoutError"
    try:
        message = str(exc)[:4000]
    except Exception:  # noqa: BLE001 - a learner's __str__ that raises
        message = ""
    return {"$e": kind, "msg": message, "type": type(exc).__qualname__[:200]}


def rebuild_error(data: dict) -> BaseException:
    """The exception :func:`error_data` described (only the types of :data:`EXCEPTIONS`)."""
    cls = EXCEPTIONS.get(str(data.get("$e")), Exception)
    message, own = str(data.get("msg", ""))[:4000], str(data.get("type", ""))[:200]
    if cls is Unsolved:
        exc = Unsolved()
        exc.args = (message,)
        return exc
    if own and own != cls.__name__:
        message = f"{message}（受講者のコードの {own}）" if message else f"（受講者のコードの {own}）"
    return cls(message)
