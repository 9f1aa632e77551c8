"""Price table and cost formulas.

All prices come from ``data/pricing.json`` (dated, with sources). Two families of
formulas live here:

* dollars: :func:`call_cost` for one request, :func:`monthly_cost` for a month of traffic;
* seed 001's relative model, in units of "the whole text sent once at the base price":
  :func:`breakeven_reuses`, :func:`relative_cost`, :func:`rho_limit`.

Every function checks its input and raises :class:`ValueError` with a message that says
what is allowed.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from typing import Mapping

from ctxlab._paths import DATA_DIR
from ctxlab.costs.usage import usage_dict

PRICING_PATH = DATA_DIR / "pricing.json"
MTOK = 1_000_000

DEFAULT_MODEL = "claude-opus-5"


@dataclass(frozen=True)
class ModelPrice:
    """One row of the price table."""

    id: str
    display_name: str
    input_usd_per_mtok: float
    output_usd_per_mtok: float
    context_window: int
    cache_write_5m_multiplier: float
    cache_write_1h_multiplier: float
    cache_read_multiplier: float
    min_cacheable_tokens: int
    sources: Mapping[str, Mapping[str, str]]

    @property
    def input_per_token(self) -> float:
        return self.input_usd_per_mtok / MTOK

    @property
    def output_per_token(self) -> float:
        return self.output_usd_per_mtok / MTOK

    def write_multiplier(self, ttl: str = "5m") -> float:
        if ttl == "5m":
            return self.cache_write_5m_multiplier
        if ttl == "1h":
            return self.cache_write_1h_multiplier
        raise ValueError(f"ttl must be '5m' or '1h', got {ttl!r}")


@lru_cache(maxsize=1)
def _table() -> dict:
    with open(PRICING_PATH, encoding="utf-8") as f:
        return json.load(f)


def models() -> dict[str, ModelPrice]:
    """All models of the price table, keyed by model id, in table order."""
    return {m["id"]: ModelPrice(**m) for m in _table()["models"]}


def get_model(model: str | ModelPrice) -> ModelPrice:
    """Look a model up by id; raise ValueError naming the known ids if it is unknown."""
    if isinstance(model, ModelPrice):
        return model
    table = models()
    if model not in table:
        raise ValueError(
            f"unknown model {model!r}: the price table (data/pricing.json) knows "
            + ", ".join(table)
        )
    return table[model]


def latency_model() -> dict:
    """Parameters of the simulated time-to-first-token model (see data/pricing.json)."""
    return dict(_table()["latency_model"])


def price_table_date() -> str:
    return _table()["as_of"]


# ---------------------------------------------------------------- checks

def _nonneg(name: str, value: float) -> float:
    if value is None or not isinstance(value, (int, float)) or value != value:
        raise ValueError(f"{name} must be a number >= 0, got {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0 (a count or an amount), got {value!r}")
    return value


def _share(name: str, value: float) -> float:
    _nonneg(name, value)
    if value > 1:
        raise ValueError(f"{name} is a share and must be between 0 and 1, got {value!r}")
    return value


def _check_multipliers(w: float, r: float) -> None:
    _nonneg("w (cache write multiplier)", w)
    _nonneg("r (cache read multiplier)", r)
    if r >= 1:
        raise ValueError(
            f"r (cache read multiplier) must be below 1, otherwise caching never pays; got {r!r}"
        )


def _check_k(k: float) -> None:
    _nonneg("k (calls that reuse the cached text)", k)
    if k < 1:
        raise ValueError(f"k (calls that share one cache write) must be >= 1, got {k!r}")


# ---------------------------------------------------------------- seed 001's relative model

def breakeven_reuses(w: float, r: float) -> float:
    """Reuse count above which caching is cheaper than sending the text each time.

    With a write multiplier ``w`` and a read multiplier ``r`` (both relative to the base
    input price), ``k`` calls cost ``w + (k - 1) r`` with the cache and ``k`` without it.
    Caching wins when ``k > (w - r) / (1 - r)``: 1.28 for the 5-minute TTL (w = 1.25,
    r = 0.1), so from the 2nd call, and 2.11 for the 1-hour TTL (w = 2), from the 3rd.
    """
    _check_multipliers(w, r)
    return (w - r) / (1 - r)


def first_paying_call(w: float, r: float) -> int:
    """The first call number at which caching has become cheaper (smallest integer k > break-even).

    Computed in exact decimal fractions, so a break-even that is a whole number (a tie:
    caching costs the same, not less) is not rounded the wrong way by floating point.
    """
    breakeven_reuses(w, r)  # checks the input
    fw, fr = Fraction(str(w)), Fraction(str(r))
    k = (fw - fr) / (1 - fr)
    return max(1, math.floor(k) + 1)


def relative_cost(m0: float, k: float, rho: float, s: float, w: float, r: float) -> float:
    """Seed 001's per-call cost in units of "the whole text sent once".

    ``m0``: share of the text that goes into the cached prefix (1 = all of it);
    ``k``: calls that share one cache write; ``rho``: share of the text retrieved and sent
    uncached per call; ``s``: per-call search cost in the same unit; ``w``/``r``: write
    and read multipliers. Per call: ``m0 * (w + (k - 1) r) / k + rho + s``.
    """
    _share("m0 (cached share of the text)", m0)
    _check_k(k)
    _share("rho (retrieved share of the text)", rho)
    _nonneg("s (search cost per call)", s)
    _check_multipliers(w, r)
    return m0 * (w + (k - 1) * r) / k + rho + s


def cached_cost_per_call(k: float, w: float, r: float) -> float:
    """Per-call cost of sending the whole text through the cache: (w + (k - 1) r) / k."""
    return relative_cost(1.0, k, 0.0, 0.0, w, r)


def rho_limit(k: float, w: float, r: float, s: float) -> float:
    """Largest retrieved share rho for which retrieval beats caching the whole text at k.

    Retrieval costs ``rho + s`` per call, the cache ``(w + (k - 1) r) / k``; retrieval is
    cheaper when ``rho < (w + (k - 1) r) / k - s``. As k grows the limit falls towards
    ``r - s`` (0.08 for r = 0.1, s = 0.02). The result can be negative: then retrieval
    never wins at that k.
    """
    _nonneg("s (search cost per call)", s)
    return cached_cost_per_call(k, w, r) - s


def rho_asymptote(r: float, s: float) -> float:
    """The limit of :func:`rho_limit` for many reuses: r - s."""
    _check_multipliers(1.0, r)
    _nonneg("s (search cost per call)", s)
    return r - s


# ---------------------------------------------------------------- dollars

@dataclass(frozen=True)
class CallCost:
    """The dollar cost of one request, split by what was billed."""

    uncached_input: float
    cache_write: float
    cache_read: float
    output: float

    @property
    def input(self) -> float:
        return self.uncached_input + self.cache_write + self.cache_read

    @property
    def total(self) -> float:
        return self.input + self.output


def call_cost(
    model: str | ModelPrice = DEFAULT_MODEL,
    *,
    input_tokens: float = 0,
    output_tokens: float = 0,
    cache_write_5m_tokens: float = 0,
    cache_write_1h_tokens: float = 0,
    cache_read_tokens: float = 0,
) -> CallCost:
    """Dollar cost of one request.

    The token arguments follow the API's usage fields: ``input_tokens`` are the uncached
    input tokens (after the last breakpoint), the cache writes are
    ``cache_creation.ephemeral_5m_input_tokens`` / ``ephemeral_1h_input_tokens``, and
    ``cache_read_tokens`` is ``cache_read_input_tokens``.
    """
    m = get_model(model)
    for name, v in (
        ("input_tokens", input_tokens),
        ("output_tokens", output_tokens),
        ("cache_write_5m_tokens", cache_write_5m_tokens),
        ("cache_write_1h_tokens", cache_write_1h_tokens),
        ("cache_read_tokens", cache_read_tokens),
    ):
        _nonneg(name, v)
    p = m.input_per_token
    return CallCost(
        uncached_input=input_tokens * p,
        cache_write=(cache_write_5m_tokens * m.cache_write_5m_multiplier
                     + cache_write_1h_tokens * m.cache_write_1h_multiplier) * p,
        cache_read=cache_read_tokens * m.cache_read_multiplier * p,
        output=output_tokens * m.output_per_token,
    )


def usage_cost(usage, model: str | ModelPrice = DEFAULT_MODEL) -> CallCost:
    """Dollar cost of a response's ``usage`` (an SDK object or a dict)."""
    u = usage_dict(usage)
    return call_cost(
        model,
        input_tokens=u["input_tokens"],
        output_tokens=u["output_tokens"],
        cache_write_5m_tokens=u["cache_creation"]["ephemeral_5m_input_tokens"],
        cache_write_1h_tokens=u["cache_creation"]["ephemeral_1h_input_tokens"],
        cache_read_tokens=u["cache_read_input_tokens"],
    )


