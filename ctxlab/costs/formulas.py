"""The relative cost model of the course's cost article: caching (k reuses) and retrieval (share rho).

Costs are in units of "the whole text sent once at the base input price". A cache write
costs ``w``, a read ``r`` (the model's multipliers); ``k`` calls share one write; retrieval
sends a share ``rho`` of the text uncached and costs ``s`` per search. These formulas are
what lessons 03 and 05 reason with; dollars are in :mod:`ctxlab.costs.pricing`.
"""
from __future__ import annotations

import math
from fractions import Fraction

from ctxlab.costs._checks import check_k, check_multipliers, nonneg, share

def breakeven_reuses(w: float, r: float) -> float:
    """Reuse count above which caching is cheaper than sending the text each time.

    With a write multiplier ``w`` and a read multiplier ``r`` (both relative to the base
    input price), ``k`` calls cost ``w + (k - 1) r`` with the cache and ``k`` without it.
    Caching wins when ``k > (w - r) / (1 - r)``: 1.28 for the 5-minute TTL (w = 1.25,
    r = 0.1), so from the 2nd call, and 2.11 for the 1-hour TTL (w = 2), from the 3rd.
    """
    check_multipliers(w, r)
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
    """The cost article's per-call cost in units of "the whole text sent once".

    ``m0``: share of the text that is the fixed part (cached when w, r are the cache's
    multipliers; 1 = all of it); ``k``: calls that share one cache write; ``rho``: share of the
    text retrieved and sent uncached per call; ``s``: per-call search cost in the same unit;
    ``w``/``r``: write and read multipliers. Per call: ``m0 * (w + (k - 1) r) / k + rho + s``.
    No caching is ``w = r = 1`` (no premium, no discount): then the first term is ``m0`` for
    every k, and the cost is ``m0 + rho + s``.
    """
    share("m0 (cached share of the text)", m0)
    check_k(k)
    share("rho (retrieved share of the text)", rho)
    nonneg("s (search cost per call)", s)
    if not (w == 1 and r == 1):     # w = r = 1 is "no caching"; any other r >= 1 is refused
        check_multipliers(w, r)
    return m0 * (w + (k - 1) * r) / k + rho + s


def cached_cost_per_call(k: float, w: float, r: float) -> float:
    """Per-call cost of sending the whole text through the cache: (w + (k - 1) r) / k."""
    return relative_cost(1.0, k, 0.0, 0.0, w, r)


def rho_limit(k: float, w: float, r: float, s: float, m0: float = 0.0) -> float:
    """Largest retrieved share rho for which retrieval beats caching the whole text at k.

    Retrieval costs ``rho + s`` per call, the cache ``(w + (k - 1) r) / k``; retrieval is
    cheaper when ``rho < (w + (k - 1) r) / k - s``. As k grows the limit falls towards
    ``r - s`` (0.08 for r = 0.1, s = 0.02). The result can be negative: then retrieval
    never wins at that k. With a fixed part ``m0`` sent alongside the retrieved text, the
    retrieval side also pays for it, cached or not, whichever is cheaper at k (the hybrid
    from the break-even on): the limit falls by ``m0 * min(1, (w + (k - 1) r) / k)``.
    """
    nonneg("s (search cost per call)", s)
    share("m0 (fixed share of the text)", m0)
    c = cached_cost_per_call(k, w, r)
    return c - s - m0 * min(1.0, c)


def rho_asymptote(r: float, s: float, m0: float = 0.0) -> float:
    """The limit of :func:`rho_limit` for many reuses: r - s (minus m0 r with a fixed part m0)."""
    check_multipliers(1.0, r)
    nonneg("s (search cost per call)", s)
    share("m0 (fixed share of the text)", m0)
    return r - s - m0 * r
