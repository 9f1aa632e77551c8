"""Lesson 05: where the paths cross: monthly cost against document volume, and the cost article's rho-k map.

Pure computations behind lesson 05 and its widgets (:mod:`ctxlab.widgets.crossover`).
Nothing here re-implements a cost formula: the dollar figures come from
:func:`ctxlab.costs.compare.compare` (which prices every call with :mod:`ctxlab.costs.pricing`), the
relative figures from :func:`ctxlab.costs.pricing.relative_cost` and :func:`ctxlab.costs.pricing.rho_limit`.

Two views of the same decision:

* dollars per month (the source article's "Move the line"): :func:`monthly`, :func:`curves`,
  :func:`crossover_tokens`, :func:`situation`; the hit rate comes from the traffic model
  (:meth:`compare.Profile.effective_hit_rate`) unless a profile fixes it;
* per call, in units of "the whole text sent once at the base price" (the cost article):
  :func:`rho_k_map`, :func:`cheapest`, and :func:`profile_point`, which places a dollar
  profile on the map (the vector database's monthly fee becomes a per-call search cost ``s``
  that grows as traffic falls). Two axes, not three options: what to send (``rho``) and
  whether to reuse it (``k``); with a fixed part ``m0`` the map also shows the hybrid
  (retrieval with the fixed part cached).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from ctxlab.costs import compare, formulas, pricing, traffic
from ctxlab.costs._checks import nonneg
from ctxlab.errors import ContextWindowExceeded

DAYS_PER_MONTH = compare.DAYS_PER_MONTH   # the article: 20 questions a day = 600 a month
ARTICLE_FILES = 50              # the usage article: 50 files; the filter keeps 5 of them
TTFT_LIMIT_S = 3.0           # the usage article: stay with long context while the warm-cache TTFT is within 3 s
HALF_WINDOW = 0.5            # the usage article's premise: documents <= 50% of the window

# The three monthly figures the simulator compares (keys of compare.Comparison.monthly).
PATHS = {
    "long_context": "ロングコンテキスト（キャッシュ）",
    "filter": "メタデータで絞る",
    "rag": "RAG（DB 込み）",
}

# The methods of the cost article's map, in the order of the colour index. "retrieval" sends the
# fixed part m0 (if any) uncached, "hybrid" caches it; with m0 = 0 they cost the same (ties go
# to retrieval, so the hybrid has no area).
METHODS = ("full", "cache", "retrieval", "hybrid")
METHOD_LABELS = {"full": "毎回全文を渡す", "cache": "全文をキャッシュ", "retrieval": "検索して引いた分だけ",
                 "hybrid": "検索しつつ固定部分をキャッシュ"}


# ---------------------------------------------------------------- profiles

def profile(questions_per_day: float = 20, **fields) -> compare.Profile:
    """A :class:`compare.Profile` with the traffic given per day (30 days a month).

    Other fields (``model``, ``hit_rate``, ``rag_chunks``, ``db_monthly``, ...) pass through.
    """
    nonneg("questions_per_day", questions_per_day)
    p = compare.Profile(questions_per_month=questions_per_day * DAYS_PER_MONTH, **fields)
    p.check()
    return p


def per_day(p: compare.Profile) -> float:
    """Questions per day of a profile."""
    return p.questions_per_month / DAYS_PER_MONTH


# ---------------------------------------------------------------- dollars per month

def monthly(doc_tokens: float, p: compare.Profile | None = None, n_files: int = ARTICLE_FILES) -> dict[str, float]:
    """Monthly dollars of every path for ``doc_tokens`` tokens of documents (compare's figures)."""
    return dict(compare.compare(doc_tokens, n_files, p or compare.Profile()).monthly)


def curves(p: compare.Profile, doc_grid: Iterable[float], n_files: int = ARTICLE_FILES,
           paths: Sequence[str] = tuple(PATHS)) -> dict[str, np.ndarray]:
    """Monthly dollars of ``paths`` at each document volume of ``doc_grid`` (arrays, one per path)."""
    grid = [float(d) for d in doc_grid]
    rows = [_monthly_or_rag_only(d, p, n_files) for d in grid]
    return {path: np.array([r.get(path, math.nan) for r in rows]) for path in paths}


def fits(doc_tokens: float, p: compare.Profile) -> bool:
    """Whether long context (the documents and the prompt) fits the model's context window."""
    return doc_tokens + p.prompt_tokens <= pricing.get_model(p.model).context_window


def _monthly_or_rag_only(doc_tokens: float, p: compare.Profile, n_files: int) -> dict[str, float]:
    """compare's month; over the window only RAG's (it does not grow with the documents), the rest absent."""
    if fits(doc_tokens, p):
        return monthly(doc_tokens, p, n_files)
    at0 = monthly(0, p, n_files)
    return {k: at0[k] for k in ("rag", "rag_api", "rag_db")}


def _segments(p: compare.Profile, n_files: int) -> list[tuple[float, float]]:
    """Document volumes (lo, hi] on which every path's month is affine: cut at each price-tier boundary.

    A tier's threshold T (prompt tokens) is crossed by long context at T - prompt and by the
    filter at that volume x n_files / filter_files; the last segment ends where long context
    no longer fits the window.
    """
    m = pricing.get_model(p.model)
    top = m.context_window - p.prompt_tokens
    share = min(p.filter_files, n_files) / n_files
    cuts = {0.0, float(top)}
    for tier in m.prompt_tiers:
        for c in (tier.over_prompt_tokens - p.prompt_tokens, (tier.over_prompt_tokens - p.prompt_tokens) / share):
            if 0 < c < top:
                cuts.add(float(c))
    edges = sorted(cuts)
    return list(zip(edges, edges[1:]))


@dataclass(frozen=True)
class Line:
    """A monthly cost as an affine function of the document volume: ``at0 + slope * tokens``."""

    at0: float
    slope: float  # dollars per month per document token

    def __call__(self, tokens: float) -> float:
        return self.at0 + self.slope * tokens


def line(path: str, p: compare.Profile, n_files: int = ARTICLE_FILES, probe: float = 1_000_000) -> Line:
    """The monthly cost of ``path`` as a line in the document volume, read off compare at 0 and ``probe``.

    Every path's monthly cost is affine in the volume: long context pays the documents at the
    (hit-rate weighted) cache rates, the filter a fixed share of them, RAG not at all. The
    filter rounds its share to whole tokens, so its line is exact to a fraction of a token.
    """
    return _lines((path,), p, n_files, probe)[path]


def _lines(paths: Sequence[str], p: compare.Profile, n_files: int, probe: float = 1_000_000,
           segment: tuple[float, float] | None = None) -> dict[str, Line]:
    """Lines through two volumes of one affine segment (the first by default: below any tier, inside the window)."""
    lo, hi = segment or _segments(p, n_files)[0]
    a, b = (lo, min(probe, hi)) if segment is None else (lo + (hi - lo) / 3, lo + 2 * (hi - lo) / 3)
    at0, at_probe = monthly(a, p, n_files), monthly(b, p, n_files)
    unknown = [x for x in paths if x not in at0]
    if unknown:
        raise ValueError(f"unknown path {unknown[0]!r}: choose from {', '.join(at0)}")
    return {x: Line(at0[x] - a * (at_probe[x] - at0[x]) / (b - a), (at_probe[x] - at0[x]) / (b - a)) for x in paths}


def crossover_tokens(p: compare.Profile, dearer: str = "long_context", cheaper: str = "rag",
                     n_files: int = ARTICLE_FILES, max_tokens: float | None = None) -> float | None:
    """Document volume from which ``cheaper`` costs less per month than ``dearer``.

    The default asks the usage article's question: from how many document tokens is RAG (with its
    database) cheaper than long context (with the cache)? Returns the volume where the two
    monthly costs are equal, ``0.0`` when ``cheaper`` already costs no more at zero tokens,
    and ``None`` when it never gets cheaper (no traffic, or a crossing beyond ``max_tokens``).
    Meant for a ``dearer`` path that grows with the volume at least as fast as ``cheaper``
    (long context against RAG or the filter; the filter against RAG).
    Prices change by segment where a model has prompt tiers (the month jumps at a tier boundary);
    the search ends where long context no longer fits the model's window (beyond it there is no
    long-context price to compare).
    """
    for k, (lo, hi) in enumerate(_segments(p, n_files)):
        lines = _lines((dearer, cheaper), p, n_files, segment=None if k == 0 else (lo, hi))
        gap = lambda x: lines[dearer](x) - lines[cheaper](x)  # noqa: E731
        start = lo if k == 0 else math.nextafter(lo, math.inf)
        if gap(start) >= 0:
            x = 0.0 if k == 0 else lo
        elif gap(hi) < 0:
            continue
        else:
            x = start - gap(start) / (lines[dearer].slope - lines[cheaper].slope)
        return None if max_tokens is not None and x > max_tokens else x
    return None


def max_tokens_for_ttft(limit_s: float = TTFT_LIMIT_S, prompt_tokens: int = 400) -> float:
    """Largest document volume whose warm-cache time to first token stays within ``limit_s``.

    Bisection over :func:`pricing.ttft_seconds` (the simulated latency model, not a
    measurement): documents read from the cache, question and instructions uncached.
    Returns 0.0 when even no documents exceed the limit.
    """
    nonneg("limit_s", limit_s)

    def ttft(d: float) -> float:
        return pricing.ttft_seconds(prompt_tokens, d)

    if ttft(0) > limit_s:
        return 0.0
    lo, hi = 0.0, 1_000_000.0
    while ttft(hi) <= limit_s:
        lo, hi = hi, hi * 2
        if hi > 1e12:
            return math.inf
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if ttft(mid) <= limit_s else (lo, mid)
    return lo


def situation(doc_tokens: float, p: compare.Profile, n_files: int = ARTICLE_FILES) -> dict:
    """Everything the simulator shows, as a flat dict of numbers (and the cheapest path's key).

    Over the model's window long context has no price: its months and times are NaN,
    ``fits_window`` is False and ``window_error`` says why (RAG's figures stay).
    """
    m = pricing.get_model(p.model)
    over = not fits(doc_tokens, p)
    c = compare.compare(0 if over else doc_tokens, n_files, p)
    mo = dict(c.monthly)
    window_error = ""
    if over:
        try:
            pricing.call_cost(m, input_tokens=doc_tokens + p.prompt_tokens)
        except ContextWindowExceeded as exc:
            window_error = str(exc)
        for k in ("long_context", "long_context_no_cache", "filter"):
            mo[k] = math.nan
    cheapest_path = min((k for k in PATHS if not math.isnan(mo[k])), key=lambda k: mo[k])
    return {
        "window_error": window_error,
        "doc_tokens": doc_tokens,
        "questions_per_day": per_day(p),
        "questions_per_month": p.questions_per_month,
        "hit_rate": c.hit_rate,
        "hit_rate_from_traffic": p.hit_rate_from_traffic,
        "ttl": c.ttl,
        "ttl_auto": p.ttl == "auto",
        "monthly_long_context_article": math.nan if over else c.article_monthly["long_context"],
        "model": p.model,
        "rag_chunks": p.rag_chunks,
        "db_monthly": p.db_monthly,
        "monthly_long_context": mo["long_context"],
        "monthly_long_context_no_cache": mo["long_context_no_cache"],
        "monthly_filter": mo["filter"],
        "monthly_rag": mo["rag"],
        "monthly_rag_api": mo["rag_api"],
        "cheapest": cheapest_path,
        "window_usage": doc_tokens / m.context_window,
        "context_window": m.context_window,
        "fits_window": not over,
        "within_half_window": doc_tokens / m.context_window <= HALF_WINDOW,
        "ttft_long_context_s": math.nan if over else c.rows["lc_cached"].ttft_s,
        "ttft_filter_s": math.nan if over else c.rows["filter_cached"].ttft_s,
        "ttft_rag_s": c.rows["rag"].ttft_s,
        "crossover_tokens": crossover_tokens(p, n_files=n_files),
    }


def assumptions(p: compare.Profile | None = None, n_files: int = ARTICLE_FILES) -> list[tuple[str, str, str]]:
    """The usage article's table of assumptions, filled in from a profile and the price table: (item, value, basis)."""
    p = p or compare.Profile()
    m = pricing.get_model(p.model)
    others = ", ".join(f"{o.display_name} ${o.input_usd_per_mtok:g} / ${o.output_usd_per_mtok:g}"
                       for o in pricing.models().values() if o.id != m.id)
    kept = min(p.filter_files, n_files)
    return [
        ("入力 / 出力の単価", f"${m.input_usd_per_mtok:g} / ${m.output_usd_per_mtok:g}（100 万トークン）",
         f"{m.display_name}。{others}（価格表 {pricing.price_table_date()}）"),
        ("キャッシュの倍率", f"書き込み {m.write_multiplier(p.resolved_ttl()):g} 倍（{p.ttl_label()}）・読み出し {m.cache_read_multiplier:g} 倍",
         "通常の入力単価に対する倍率"),
        ("質問と指示", f"{p.prompt_tokens:,} tok", "毎回変わる部分。キャッシュの区切りの後ろで、常に通常単価"),
        ("回答", f"{p.output_tokens:,} tok", "出力単価が掛かる。どの方式でも同じ"),
        ("RAG が渡すチャンク", f"{p.chunk_tokens:,} tok × {p.rag_chunks} 件", "文書量が増えても変わらない"),
        ("ベクトル DB", f"${p.db_monthly:g} / 月", "小規模のマネージド構成。質問数によらない固定費"),
        ("メタデータで絞った後に残る割合", f"{kept / n_files:.0%}（{n_files} 件のうち {kept} 件）",
         "平均的な大きさのファイルとして計算"),
        ("月の質問数", f"{p.questions_per_month:,.0f} 問（1 日 {per_day(p):g} 問 × {DAYS_PER_MONTH} 日）", "仮に置いた値（自社の数に置き換える）"),
        ("キャッシュヒット率", f"{p.effective_hit_rate():.0%}",
         ("固定した値。" if p.hit_rate is not None else
          f"04 の合成トラフィック（{p.traffic}・TTL {p.resolved_ttl()}）の "
          f"{traffic.hit_rate_stats(per_day(p), p.resolved_ttl(), p.traffic).label()}。使い分けの記事は "
          f"{compare.ARTICLE_HIT_RATE:.0%} と置く。") + "絞り込みの文書セットにも同じ率を当てる"),
    ]


# ---------------------------------------------------------------- the cost article's rho-k map

def method_costs(k: float, rho: float, w: float, r: float, s: float, m0: float = 0.0) -> dict[str, float]:
    """Per-call cost of each method of the cost article's table (unit: the whole text sent once).

    Full text every time is 1 (no caching: w = r = 1); the cache sends the whole text through the
    cache; retrieval sends ``rho`` of it plus ``s`` and the fixed part ``m0`` uncached; the hybrid
    caches the fixed part: ``m0 (w + (k - 1) r) / k + rho + s``.
    """
    return {
        "full": formulas.relative_cost(1.0, k, 0.0, 0.0, 1.0, 1.0),
        "cache": formulas.relative_cost(1.0, k, 0.0, 0.0, w, r),
        "retrieval": formulas.relative_cost(m0, k, rho, s, 1.0, 1.0),
        "hybrid": formulas.relative_cost(m0, k, rho, s, w, r),
    }


def cheapest(k: float, rho: float, w: float, r: float, s: float, m0: float = 0.0) -> str:
    """The cheapest method at reuse count ``k`` and retrieved share ``rho`` (:func:`method_costs`).

    Ties go to the simpler method (full, then cache, then retrieval).
    """
    costs = method_costs(k, rho, w, r, s, m0)
    return min(METHODS, key=lambda name: costs[name])


@dataclass(frozen=True)
class RhoKMap:
    """The cost article's plane: the cheapest method at every (k, rho) of a grid, and its boundaries."""

    k: np.ndarray            # reuse counts, along x
    rho: np.ndarray          # retrieved shares, along y
    index: np.ndarray        # shape (len(rho), len(k)): 0 full, 1 cache, 2 retrieval, 3 hybrid (METHODS)
    rho_limit: np.ndarray    # pricing.rho_limit at each k (retrieval wins below it)
    asymptote: float         # r - s: the limit of rho_limit for many reuses
    breakeven_k: float       # (w - r) / (1 - r): the cache beats full text to the right of it
    w: float
    r: float
    s: float
    m0: float = 0.0

    def share(self, method: str) -> float:
        """Share of the plotted plane where ``method`` is cheapest."""
        return float(np.mean(self.index == METHODS.index(method)))


def rho_k_map(w: float = 1.25, r: float = 0.1, s: float = 0.02, *, m0: float = 0.0,
              k: Sequence[float] | None = None, rho: Sequence[float] | None = None) -> RhoKMap:
    """Colour index of the cheapest method over a (k, rho) grid, with rho_limit and r - s.

    The cache's cost depends on k only and retrieval's on rho only, so each is priced once per
    column or row with :func:`formulas.relative_cost` and the grid is their comparison; the
    hybrid is retrieval plus the cached fixed part ``m0`` (a function of k).
    """
    ks = np.linspace(1, 20, 381) if k is None else np.asarray(k, dtype=float)
    rhos = np.linspace(0, 1, 401) if rho is None else np.asarray(rho, dtype=float)
    full = formulas.relative_cost(1.0, 1, 0.0, 0.0, 1.0, 1.0)
    per_k = np.array([formulas.cached_cost_per_call(float(x), w, r) for x in ks])
    retrieval = np.array([formulas.relative_cost(m0, 1, float(y), s, 1.0, 1.0) for y in rhos])
    shape = (len(rhos), len(ks))
    stack = np.stack([
        np.full(shape, full),
        np.broadcast_to(per_k[None, :], shape),
        np.broadcast_to(retrieval[:, None], shape),
        retrieval[:, None] - m0 + m0 * per_k[None, :],
    ])
    index = np.argmin(stack, axis=0)  # ties go to the first: full, then cache, then retrieval
    limit = np.array([formulas.rho_limit(float(x), w, r, s, m0) for x in ks])
    return RhoKMap(ks, rhos, index, limit, formulas.rho_asymptote(r, s, m0), formulas.breakeven_reuses(w, r),
                   w, r, s, m0)


@dataclass(frozen=True)
class ProfilePoint:
    """A dollar profile placed on the cost article's plane (units: the whole text sent once, a * M)."""

    k: float          # calls per cache write: 1 / (1 - hit rate)
    rho: float        # RAG's chunks as a share of the documents
    s: float          # the database's monthly fee spread over the month's questions
    w: float
    r: float
    unit_usd: float   # a * M: the documents sent once at the long prompt's input price

    @property
    def rho_limit(self) -> float:
        """pricing.rho_limit at this point's k and s (inf k: the asymptote r - s)."""
        if math.isinf(self.k):
            return formulas.rho_asymptote(self.r, self.s)
        return formulas.rho_limit(self.k, self.w, self.r, self.s)

    @property
    def cheapest(self) -> str:
        return cheapest(min(self.k, 1e12), min(self.rho, 1.0), self.w, self.r, self.s)


def profile_point(doc_tokens: float, p: compare.Profile) -> ProfilePoint:
    """Translate a dollar profile into the cost article's (k, rho, s).

    With hit rate h, one call in 1/(1 - h) writes the cache, so ``k = 1 / (1 - h)``;
    ``rho`` = RAG's chunk tokens / document tokens; the question, the instructions and the
    answer are the same on every path and drop out; the database's monthly fee, spread over
    the month's questions, is a per-call search cost ``s = db / (questions * a * M)`` — it
    grows as traffic falls, which is how a fixed fee moves the rho-k boundary.

    A model priced by prompt length (``prompt_tiers``) can price the long prompt and RAG's short
    one at different rates. Then the unit is the documents at the long prompt's input rate a_lc;
    RAG's chunks count at its own rate (``rho`` = chunk tokens x a_rag / (documents x a_lc), the
    share in dollars), and what the long prompt pays more for the question and the answer, per
    call, is taken off ``s`` (it can go negative). The map's costs then match compare's months,
    and the point jumps where the documents push the prompt over a tier's threshold.
    """
    if doc_tokens <= 0:
        raise ValueError(f"doc_tokens must be > 0 to place a profile on the map, got {doc_tokens!r}")
    if p.questions_per_month <= 0:
        raise ValueError("questions_per_month must be > 0: with no traffic there is no per-call cost")
    m = pricing.get_model(p.model)
    chunks = p.rag_chunks * p.chunk_tokens
    a_lc, o_lc = m.rates(doc_tokens + p.prompt_tokens)
    a_rag, o_rag = m.rates(chunks + p.prompt_tokens)
    unit = doc_tokens * a_lc
    extra = p.prompt_tokens * (a_lc - a_rag) + p.output_tokens * (o_lc - o_rag)   # 0 without tiers
    h = p.effective_hit_rate()
    k = math.inf if h >= 1 else 1 / (1 - h)
    return ProfilePoint(k=k, rho=chunks * a_rag / unit,
                        s=(p.db_monthly / p.questions_per_month - extra) / unit,
                        w=m.write_multiplier(p.resolved_ttl()), r=m.cache_read_multiplier, unit_usd=unit)


__all__ = [
    "DAYS_PER_MONTH", "ARTICLE_FILES", "TTFT_LIMIT_S", "HALF_WINDOW", "PATHS", "METHODS", "METHOD_LABELS",
    "profile", "per_day", "monthly", "curves", "Line", "line", "crossover_tokens", "max_tokens_for_ttft",
    "situation", "assumptions", "method_costs", "cheapest", "RhoKMap", "rho_k_map", "ProfilePoint", "profile_point",
]
