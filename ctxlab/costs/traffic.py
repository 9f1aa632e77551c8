"""Traffic and hit rate: a model of a day's questions and what a prompt-cache TTL makes of it.

Lesson 04 builds this model and every lesson that prices a month (00, 02, 05, ``ctxlab compare``)
takes its hit rate from it, so one traffic level gives one hit rate everywhere:

* **synthetic traffic** -- :func:`office_day` builds the request times of one working day
  (seconds since 08:00, sorted) from a seeded generator, for a named :data:`PROFILES` entry.
  It is a model of traffic, not a measured log: replace it with your own timestamps.
* **the cache model** -- a read refreshes the TTL, so with every request carrying the same
  breakpoint a request hits exactly when it starts less than one TTL after the start of the
  previous one (:func:`model_hits`, :func:`hit_rate`).
* **the hit rate of a traffic level** -- :func:`expected_hit_rate` is the mean over enough
  simulated days for a standard error under half a point (:func:`days_for`; :func:`hit_rate_stats`
  gives the mean, its standard error and the range of single days): the figure a month is priced with.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable

#: the TTLs of the API, in seconds (the sandbox uses the same values)
TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}
#: t = 0 of a day is this clock time (seconds after midnight)
DAY_START_S = 8 * 3600

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


def _mixture(p: Profile) -> tuple[tuple[float, ...], float]:
    """The weights of a profile's session-start mixture (peaks, then the background) and their sum."""
    weights = tuple(w for _, _, w in p.peaks) + (p.background,)
    return weights, sum(weights)


def _session_start(p: Profile, rng: random.Random, mixture: tuple[tuple[float, ...], float]) -> float:
    day = p.hours * 3600.0
    weights, total = mixture
    for _ in range(1000):
        x = rng.random() * total
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
    mixture = _mixture(p)
    lo, hi = p.followup_gap_s
    times: list[float] = []
    while len(times) < n_questions:
        t = _session_start(p, rng, mixture)
        times.append(float(int(t)))
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


# ---------------------------------------------------------------- the hit rate of a traffic level

#: the standard error the hit rate of a traffic level is simulated to (half a point: the lessons print whole percents)
TARGET_SE = 0.005
#: the pilot that measures a level's day-to-day spread, the fewest days simulated, and the most
MIN_DAYS = 20
MAX_DAYS = 5000
#: kept for code that named the old fixed count: the pilot's (and the fewest) days
DAYS = MIN_DAYS
#: the traffic profile the course prices months with (office questions, bunched morning and evening)
DEFAULT_PROFILE = "bunched"


def _simulated_rate(n_questions: int, seed: int, profile: str, limit: float) -> float:
    """``hit_rate(office_day(n_questions, seed=seed, profile=profile), limit)``, the same number, without
    checking and sorting again the times office_day has just made (the simulation's inner loop).

    The loop is :func:`model_hits`' rule counted in place: it skips the list of hits and the checks, since
    the simulation runs it over thousands of days."""
    ts = office_day(n_questions, seed=seed, profile=profile)
    hits, prev, last = 0, None, None
    for t in ts:
        if last is not None and t > last:
            prev = last
        hits += prev is not None and t - prev < limit
        last = t
    return hits / len(ts) if ts else 0.0


@lru_cache(maxsize=1024)
def _day_rates(n_questions: int, ttl: str, profile: str, days: int) -> tuple[float, ...]:
    limit = ttl_seconds(ttl)
    return tuple(_simulated_rate(n_questions, s, profile, limit) for s in range(days))


