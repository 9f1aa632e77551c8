"""The one reader of a response's ``usage``: token counts by what they were billed as.

Accepts ``resp.usage`` (an ``anthropic.types.Usage``), a dict as the API returns it, or a
sandbox log entry's usage. The API's rule: total input = ``cache_read_input_tokens`` +
``cache_creation_input_tokens`` + ``input_tokens`` (``input_tokens`` alone is only the part
after the last breakpoint), and ``cache_creation`` splits the writes by TTL.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

#: the top-level token counts of a usage
FIELDS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")
#: what one call did with the cache
KINDS = ("write", "read", "read+write", "none")


def _get(obj: Any, name: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def _count(name: str, value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise ValueError(f"usage field {name} must be a token count (an integer >= 0), got {value!r}")
    if value < 0:
        raise ValueError(f"usage field {name} must be >= 0, got {value!r}")
    return int(value)


def usage_dict(usage: Any) -> dict:
    """A usage as plain integers, in the API's shape (with the ``cache_creation`` breakdown).

    Missing fields and ``None`` count as 0. When the ``cache_creation`` breakdown is missing,
    the whole creation count is taken as a 5-minute write (what the API did before the 1-hour
    TTL existed). Raises ValueError for a missing usage or negative or non-numeric counts.
    """
    if usage is None:
        raise ValueError("usage is None: pass resp.usage (or its dict), not the response's missing field")
    out = {name: _count(name, _get(usage, name)) for name in FIELDS}
    creation = _get(usage, "cache_creation")
    if creation is None:
        w5, w1 = out["cache_creation_input_tokens"], 0
    else:
        w5 = _count("cache_creation.ephemeral_5m_input_tokens", _get(creation, "ephemeral_5m_input_tokens"))
        w1 = _count("cache_creation.ephemeral_1h_input_tokens", _get(creation, "ephemeral_1h_input_tokens"))
        if out["cache_creation_input_tokens"] == 0 and w5 + w1 > 0:
            out["cache_creation_input_tokens"] = w5 + w1
    out["cache_creation"] = {"ephemeral_5m_input_tokens": w5, "ephemeral_1h_input_tokens": w1}
    return out


def total_input(usage: Any) -> int:
    """All input tokens of a call: read + written + uncached."""
    u = usage_dict(usage)
    return u["cache_read_input_tokens"] + u["cache_creation_input_tokens"] + u["input_tokens"]


def call_kind(usage: Any) -> str:
    """What one call did with the cache: "write", "read", "read+write" or "none"."""
    u = usage_dict(usage)
    wrote, read = u["cache_creation_input_tokens"] > 0, u["cache_read_input_tokens"] > 0
    if wrote and read:
        return "read+write"
    if read:
        return "read"
    if wrote:
        return "write"
    return "none"


def summed(usages: Iterable[Any]) -> dict:
    """The field-by-field sum of several usages, in the shape of :func:`usage_dict`."""
    total = {name: 0 for name in FIELDS}
    w5 = w1 = 0
    for u in map(usage_dict, usages):
        for name in FIELDS:
            total[name] += u[name]
        w5 += u["cache_creation"]["ephemeral_5m_input_tokens"]
        w1 += u["cache_creation"]["ephemeral_1h_input_tokens"]
    total["cache_creation"] = {"ephemeral_5m_input_tokens": w5, "ephemeral_1h_input_tokens": w1}
    return total
