"""The price table (``data/pricing.json``) and dollar costs: per request, per usage, per month.

Prices are dated and sourced in the table, which is read against a pydantic schema (a broken
file reports every problem at once). :func:`call_cost` prices one request, :func:`usage_cost`
a response's ``usage``, :func:`monthly_cost` a month of traffic; :func:`ttft_seconds` is the
simulated time to first token of the table's latency model. The relative (unit-free) cost
model is in :mod:`ctxlab.costs.formulas`. Bad input raises ValueError saying what is allowed.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Annotated, Mapping

import pydantic
import pydantic.dataclasses

from ctxlab._paths import DATA_DIR
from ctxlab._schema import STRICT, Strict, load_json
from ctxlab.costs._checks import nonneg, share
from ctxlab.costs.usage import usage_dict

PRICING_PATH = DATA_DIR / "pricing.json"
MTOK = 1_000_000

DEFAULT_MODEL = "claude-opus-5"


_Positive = Annotated[float, pydantic.Field(gt=0)]


@pydantic.dataclasses.dataclass(frozen=True, config=STRICT)
class ModelPrice:
    """One row of the price table."""

    id: Annotated[str, pydantic.Field(min_length=1)]
    display_name: str
    input_usd_per_mtok: _Positive
    output_usd_per_mtok: _Positive
    context_window: Annotated[int, pydantic.Field(gt=0)]
    cache_write_5m_multiplier: _Positive
    cache_write_1h_multiplier: _Positive
    cache_read_multiplier: Annotated[float, pydantic.Field(ge=0, lt=1)]
    min_cacheable_tokens: Annotated[int, pydantic.Field(ge=0)]
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


class LatencyModel(Strict):
    """The simulated time-to-first-token model (calibrated on published figures, not measured)."""

    description: str
    base_s: Annotated[float, pydantic.Field(ge=0)]
    uncached_s_per_token: Annotated[float, pydantic.Field(ge=0)]
    cached_s_per_token: Annotated[float, pydantic.Field(ge=0)]
    retrieval_s: Annotated[float, pydantic.Field(ge=0)]
    output_tokens_per_s: _Positive


class PriceTable(Strict):
    """``data/pricing.json``."""

    currency: str
    unit: str
    as_of: Annotated[str, pydantic.Field(pattern=r"^\d{4}-\d{2}-\d{2}$")]
    notes: str
    models: tuple[ModelPrice, ...]
    latency_model: LatencyModel

    @pydantic.model_validator(mode="after")
    def _unique_ids(self):
        ids = [m.id for m in self.models]
        if not ids:
            raise ValueError("the table lists no model")
        if len(set(ids)) != len(ids):
            raise ValueError(f"model ids must be unique, got {ids}")
        return self


@lru_cache(maxsize=1)
def _table() -> PriceTable:
    return load_json(PRICING_PATH, PriceTable)


def models() -> dict[str, ModelPrice]:
    """All models of the price table, keyed by model id, in table order."""
    return {m.id: m for m in _table().models}


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
    return _table().latency_model.model_dump()


def price_table_date() -> str:
    return _table().as_of


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
        nonneg(name, v)
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
    nonneg("calls_per_month", calls_per_month)
    nonneg("cost_miss", cost_miss)
    share("hit_rate", hit_rate)
    nonneg("fixed_monthly", fixed_monthly)
    if cost_hit is None:
        cost_hit = cost_miss
    nonneg("cost_hit", cost_hit)
    return calls_per_month * ((1 - hit_rate) * cost_miss + hit_rate * cost_hit) + fixed_monthly


def ttft_seconds(uncached_tokens: float, cached_tokens: float = 0, *, retrieval: bool = False) -> float:
    """Simulated time to first token from the latency model in data/pricing.json.

    A model calibrated on the usage article's figures, not a measurement: base + uncached tokens at
    one rate + cached tokens at a faster rate (+ retrieval time for RAG).
    """
    nonneg("uncached_tokens", uncached_tokens)
    nonneg("cached_tokens", cached_tokens)
    lm = latency_model()
    t = lm["base_s"] + uncached_tokens * lm["uncached_s_per_token"] + cached_tokens * lm["cached_s_per_token"]
    if retrieval:
        t += lm["retrieval_s"]
    return t
