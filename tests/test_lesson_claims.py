"""Figures that lessons 00-05 and their check-question notes state in words, checked against the library
that the executed lessons print from (issue 40: the text says what the code prints, on today's model)."""
from dataclasses import replace

import pytest

from ctxlab import corpus
from ctxlab.api import tokens
from ctxlab.costs import compare, crossover, formulas, pricing
from ctxlab.labs.prompt_caching import COST_ARTICLE
from ctxlab.quiz import bank as quiz_bank


@pytest.fixture(scope="module")
def doc_tokens():
    """What the lessons count offline for the course's documents (the sandbox's estimate)."""
    return tokens.count_documents([d.text for d in corpus.load()]).tokens


def note(qid, choice=None):
    for lesson in ("00_start_here", "01_count_tokens", "02_pricing", "03_prompt_caching", "05_crossover",
                   "06_metadata_filtering"):
        for q in quiz_bank.load(lesson):
            if q.id == qid:
                return q if choice is None else next(c for c in q.choices if c.id == choice)
    raise KeyError(qid)


# ------------------------------------------------------------------ check-question notes on today's model

def test_the_notes_give_todays_read_multiple():
    opus = pricing.get_model(pricing.DEFAULT_MODEL)
    assert opus.display_name.endswith("Opus 5.5") and opus.cache_read_multiplier == 0.05
    for qid, cid in (("c00-2", "d"), ("c02-1", "a"), ("c02-1", "b"), ("c03-3", "b"), ("c05-2", "a"), ("c06-1", "b")):
        text = note(qid, cid).note
        assert "Opus 5.5" in text or "0.05 倍" in text, (qid, cid, text)
        assert "0.1 倍" not in text and "0.1）" not in text.replace("記事のモデルでは 0.1）", ""), (qid, cid, text)
    assert "Opus 5.5" in note("c02-1").text and "0.05 倍" in note("c02-1").text


def test_c02_1_figures_are_opus_5_5s():
    opus = pricing.get_model(pricing.DEFAULT_MODEL)
    read = pricing.call_cost(opus.id, input_tokens=400, cache_read_tokens=197_000, output_tokens=700).total
    written = pricing.call_cost(opus.id, input_tokens=400, cache_write_5m_tokens=197_000, output_tokens=700).total
    assert opus.write_multiplier("5m") / opus.cache_read_multiplier == 25
    assert round(written / read) == 18
    c = note("c02-1", "c").note
    assert "25 倍（1.25 ÷ 0.05）" in c and "約 18 倍" in c
    assert 197_000 * opus.cache_read_multiplier > 400   # "ずっと大きい額" (choice a)


def test_c05_2_and_c00_2_name_both_generations():
    assert pricing.get_model(pricing.ARTICLE_MODEL).cache_read_multiplier == 0.1
    assert "記事のモデルでは 0.1" in note("c05-2", "a").note


# ------------------------------------------------------------------ lesson 05

BASE = crossover.profile(20)


def _far(x):
    return float("inf") if x is None else x


def _fixed_80_side(q, model=pricing.ARTICLE_MODEL):
    """+1: the article's fixed 80% puts the crossing further (more documents) than the traffic's hit rate
    at q a day, -1 nearer, 0 tied within the band of the simulated hit rate (as lesson 05 section 4)."""
    p = replace(BASE, model=model, questions_per_month=q * crossover.DAYS_PER_MONTH)
    fixed = _far(crossover.crossover_tokens(replace(p, hit_rate=compare.ARTICLE_HIT_RATE)))
    sides = {(fixed > t) - (fixed < t) for t in (_far(crossover.crossover_tokens(b)) for b in compare.hit_rate_band(p))}
    return sides.pop() if len(sides) == 1 else 0


