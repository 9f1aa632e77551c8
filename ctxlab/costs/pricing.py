"""The price table (``data/pricing.json``) and dollar costs: per request, per usage, per month.

Prices are dated and sourced in the table, which is read against a pydantic schema (a broken
file reports every problem at once). :func:`call_cost` prices one request, :func:`usage_cost`
a response's ``usage``, :func:`monthly_cost` a month of traffic; :func:`ttft_seconds` is the
simulated time to first token of the table's latency model. The relative (unit-free) cost
model is in :mod:`ctxlab.costs.formulas`. Bad input raises ValueError saying what is allowed.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from typing import Annotated, Literal, Mapping, Optional

import pydantic
import pydantic.dataclasses

from ctxlab._paths import DATA_DIR
from ctxlab._schema import STRICT, Strict, load_json
from ctxlab.costs._checks import nonneg, share
from ctxlab.costs.usage import usage_dict
from ctxlab.errors import ContextWindowExceeded

PRICING_PATH = DATA_DIR / "pricing.json"
MTOK = 1_000_000

#: the model the lessons price and teach on: the current lineup's Opus, the successor of the article's Opus 5.
#: ``CTXLAB_DRIFT_DEFAULT_MODEL`` replaces it for tools/drift_check.py alone (the lessons executed on another default
#: model, to show which sentences of their prose drift); nothing else sets it.
DEFAULT_MODEL = os.environ.get("CTXLAB_DRIFT_DEFAULT_MODEL", "").strip() or "claude-opus-5-5"
#: the model the source articles price their tables on (now legacy): their figures are reproduced on it
ARTICLE_MODEL = "claude-opus-5"
#: the current lineup's small model (successor of the article's Haiku 4.5): the one-word classification,
#: the chunk contexts and the cheap demos. Prices by prompt length (its tier at 100,000 tokens).
SMALL_MODEL = "claude-haiku-5-5"
#: the current lineup's mid-priced model (successor of the article's Sonnet 5): the judge of lesson 08
MID_MODEL = "claude-sonnet-5-5"


_Positive = Annotated[float, pydantic.Field(gt=0)]
_Date = Annotated[str, pydantic.Field(pattern=r"^\d{4}-\d{2}(-\d{2})?$")]


class Source(Strict):
    """Where a figure comes from and when it was checked."""

    date: _Date
    source: Annotated[str, pydantic.Field(min_length=1)]


class PromptTier(Strict):
    """A higher price tier: prompts of more than ``over_prompt_tokens`` tokens pay these rates."""

    over_prompt_tokens: Annotated[int, pydantic.Field(gt=0)]
    input_usd_per_mtok: _Positive
    output_usd_per_mtok: _Positive


class TierRule(Strict):
    """Which tokens count toward a tier threshold and what the higher rate applies to.

    The official pages say only "prompts up to / over N tokens"; the rule is a stated assumption
    (``assumption``) with its source, and the cost model follows it.
    """

    counted_tokens: tuple[Literal["input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"], ...]
    applies_to: str
    boundary: str
    assumption: bool
    source: Source


@pydantic.dataclasses.dataclass(frozen=True, config=STRICT)
class ModelPrice:
    """One row of the price table (prices of the lowest prompt tier)."""

    id: Annotated[str, pydantic.Field(min_length=1)]
    display_name: str
    released: _Date
    status: Literal["latest", "superseded", "legacy"]
    input_usd_per_mtok: _Positive
    output_usd_per_mtok: _Positive
    context_window: Annotated[int, pydantic.Field(gt=0)]
    max_output_tokens: Annotated[int, pydantic.Field(gt=0)]
    cache_write_5m_multiplier: _Positive
    cache_write_1h_multiplier: _Positive
    cache_read_multiplier: Annotated[float, pydantic.Field(ge=0, lt=1)]
    #: None: no source gives it ("not confirmed"); see :func:`min_cacheable_tokens`
    min_cacheable_tokens: Optional[Annotated[int, pydantic.Field(gt=0)]]
    tokenizer_family: Literal["older", "newer"]
    sources: Mapping[str, Source]
    status_note: str = ""
    prompt_tiers: tuple[PromptTier, ...] = ()
    tier_rule: Optional[TierRule] = None

    def __post_init__(self):
        needed = {"price", "released", "status", "context_window", "cache", "min_cacheable_tokens", "tokenizer_family"}
        missing = sorted(needed - set(self.sources))
        if missing:
            raise ValueError(f"{self.id}: sources lacks {missing} (every figure needs a date and a source)")
        if self.prompt_tiers and self.tier_rule is None:
            raise ValueError(f"{self.id}: prompt_tiers need a tier_rule saying which tokens count and what they price")
        limits = [t.over_prompt_tokens for t in self.prompt_tiers]
        if limits != sorted(set(limits)) or (limits and limits[-1] >= self.context_window):
            raise ValueError(f"{self.id}: prompt_tiers must rise and stay inside the context window, got {limits}")

    @property
    def is_current(self) -> bool:
        return self.status == "latest"

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

    def rates(self, prompt_tokens: float) -> tuple[float, float]:
        """(input, output) dollars per token for a prompt of ``prompt_tokens`` under the tier rule.

        Raises :class:`ContextWindowExceeded` for a prompt longer than the context window.
        """
        nonneg("prompt_tokens", prompt_tokens)
        if prompt_tokens > self.context_window:
            raise ContextWindowExceeded(
                f"{self.display_name} のコンテキストウィンドウは {self.context_window:,} tokens ですが、"
                f"プロンプトは {prompt_tokens:,.0f} tokens です: API はこのリクエストを拒否するので料金はありません。"
                "文書を絞るか（RAG・フィルタ）、ウィンドウの大きいモデルを選んでください"
            )
        inp, out = self.input_usd_per_mtok, self.output_usd_per_mtok
        for tier in self.prompt_tiers:
            if prompt_tokens > tier.over_prompt_tokens:
                inp, out = tier.input_usd_per_mtok, tier.output_usd_per_mtok
        return inp / MTOK, out / MTOK


class LatencyModel(Strict):
    """The simulated time-to-first-token model (calibrated on published figures, not measured)."""

    description: str
    base_s: Annotated[float, pydantic.Field(ge=0)]
    uncached_s_per_token: Annotated[float, pydantic.Field(ge=0)]
    cached_s_per_token: Annotated[float, pydantic.Field(ge=0)]
    retrieval_s: Annotated[float, pydantic.Field(ge=0)]
    output_tokens_per_s: _Positive


class MinCacheableAssumption(Strict):
    """What the sandbox simulates where a model's minimum cacheable length is not confirmed."""

    tokens: Annotated[int, pydantic.Field(gt=0)]
    note: str


