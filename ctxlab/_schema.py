"""Reading a data file against its pydantic schema, reporting every problem at once.

A broken ``data/pricing.json``, ``data/rules/catalog.json``, ``data/eval/questions.jsonl`` or
quiz bank raises :class:`~ctxlab.errors.SchemaError` listing each problem as
"file: field: what is wrong", never a bare KeyError on the first one.
"""
from __future__ import annotations

import json
from pathlib import Path
from functools import lru_cache
from typing import Any, TypeVar

import pydantic

from ctxlab.errors import SchemaError

M = TypeVar("M")
#: configuration of the course's schemas: unknown fields are errors
STRICT = pydantic.ConfigDict(extra="forbid")


class Strict(pydantic.BaseModel):
    """Base of the course's schema models: unknown fields are errors, instances are immutable."""

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)


@lru_cache(maxsize=None)
def _adapter(model) -> pydantic.TypeAdapter:
    return pydantic.TypeAdapter(model)


def _where(loc: tuple) -> str:
    return ".".join(str(p) for p in loc) or "(top level)"


def problems_of(exc: pydantic.ValidationError, prefix: str = "") -> list[str]:
    """One "field: message" line per error of a pydantic validation."""
    return [f"{prefix}{_where(e['loc'])}: {e['msg']}" for e in exc.errors()]


def read_text(path: Path) -> str:
    """The file's text, or a SchemaError that says why it cannot be read."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SchemaError(path, ["ファイルがありません（パスを確かめてください）"]) from None
    except UnicodeDecodeError as exc:
        raise SchemaError(path, [f"UTF-8 ではありません（{exc.start} バイト目）: UTF-8 で保存し直してください"]) from None


def load_json(path: Path, model: type[M]) -> M:
    """Parse a JSON file into ``model`` (a pydantic model or dataclass); all problems in one SchemaError."""
    text = read_text(path)
    try:
        raw: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SchemaError(path, [f"{exc.lineno} 行目: JSON として読めません ({exc.msg})"]) from None
    try:
        return _adapter(model).validate_python(raw)
    except pydantic.ValidationError as exc:
        raise SchemaError(path, problems_of(exc)) from None


def load_jsonl(path: Path, model: type[M]) -> list[M]:
    """Parse a JSON Lines file, one ``model`` per non-blank line; all problems in one SchemaError."""
    out: list[M] = []
    problems: list[str] = []
    for n, line in enumerate(read_text(path).splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append(_adapter(model).validate_json(line))
        except pydantic.ValidationError as exc:
            problems += problems_of(exc, prefix=f"{n} 行目: ")
    if problems:
        raise SchemaError(path, problems)
    return out