def test_05_the_fixed_80_percent_errs_one_way_at_few_questions_and_the_other_way_at_many():
    """Section 4: 'few questions: further; many: nearer', with one switch and a tie band between."""
    side = {q: _fixed_80_side(q) for q in range(1, 121)}
    further_to = max(q for q, v in side.items() if v > 0)
    nearer_from = min(q for q, v in side.items() if v < 0)
    assert all(side[q] > 0 for q in range(1, further_to + 1))
    assert all(side[q] < 0 for q in range(nearer_from, 121))
    assert 5 <= further_to < nearer_from <= 50, (further_to, nearer_from)
    # the reason the prose gives: the per-token unit cost (1 - h) w + h r against the article's (80%, 5m)
    opus5 = pricing.get_model(pricing.ARTICLE_MODEL)
    art_unit = compare.choose_ttl(replace(BASE, model=opus5.id, hit_rate=compare.ARTICLE_HIT_RATE)).unit_costs["5m"]
    for q, dearer in ((further_to, True), (nearer_from, False)):
        c = compare.choose_ttl(replace(BASE, model=opus5.id, questions_per_month=q * 30))
        assert (c.unit_costs[c.ttl] > art_unit) is dearer, (q, c)
    assert compare.choose_ttl(replace(BASE, model=opus5.id, questions_per_month=nearer_from * 30)).ttl == "1h"


def test_05_a_cheaper_model_lowers_rags_api_part_too():
    """Section 4: a cheaper input price lowers RAG's month as well (its API part), not only long context's."""
    for a, b in (("claude-opus-5", "claude-sonnet-5"),):
        assert crossover.monthly(0, replace(BASE, model=b))["rag"] < crossover.monthly(0, replace(BASE, model=a))["rag"]


def test_05_the_course_documents_sit_above_haiku_5_5s_tier(doc_tokens):
    haiku = pricing.get_model("claude-haiku-5-5")
    assert haiku.tier_rule.assumption and "output included" in haiku.tier_rule.applies_to
    assert doc_tokens > haiku.prompt_tiers[0].over_prompt_tokens


def test_05_exercise_3s_model_answer_reads_section_8(doc_tokens):
    """Exercise 3's model answer: r - s is negative on both days, the limit rule says retrieval never wins,
    yet 20 a day has retrieval cheapest (finite k: rho under the limit); 2 a day the limit is negative."""
    pts = {q: crossover.profile_point(doc_tokens, replace(BASE, questions_per_month=q * 30)) for q in (20, 2)}
    for pt in pts.values():
        assert pt.r - pt.s < 0 < pt.rho and pt.s > COST_ARTICLE["s"]
    assert pts[20].cheapest == "retrieval" and pts[20].rho < pts[20].rho_limit and pts[20].k < 1e6
    assert pts[2].rho_limit < 0 and pts[2].cheapest in ("full", "cache")
    assert pts[2].s > pts[20].s


def test_05_section_7_compares_with_the_articles_multiples():
    assert COST_ARTICLE["r"] == pricing.get_model(pricing.ARTICLE_MODEL).cache_read_multiplier
    assert pricing.get_model(pricing.DEFAULT_MODEL).cache_read_multiplier < COST_ARTICLE["r"]


# ------------------------------------------------------------------ lesson 00

def test_00_section_5_few_questions_favour_long_context_and_many_depend_on_the_model(doc_tokens):
    n_files = len(corpus.load())
    said = {(m, q): compare.cheaper_path(doc_tokens, n_files, compare.Profile(model=m, questions_per_month=q * 30))
            for m in (pricing.DEFAULT_MODEL, "claude-sonnet-5-5") for q in (1, 100)}
    assert said[pricing.DEFAULT_MODEL, 1] == said["claude-sonnet-5-5", 1] == "long_context"
    assert said[pricing.DEFAULT_MODEL, 100] == "rag" and said["claude-sonnet-5-5", 100] == "tie"


def test_00_exercise_1s_example_months_are_the_recount_of_the_articles_table():
    """The visible test's comment: $207 and $101 at the article's 80% and 5m on Opus 5 (the article prints $206)."""
    c = compare.compare(197_000, 50, compare.Profile(model="claude-opus-5", hit_rate=compare.ARTICLE_HIT_RATE, ttl="5m"))
    assert round(c.monthly["long_context"]) == 207 and round(c.monthly["rag"]) == 101
    assert round(600 * (0.2 * 1.251 + 0.8 * 0.116)) == 206   # the article's own figures (FACTS: seed 000)