def monthly_cost(
    calls_per_month: float,
    *,
    cost_miss: float,
    cost_hit: float | None = None,
    hit_rate: float = 0.0,
    fixed_monthly: float = 0.0,
) -> float:
    """Monthly dollars: calls x (miss share x cost on a miss + hit share x cost on a hit) + fixed.

    ``cost_miss`` is what a call costs when the cache is cold (a write, or no cache at all),
    ``cost_hit`` when it reads the cache (defaults to ``cost_miss``: no caching);
    ``fixed_monthly`` holds costs that do not depend on traffic, such as a vector database.
    """
    _nonneg("calls_per_month", calls_per_month)
    _nonneg("cost_miss", cost_miss)
    _share("hit_rate", hit_rate)
    _nonneg("fixed_monthly", fixed_monthly)
    if cost_hit is None:
        cost_hit = cost_miss
    _nonneg("cost_hit", cost_hit)
    return calls_per_month * ((1 - hit_rate) * cost_miss + hit_rate * cost_hit) + fixed_monthly


def ttft_seconds(uncached_tokens: float, cached_tokens: float = 0, *, retrieval: bool = False) -> float:
    """Simulated time to first token from the latency model in data/pricing.json.

    A model calibrated on seed 000's figures, not a measurement: base + uncached tokens at
    one rate + cached tokens at a faster rate (+ retrieval time for RAG).
    """
    _nonneg("uncached_tokens", uncached_tokens)
    _nonneg("cached_tokens", cached_tokens)
    lm = latency_model()
    t = lm["base_s"] + uncached_tokens * lm["uncached_s_per_token"] + cached_tokens * lm["cached_s_per_token"]
    if retrieval:
        t += lm["retrieval_s"]
    return t
