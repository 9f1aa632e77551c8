"""ctxlab.costs.crossover against direct computation, and lesson 05's widgets headless."""
import io
import math

import numpy as np
import pytest

from ctxlab.costs import compare, crossover, formulas, pricing, traffic
from ctxlab.errors import ContextWindowExceeded
from ctxlab.plots import crossover as crossover_plots
from ctxlab.widgets._png import png_rgba

MODELS = list(pricing.models())

PROFILES = [
    crossover.profile(),                                                     # the usage article
    crossover.profile(10),
    crossover.profile(50, model="claude-sonnet-5", hit_rate=0.6),
    crossover.profile(20, model="claude-haiku-4-5", rag_chunks=20, db_monthly=0.0),
    crossover.profile(5, hit_rate=0.0, db_monthly=200.0, ttl="1h"),
    crossover.profile(20, model="claude-haiku-5-5", db_monthly=10.0),                 # prompt-length tiers
    crossover.profile(20, model="claude-opus-5-5", ttl="1h"),
]


def gap(d, p, a="long_context", b="rag"):
    m = compare.compare(d, 50, p).monthly
    return m[a] - m[b]


def bisect_crossover(p, a="long_context", b="rag", hi=None):
    """Direct computation: bisection over compare's monthly costs, up to where long context fits the window."""
    lo = 0.0
    hi = pricing.get_model(p.model).context_window - p.prompt_tokens if hi is None else hi
    if gap(lo, p, a, b) >= 0:
        return 0.0
    if gap(hi, p, a, b) < 0:
        return None
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if gap(mid, p, a, b) >= 0 else (mid, hi)
    return (lo + hi) / 2


# ---------------------------------------------------------------- dollars

def test_profile_counts_thirty_days():
    p = crossover.profile(20, hit_rate=0.5)
    assert p.questions_per_month == 600 and p.hit_rate == 0.5
    assert crossover.per_day(p) == 20
    with pytest.raises(ValueError):
        crossover.profile(-1)


def test_monthly_is_compares_month():
    p = PROFILES[1]
    assert crossover.monthly(123_456, p) == compare.compare(123_456, 50, p).monthly


# the usage article's assumptions: its model (now legacy), its fixed 80% and its 5-minute TTL
ARTICLE = crossover.profile(hit_rate=compare.ARTICLE_HIT_RATE, model=pricing.ARTICLE_MODEL, ttl=compare.ARTICLE_TTL)


def test_usage_article_month():
    m = crossover.monthly(197_000, ARTICLE)
    assert round(m["long_context"]) == 207 and round(m["rag"]) == 101 and m["rag_db"] == 70


# a tiered model's month is affine only between tier boundaries: test_tier_jump checks those
@pytest.mark.parametrize("p", [p for p in PROFILES if not pricing.get_model(p.model).prompt_tiers])
def test_lines_are_compares_figures(p):
    for path in crossover.PATHS:
        ln = crossover.line(path, p)
        for d in (0, 33_333, 197_000, min(950_000, pricing.get_model(p.model).context_window - p.prompt_tokens)):
            tol = 1e-9 if path != "filter" else 0.01  # the filter rounds its share to whole tokens (< 1 cent)
            assert ln(d) == pytest.approx(crossover.monthly(d, p)[path], abs=tol)
    with pytest.raises(ValueError, match="unknown path"):
        crossover.line("magic", p)


@pytest.mark.parametrize("p", PROFILES)
def test_crossover_matches_bisection(p):
    x = crossover.crossover_tokens(p)
    direct = bisect_crossover(p)
    assert x == pytest.approx(direct, rel=1e-9, abs=1e-6)
    m = crossover.monthly(x, p)
    tier_edges = [t.over_prompt_tokens - p.prompt_tokens for t in pricing.get_model(p.model).prompt_tiers]
    if x not in tier_edges:   # at a tier boundary the month jumps past RAG's instead of meeting it
        assert m["long_context"] == pytest.approx(m["rag"], abs=1e-9)
    assert gap(x * 0.99, p) < 0 < gap(x * 1.01 + 1, p)


def test_seed_crossover_value():
    # (RAG month - long context month at 0 tokens) / dollars per document token
    m = pricing.get_model(pricing.ARTICLE_MODEL)
    per_token = 600 * m.input_per_token * (0.2 * 1.25 + 0.8 * 0.1)
    expected = (600 * 8 * 800 * m.input_per_token + 70) / per_token
    assert crossover.crossover_tokens(ARTICLE) == pytest.approx(expected)
    assert 90_000 < expected < 90_200


