"""Lesson 04 (TTL): a day of questions, and what a prompt-cache TTL makes of it.

Three parts:

* **synthetic traffic** -- :func:`office_day` builds the request times of one working day
  (seconds since 08:00, sorted) from a seeded generator, for a named :data:`PROFILES` entry:
  office traffic bunched in the morning and the evening, or spread over the day. It is a
  model of traffic, not a measured log: replace it with your own timestamps.
* **the cache model** -- a read refreshes the TTL, so with every request carrying the same
  breakpoint a request hits exactly when it starts less than one TTL after the start of the
  previous one (:func:`model_hits`). Requests sent at the same moment all miss: an entry is
  usable only once the response that writes it has started. :func:`gaps` and
  :func:`share_within` describe the intervals; :func:`day_cost` and :func:`compare_ttls` put
  dollars on a day.
* **measurement** -- :func:`replay` sends every request through the real ``anthropic`` SDK
  to an offline :class:`~ctxlab.sandbox.Sandbox` whose clock follows the timestamps, and
  collects the usage the API returned (a :class:`~ctxlab.labs._replay.Replay`). This needs
  the sandbox's controllable clock; the real API cannot fast-forward a day.

The picture of a day (requests per half hour, hit or miss per TTL) is
:func:`ctxlab.plots.ttl.day`.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from ctxlab import corpus
from ctxlab.api import messages
from ctxlab.costs import pricing
from ctxlab.costs._checks import nonneg
from ctxlab.labs import _replay
from ctxlab.labs._replay import Replay, Sent
from ctxlab.sandbox import Sandbox

#: the TTLs of the API, in seconds (the sandbox uses the same values)
TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}
#: t = 0 of a day is this clock time (seconds after midnight)
DAY_START_S = 8 * 3600
#: seed 000's assumptions for one question: the question and instructions, and the answer
QUESTION_TOKENS = 400
OUTPUT_TOKENS = 700


# ---------------------------------------------------------------- synthetic traffic

@dataclass(frozen=True)
class Profile:
    """How the questions of a day are spread (a model of traffic, not a measurement).

    A *session* is one person turning to the assistant. Session starts are drawn from a
    mixture: normal peaks ``(hours after 08:00, standard deviation in hours, weight)`` and a
    uniform ``background`` weight over the whole day. After each question the same person
    asks a follow-up with probability ``followup``, ``followup_gap_s`` seconds later
    (uniform between the two bounds).
    """

    name: str
    description: str
    peaks: tuple[tuple[float, float, float], ...] = ()
    background: float = 1.0
    followup: float = 0.0
    followup_gap_s: tuple[float, float] = (60.0, 240.0)
    hours: float = 11.0

    def __post_init__(self):
        if self.hours <= 0:
            raise ValueError(f"hours must be > 0, got {self.hours!r}")
        weights = [w for _, _, w in self.peaks] + [self.background]
        if any(w < 0 for w in weights) or sum(weights) <= 0:
            raise ValueError("peak weights and background must be >= 0 and not all 0")
        if not 0 <= self.followup < 1:
            raise ValueError(f"followup is a probability below 1, got {self.followup!r}")
        lo, hi = self.followup_gap_s
        if not 0 < lo <= hi:
            raise ValueError(f"followup_gap_s must be (low, high) with 0 < low <= high, got {self.followup_gap_s!r}")
        for center, sd, _w in self.peaks:
            if sd <= 0 or not 0 <= center <= self.hours:
                raise ValueError(f"a peak needs 0 <= center <= hours and sd > 0, got {(center, sd)!r}")


PROFILES: dict[str, Profile] = {
    "bunched": Profile(
        "bunched",
        "朝（9 時前後）と夕方（17 時前後）に固まる社内の問い合わせ。3 割強で追加の質問が続く",
        peaks=((1.0, 0.5, 0.45), (9.0, 0.6, 0.40)),
        background=0.15,
        followup=0.35,
    ),
    "spread": Profile(
        "spread",
        "8 時から 19 時まで一様に散らばる問い合わせ。追加の質問の割合は bunched と同じ",
        background=1.0,
        followup=0.35,
    ),
    "meetings": Profile(
        "meetings",
        "1 日 3 回（10 時・14 時・17 時半）の会議中にまとめて聞き、会議の外では聞かない",
        peaks=((2.0, 0.05, 1.0), (6.0, 0.05, 1.0), (9.5, 0.05, 1.0)),
        background=0.0,
        followup=0.8,
        followup_gap_s=(30.0, 150.0),
    ),
}


def _normal(rng: random.Random) -> float:
    # Box-Muller on rng.random() only: random.random() is the one stream Python keeps
    # stable across versions, so a seed gives the same day everywhere.
    u1 = 1.0 - rng.random()
    u2 = rng.random()
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


def _session_start(p: Profile, rng: random.Random) -> float:
    day = p.hours * 3600.0
    weights = [w for _, _, w in p.peaks] + [p.background]
    for _ in range(1000):
        x = rng.random() * sum(weights)
        for i, w in enumerate(weights):
            if x < w or i == len(weights) - 1:
                break
            x -= w
        if i == len(p.peaks):
            return rng.random() * day
        center, sd, _ = p.peaks[i]
        t = (center + sd * _normal(rng)) * 3600.0
        if 0 <= t < day:
            return t
    raise RuntimeError("could not draw a start time inside the day")  # pragma: no cover


def office_day(n_questions: int, *, seed: int = 0, profile: str | Profile = "bunched") -> list[float]:
    """Request times of one day: ``n_questions`` sorted seconds since 08:00 (whole seconds).

    Deterministic: the same ``n_questions``, ``seed`` and ``profile`` give the same list on
    every machine. ``profile`` names an entry of :data:`PROFILES` or is a :class:`Profile`.
    """
    if isinstance(n_questions, bool) or not isinstance(n_questions, int) or n_questions < 0:
        raise ValueError(f"n_questions must be an integer >= 0, got {n_questions!r}")
    if isinstance(profile, str):
        if profile not in PROFILES:
            raise ValueError(f"unknown profile {profile!r}: use one of {', '.join(PROFILES)} or a traffic.Profile")
        p = PROFILES[profile]
    elif isinstance(profile, Profile):
        p = profile
    else:
        raise TypeError(f"profile must be a name or a traffic.Profile, got {type(profile).__name__}")
    rng = random.Random(seed)
    day = p.hours * 3600.0
    times: list[float] = []
    while len(times) < n_questions:
        t = _session_start(p, rng)
        times.append(float(int(t)))
        lo, hi = p.followup_gap_s
        while len(times) < n_questions and rng.random() < p.followup:
            t += lo + (hi - lo) * rng.random()
            if t >= day:
                break
            times.append(float(int(t)))
    return sorted(times)


def clock_label(t: float) -> str:
    """``t`` seconds since 08:00 as a clock time, e.g. ``clock_label(3725) == '09:02'``."""
    s = int(DAY_START_S + t)
    return f"{s // 3600:02d}:{s % 3600 // 60:02d}"


# ---------------------------------------------------------------- the cache model

def _times(times: Iterable[float]) -> list[float]:
    out = []
    for t in times:
        if isinstance(t, bool) or not isinstance(t, (int, float)) or t != t or math.isinf(t):
            raise ValueError(f"timestamps must be finite numbers of seconds, got {t!r}")
        out.append(float(t))
    return sorted(out)


def ttl_seconds(ttl: str | float) -> float:
    """``"5m"`` -> 300, ``"1h"`` -> 3600; a number of seconds is returned as it is."""
    if isinstance(ttl, str):
        if ttl not in TTL_SECONDS:
            raise ValueError(f"ttl must be '5m', '1h' or a number of seconds, got {ttl!r}")
        return TTL_SECONDS[ttl]
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not ttl > 0 or math.isinf(ttl):
        raise ValueError(f"ttl must be '5m', '1h' or a number of seconds > 0, got {ttl!r}")
    return float(ttl)


def gaps(times: Iterable[float]) -> list[float]:
    """Seconds from the start of each request to the start of the next (n - 1 values)."""
    ts = _times(times)
    return [b - a for a, b in zip(ts, ts[1:])]


def share_within(times: Iterable[float], seconds: float) -> float:
    """Share of the intervals (start to start) shorter than ``seconds``; 0.0 with fewer than 2 times."""
    g = gaps(times)
    limit = ttl_seconds(seconds)
    return sum(1 for x in g if x < limit) / len(g) if g else 0.0


def model_hits(times: Iterable[float], ttl: str | float = "5m") -> list[bool]:
    """Hit or miss for each request (in time order) when every request caches the same prefix.

    Each request either reads the entry (and a read refreshes the TTL) or writes it anew, so
    after a request at ``t`` the entry lives until ``t + TTL`` in both cases. A request hits
    exactly when the last request sent *before* it started less than one TTL earlier.
    Requests sent at the same moment cannot read each other's entry (it is usable only once
    the response that writes it has started): they are all judged against the last earlier
    request, and the first request of the day misses.
    """
    ts = _times(times)
    limit = ttl_seconds(ttl)
    hits, prev, last = [], None, None  # prev: the latest time strictly before the current one
    for t in ts:
        if last is not None and t > last:
            prev = last
        hits.append(prev is not None and t - prev < limit)
        last = t
    return hits


def hit_rate(times: Iterable[float], ttl: str | float = "5m") -> float:
    """Share of requests that read the cache under :func:`model_hits`; 0.0 for no requests."""
    h = model_hits(times, ttl)
    return sum(h) / len(h) if h else 0.0


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
    "day_cost", "compare_ttls", "cheapest", "Sent", "Replay", "replay",
]
