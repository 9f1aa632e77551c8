"""Lesson 11 (ctxlab decide): the month of every path on every current model, the crossover and the flip.

Nothing here re-implements a cost formula: every month is :func:`ctxlab.costs.compare.compare`'s
and every crossover :func:`ctxlab.costs.crossover.crossover_tokens`'s (lessons 02 and 05).

* **Synthetic traffic** (``--questions-per-day``): the profile's hit rate comes from lesson 04's
  traffic model and the TTL is chosen by :func:`ctxlab.costs.compare.choose_ttl` (``ttl="auto"``),
  exactly as lessons 02 and 05 price a month.
* **A request log**: the hit rate of each TTL is the log's replay (:mod:`ctxlab.decide._traffic`);
  each TTL is priced with its own rate and the cheaper month is kept.

Either way long context is kept without a cache where that month is cheaper (lesson 00: at one
question a day every call writes and none reads).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from ctxlab.costs import compare, crossover, pricing
from ctxlab.costs.compare import DAYS_PER_MONTH

PATH_LABELS = {"long_context": "ロングコンテキスト", "filter": "メタデータで絞る", "rag": "RAG（DB 込み）"}


@dataclass(frozen=True)
class Traffic:
    """Questions a day and where the hit rate comes from (``log_rates`` None: lesson 04's synthetic traffic)."""

    per_day: float
    log_rates: dict[str, float] | None = None
    source: str = ""


@dataclass(frozen=True)
class ModelMonth:
    """One model's month on every path (dollars; None where long context does not fit the window)."""

    model: str
    display_name: str
    doc_tokens: int
    window_usage: float
    fits: bool
    ttl: str                      # the TTL long context is priced at ("none": no cache is cheaper)
    hit_rate: float
    long_context: float | None
    long_context_cached: float | None
    long_context_no_cache: float | None
    filter: float | None
    rag: float
    rag_api: float
    crossover_tokens: float
    ttft_cached_s: float | None
    ttft_uncached_s: float | None
    ttft_rag_s: float
    comparison: compare.Comparison | None

    @property
    def cheapest(self) -> str:
        months = {k: getattr(self, k) for k in PATH_LABELS}
        return min((k for k, v in months.items() if v is not None), key=lambda k: months[k])

    @property
    def cost_side(self) -> str:
        """The course's cost verdict: long context (best of cached and uncached) or RAG, whichever month is lower."""
        if self.long_context is None or self.long_context > self.rag:
            return "rag"
        return "long_context"

    @property
    def within_half(self) -> bool:
        return self.window_usage <= crossover.HALF_WINDOW


def profile(model: str, traffic: Traffic, db_monthly: float, filter_files: int, ttl: str = "auto") -> compare.Profile:
    """The compare profile of one model at this traffic (a log fixes the hit rate of the TTL)."""
    hit = None if traffic.log_rates is None or ttl == "auto" else traffic.log_rates[ttl]
    return crossover.profile(traffic.per_day, model=model, db_monthly=db_monthly, filter_files=filter_files,
                             hit_rate=hit, ttl=ttl)


def _comparison(doc_tokens: int, n_files: int, model: str, traffic: Traffic, db_monthly: float,
                filter_files: int) -> tuple[compare.Comparison, compare.Profile]:
    if traffic.log_rates is None:
        p = profile(model, traffic, db_monthly, filter_files)
        return compare.compare(doc_tokens, n_files, p), p
    options = []
    for ttl in compare.TTLS:   # each TTL with the log's own hit rate for it; the cheaper month wins (5m on a tie)
        p = profile(model, traffic, db_monthly, filter_files, ttl)
        options.append((compare.compare(doc_tokens, n_files, p), p))
    return min(options, key=lambda cp: cp[0].monthly["long_context"])


def model_month(doc_tokens: int, n_files: int, model: str, traffic: Traffic, *, db_monthly: float,
                filter_files: int | None) -> ModelMonth:
    """The month of every path for one model (``filter_files`` None: no metadata key, no filter path)."""
    m = pricing.get_model(model)
    keep = filter_files or 1
    p0 = profile(model, traffic, db_monthly, keep)
    if not crossover.fits(doc_tokens, p0):
        rag = compare.compare(0, n_files, p0)
        return ModelMonth(model, m.display_name, doc_tokens, doc_tokens / m.context_window, False, "-", 0.0,
                          None, None, None, None, rag.monthly["rag"], rag.monthly["rag_api"], math.nan,
                          None, None, rag.rows["rag"].ttft_s, None)
    c, p = _comparison(doc_tokens, n_files, model, traffic, db_monthly, keep)
    mo = c.monthly
    # below the minimum cacheable length the API caches nothing: long context is sent uncached
    no_cache = (mo["long_context_no_cache"] < mo["long_context"]
                or doc_tokens < pricing.min_cacheable_tokens(model)[0])
    cross = crossover.crossover_tokens(p, n_files=n_files)
    return ModelMonth(
        model, m.display_name, doc_tokens, c.window_usage, True, "none" if no_cache else c.ttl, c.hit_rate,
        mo["long_context_no_cache"] if no_cache else mo["long_context"], mo["long_context"], mo["long_context_no_cache"],
        mo["filter"] if filter_files else None, mo["rag"], mo["rag_api"], cross,
        c.rows["lc_cached"].ttft_s, c.rows["long_context"].ttft_s, c.rows["rag"].ttft_s, c)


def months(doc_tokens: int, n_files: int, models: list[str], traffic: Traffic, *, db_monthly: float,
           filter_files: int | None) -> list[ModelMonth]:
    return [model_month(doc_tokens, n_files, mid, traffic, db_monthly=db_monthly, filter_files=filter_files)
            for mid in models]


#: the questions a day at which the flip is looked for first (then bisected between neighbours)
FLIP_GRID = (1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 70, 100, 150, 200, 300)


def flip_per_day(doc_tokens: int, n_files: int, model: str, per_day: float, *, db_monthly: float,
                 filter_files: int | None, grid: tuple[int, ...] = FLIP_GRID) -> tuple[int | None, str, str]:
    """The nearest whole questions a day at which the cost verdict (long context or RAG) changes.

    Priced with lesson 04's synthetic traffic at every level (a log says only its own level). The
    side is computed at today's level and on ``grid`` (1 to 300 a day); between the grid point nearest
    today on the other side and its neighbour, the whole number where it changes is found by bisection
    (one change between two neighbouring grid points is assumed). Returns (questions a day or None when
    no grid point is on the other side, the side now, the side it flips to).
    """
    @lru_cache(maxsize=None)
    def side(d: float) -> str:
        return model_month(doc_tokens, n_files, model, Traffic(d), db_monthly=db_monthly,
                           filter_files=filter_files).cost_side

    now = side(per_day)
    others = [g for g in grid if side(g) != now]
    if not others:
        return None, now, now
    target = min(others, key=lambda g: (abs(g - per_day), g))
    # every grid point between today and the target is on today's side (the target is the nearest other)
    if target > per_day:
        lo, hi = max([g for g in grid if per_day <= g < target] + [per_day]), target
        while hi - lo > 1:   # lo: today's side, hi: the other; the smallest whole number on the other side
            mid = math.floor((lo + hi) / 2)
            if mid <= lo:
                break
            lo, hi = (lo, mid) if side(mid) != now else (mid, hi)
        return hi, now, side(hi)
    lo, hi = target, min([g for g in grid if target < g <= per_day] + [per_day])
    while hi - lo > 1:       # lo: the other side, hi: today's; the largest whole number on the other side
        mid = math.ceil((lo + hi) / 2)
        if mid >= hi:
            break
        lo, hi = (mid, hi) if side(mid) != now else (lo, mid)
    return lo, now, side(lo)


def curve_per_day(doc_tokens: int, n_files: int, model: str, grid: list[float], *, db_monthly: float,
                  filter_files: int | None) -> dict[str, list[float | None]]:
    """Month per path at each questions-a-day of ``grid`` (synthetic traffic): the memo's first figure."""
    rows = [model_month(doc_tokens, n_files, model, Traffic(d), db_monthly=db_monthly, filter_files=filter_files)
            for d in grid]
    out = {k: [getattr(r, k) for r in rows] for k in ("long_context", "long_context_no_cache", "filter", "rag")}
    return out


def curve_tokens(n_files: int, model: str, traffic: Traffic, grid: list[float], *, db_monthly: float,
                 filter_files: int | None) -> dict[str, list[float | None]]:
    """Month per path at each document volume of ``grid`` (this traffic): the crossover figure."""
    rows = [model_month(int(t), n_files, model, traffic, db_monthly=db_monthly, filter_files=filter_files)
            for t in grid]
    return {k: [getattr(r, k) for r in rows] for k in ("long_context", "filter", "rag")}


def per_month(per_day: float) -> float:
    return per_day * DAYS_PER_MONTH


__all__ = ["PATH_LABELS", "Traffic", "ModelMonth", "profile", "model_month", "months", "flip_per_day",
           "curve_per_day", "curve_tokens", "per_month"]