def test_default_hit_rate_comes_from_the_traffic_model():
    p = crossover.profile(20)
    # 20 a day of office traffic: the 1-hour TTL is the cheaper one (lesson 04), so the month is priced at it
    assert p.resolved_ttl() == "1h"
    h = traffic.expected_hit_rate(20, "1h")
    assert p.hit_rate is None and p.effective_hit_rate() == h and 0.8 < h < 0.9
    m = pricing.get_model(p.model)
    per_token = 600 * m.input_per_token * ((1 - h) * m.write_multiplier("1h") + h * m.cache_read_multiplier)
    expected = (600 * 8 * 800 * m.input_per_token + 70) / per_token
    assert crossover.crossover_tokens(p) == pytest.approx(expected)
    # fewer questions a day: a lower hit rate, not the same 80%
    assert crossover.profile(5).effective_hit_rate() < h < crossover.profile(100).effective_hit_rate()
    assert crossover.profile(20, ttl="5m").effective_hit_rate() < h


def test_filter_crossover_matches_bisection():
    p = crossover.profile(model=pricing.ARTICLE_MODEL)
    x = crossover.crossover_tokens(p, dearer="filter")
    assert x == pytest.approx(bisect_crossover(p, "filter"), rel=1e-4)


def test_never_crosses():
    assert crossover.crossover_tokens(crossover.profile(0)) is None       # no traffic: RAG pays the DB for nothing
    haiku = crossover.profile(5, model="claude-haiku-4-5")
    # the lines would meet beyond the 200K window, where long context has no price: no crossing
    assert crossover.crossover_tokens(haiku) is None
    assert crossover.line("long_context", haiku)(250_000) < crossover.line("rag", haiku)(250_000)
    x = crossover.crossover_tokens(crossover.profile(20))
    assert crossover.crossover_tokens(crossover.profile(20), max_tokens=x - 1) is None
    assert crossover.crossover_tokens(crossover.profile(20), max_tokens=x + 1) == pytest.approx(x)
    free = crossover.profile(20, rag_chunks=0, db_monthly=0.0)
    assert crossover.crossover_tokens(free) == 0.0                        # RAG costs no more from the start


def test_tier_jump():
    """Haiku 5.5: one token over the 100,000-token prompt tier, long context pays the higher rate on every token."""
    p = crossover.profile(20, model="claude-haiku-5-5", db_monthly=10.0)
    edge = 100_000 - p.prompt_tokens
    below, above = crossover.monthly(edge, p), crossover.monthly(edge + 1, p)
    assert above["long_context"] > 4 * below["long_context"]
    assert above["rag"] == below["rag"]
    x = crossover.crossover_tokens(p)
    assert x == pytest.approx(bisect_crossover(p), abs=1.0)
    cs = crossover.curves(p, [edge, edge + 1])
    assert cs["long_context"][1] > 4 * cs["long_context"][0]


def test_over_the_window_there_is_no_long_context_price():
    p = crossover.profile(5, model="claude-haiku-4-5")
    with pytest.raises(ContextWindowExceeded, match="200,000"):
        crossover.monthly(400_000, p)
    with pytest.raises(ContextWindowExceeded):
        compare.compare(400_000, 50, p)
    cs = crossover.curves(p, [100_000, 400_000])
    assert math.isnan(cs["long_context"][1]) and cs["rag"][1] == cs["rag"][0]
    s = crossover.situation(400_000, p)
    assert not s["fits_window"] and math.isnan(s["monthly_long_context"]) and s["cheapest"] == "rag"
    assert "200,000" in s["window_error"] and s["window_usage"] == 2.0


def test_curves_follow_monthly():
    p = PROFILES[2]
    grid = [0, 100_000, 400_000]
    cs = crossover.curves(p, grid)
    for i, d in enumerate(grid):
        for path in crossover.PATHS:
            assert cs[path][i] == crossover.monthly(d, p)[path]


