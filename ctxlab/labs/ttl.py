"""Lesson 04 (TTL): a day of questions, and what a prompt-cache TTL makes of it.

The traffic model and the cache model (:func:`office_day`, :func:`model_hits`, :func:`hit_rate`, ...)
live in :mod:`ctxlab.costs.traffic`, so that every month the course prices takes its hit rate from
the same model; they are re-exported here, where lesson 04 builds them. This module adds:

* **dollars on a day** -- :func:`day_cost` and :func:`compare_ttls`;
* **a simulated replay** -- :func:`replay` sends every request through the real ``anthropic`` SDK
  to an offline :class:`~ctxlab.sandbox.Sandbox` whose clock follows the timestamps, and
  collects the usage the sandbox returned (a :class:`~ctxlab.labs._replay.Replay`). The sandbox
  follows the rules the lesson states, so the replay is a simulation of them, not a measurement
  of the API; it needs the sandbox's controllable clock (the real API cannot fast-forward a day).

The picture of a day (requests per half hour, hit or miss per TTL) is
:func:`ctxlab.plots.ttl.day`.
"""
from __future__ import annotations

from typing import Iterable, Mapping, Sequence

from ctxlab import _table, corpus
from ctxlab.api import messages
from ctxlab.costs import pricing
from ctxlab.costs._checks import nonneg
from ctxlab.costs.traffic import (  # noqa: F401  (lesson 04 reads them here)
    DAY_START_S, DAYS, MAX_DAYS, MIN_DAYS, PROFILES, TARGET_SE, TTL_SECONDS, HitRateStats, Profile, _times, clock_label,
    days_for, expected_hit_rate, gaps, hit_rate, hit_rate_spread, hit_rate_stats, model_hits, office_day,
    share_within, ttl_seconds,
)
from ctxlab.labs import _replay
from ctxlab.labs._replay import Replay, Sent
from ctxlab.sandbox import Sandbox

#: the usage article's assumptions for one question: the question and instructions, and the answer
QUESTION_TOKENS = 400
OUTPUT_TOKENS = 700


def day_cost(times: Iterable[float], ttl: str | None, doc_tokens: float, *, model: str = pricing.DEFAULT_MODEL,
             question_tokens: float = QUESTION_TOKENS, output_tokens: float = OUTPUT_TOKENS) -> float:
    """Dollars for the requests at ``times`` with the documents cached at ``ttl``.

    ``ttl=None`` sends everything at the base input price (no cache). Otherwise a miss
    writes ``doc_tokens`` at the TTL's write multiplier and a hit reads them; the question
    (after the breakpoint) and the answer cost the same either way.
    """
    ts = _times(times)
    nonneg("doc_tokens", doc_tokens)
    if ttl is None:
        one = pricing.call_cost(model, input_tokens=doc_tokens + question_tokens, output_tokens=output_tokens).total
        return one * len(ts)
    write = {"5m": "cache_write_5m_tokens", "1h": "cache_write_1h_tokens"}
    if ttl not in write:
        raise ValueError(f"ttl must be None, '5m' or '1h', got {ttl!r}")
    hits = sum(model_hits(ts, ttl))
    miss_cost = pricing.call_cost(model, input_tokens=question_tokens, output_tokens=output_tokens,
                                  **{write[ttl]: doc_tokens}).total
    hit_cost = pricing.call_cost(model, input_tokens=question_tokens, output_tokens=output_tokens,
                                 cache_read_tokens=doc_tokens).total
    return (len(ts) - hits) * miss_cost + hits * hit_cost


def compare_ttls(times: Iterable[float], doc_tokens: float, **kw) -> dict[str, dict]:
    """For no cache, 5m and 1h: ``{"hit_rate": ..., "cost_usd": ...}`` (see :func:`day_cost`)."""
    ts = _times(times)
    out = {"none": {"hit_rate": 0.0, "cost_usd": day_cost(ts, None, doc_tokens, **kw)}}
    for ttl in TTL_SECONDS:
        out[ttl] = {"hit_rate": hit_rate(ts, ttl), "cost_usd": day_cost(ts, ttl, doc_tokens, **kw)}
    return out


