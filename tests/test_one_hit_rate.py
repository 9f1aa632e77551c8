"""One traffic profile, one hit rate, one month: every path the course prices a month with agrees.

Lessons 00 and 02 call ``compare.compare``, lesson 05 ``crossover`` and its simulator, lesson 04
prices days with ``labs.ttl.day_cost`` over the traffic model, and ``ctxlab compare`` prints the
CLI's table. For the same traffic (questions a day, TTL, traffic shape) they must give the same
hit rate and the same month.
"""
import json

import pytest

from ctxlab import cli
from ctxlab.costs import compare, crossover, formulas, pricing, traffic
from ctxlab.labs import ttl

DOC = 197_000


@pytest.mark.parametrize("per_day,ttl_name", [(20, "5m"), (5, "5m"), (50, "1h")])
def test_every_path_gives_the_same_month(per_day, ttl_name, capsys):
    h = traffic.expected_hit_rate(per_day, ttl_name)
    assert 0 < h < 1

    via_compare = compare.compare(DOC, 50, compare.Profile(questions_per_month=per_day * 30, ttl=ttl_name))
    assert via_compare.hit_rate == h
    month = via_compare.monthly["long_context"]

    p = crossover.profile(per_day, ttl=ttl_name)
    assert crossover.monthly(DOC, p)["long_context"] == pytest.approx(month, rel=1e-12)
    sit = crossover.situation(DOC, p)
    assert sit["hit_rate"] == h and sit["monthly_long_context"] == pytest.approx(month, rel=1e-12)

    # lesson 04: the same simulated days priced one by one, averaged, times 30 days
    days = [traffic.office_day(per_day, seed=s) for s in range(traffic.days_for(per_day, ttl_name))]
    day_mean = sum(ttl.day_cost(d, ttl_name, DOC) for d in days) / len(days)
    assert day_mean * compare.DAYS_PER_MONTH == pytest.approx(month, rel=1e-9)

    # the CLI's default
    assert cli.main(["compare", "--total-tokens", str(DOC), "--questions-per-month", str(per_day * 30),
                     "--ttl", ttl_name, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["hit_rate"] == h and out["monthly"]["long_context"] == pytest.approx(month, rel=1e-12)


def test_the_simulator_offers_traffic_and_fixed(pytestconfig):
    wc = pytest.importorskip("ctxlab.widgets.crossover")
    sim = wc.CrossoverSimulator(doc_tokens=DOC, questions_per_day=20)
    want = crossover.situation(DOC, crossover.profile(20))
    assert sim.result["hit_rate_from_traffic"] and sim.controls["hit_rate"].disabled
    assert sim.result["monthly_long_context"] == pytest.approx(want["monthly_long_context"], rel=1e-12)
    sim.set(hit_mode="fixed", hit_rate=compare.ARTICLE_HIT_RATE)
    article = crossover.situation(DOC, crossover.profile(20, hit_rate=compare.ARTICLE_HIT_RATE))
    assert not sim.controls["hit_rate"].disabled
    assert sim.result["monthly_long_context"] == pytest.approx(article["monthly_long_context"], rel=1e-12)
    # the article's 80% is shown next to the traffic's figure, and differs from it
    assert want["monthly_long_context_article"] == pytest.approx(article["monthly_long_context"], rel=1e-12)
    assert article["monthly_long_context"] < want["monthly_long_context"]
    # back to traffic; then setting a rate alone switches to "fixed" (the slider would otherwise be ignored)
    sim.set(hit_mode="traffic")
    assert sim.result["hit_rate_from_traffic"]
    sim.set(hit_rate=0.5)
    assert sim.state["hit_mode"] == "fixed" and sim.result["hit_rate"] == 0.5


def test_hit_rate_grows_with_traffic_and_ttl():
    rates = [traffic.expected_hit_rate(n) for n in (1, 5, 10, 20, 50, 100, 300)]
    assert rates[0] == 0.0 and rates == sorted(rates)
    assert all(traffic.expected_hit_rate(n, "1h") > traffic.expected_hit_rate(n, "5m") for n in (5, 20, 100))
    lo, mean, hi = traffic.hit_rate_spread(20)
    assert lo < mean < hi
    # between whole numbers of questions the rate is interpolated
    assert traffic.expected_hit_rate(7.5) == pytest.approx((traffic.expected_hit_rate(7) + traffic.expected_hit_rate(8)) / 2)
    for bad in (-1, float("nan"), True, "20"):
        with pytest.raises(ValueError):
            traffic.expected_hit_rate(bad)
    with pytest.raises(ValueError, match="unknown profile"):
        traffic.expected_hit_rate(20, profile="nightly")


def test_relative_cost_without_caching_is_m0_plus_rho_plus_s():
    # the cost article: no caching is w = r = 1, and the first term is m0 for every k
    for k in (1, 2, 7.5, 100):
        assert formulas.relative_cost(0.3, k, 0.2, 0.05, 1, 1) == pytest.approx(0.3 + 0.2 + 0.05)
    assert formulas.relative_cost(1, 3, 0, 0, 1.0, 1.0) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="below 1"):
        formulas.relative_cost(1, 3, 0, 0, 1.25, 1.0)     # r >= 1 with a premium: not "no caching"
    with pytest.raises(ValueError, match="below 1"):
        formulas.breakeven_reuses(1.0, 1.0)               # the break-even still needs r < 1


def test_hybrid_has_area_only_with_a_fixed_part():
    assert crossover.rho_k_map(1.25, 0.1, 0.02).share("hybrid") == 0.0
    m = crossover.rho_k_map(1.25, 0.1, 0.02, m0=0.1)
    assert m.share("hybrid") > 0
    # right of the break-even, caching the fixed part beats sending it uncached
    assert crossover.cheapest(10, 0.03, 1.25, 0.1, 0.02, m0=0.1) == "hybrid"
    assert crossover.cheapest(1, 0.03, 1.25, 0.1, 0.02, m0=0.1) == "retrieval"
    assert m.asymptote == pytest.approx(0.1 - 0.02 - 0.1 * 0.1)


@pytest.mark.parametrize("model", ["claude-opus-5", "claude-haiku-4-5", "claude-opus-5-5", "claude-haiku-5-5"])
@pytest.mark.parametrize("per_day", [2, 5, 20, 60, 200])
def test_one_traffic_level_gives_one_ttl_everywhere(per_day, model, capsys):
    """Lesson 04 prices simulated days at both TTLs and keeps the cheaper one; compare, the
    crossover, the CLI and the simulator price the month at that same TTL by default."""
    day_mean = {}
    for t in ("5m", "1h"):   # each TTL's mean over as many days as its hit rate needs (traffic.days_for)
        days = [traffic.office_day(per_day, seed=s) for s in range(traffic.days_for(per_day, t))]
        day_mean[t] = sum(ttl.day_cost(d, t, DOC, model=model) for d in days) / len(days)
    chosen = min(day_mean, key=day_mean.get)
    month = day_mean[chosen] * compare.DAYS_PER_MONTH

    p = compare.Profile(model=model, questions_per_month=per_day * 30)
    assert p.ttl == "auto" and p.resolved_ttl() == chosen == compare.choose_ttl(p).ttl
    c = compare.compare(DOC, 50, p)
    assert c.ttl == chosen and c.monthly["long_context"] == pytest.approx(month, rel=1e-9)
    assert c.hit_rate == traffic.expected_hit_rate(per_day, chosen)

    sit = crossover.situation(DOC, crossover.profile(per_day, model=model))
    assert sit["ttl"] == chosen and sit["ttl_auto"]
    assert sit["monthly_long_context"] == pytest.approx(month, rel=1e-9)

    assert cli.main(["compare", "--total-tokens", str(DOC), "--questions-per-month", str(per_day * 30),
                     "--model", model, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ttl"] == chosen and out["monthly"]["long_context"] == pytest.approx(month, rel=1e-9)

    wc = pytest.importorskip("ctxlab.widgets.crossover")
    sim = wc.CrossoverSimulator(doc_tokens=DOC, questions_per_day=per_day, model=model)
    assert sim.controls["ttl"].value == "auto" and sim.result["ttl"] == chosen
    assert sim.result["monthly_long_context"] == pytest.approx(month, rel=1e-9)
    # the simulator's TTL control fixes either one, and the month follows lesson 04's day cost at it
    other = "5m" if chosen == "1h" else "1h"
    sim.set(ttl=other)
    assert sim.result["ttl"] == other and not sim.result["ttl_auto"]
    assert sim.result["monthly_long_context"] == pytest.approx(day_mean[other] * compare.DAYS_PER_MONTH, rel=1e-9)
    assert sim.result["monthly_long_context"] >= month


def test_office_traffic_picks_the_hour_and_a_fixed_rate_the_cheaper_write():
    # lesson 04's office rows (20, 60, 200 a day): the 1-hour TTL on every model of the table
    for model in pricing.models():
        for per_day in (20, 60, 200):
            assert compare.Profile(model=model, questions_per_month=per_day * 30).resolved_ttl() == "1h", (model, per_day)
    # a fixed hit rate is the same at both TTLs, so the 5-minute write (the cheaper multiple) wins
    fixed = compare.choose_ttl(compare.Profile(hit_rate=0.8))
    assert fixed.ttl == "5m" and fixed.hit_rates == {"5m": 0.8, "1h": 0.8}
    # the reason names both TTLs' figures; a TTL given by hand is kept and said to be given
    assert "5m" in fixed.reason() and "1h" in fixed.reason()
    given = compare.choose_ttl(compare.Profile(ttl="1h", hit_rate=0.8))
    assert given.ttl == "1h" and given.fixed and "指定" in given.reason()
    with pytest.raises(ValueError, match="auto"):
        compare.Profile(ttl="10m").check()