def test_situation_numbers():
    p = crossover.profile(30, model="claude-sonnet-5", hit_rate=0.7, rag_chunks=12, db_monthly=40.0)
    s = crossover.situation(250_000, p)
    c = compare.compare(250_000, 50, p)
    assert s["monthly_long_context"] == c.monthly["long_context"]
    assert s["monthly_filter"] == c.monthly["filter"]
    assert s["monthly_rag"] == c.monthly["rag"] == c.monthly["rag_api"] + 40.0
    assert s["window_usage"] == pytest.approx(0.25)
    assert s["within_half_window"] and s["fits_window"]
    assert s["ttft_long_context_s"] == pricing.ttft_seconds(p.prompt_tokens, 250_000)
    assert s["ttft_rag_s"] == pricing.ttft_seconds(12 * 800 + p.prompt_tokens, retrieval=True)
    assert s["cheapest"] == min(crossover.PATHS, key=lambda k: c.monthly[k])
    assert s["crossover_tokens"] == crossover.crossover_tokens(p)
    over = crossover.situation(300_000, crossover.profile(model="claude-haiku-4-5"))
    assert not over["fits_window"] and not over["within_half_window"]


def test_max_tokens_for_ttft():
    d = crossover.max_tokens_for_ttft(3.0)
    assert pricing.ttft_seconds(400, d) == pytest.approx(3.0, abs=1e-6)
    assert pricing.ttft_seconds(400, d * 1.01) > 3.0
    assert crossover.max_tokens_for_ttft(0.1) == 0.0


def test_assumptions_table_follows_the_profile():
    rows = dict((item, value) for item, value, _ in crossover.assumptions(crossover.profile(12, db_monthly=90.0)))
    assert rows["ベクトル DB"] == "$90 / 月"
    assert "360 問" in rows["月の質問数"]
    assert rows["RAG が渡すチャンク"] == "800 tok × 8 件"
    assert rows["メタデータで絞った後に残る割合"].startswith("10%")


# ---------------------------------------------------------------- the cost article's map

def test_map_colours_match_relative_cost():
    m = crossover.rho_k_map(1.25, 0.1, 0.02)
    rng = np.random.default_rng(0)
    for _ in range(300):
        j, i = rng.integers(len(m.k)), rng.integers(len(m.rho))
        k, rho = float(m.k[j]), float(m.rho[i])
        costs = {"full": 1.0, "cache": formulas.relative_cost(1, k, 0, 0, 1.25, 0.1),
                 "retrieval": formulas.relative_cost(0, k, rho, 0.02, 1.25, 0.1)}
        best = min(costs.values())
        assert costs[crossover.METHODS[m.index[i, j]]] == best
        assert crossover.cheapest(k, rho, 1.25, 0.1, 0.02) == crossover.METHODS[m.index[i, j]]


def test_map_boundaries_are_the_cost_articles():
    m = crossover.rho_k_map(1.25, 0.1, 0.02, k=[2, 10, 20])
    assert m.asymptote == pytest.approx(0.08)
    assert m.breakeven_k == pytest.approx(1.2778, abs=1e-4)
    assert list(np.round(m.rho_limit, 4)) == [0.655, 0.195, 0.1375]
    full = crossover.rho_k_map(1.25, 0.1, 0.02)
    assert sum(full.share(x) for x in crossover.METHODS) == pytest.approx(1.0)
    assert 0 < full.share("full") < 0.01          # "only a thin band at the top left"
    assert full.share("cache") > full.share("retrieval") > full.share("full")
    # retrieval wins just below the limit and loses just above it
    for k in (2.0, 5.0, 15.0):
        lim = formulas.rho_limit(k, 1.25, 0.1, 0.02)
        assert crossover.cheapest(k, lim - 1e-6, 1.25, 0.1, 0.02) == "retrieval"
        assert crossover.cheapest(k, lim + 1e-6, 1.25, 0.1, 0.02) == "cache"


def test_profile_point_reproduces_the_dollars():
    for p in PROFILES[:4] + [crossover.profile(8, hit_rate=0.9, ttl="1h")]:
        d = 197_000
        pt = crossover.profile_point(d, p)
        mo = crossover.monthly(d, p)
        n = p.questions_per_month
        common = crossover.monthly(0, p)["long_context"]  # question, instructions and answer: every path pays them
        lc = formulas.relative_cost(1, pt.k, 0, 0, pt.w, pt.r) * pt.unit_usd * n + common
        rag = formulas.relative_cost(0, pt.k, pt.rho, pt.s, pt.w, pt.r) * pt.unit_usd * n + common
        assert lc == pytest.approx(mo["long_context"], rel=1e-9)
        assert rag == pytest.approx(mo["rag"], rel=1e-9)
        assert (pt.rho < pt.rho_limit) == (mo["rag"] < mo["long_context"])