def cheapest(costs: Mapping[str, Mapping[str, float] | float]) -> str:
    """The key with the lowest cost in a :func:`compare_ttls` result (or a plain key -> dollars dict)."""
    if not costs:
        raise ValueError("nothing to compare")

    def dollars(v):
        return v["cost_usd"] if isinstance(v, Mapping) else v

    return min(costs, key=lambda k: dollars(costs[k]))


TTL_LABELS = {"none": "なし", "5m": "5 分", "1h": "1 時間"}


def traffic_table(days: Mapping[str, Sequence[float]], doc_tokens: float, *, model: str = pricing.DEFAULT_MODEL
                  ) -> tuple[dict[str, dict], _table.Table]:
    """:func:`compare_ttls` for each named day, and the lesson's table of them (Japanese labels, source caption)."""
    costs = {name: compare_ttls(ts, doc_tokens, model=model) for name, ts in days.items()}
    rows = [[name, f"{share_within(days[name], 300):.0%}", f"{c['5m']['hit_rate']:.0%}", f"{c['1h']['hit_rate']:.0%}",
             *(f"${c[k]['cost_usd']:.2f}" for k in ("none", "5m", "1h")), TTL_LABELS[cheapest(c)]]
            for name, c in costs.items()]
    table = _table.Table(["トラフィック", "5 分未満の間隔", "ヒット率 5 分", "ヒット率 1 時間", "1 日の料金（キャッシュなし）",
                          "1 日の料金（5 分）", "1 日の料金（1 時間）", "最安"], rows,
                         caption=f"出典: 合成トラフィックの 1 日ずつ（シミュレーション）。{pricing.get_model(model).display_name}、"
                                 f"文書は規程まるごと、質問 {QUESTION_TOKENS}・回答 {OUTPUT_TOKENS} トークン（使い分けの記事の前提）")
    return costs, table


# ---------------------------------------------------------------- measurement through the SDK

def replay(times: Iterable[float], docs, *, ttl: str | None = "5m", model: str = pricing.DEFAULT_MODEL,
           questions: Sequence[str] | None = None, max_tokens: int = 16, sandbox: Sandbox | None = None,
           progress: bool = False) -> Replay:
    """Send one request per timestamp through the SDK to a sandbox whose clock follows the times.

    Every request carries ``docs`` as document blocks with the breakpoint on the last one
    (``ctxlab.api.messages.question_request``), then a question (``questions`` in turn, by
    default the course's 30 field questions). Requests at the same second are sent as
    parallel requests (``Sandbox.concurrent``), so none of them can read what another writes.

    ``sandbox`` must have a manual clock (``Sandbox(realtime=False)``); by default a fresh
    one with an empty cache and no simulated waiting is made. Keep ``max_tokens`` short: the
    answer's length does not depend on the TTL, and a short answer keeps the replay fast.
    The replay itself is :func:`ctxlab.labs._replay.replay`, shared with lesson 06.
    """
    ts = _times(times)
    docs = list(docs)
    if not docs:
        raise ValueError("replay needs at least one document to cache")
    qs = list(questions) if questions is not None else [q.question for q in corpus.questions()]
    if not qs:
        raise ValueError("questions is empty: pass at least one question (or None for the field questions)")
    entries = [_replay.Entry(t, messages.question_request(docs, qs[i % len(qs)], model=model,
                                                          max_tokens=max_tokens, cache_ttl=ttl))
               for i, t in enumerate(ts)]
    return _replay.replay(entries, ttl=ttl, model=model, sandbox=sandbox, progress=progress,
                          desc=f"replay ttl={ttl}")


__all__ = [
    "TTL_SECONDS", "DAY_START_S", "QUESTION_TOKENS", "OUTPUT_TOKENS", "Profile", "PROFILES",
    "office_day", "clock_label", "ttl_seconds", "gaps", "share_within", "model_hits", "hit_rate",
    "DAYS", "MIN_DAYS", "MAX_DAYS", "TARGET_SE", "days_for", "HitRateStats", "hit_rate_stats", "hit_rate_spread", "expected_hit_rate",
    "day_cost", "compare_ttls", "cheapest", "Sent", "Replay", "replay",
]