class PriceTable(Strict):
    """``data/pricing.json``."""

    currency: str
    unit: str
    as_of: Annotated[str, pydantic.Field(pattern=r"^\d{4}-\d{2}-\d{2}$")]
    notes: str
    sources: Mapping[str, Source]
    min_cacheable_assumed: "MinCacheableAssumption"
    #: the models of 「RAG とロングコンテキストの使い分け」, at that article's prices and date
    article_models: tuple[str, ...]
    models: tuple[ModelPrice, ...]
    latency_model: LatencyModel

    @pydantic.model_validator(mode="after")
    def _unique_ids(self):
        ids = [m.id for m in self.models]
        if not ids:
            raise ValueError("the table lists no model")
        if len(set(ids)) != len(ids):
            raise ValueError(f"model ids must be unique, got {ids}")
        unknown = [a for a in self.article_models if a not in ids]
        if unknown:
            raise ValueError(f"article_models names models the table lacks: {unknown}")
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


def article_models() -> dict[str, ModelPrice]:
    """The usage article's three models at its prices (now legacy): reproduce its figures on these, labelled as its."""
    table = models()
    return {k: table[k] for k in _table().article_models}


def current_models() -> dict[str, ModelPrice]:
    """The models the table marks "latest" (the lineup to price a decision on today)."""
    return {k: m for k, m in models().items() if m.is_current}


def min_cacheable_tokens(model: str | ModelPrice) -> tuple[int, bool]:
    """(minimum cacheable length, confirmed?): the table's figure, or the stated assumption where none is confirmed."""
    m = get_model(model)
    if m.min_cacheable_tokens is not None:
        return m.min_cacheable_tokens, True
    return _table().min_cacheable_assumed.tokens, False


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
    ``cache_read_tokens`` is ``cache_read_input_tokens``. A model with prompt tiers prices the
    whole request at the tier its prompt length falls in (the table's ``tier_rule``, a stated
    assumption); a prompt over the context window raises :class:`ContextWindowExceeded`.
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
    p, out_rate = m.rates(prompt_tokens(
        m, input_tokens=input_tokens, cache_write_tokens=cache_write_5m_tokens + cache_write_1h_tokens,
        cache_read_tokens=cache_read_tokens))
    return CallCost(
        uncached_input=input_tokens * p,
        cache_write=(cache_write_5m_tokens * m.cache_write_5m_multiplier
                     + cache_write_1h_tokens * m.cache_write_1h_multiplier) * p,
        cache_read=cache_read_tokens * m.cache_read_multiplier * p,
        output=output_tokens * out_rate,
    )


def prompt_tokens(model: str | ModelPrice, *, input_tokens: float = 0, cache_write_tokens: float = 0,
                  cache_read_tokens: float = 0) -> float:
    """The prompt length that decides the model's price tier (the tokens its ``tier_rule`` counts).

    Without tiers (or without a rule) every input token counts; the window check uses this length too.
    """
    m = get_model(model)
    parts = {"input_tokens": input_tokens, "cache_creation_input_tokens": cache_write_tokens,
             "cache_read_input_tokens": cache_read_tokens}
    if m.tier_rule is None:
        return sum(parts.values())
    return sum(parts[name] for name in m.tier_rule.counted_tokens)


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