def test_profile_point_edges():
    pt = crossover.profile_point(197_000, crossover.profile(20, hit_rate=1.0))
    assert math.isinf(pt.k) and pt.rho_limit == pytest.approx(pt.r - pt.s)
    with pytest.raises(ValueError):
        crossover.profile_point(0, crossover.profile())
    with pytest.raises(ValueError):
        crossover.profile_point(197_000, crossover.profile(0))


# ---------------------------------------------------------------- widgets, headless

@pytest.fixture(scope="module")
def wc():
    return pytest.importorskip("ctxlab.widgets.crossover")


def _is_png(data: bytes):
    from PIL import Image
    im = Image.open(io.BytesIO(data))
    im.load()
    return im.size


def test_png_encoder_round_trip(wc):
    from PIL import Image
    a = np.random.default_rng(1).integers(0, 256, size=(7, 5, 4), dtype=np.uint8)
    im = Image.open(io.BytesIO(png_rgba(a)))
    assert np.array_equal(np.asarray(im.convert("RGBA")), a)
    with pytest.raises(ValueError):
        png_rgba(np.zeros((2, 2, 3), dtype=np.uint8))


def test_simulator_shows_the_numbers_and_redraws_in_place(wc):
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    sim = wc.CrossoverSimulator()
    assert plt.get_fignums() == before, "the widget's figure must stay outside pyplot"
    assert sim.result == crossover.situation(197_000, crossover.profile())
    res = sim.result
    for key in ("monthly_long_context", "monthly_filter", "monthly_rag", "monthly_long_context_article"):
        assert f"${res[key]:,.0f}" in sim.numbers.value, key
    w, h = _is_png(sim.image.value)
    assert w > 300 and h > 200
    lines = dict(sim.plot.lines)
    axes, png0, html0 = sim.ax, sim.image.value, sim.numbers.value

    sim.controls["questions_per_day"].value = 5      # as a learner moving the slider would
    assert sim.result["questions_per_month"] == 150
    assert sim.result["monthly_long_context"] == pytest.approx(crossover.monthly(197_000, crossover.profile(5))["long_context"])
    assert sim.result["crossover_tokens"] == pytest.approx(crossover.crossover_tokens(crossover.profile(5)))
    assert sim.numbers.value != html0 and sim.image.value != png0
    assert sim.ax is axes and sim.plot.lines == lines and len(sim.figure.axes) == 1
    x, y = sim.plot.lines["rag"].get_data()
    assert y[0] == pytest.approx(sim.result["monthly_rag"])

    n = len(sim.redraw_times)
    res = sim.set(model="claude-haiku-4-5", doc_tokens=300_000, db_monthly=0.0)
    assert len(sim.redraw_times) == n + 1, "set() redraws once"
    assert res["context_window"] == 200_000 and not res["fits_window"]
    assert "ウィンドウに載らない" in sim.numbers.value and "API はこのリクエストを拒否" in sim.numbers.value
    assert "TTFT 3 秒以内" not in sim.numbers.value and "3 秒以内" not in sim.numbers.value
    assert sim.profile.model == "claude-haiku-4-5" and sim.state["doc_tokens"] == 300_000
    with pytest.raises(ValueError, match="unknown control"):
        sim.set(speed=3)


def test_simulator_marks_crossover_and_shades_the_window(wc):
    sim = wc.CrossoverSimulator(doc_tokens=197_000)
    cross = sim.result["crossover_tokens"]
    assert sim.plot.cross_dot.get_data()[0][0] == pytest.approx(cross)
    assert sim.plot.over_band.get_x() == 1_000_000 and sim.plot.half_band.get_x() == 500_000
    sim.set(questions_per_day=1, db_monthly=500.0)   # RAG's DB costs more than the window can hold
    assert sim.result["crossover_tokens"] is None
    assert not sim.plot.cross_text.get_visible() and "ウィンドウ" in sim.plot.note.get_text()


def test_static_figures(wc):
    import matplotlib.pyplot as plt

    plot = crossover_plots.plot_monthly(197_000, ARTICLE)
    assert plot.result["crossover_tokens"] == pytest.approx(90_101, abs=1)
    rk = crossover_plots.plot_rho_k(points=[("A", 5.0, 0.03)])
    assert rk.result["points"]["A"] == "retrieval"
    plt.close("all")