# ------------------------------------------------------------------ lesson 00: the hidden tests catch these

def _test_cell(lesson, grade_id):
    import nbformat
    from pathlib import Path
    nb = nbformat.read(Path(__file__).resolve().parent.parent / "solutions" / lesson / f"{lesson}.ipynb", as_version=4)
    return next(c.source for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def _hidden(src):
    return src.split("### BEGIN HIDDEN TESTS")[1].split("### END HIDDEN TESTS")[0]


@pytest.mark.parametrize("label", ["looks only at the two ends of the range",
                                   "compares the two months once a day, ignoring the tie band of the simulated hit rate"])
def test_00_exercise_2s_hidden_tests_catch(label, doc_tokens):
    from wrong_answers import WRONG
    wrong = next(w for w in WRONG["00_start_here"]["cheaper_path-tests"] if w.label == label)
    docs = corpus.load()
    ns = {"compare": compare, "pricing": pricing, "texts": [d.text for d in docs],
          "count": tokens.count_documents([d.text for d in docs])}
    exec(wrong.source, ns)
    with pytest.raises(AssertionError):
        exec(_hidden(_test_cell("00_start_here", "cheaper_path-tests")), ns)


def test_00_exercise_1s_hidden_tests_catch_an_answer_that_ignores_freshness():
    from wrong_answers import WRONG
    wrong = next(w for w in WRONG["00_start_here"]["choose_path-tests"] if w.label.startswith("ignores freshness"))
    ns = {}
    exec(wrong.source, ns)
    with pytest.raises(AssertionError):
        exec(_hidden(_test_cell("00_start_here", "choose_path-tests")), ns)


# ------------------------------------------------------------------ lesson 02 exercise 1: the hidden tests catch these

def _exercise_02_namespace(doc_tokens):
    return {"compare": compare, "pricing": pricing, "doc_tokens": doc_tokens}


def _wrong_02():
    from wrong_answers import WRONG
    return WRONG["02_pricing"]["cheaper_over_hit_range-tests"]


def test_02_exercise_1s_hidden_tests_pass_the_solution(doc_tokens):
    import nbformat
    from pathlib import Path
    nb = nbformat.read(Path(__file__).resolve().parent.parent / "solutions" / "02_pricing" / "02_pricing.ipynb", as_version=4)
    answer = next(c.source for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "cheaper_over_hit_range")
    ns = _exercise_02_namespace(doc_tokens)
    exec(answer, ns)
    exec(_hidden(_test_cell("02_pricing", "cheaper_over_hit_range-tests")), ns)


@pytest.mark.parametrize("label", [w.label for w in _wrong_02()])
def test_02_exercise_1s_hidden_tests_catch(label, doc_tokens):
    """Every plausible wrong rule (one point of the range, the API price only, the model or the DB ignored, a
    tie to RAG) fails the hidden tests alone, not only the visible ones."""
    wrong = next(w for w in _wrong_02() if w.label == label)
    ns = _exercise_02_namespace(doc_tokens)
    exec(wrong.source, ns)
    with pytest.raises(AssertionError):
        exec(_hidden(_test_cell("02_pricing", "cheaper_over_hit_range-tests")), ns)


def test_02_exercise_1s_visible_messages_state_the_months(doc_tokens):
    """The visible test's messages: at 600 a month and DB $70 on today's Opus, RAG is cheaper at 50% and long
    context at 95% (and from 90% up); Haiku 5.5 keeps long context cheaper from 20% to 60%; a $200 DB keeps it
    cheaper from 70% to 85%, which the default $70 does not."""
    def cheaper(hit, db=70, model=pricing.DEFAULT_MODEL):
        m = compare.compare(doc_tokens, 50, compare.Profile(model=model, questions_per_month=600, hit_rate=hit,
                                                            ttl="5m", db_monthly=db)).monthly
        return "long_context" if m["long_context"] <= m["rag"] else "rag"

    assert pricing.DEFAULT_MODEL == "claude-opus-5-5"
    assert cheaper(0.5) == "rag" and cheaper(0.95) == "long_context" and cheaper(0.9) == cheaper(1.0) == "long_context"
    assert cheaper(0.2, model="claude-haiku-5-5") == cheaper(0.6, model="claude-haiku-5-5") == "long_context"
    assert cheaper(0.2) == "rag"    # so an answer that ignores model says otherwise
    assert cheaper(0.7, db=200) == cheaper(0.85, db=200) == "long_context" and cheaper(0.85) == "rag"


# ------------------------------------------------------------------ lessons 02 and 03, and `ctxlab compare`

def test_02_an_hour_long_write_costs_more_than_a_five_minute_one():
    for m in pricing.models().values():
        assert m.write_multiplier("1h") > m.write_multiplier("5m"), m.id


def test_03_the_cost_articles_figures_are_drawn_with_its_own_values():
    """Section 7's prose: the figures use w = 1.25, r = 0.1, rho = 0.3, s = 0.02, E = 0.05 (the article's date)."""
    assert COST_ARTICLE == {"w": 1.25, "r": 0.1, "rho": 0.3, "s": 0.02, "E": 0.05}
    from pathlib import Path
    text = (Path(__file__).resolve().parent.parent / "solutions" / "03_prompt_caching" / "03_prompt_caching.py").read_text()
    assert "$w = 1.25$、$r = 0.1$、検索は $\\rho = 0.3$、$s = 0.02$、索引を作る一度きりの費用 $E = 0.05$" in text


def test_compare_labels_the_write_ttl_the_tier_assumption_a_fixed_rate_and_a_cheaper_no_cache(capsys):
    from ctxlab import cli
    assert cli.main(["compare", "--total-tokens", "169659", "--questions-per-month", "30"]) == 0
    out = capsys.readouterr().out
    assert "初回（キャッシュ書き込み・TTL 5m）" in out and "キャッシュを付けないほうが" in out
    assert "ヒット率はトラフィックのモデル（04）から" in out
    assert cli.main(["compare", "--total-tokens", "169659", "--model", "claude-haiku-5-5", "--hit-rate", "0.8"]) == 0
    out = capsys.readouterr().out
    assert "100,000 tok を超えるプロンプトは呼び出し全体が $0.5 / $2.5（価格表が置いた前提: 公式には未確認）" in out
    assert "ヒット率 80% は指定した固定値" in out and "キャッシュを付けないほうが" not in out
    c = compare.compare(169_659, 48, compare.Profile(questions_per_month=600))
    assert f"TTL {c.ttl}" in c.rows["lc_write"].label and f"TTL {c.ttl}" in c.rows["filter_write"].label


# ------------------------------------------------------------------ the checks that were asserts in 00's and 05's cells

def test_05_section_4_reading_holds_on_the_articles_models():
    """Section 4's three bullets: fewer questions and a cheaper input price move the crossing right (5-20 a day),
    and some article model meets its half window before the crossing."""
    per_days = [5, 10, 20, 50, 100]
    cross = {m.id: {q: _far(crossover.crossover_tokens(replace(BASE, model=m.id, questions_per_month=q * 30)))
                    for q in per_days} for m in pricing.article_models().values()}
    few = [q for q in per_days if q <= 20]
    assert all(c[a] > c[b] or c[a] == float("inf") for c in cross.values() for a, b in zip(few, few[1:]))
    by_price = sorted(pricing.article_models().values(), key=lambda m: m.input_usd_per_mtok)
    assert all(cross[a.id][q] > cross[b.id][q] or cross[a.id][q] == float("inf")
               for q in per_days for a, b in zip(by_price, by_price[1:]))
    assert any(x > m.context_window / 2 for m in pricing.article_models().values() for x in cross[m.id].values())


def test_05_section_9_todays_models_bring_the_crossing_back_at_many_questions():
    """Optional section 9: on some of today's models the crossing moves right again as questions grow."""
    per_days = [5, 10, 20, 50, 100]
    back = [m.id for m in pricing.current_models().values()
            if any(b > a for a, b in zip(*[[_far(crossover.crossover_tokens(replace(BASE, model=m.id, questions_per_month=q * 30)))
                                            for q in qs] for qs in (per_days[:-1], per_days[1:])]) if a != float("inf"))]
    assert back


def test_05_section_10_a_fixed_part_makes_the_hybrid_cheapest_somewhere():
    opus = pricing.get_model(pricing.DEFAULT_MODEL)
    w, r, s = opus.write_multiplier("5m"), opus.cache_read_multiplier, COST_ARTICLE["s"]
    assert crossover.rho_k_map(w, r, s, m0=0.05).share("hybrid") > 0 == crossover.rho_k_map(w, r, s).share("hybrid")


def test_05_exercise_2_the_course_profile_meets_the_cost_line_first():
    """Exercise 2's visible test and section 5: at 20 a day the crossing comes before the half window and the
    simulated 3-second line; a 1-second requirement at 2 a day meets the latency line first."""
    half = pricing.get_model(BASE.model).context_window * crossover.HALF_WINDOW
    ttft = crossover.max_tokens_for_ttft(crossover.TTFT_LIMIT_S, BASE.prompt_tokens)
    assert crossover.crossover_tokens(BASE) < half < ttft
    few = crossover.profile(2)
    assert crossover.max_tokens_for_ttft(1.0, few.prompt_tokens) < min(crossover.crossover_tokens(few), half)


def test_00_section_5_one_question_a_day_never_hits_and_no_cache_is_cheaper(doc_tokens):
    one = compare.compare(doc_tokens, len(corpus.load()), compare.Profile(questions_per_month=30))
    assert one.hit_rate == 0 and one.monthly["long_context"] > one.monthly["long_context_no_cache"]


# ------------------------------------------------------------------ lesson 04 (the checks that were asserts in its cells)

def test_04_section_2_reads_renew_a_five_minute_entry_for_an_hour():
    """Section 2: questions 4 minutes apart for an hour: one write, then fifteen reads."""
    import ctxlab
    from ctxlab.api import messages
    sb = ctxlab.Sandbox(realtime=False, time_scale=0)
    lab = ctxlab.make_client(offline=True, sandbox=sb)
    docs = corpus.load()
    questions = [q.question for q in corpus.questions()]
    kinds = []
    for i in range(16):
        if i:
            sb.advance(4 * 60)
        u = lab.messages.create(**messages.question_request(docs, questions[i % len(questions)], model=pricing.DEFAULT_MODEL,
                                                            max_tokens=16, cache_ttl="5m")).usage
        kinds.append("read" if u.cache_read_input_tokens else "write" if u.cache_creation_input_tokens else "none")
    assert kinds == ["write"] + ["read"] * 15


def test_04_section_9_meetings_want_five_minutes_a_batch_wants_no_cache_and_80_percent_needs_an_hour(doc_tokens):
    from ctxlab.labs import ttl as traffic
    days = {"meetings": traffic.office_day(30, seed=0, profile="meetings"), "batch": [i * 5400.0 for i in range(7)],
            "bunched20": traffic.office_day(20, seed=0, profile="bunched")}
    costs, table = traffic.traffic_table(days, doc_tokens)
    assert traffic.cheapest(costs["meetings"]) == "5m" and traffic.cheapest(costs["batch"]) == "none"
    assert costs["bunched20"]["5m"]["hit_rate"] < 0.8       # the 20-question day is not among the 80% rows at 5m
    assert "シミュレーション" in table.caption and "<table>" in table._repr_html_()
    assert traffic.hit_rate_stats(20, "5m").mean < compare.ARTICLE_HIT_RATE <= traffic.hit_rate_stats(20, "1h").mean
