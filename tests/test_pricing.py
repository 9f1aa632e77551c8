"""The cost formulas against the figures of the usage and cost articles."""
import math

import pytest

from ctxlab.costs import formulas, pricing
from ctxlab.errors import ContextWindowExceeded, CtxlabError

W5, W1, R, S = 1.25, 2.0, 0.1, 0.02


def test_price_table_has_the_seed_models_with_dates_and_sources():
    table = pricing.models()
    for mid, inp, out in [("claude-opus-5", 5, 25), ("claude-sonnet-5", 2, 10), ("claude-haiku-4-5", 1, 5)]:
        m = table[mid]
        assert (m.input_usd_per_mtok, m.output_usd_per_mtok) == (inp, out)
        assert m.cache_write_5m_multiplier == 1.25 and m.cache_write_1h_multiplier == 2.0
        assert m.cache_read_multiplier == 0.1
        assert m.status == "legacy" and not m.is_current and m.released < "2026-08"
        for fig in ("price", "released", "status", "context_window", "cache", "min_cacheable_tokens"):
            assert m.sources[fig].date and m.sources[fig].source
    assert table["claude-opus-5"].context_window == 1_000_000
    assert table["claude-haiku-4-5"].context_window == 200_000
    # the docs table: 512 for Opus 5 (the table once said 4,096), 1,024 Sonnet 5, 4,096 Haiku 4.5
    assert [table[k].min_cacheable_tokens for k in ("claude-opus-5", "claude-sonnet-5", "claude-haiku-4-5")] \
        == [512, 1024, 4096]


# the lineup of December 2026: input / output / 5m write / 1h write / read, per million tokens
LINEUP = {
    "claude-opus-5-5": (4, 20, 5, 8, 0.20),
    "claude-sonnet-5-5": (2, 10, 2.50, 4, 0.10),
    "claude-haiku-5-5": (0.10, 0.50, 0.125, 0.20, 0.01),
    "claude-fable-5-2": (8, 40, 10, 16, 0.20),
    "claude-fable-5-1": (10, 50, 12.50, 20, 0.25),
}


@pytest.mark.parametrize("mid", sorted(LINEUP))
def test_the_current_lineup_prices_per_token(mid):
    m = pricing.get_model(mid)
    inp, out, w5, w1, r = LINEUP[mid]
    n = MTOK_LOW(m)
    one = pricing.call_cost(m, input_tokens=n, output_tokens=n)
    assert math.isclose(one.uncached_input * 1e6 / n, inp) and math.isclose(one.output * 1e6 / n, out)
    assert math.isclose(pricing.call_cost(m, cache_write_5m_tokens=MTOK_LOW(m)).total * 1e6 / MTOK_LOW(m), w5)
    assert math.isclose(pricing.call_cost(m, cache_write_1h_tokens=MTOK_LOW(m)).total * 1e6 / MTOK_LOW(m), w1)
    assert math.isclose(pricing.call_cost(m, cache_read_tokens=MTOK_LOW(m)).total * 1e6 / MTOK_LOW(m), r)
    assert m.context_window == 1_000_000 and m.max_output_tokens == 128_000 and m.tokenizer_family == "newer"
    assert m.status == ("superseded" if mid == "claude-fable-5-1" else "latest")
    assert (mid in pricing.current_models()) == (m.status == "latest")


def MTOK_LOW(m):
    """A prompt length inside the model's lowest tier."""
    return m.prompt_tiers[0].over_prompt_tokens if m.prompt_tiers else 1_000_000


def test_read_multiples_moved_on_the_new_models():
    t = pricing.models()
    assert t["claude-opus-5-5"].cache_read_multiplier == t["claude-sonnet-5-5"].cache_read_multiplier == 0.05
    assert t["claude-fable-5-2"].cache_read_multiplier == t["claude-fable-5-1"].cache_read_multiplier == 0.025
    assert t["claude-haiku-5-5"].cache_read_multiplier == 0.1
    assert all(m.cache_write_5m_multiplier == 1.25 and m.cache_write_1h_multiplier == 2.0 for m in t.values())


def test_haiku_5_5_prices_the_whole_request_by_prompt_length():
    h = pricing.get_model("claude-haiku-5-5")
    rule = h.tier_rule
    assert rule.assumption and rule.source.source and "100,000" in rule.source.source
    low = pricing.call_cost(h, input_tokens=100_000, output_tokens=1_000)
    high = pricing.call_cost(h, input_tokens=100_001, output_tokens=1_000)
    assert math.isclose(low.total, 100_000 * 0.10e-6 + 1_000 * 0.50e-6)
    # one token more: every token, output included, at the higher rate (the stated rule)
    assert math.isclose(high.total, 100_001 * 0.50e-6 + 1_000 * 2.50e-6)
    # cache reads and writes count toward the threshold and are priced at the tier's input
    mixed = pricing.call_cost(h, input_tokens=5_000, cache_read_tokens=170_000, cache_write_5m_tokens=0)
    assert math.isclose(mixed.total, 5_000 * 0.50e-6 + 170_000 * 0.05e-6)
    small = pricing.call_cost(h, input_tokens=5_000, cache_read_tokens=90_000)
    assert math.isclose(small.total, 5_000 * 0.10e-6 + 90_000 * 0.01e-6)
    # models without tiers price linearly
    o = pricing.get_model("claude-opus-5-5")
    assert math.isclose(pricing.call_cost(o, input_tokens=300_000).total, 2 * pricing.call_cost(o, input_tokens=150_000).total)