def test_map_widget_redraws(wc):
    rk = wc.RhoKExplorer(points=[("seed", 5.0, 0.0325)])
    assert rk.result["asymptote"] == pytest.approx(0.08)
    png0 = rk.image.value
    image = rk.plot.image
    rk.controls["s"].value = 0.12                     # the DB fee as a per-call cost at 20 questions a day
    assert rk.result["asymptote"] == pytest.approx(-0.02)
    assert rk.result["rho_limit"][5] == pytest.approx(formulas.rho_limit(5, 1.25, 0.1, 0.12))
    assert rk.image.value != png0 and rk.plot.image is image
    assert rk.result["points"]["seed"] == "retrieval"
    rk.set(w=2.0)
    assert rk.result["breakeven_k"] == pytest.approx(formulas.breakeven_reuses(2.0, 0.1))


def test_display_bundle_has_widget_and_static_fallback(wc):
    sim = wc.CrossoverSimulator()
    bundle = sim._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert "data:image/png;base64," in bundle["text/html"]
    assert f"${sim.result['monthly_long_context']:,.0f}" in bundle["text/html"]


def test_backgrounds_are_reused(wc):
    sim = wc.CrossoverSimulator()
    for model in ("claude-haiku-4-5", "claude-opus-5"):
        sim.set(model=model)
    full = sim.full_redraws
    for _ in range(3):
        for model in ("claude-haiku-4-5", "claude-opus-5"):
            res = sim.set(model=model)
            assert res["context_window"] == pricing.get_model(model).context_window
    assert sim.full_redraws == full, "going back to a model already drawn blits its saved background"
    for d in range(150_000, 250_000, 10_000):       # a slider drag within the same limits: no full redraw
        sim.controls["doc_tokens"].value = d
    assert sim.full_redraws == full


@pytest.mark.parametrize("model", ["claude-haiku-5-5", "claude-opus-5-5", "claude-haiku-4-5"])
def test_the_month_axis_holds_every_curve_when_the_window_is_in_view(wc, model):
    # past the window long context has no price (NaN): the y range must still hold RAG and the rest
    sim = wc.CrossoverSimulator(doc_tokens=197_000, questions_per_day=20, model=model)
    grid = np.linspace(0, sim.ax.get_xlim()[1], 50)
    top = max(float(np.nanmax(v)) for v in crossover.curves(sim.profile, grid).values())
    assert np.isnan(crossover.curves(sim.profile, [sim.ax.get_xlim()[1] * 2])["long_context"][0])
    assert top <= sim.ax.get_ylim()[1] <= 3 * top, (model, sim.ax.get_ylim(), top)


def test_the_simulator_draws_a_price_tier_as_a_step(wc):
    # Haiku 5.5 prices a prompt over 100,000 tokens at the higher tier, every token of it: the long-context
    # line jumps where documents + question pass the threshold, and the figure shows the jump, not a slope
    sim = wc.CrossoverSimulator(doc_tokens=197_000, questions_per_day=20, model="claude-haiku-5-5")
    edge = pricing.get_model("claude-haiku-5-5").prompt_tiers[0].over_prompt_tokens - sim.profile.prompt_tokens
    x, y = (np.asarray(a, dtype=float) for a in sim.plot.lines["long_context"].get_data())
    below, above = y[x == edge][0], y[x == edge + 1][0]
    want = crossover.monthly(edge + 1, sim.profile)["long_context"] - crossover.monthly(edge, sim.profile)["long_context"]
    assert above - below == pytest.approx(want) and want > 5, (below, above)


@pytest.mark.parametrize("d", [50_000, 99_600, 99_601, 197_000])
def test_profile_point_prices_a_tiered_model_at_each_prompts_own_rate(d):
    # Haiku 5.5: the long prompt pays the higher tier on every token, RAG's short prompt the lower one
    p = crossover.profile(20, model="claude-haiku-5-5", db_monthly=10.0)
    pt = crossover.profile_point(d, p)
    mo = crossover.monthly(d, p)
    n = p.questions_per_month
    lc = formulas.relative_cost(1, pt.k, 0, 0, pt.w, pt.r) * pt.unit_usd * n
    rag = formulas.relative_cost(0, pt.k, pt.rho, pt.s, pt.w, pt.r) * pt.unit_usd * n
    # the map's difference between the paths is the dollars' difference (what every path pays drops out)
    assert lc - rag == pytest.approx(mo["long_context"] - mo["rag"], rel=1e-9, abs=1e-9)
    assert (pt.rho < pt.rho_limit) == (mo["rag"] < mo["long_context"])