@lru_cache(maxsize=2048)
def _enough_days(n_questions: int, ttl: str, profile: str) -> tuple[float, ...]:
    rates = list(_day_rates(n_questions, ttl, profile, MIN_DAYS))
    limit = ttl_seconds(ttl)
    while len(rates) < MAX_DAYS:
        d = len(rates)
        mean = sum(rates) / d
        sd = math.sqrt(sum((x - mean) ** 2 for x in rates) / (d - 1))
        need = math.ceil((sd / TARGET_SE) ** 2)
        if need <= d:
            break
        # the spread measured so far is itself an estimate: grow at least by a fifth, and look again
        more = min(MAX_DAYS, max(need, d + d // 5 + 1))
        rates += [_simulated_rate(n_questions, s, profile, limit) for s in range(d, more)]
    return tuple(rates)


def days_for(n_questions: int, ttl: str = "5m", profile: str = DEFAULT_PROFILE) -> int:
    """How many simulated days put the mean hit rate of ``n_questions`` a day within :data:`TARGET_SE`.

    Starting from :data:`MIN_DAYS` days (seeds 0 ..), the day-to-day standard deviation s of the
    rate says how many days d the mean needs (its standard error is s / sqrt(d) < TARGET_SE); more
    days are simulated until the days there are suffice, at most :data:`MAX_DAYS`. Few questions a
    day vary most (2 a day: 0%, 50% or 100%) and need the most days; they are also the cheapest.
    """
    _check(n_questions, ttl, profile, None)
    return len(_enough_days(int(n_questions), ttl, profile))


def _check(questions_per_day: float, ttl: str, profile: str, days: int | None) -> None:
    if isinstance(questions_per_day, bool) or not isinstance(questions_per_day, (int, float)) \
            or questions_per_day != questions_per_day or questions_per_day < 0 or math.isinf(questions_per_day):
        raise ValueError(f"questions_per_day must be a number >= 0, got {questions_per_day!r}")
    ttl_seconds(ttl)
    if not isinstance(ttl, str):
        raise ValueError(f"ttl must be '5m' or '1h' for a traffic hit rate, got {ttl!r}")
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}: use one of {', '.join(PROFILES)}")
    if days is not None and (isinstance(days, bool) or not isinstance(days, int) or days < 1):
        raise ValueError(f"days must be an integer >= 1 (or None: enough for TARGET_SE), got {days!r}")


@dataclass(frozen=True)
class HitRateStats:
    """The hit rate of a traffic level over simulated days: the mean a month is priced with, its
    standard error, the lowest and highest single day, and how many days were simulated."""

    mean: float
    se: float
    lowest: float
    highest: float
    days: int

    def label(self) -> str:
        """「85%（±0.3 ポイント、1,234 日の平均）」: the mean with its precision, in Japanese."""
        return f"{self.mean:.0%}（±{self.se * 100:.1f} ポイント、{self.days:,} 日の平均）"


def _stats(n: int, ttl: str, profile: str, days: int | None) -> HitRateStats:
    rates = _enough_days(n, ttl, profile) if days is None else _day_rates(n, ttl, profile, days)
    d = len(rates)
    mean = sum(rates) / d
    sd = math.sqrt(sum((x - mean) ** 2 for x in rates) / (d - 1)) if d > 1 else 0.0
    return HitRateStats(mean, sd / math.sqrt(d), min(rates), max(rates), d)


def hit_rate_stats(questions_per_day: float, ttl: str = "5m", profile: str = DEFAULT_PROFILE,
                   days: int | None = None) -> HitRateStats:
    """The hit rate of ``questions_per_day`` questions a day of ``profile`` traffic at ``ttl``.

    ``days=None`` (the default) simulates :func:`days_for` days (standard error under
    :data:`TARGET_SE`); a number fixes the days (seeds 0 .. days - 1). A whole number of questions
    is simulated as it is; between two whole numbers the figures are interpolated linearly (a
    month of 7.5 a day is half 7 and half 8), so a sweep over traffic is smooth. Below one
    question a day there is nothing to hit: 0.
    """
    _check(questions_per_day, ttl, profile, days)
    lo_n = math.floor(questions_per_day)
    frac = questions_per_day - lo_n
    a = _stats(lo_n, ttl, profile, days)
    if frac == 0:
        return a
    b = _stats(lo_n + 1, ttl, profile, days)
    mix = lambda x, y: (1 - frac) * x + frac * y  # noqa: E731
    return HitRateStats(mix(a.mean, b.mean), math.hypot((1 - frac) * a.se, frac * b.se),
                        mix(a.lowest, b.lowest), mix(a.highest, b.highest), max(a.days, b.days))


def hit_rate_spread(questions_per_day: float, ttl: str = "5m", profile: str = DEFAULT_PROFILE,
                    days: int | None = None) -> tuple[float, float, float]:
    """(lowest day, mean, highest day) of :func:`hit_rate_stats`."""
    st = hit_rate_stats(questions_per_day, ttl, profile, days)
    return st.lowest, st.mean, st.highest


def expected_hit_rate(questions_per_day: float, ttl: str = "5m", profile: str = DEFAULT_PROFILE,
                      days: int | None = None) -> float:
    """Mean hit rate of ``questions_per_day`` questions a day of ``profile`` traffic at ``ttl``.

    The mean over simulated days of :func:`office_day` through :func:`hit_rate` (lesson 04's model),
    to a standard error under :data:`TARGET_SE` unless ``days`` fixes the days. This, not a fixed
    80%, is the hit rate the course prices a month with.
    """
    return hit_rate_stats(questions_per_day, ttl, profile, days).mean


__all__ = [
    "TTL_SECONDS", "DAY_START_S", "Profile", "PROFILES", "office_day", "clock_label", "ttl_seconds", "gaps",
    "share_within", "model_hits", "hit_rate", "TARGET_SE", "MIN_DAYS", "MAX_DAYS", "DAYS", "DEFAULT_PROFILE",
    "days_for", "HitRateStats", "hit_rate_stats", "hit_rate_spread", "expected_hit_rate",
]