def test_usage_cost_follows_the_tiers():
    usage = {"input_tokens": 50, "cache_read_input_tokens": 150_000, "cache_creation_input_tokens": 0,
             "output_tokens": 200}
    got = pricing.usage_cost(usage, "claude-haiku-5-5")
    assert math.isclose(got.total, 50 * 0.5e-6 + 150_000 * 0.05e-6 + 200 * 2.5e-6)


def test_a_prompt_over_the_window_has_no_price():
    with pytest.raises(ContextWindowExceeded, match="200,000") as e:
        pricing.call_cost("claude-haiku-4-5", input_tokens=150_000, cache_read_tokens=60_000)
    assert isinstance(e.value, CtxlabError) and "RAG" in str(e.value)
    assert pricing.call_cost("claude-haiku-4-5", input_tokens=200_000).total > 0


def test_minimum_cacheable_length_is_null_where_unconfirmed():
    t = pricing.models()
    for mid in ("claude-opus-5-5", "claude-sonnet-5-5", "claude-fable-5-2", "claude-fable-5-1"):
        assert t[mid].min_cacheable_tokens is None
        assert "not confirmed" in t[mid].sources["min_cacheable_tokens"].source
        n, confirmed = pricing.min_cacheable_tokens(mid)
        assert n > 0 and not confirmed
    assert pricing.min_cacheable_tokens("claude-haiku-5-5") == (512, True)
    assert t["claude-haiku-4-5"].tokenizer_family == "older"


def test_breakeven_matches_the_cost_article():
    assert round(formulas.breakeven_reuses(W5, R), 2) == 1.28
    assert round(formulas.breakeven_reuses(W1, R), 2) == 2.11
    # the usage article: 5m pays from the 2nd call, 1h from the 3rd
    assert formulas.first_paying_call(W5, R) == 2
    assert formulas.first_paying_call(W1, R) == 3
    # exact ties are not cheaper yet: (1.15 - 0.85) / (1 - 0.85) = 2 exactly
    assert formulas.first_paying_call(1.15, 0.85) == 3
    assert formulas.first_paying_call(2.0, 0.0) == 3
    # a write premium below 1 pays from the first call
    assert formulas.first_paying_call(0.9, 0.1) == 1
    for w100 in range(100, 300, 7):
        for r100 in range(0, 95, 5):
            w, r = w100 / 100, r100 / 100
            k = formulas.first_paying_call(w, r)
            # caching is not cheaper at k - 1 calls and is cheaper at k calls (exact arithmetic in cents)
            assert w100 + (k - 1) * r100 < k * 100
            assert k == 1 or w100 + (k - 2) * r100 >= (k - 1) * 100


# the cost article's per-call table (relative to sending the whole text once)
COST_ARTICLE_TABLE = {1: (1.250, 2.000), 2: (0.675, 1.050), 3: (0.483, 0.733), 5: (0.330, 0.480)}


@pytest.mark.parametrize("k", [1, 2, 3, 5, 10, 20])
def test_per_call_table(k):
    got5 = formulas.relative_cost(1.0, k, 0.0, 0.0, W5, R)
    got1 = formulas.relative_cost(1.0, k, 0.0, 0.0, W1, R)
    # closed form, and the rows printed in the article
    assert math.isclose(got5, (W5 + (k - 1) * R) / k)
    assert math.isclose(got1, (W1 + (k - 1) * R) / k)
    if k in COST_ARTICLE_TABLE:
        assert (round(got5, 3), round(got1, 3)) == COST_ARTICLE_TABLE[k]
    assert got5 < got1  # the 1h write premium never pays back faster


def test_relative_cost_adds_retrieval_and_search():
    assert math.isclose(formulas.relative_cost(0.0, 1, 0.3, S, W5, R), 0.32)
    assert math.isclose(formulas.relative_cost(0.5, 2, 0.1, S, W5, R), 0.5 * 0.675 + 0.12)