def test_the_map_point_jumps_at_a_price_tier():
    p = crossover.profile(20, model="claude-haiku-5-5", db_monthly=10.0)
    edge = pricing.get_model(p.model).prompt_tiers[0].over_prompt_tokens - p.prompt_tokens
    below, above = crossover.profile_point(edge, p), crossover.profile_point(edge + 1, p)
    hi, lo = (t.input_usd_per_mtok for t in (pricing.get_model(p.model).prompt_tiers[0], pricing.get_model(p.model)))
    assert above.unit_usd / below.unit_usd == pytest.approx(hi / lo, rel=1e-4)      # the documents' price jumps
    assert below.rho / above.rho == pytest.approx(hi / lo, rel=1e-4)                # RAG's share in dollars falls
    assert above.s < below.s                                                         # the long prompt's answer costs more


def _lowest_hit_rate_by_crossings(d, p):
    """05 exercise 1's answer found another way: bisect the hit rate on crossover_tokens (tier-aware) at the
    profile's TTL; long context (cached, or sent without the cache) is no dearer than RAG at ``d`` while
    ``d`` is not beyond the crossing."""
    from dataclasses import replace

    if not crossover.fits(d, p):
        return None
    ttl = p.resolved_ttl()

    def no_dearer(h, path="long_context"):
        x = crossover.crossover_tokens(replace(p, ttl=ttl, hit_rate=h), dearer=path)
        return x is None or d <= x

    if no_dearer(0.0, "long_context_no_cache") or no_dearer(0.0):
        return 0.0
    if not no_dearer(1.0):
        return None
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if no_dearer(mid) else (mid, hi)
    return hi


def test_lesson_05_solution_of_exercise_1_agrees_with_the_crossings_on_every_model():
    """05 exercise 1's solution (the month at 0% and 100% at the profile's TTL, solved in the hit rate) gives the
    hit rate that bisecting on crossover_tokens finds, on every model (the tiered Haiku 5.5 above and below its
    tier), at low and high traffic, with and without a database bill, and None beyond the window."""
    import itertools
    import re
    from dataclasses import replace
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "solutions" / "05_crossover" / "05_crossover.py").read_text(encoding="utf-8")
    src = re.search(r"^def min_hit_rate_for_long_context\(.*?### END SOLUTION", text, re.S | re.M).group(0)
    ns = {"compare": compare, "crossover": crossover, "replace": replace}
    exec(src, ns)
    solve = ns["min_hit_rate_for_long_context"]
    kinds = set()
    for model, per_day, db, d in itertools.product(pricing.models(), (1, 3, 20, 300), (0.0, 70.0),
                                                   (30_000, 90_000, 169_659, 400_000)):
        p = crossover.profile(per_day, model=model, db_monthly=db)
        want, got = _lowest_hit_rate_by_crossings(d, p), solve(d, p)
        assert (want is None and got is None) or (type(got) is float and abs(got - want) <= 1e-6), (model, per_day, db, d, got, want)
        kinds.add("none" if want is None else "zero" if want == 0.0 else
                  "tier" if pricing.get_model(model).prompt_tiers and d > 100_000 else "between")
    assert kinds == {"none", "zero", "between", "tier"}, kinds


def test_the_simulator_prints_no_nan_and_keeps_the_lessons_token_count():
    """Issue 44: at 1,500,000 tokens (beyond every window) the cell printed $nan; the slider rounded 169,659 to
    170,000 (step 1,000), so the widget showed another month than the cells."""
    from ctxlab.widgets.crossover import CrossoverSimulator

    sim = CrossoverSimulator(doc_tokens=169_659)
    assert sim.controls["doc_tokens"].value == 169_659 and sim.result["doc_tokens"] == 169_659
    assert sim.controls["doc_tokens"].step == 1
    sim.set(doc_tokens=1_500_000)
    text = sim.summary()
    assert "nan" not in text.lower() and "ロングコンテキスト ウィンドウに載らない" in text
    assert f"RAG ${sim.result['monthly_rag']:,.0f}" in text
