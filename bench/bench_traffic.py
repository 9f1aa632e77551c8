"""The hit rates of traffic levels (ctxlab.costs.traffic), simulated from a cold cache.

A month is priced with the mean hit rate of its traffic level over as many simulated office days
as a standard error under half a point needs (traffic.days_for: up to 5,000 days at low traffic).
Lesson 05's exercise 2, its hidden tests and ``ctxlab compare --questions-per-month`` sweep 1 to 300
questions a day at both TTLs. This times that sweep from a cold cache (median of several runs) and,
for one level, the day generator alone.

Usage: python bench/bench_traffic.py [RUNS]
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _util import measure, report  # noqa: E402

from ctxlab.costs import traffic  # noqa: E402


def sweep() -> None:
    traffic._day_rates.cache_clear()
    traffic._enough_days.cache_clear()
    for n in range(1, 301):
        for ttl in ("5m", "1h"):
            traffic.hit_rate_stats(n, ttl)


def days_of_20() -> None:
    for seed in range(1000):
        traffic.office_day(20, seed=seed)


if __name__ == "__main__":
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    report("hit rates of 1..300 questions a day x 2 TTLs (cold)", measure(sweep, runs=runs, warmup=0))
    report("office_day(20) x 1,000 days", measure(days_of_20, runs=runs))