def test_cost_article_totals_meet_at_fifth_call():
    # cache total 1.25 + 0.1 (n - 1) against retrieval 0.05 + 0.32 n (E = 0.05, rho = 0.3)
    def cache_total(n):
        return formulas.relative_cost(1.0, n, 0, 0, W5, R) * n

    def retrieval_total(n):
        return 0.05 + formulas.relative_cost(0.0, 1, 0.3, S, W5, R) * n

    # they meet at the 5th call (1.65 each); from the 6th the cache is cheaper
    assert math.isclose(cache_total(5), retrieval_total(5))
    assert all(cache_total(n) > retrieval_total(n) for n in range(1, 5))
    assert all(cache_total(n) < retrieval_total(n) - 1e-9 for n in range(6, 50))


def test_rho_limits_of_the_cost_article():
    assert round(formulas.rho_limit(2, W5, R, S), 2) == 0.66
    assert round(formulas.rho_limit(10, W5, R, S), 2) == 0.20
    assert round(formulas.rho_limit(20, W5, R, S), 2) == 0.14
    assert math.isclose(formulas.rho_asymptote(R, S), 0.08)
    assert formulas.rho_limit(10_000, W5, R, S) == pytest.approx(0.08, abs=1e-3)


def test_call_cost_reproduces_the_usage_article_rows():
    opus = "claude-opus-5"
    write = pricing.call_cost(opus, input_tokens=400, cache_write_5m_tokens=197_000, output_tokens=700)
    assert round(write.total, 3) == 1.251
    rag = pricing.call_cost(opus, input_tokens=6_800, output_tokens=700)
    assert round(rag.total, 3) == 0.052
    # the usage article counts the question as a cache read too: 197,400 x 0.1
    seed_cached = pricing.call_cost(opus, cache_read_tokens=197_400, output_tokens=700)
    assert round(seed_cached.total, 3) == 0.116
    # the question comes after the breakpoint and is billed at the base price
    cached = pricing.call_cost(opus, input_tokens=400, cache_read_tokens=197_000, output_tokens=700)
    assert round(cached.total, 3) == 0.118
    filt = pricing.call_cost(opus, input_tokens=400, cache_write_5m_tokens=19_700, output_tokens=700)
    assert round(filt.total, 3) == 0.143


def test_monthly_cost_of_the_usage_article():
    lc = pricing.monthly_cost(600, cost_miss=1.2513, cost_hit=0.1162, hit_rate=0.8)
    assert round(lc) == 206
    rag = pricing.monthly_cost(600, cost_miss=0.0515, fixed_monthly=70)
    assert round(rag - 70) == 31 and round(rag) == 101
    # the usage article's filter month ($58) matches a 40% hit rate, not 80%
    assert round(pricing.monthly_cost(600, cost_miss=0.143, cost_hit=0.028, hit_rate=0.4)) == 58
    assert round(pricing.monthly_cost(600, cost_miss=0.143, cost_hit=0.028, hit_rate=0.8)) == 31


def test_usage_cost_reads_sdk_like_usage():
    usage = {"input_tokens": 400, "output_tokens": 700, "cache_read_input_tokens": 0,
             "cache_creation_input_tokens": 197_000,
             "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 197_000}}
    c = pricing.usage_cost(usage, "claude-opus-5")
    assert c.cache_write == pytest.approx(197_000 * 2.0 * 5 / 1e6)


def test_ttft_model_is_calibrated_on_the_usage_article():
    assert pricing.ttft_seconds(197_400) == pytest.approx(3.0, abs=0.05)
    assert pricing.ttft_seconds(400, 197_000) == pytest.approx(1.1, abs=0.05)
    assert pricing.ttft_seconds(20_100) == pytest.approx(0.8, abs=0.1)
    assert pricing.ttft_seconds(6_800, retrieval=True) == pytest.approx(1.0, abs=0.1)


@pytest.mark.parametrize("call, message", [
    (lambda: formulas.breakeven_reuses(1.25, 1.0), "below 1"),
    (lambda: formulas.breakeven_reuses(1.25, 1.5), "below 1"),
    (lambda: formulas.relative_cost(1, 0.5, 0, 0, 1.25, 0.1), "k"),
    (lambda: formulas.relative_cost(1, 2, 1.5, 0, 1.25, 0.1), "between 0 and 1"),
    (lambda: pricing.call_cost("claude-opus-5", input_tokens=-1), ">= 0"),
    (lambda: pricing.call_cost("gpt-unknown", input_tokens=1), "claude-opus-5"),
    (lambda: pricing.monthly_cost(600, cost_miss=1, hit_rate=1.2), "between 0 and 1"),
    (lambda: pricing.monthly_cost(-5, cost_miss=1), ">= 0"),
    (lambda: pricing.get_model("claude-opus-5").write_multiplier("2h"), "'5m' or '1h'"),
])
def test_bad_input_says_what_is_allowed(call, message):
    with pytest.raises(ValueError, match=message):
        call()
