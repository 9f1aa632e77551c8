"""Plausible wrong answers to the exercises, and what the visible tests must say about each.

Each entry replaces the learner's function with a wrong version that a learner could plausibly
write (an edge case the task states but the code misses, an off-by-one, a call to the library's
twin of the exercise). ``tests/test_visible_tests.py`` runs the lesson, then each wrong version
against the exercise's *visible* test cell, and checks the verdict recorded here: a wrong answer
is caught by the visible test with a message, unless ``passes`` says why the visible test
deliberately lets it through (the hidden tests still catch it at grading).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Wrong:
    label: str
    source: str
    passes: str = ""   # non-empty: the visible test lets this one through on purpose, and why


#: lesson 02 演習 1: the solution the wrong versions below are derived from (each .replace must match)
_HIT_RANGE = '''
def cheaper_over_hit_range(doc_tokens, questions_per_month, db_monthly, low, high, model=pricing.DEFAULT_MODEL):
    if not 0 <= low <= high <= 1:
        raise ValueError(f"need 0 <= low <= high <= 1, got low={low!r}, high={high!r}")
    said = set()
    for hit in (low, high):
        p = compare.Profile(model=model, questions_per_month=questions_per_month, hit_rate=hit, ttl="5m",
                            db_monthly=db_monthly)
        month = compare.compare(doc_tokens, 50, p).monthly
        said.add("long_context" if month["long_context"] <= month["rag"] else "rag")
    return said.pop() if len(said) == 1 else "depends"
'''


#: lesson 06 演習 1: cross-department sets keyed only by the 30 questions' own words (issue 41, item 6)
OVERFIT_LABEL = "a dictionary built only from the 30 questions' words (退職 / 稟議・決裁・見積・承認 / 在宅 / 誤送信)"
OVERFIT_DICTIONARY = '''
def my_filter(question):
    event_bundles = [
        (("退職",),
         ["hr_shugyo_kisoku.txt", "hr_taishokukin.txt", "hr_saikoyo.txt", "it_account.txt", "ga_shataku.txt"]),
        (("稟議", "決裁", "見積", "承認"),
         ["fin_keiri.txt", "fin_keihi_2025.txt", "fin_kobai.txt", "fin_card.txt", "ga_kengen.txt", "ga_ringi.txt"]),
        (("在宅",),
         ["hr_shugyo_kisoku.txt", "hr_telework_2025.txt", "it_security_2025.txt", "it_kiki_riyo.txt"]),
        (("誤送信",),
         ["common_kojin_joho.txt", "it_security_2025.txt", "it_incident.txt", "it_kiki_riyo.txt"]),
    ]
    q = metadata_filtering.normalize(question)
    for words, files in event_bundles:
        if any(w in q for w in words):
            return list(files)
    found = metadata_filtering.match(question)
    if not found:
        return list(metadata_filtering.BUNDLES[metadata_filtering.FALLBACK_BUNDLE].files)
    top = found[0]
    dept_files = metadata_filtering.current_files(top.dept)
    if len(dept_files) <= metadata_filtering.MAX_DOCS:
        return list(dept_files)
    return list(metadata_filtering.BUNDLES[top.bundle].files)
'''


def _quiz_wrongs(qid: str, tempting: str) -> list[Wrong]:
    """Wrong answers to one knowledge-check question: its most tempting wrong choice, and the
    forms a hand-written ``answers`` gets wrong. ``tempting`` is a wrong choice id (the key is
    not written here)."""
    wrongs = [
        Wrong(f"the tempting wrong choice {tempting!r}", f'answers = {{**answers, "{qid}": "{tempting}"}}',
              passes="the visible test checks the form only: checking the choice would tell which one is right, "
                     "and the graded release shows no verdict; the hidden test compares with the key"),
        Wrong("the choice id in upper case", f'answers = {{**answers, "{qid}": "{tempting.upper()}"}}'),
        Wrong("the choice's position as a number", f'answers = {{**answers, "{qid}": {ord(tempting) - 96}}}'),
        Wrong("the question id in upper case", f'answers = {{(k.upper() if k == "{qid}" else k): v for k, v in answers.items()}}'),
    ]
    if qid == "q1":
        wrongs.append(Wrong("asks the library for the key (correct_id)",
                            "answers = {q.id: q.correct_id() for q in bank}",
                            passes="the self-study folder holds the key, so this answers right here; at grading the "
                                   "key file is absent and correct_id() raises QuizError (test_assessment: "
                                   "test_without_the_key_file_the_library_twin_cannot_answer)"))
    return wrongs


# Near-right answers of lessons 00 and 01: each wrong version below is one of these with one change.
_CHOOSE = """
def choose_path(doc_tokens, context_window, lc_monthly, rag_monthly, rag_budget_monthly,
                ttft_cached_s, lc_correct, rag_correct, reindex_hours, max_delay_hours):
    if doc_tokens / context_window > 0.5:
        return ("filter_or_rag", "premise")
    reasons = [r for r, on in (("cost", lc_monthly - rag_monthly > rag_budget_monthly),
                               ("latency", ttft_cached_s > 3.0), ("accuracy", lc_correct < rag_correct)) if on]
    if not reasons:
        return ("long_context", "all_clear")
    if reindex_hours > max_delay_hours:
        return ("long_context", "freshness")
    return ("rag", reasons[0])
"""
_RANGE = """
def cheaper_over_range(doc_tokens, n_files, model, low, high):
    if low < 1 or low > high:
        raise ValueError("need 1 <= low <= high")
    seen = set()
    for per_day in range(low, high + 1):
        seen.add(compare.cheaper_path(doc_tokens, n_files, compare.Profile(model=model, questions_per_month=per_day * 30)))
    return seen.pop() if len(seen) == 1 and "tie" not in seen else "depends"
"""
_VERDICT = """
def usage_verdict(chars, window, low=1.0, high=1.5):
    if chars <= 0 or window <= 0:
        raise ValueError("chars and window must be positive")
    if chars * high / window <= 0.5:
        return "fits"
    if chars * low / window > 0.5:
        return "does_not_fit"
    return "count_it"
"""
_PICK = """
def pick_model(doc_tokens, yearly_growth, years, candidates):
    if doc_tokens <= 0 or yearly_growth < 0 or years < 0:
        raise ValueError("bad arguments")
    final = doc_tokens * (1 + yearly_growth) ** years
    fits = [m for m in candidates if final <= 0.5 * m.context_window]
    return min(fits, key=lambda m: m.rates(final)[0]).id if fits else None
"""


_FIRST_LINE = '''
def first_line(profile, ttft_limit_s=crossover.TTFT_LIMIT_S):
    lines = [("half_window", pricing.get_model(profile.model).context_window * crossover.HALF_WINDOW),
             ("latency", crossover.max_tokens_for_ttft(ttft_limit_s, profile.prompt_tokens))]
    x = crossover.crossover_tokens(profile)
    if x is not None:
        lines.append(("cost", x))
    return min(lines, key=lambda line: line[1])
'''
_MIN_HIT = """
def min_hit_rate_for_long_context(doc_tokens, profile):
    if not crossover.fits(doc_tokens, profile):
        return None
    ttl = profile.resolved_ttl()

    def month(h):
        return compare.compare(doc_tokens, 50, replace(profile, ttl=ttl, hit_rate=h)).monthly

    at0, at1 = month(0.0), month(1.0)
    if min(at0["long_context"], at0["long_context_no_cache"]) <= at0["rag"]:
        return 0.0
    if at1["long_context"] > at1["rag"]:
        return None
    return (at0["long_context"] - at0["rag"]) / (at0["long_context"] - at1["long_context"])
"""

_PLACEMENT = """
def choose_placement(runs, model):
    breakpoints = {"auto": 1, "explicit": 1, "both": 2}
    if not isinstance(runs, dict) or len(runs) < 2:
        raise ValueError("runs must map at least two placements to their usage lists")
    unknown = [name for name in runs if name not in breakpoints]
    if unknown:
        raise ValueError(f"unknown placement(s) {unknown}")
    lengths = {len(usages) for usages in runs.values()}
    if 0 in lengths or len(lengths) != 1:
        raise ValueError("every run must be the same non-empty sequence of requests")
    usd = {name: float(sum(pricing.usage_cost(u, model).total for u in usages)) for name, usages in runs.items()}
    cheapest = min(usd.values())
    tied = [name for name in usd if usd[name] - cheapest < 1e-9]
    best = min(tied, key=lambda name: (breakpoints[name], name != "auto"))
    return best, usd
"""



_CHOOSE11 = """
def choose(company):
    c = company
    if c["doc_tokens"] / c["context_window"] > 0.5:
        return ("filter_or_rag", "premise")
    lc = min(c["lc_cached_monthly"], c["lc_no_cache_monthly"])
    reasons = []
    if lc - c["rag_monthly"] > c["rag_budget_monthly"]:
        reasons.append("cost")
    if c["ttft_cached_s"] > 3.0:
        reasons.append("latency")
    acc = c["accuracy"]
    if acc is not None and acc["long_context"] < acc["rag"]:
        reasons.append("accuracy")
    if not reasons:
        return ("long_context", "all_clear")
    if c["update_hours"] is not None and c["reindex_hours"] is not None and c["reindex_hours"] > c["update_hours"]:
        return ("long_context", "freshness")
    return ("rag", reasons[0])
"""
_HOLDS = """
def holds(side_at, low, high):
    if low < 1 or low > high:
        raise ValueError("need 1 <= low <= high")
    first = side_at(low)
    return all(side_at(d) == first for d in range(int(low), int(high) + 1))
"""

#: lesson 04 演習 1 and 2: right answers the wrong versions below are derived from (each .replace must match)
_TTL_COUNTS = """\
    starts = [sent for sent, _done in log]
    n = len(starts)
    hits_5m = sum(traffic.model_hits(starts, "5m"))
    hits_1h = sum(traffic.model_hits(starts, "1h"))
"""
_TTL_LOG = """
def ttl_from_log(log, model):
""" + _TTL_COUNTS + """\
    m = pricing.get_model(model)
    cost = {"none": n,
            "5m": (n - hits_5m) * m.cache_write_5m_multiplier + hits_5m * m.cache_read_multiplier,
            "1h": (n - hits_1h) * m.cache_write_1h_multiplier + hits_1h * m.cache_read_multiplier}
    return min(cost, key=cost.get), hits_1h - hits_5m, n - hits_1h
"""
_TTL_COSTS = """
def ttl_costs(times, doc_tokens, model="claude-opus-5-5", question_tokens=400, output_tokens=700):
    n = len(times)
    base = dict(input_tokens=question_tokens, output_tokens=output_tokens)
    out = {"none": n * pricing.call_cost(model, input_tokens=doc_tokens + question_tokens,
                                         output_tokens=output_tokens).total}
    for ttl, seconds, write_field in [("5m", 300, "cache_write_5m_tokens"), ("1h", 3600, "cache_write_1h_tokens")]:
        hits = round(traffic.hit_rate(times, seconds) * n)
        miss = pricing.call_cost(model, **base, **{write_field: doc_tokens}).total
        hit = pricing.call_cost(model, **base, cache_read_tokens=doc_tokens).total
        out[ttl] = (n - hits) * miss + hits * hit
    return out
"""

WRONG: dict[str, dict[str, list[Wrong]]] = {
    "00_start_here": {
        "choose_path-tests": [
            Wrong("exactly 50% of the window counted as over the premise", _CHOOSE.replace("> 0.5", ">= 0.5")),
            Wrong("exactly 3 s counted as too slow", _CHOOSE.replace("> 3.0", ">= 3.0")),
            Wrong("compares the long-context month, not the difference, with the budget",
                  _CHOOSE.replace("lc_monthly - rag_monthly >", "lc_monthly >")),
            Wrong("ignores freshness: moves whenever a reason says so, even when re-indexing cannot keep up", """
def choose_path(doc_tokens, context_window, lc_monthly, rag_monthly, rag_budget_monthly,
                ttft_cached_s, lc_correct, rag_correct, reindex_hours, max_delay_hours):
    if doc_tokens / context_window > 0.5:
        return ("filter_or_rag", "premise")
    reasons = [r for r, on in (("cost", lc_monthly - rag_monthly > rag_budget_monthly),
                               ("latency", ttft_cached_s > 3.0), ("accuracy", lc_correct < rag_correct)) if on]
    return ("rag", reasons[0]) if reasons else ("long_context", "all_clear")
"""),
            Wrong("freshness checked first: a slow re-index keeps long context even with no reason to move", """
def choose_path(doc_tokens, context_window, lc_monthly, rag_monthly, rag_budget_monthly,
                ttft_cached_s, lc_correct, rag_correct, reindex_hours, max_delay_hours):
    if doc_tokens / context_window > 0.5:
        return ("filter_or_rag", "premise")
    if reindex_hours > max_delay_hours:
        return ("long_context", "freshness")
    reasons = [r for r, on in (("cost", lc_monthly - rag_monthly > rag_budget_monthly),
                               ("latency", ttft_cached_s > 3.0), ("accuracy", lc_correct < rag_correct)) if on]
    return ("rag", reasons[0]) if reasons else ("long_context", "all_clear")
"""),
        ],
        "cheaper_path-tests": [
            Wrong("leaves out the last day (range(low, high))", _RANGE.replace("range(low, high + 1)", "range(low, max(high, low + 1))")),
            Wrong("prices every day at the article's 80% instead of the traffic's hit rate",
                  _RANGE.replace("questions_per_month=per_day * 30)", "questions_per_month=per_day * 30, hit_rate=0.8)")),
            Wrong("no ValueError for low < 1 or low > high",
                  _RANGE.replace("    if low < 1 or low > high:\n        raise ValueError(\"need 1 <= low <= high\")\n", "")
                  .replace('else "depends"', 'else ("depends" if seen else "long_context")')),
            Wrong("looks only at the two ends of the range", _RANGE.replace("range(low, high + 1)", "{low, high}")),
            Wrong("compares the two months once a day, ignoring the tie band of the simulated hit rate", """
def cheaper_over_range(doc_tokens, n_files, model, low, high):
    if low < 1 or low > high:
        raise ValueError("need 1 <= low <= high")
    seen = set()
    for per_day in range(low, high + 1):
        m = compare.compare(doc_tokens, n_files, compare.Profile(model=model, questions_per_month=per_day * 30)).monthly
        seen.add("long_context" if m["long_context"] <= m["rag"] else "rag")
    return seen.pop() if len(seen) == 1 else "depends"
"""),
        ],
    },
    "01_count_tokens": {
        "usage_verdict-tests": [
            Wrong("exactly 50% at the high end counted as not fitting (< instead of <=)", _VERDICT.replace("<= 0.5", "< 0.5")),
            Wrong("exactly 50% at the low end counted as over (>= instead of >)", _VERDICT.replace("> 0.5", ">= 0.5")),
            Wrong("the band fixed at 1.0-1.5 (ignores low and high)",
                  _VERDICT.replace("chars * high", "chars * 1.5").replace("chars * low", "chars * 1.0")),
            Wrong("no ValueError for chars or window <= 0", _VERDICT.replace(
                "    if chars <= 0 or window <= 0:\n        raise ValueError(\"chars and window must be positive\")\n",
                "    if window <= 0:\n        return \"count_it\"\n")),
        ],
        "max_growth-tests": [
            Wrong("judges today's size, not the size after the years of growth",
                  _PICK.replace("* (1 + yearly_growth) ** years", "")),
            Wrong("exactly half the window counted as over (< instead of <=)", _PICK.replace("final <=", "final <")),
            Wrong("chooses among every model of the price table, not the candidates given",
                  _PICK.replace("for m in candidates", "for m in pricing.models().values()")),
            Wrong("compares the headline price (the lowest tier), not the price at the documents' length",
                  _PICK.replace("m.rates(final)[0]", "m.input_usd_per_mtok")),
            Wrong("no ValueError for a negative growth or years",
                  _PICK.replace("doc_tokens <= 0 or yearly_growth < 0 or years < 0", "doc_tokens <= 0")),
            Wrong("the model names written in the code instead of read from the candidates", """
def pick_model(doc_tokens, yearly_growth, years, candidates):
    if doc_tokens <= 0 or yearly_growth < 0 or years < 0:
        raise ValueError("bad arguments")
    final = doc_tokens * (1 + yearly_growth) ** years
    if final <= 100_000:
        return "claude-haiku-4-5"
    return "claude-sonnet-5-5" if final <= 500_000 else None
"""),
        ],
    },
    "02_pricing": {
        "cheaper_over_hit_range-tests": [
            Wrong("judges at the article's fixed 80% only, not over the range",
                  _HIT_RANGE.replace("for hit in (low, high):", "for hit in (0.8,):")),
            Wrong("judges at the middle of the range only",
                  _HIT_RANGE.replace("for hit in (low, high):", "for hit in ((low + high) / 2,):")),
            Wrong("judges at the low end only", _HIT_RANGE.replace("for hit in (low, high):", "for hit in (low,):")),
            Wrong("the hit rate from the traffic model (Profile's default), not the range given",
                  _HIT_RANGE.replace("hit_rate=hit, ", "")),
            Wrong("API price only: the vector DB left out of RAG's month",
                  _HIT_RANGE.replace('month["rag"]', 'month["rag_api"]')),
            Wrong("db_monthly ignored (Profile's default $70)", _HIT_RANGE.replace("db_monthly=db_monthly", "db_monthly=70")),
            Wrong("model ignored (always the default model)", _HIT_RANGE.replace("model=model, ", "")),
            Wrong("long context without the cache (the no-cache month)",
                  _HIT_RANGE.replace('month["long_context"] <=', 'month["long_context_no_cache"] <=')),
            Wrong("never says depends: long context only when it is cheaper at both ends, else RAG",
                  _HIT_RANGE.replace('said.pop() if len(said) == 1 else "depends"',
                                     '"long_context" if said == {"long_context"} else "rag"')),
            Wrong("no check of the range (a reversed range gives an answer)",
                  _HIT_RANGE.replace("not 0 <= low <= high <= 1", "False")),
            Wrong("a tie goes to RAG (the task says long context when it costs no more)",
                  _HIT_RANGE.replace('<= month["rag"]', '< month["rag"]'),
                  passes="no visible case is a tie; the hidden tests' month with no questions and no DB is one"),
        ],
        "implied_hit_rate-tests": [
            Wrong("no ValueError when no hit rate between 0 and 1 gives the target", '''
def implied_hit_rate(target, calls, cost_miss, cost_hit):
    if calls <= 0 or cost_miss == cost_hit:
        raise ValueError("the monthly cost does not depend on the hit rate")
    return (calls * cost_miss - target) / (calls * (cost_miss - cost_hit))
'''),
            Wrong("solves for the miss share (1 - h)", '''
def implied_hit_rate(target, calls, cost_miss, cost_hit):
    if calls <= 0 or cost_miss == cost_hit:
        raise ValueError("the monthly cost does not depend on the hit rate")
    h = (target - calls * cost_hit) / (calls * (cost_miss - cost_hit))
    if not 0 <= h <= 1:
        raise ValueError(f"no hit rate between 0 and 1 gives {target}")
    return h
'''),
            Wrong("0 and 1 left out of the range (0 < h < 1)", '''
def implied_hit_rate(target, calls, cost_miss, cost_hit):
    if calls <= 0 or cost_miss == cost_hit:
        raise ValueError("the monthly cost does not depend on the hit rate")
    h = (calls * cost_miss - target) / (calls * (cost_miss - cost_hit))
    if not 0 < h < 1:
        raise ValueError(f"no hit rate between 0 and 1 gives {target}")
    return h
'''),
            Wrong("divides by zero when a hit costs what a miss costs", '''
def implied_hit_rate(target, calls, cost_miss, cost_hit):
    h = (calls * cost_miss - target) / (calls * (cost_miss - cost_hit))
    if not 0 <= h <= 1:
        raise ValueError(f"no hit rate between 0 and 1 gives {target}")
    return h
'''),
        ],
    },
    "03_prompt_caching": {
        "diagnose-tests": [
            Wrong("no ValueError for fewer than two calls", '''
def diagnose(usages):
    records = [usage_dict(u) for u in usages]
    reads = [u["cache_read_input_tokens"] > 0 for u in records]
    writes = [u["cache_creation_input_tokens"] > 0 for u in records]
    if not any(reads) and not any(writes):
        return "nothing_cached"
    if not any(reads):
        return "never_hits"
    if all(reads):
        return "hit"
    return "write_then_hit"
'''),
            Wrong("any read counts as a hit", '''
def diagnose(usages):
    records = [usage_dict(u) for u in usages]
    if len(records) < 2:
        raise ValueError("need two calls")
    if any(u["cache_read_input_tokens"] > 0 for u in records):
        return "hit"
    if any(u["cache_creation_input_tokens"] > 0 for u in records):
        return "never_hits"
    return "nothing_cached"
'''),
            Wrong("reads dict keys directly (SDK objects, missing or None fields break it)", '''
def diagnose(usages):
    if len(usages) < 2:
        raise ValueError("need two calls")
    reads = [u["cache_read_input_tokens"] > 0 for u in usages]
    writes = [u["cache_creation_input_tokens"] > 0 for u in usages]
    if not any(reads) and not any(writes):
        return "nothing_cached"
    if not any(reads):
        return "never_hits"
    return "hit" if all(reads) else "write_then_hit"
'''),
        ],
        "first_paying_call-tests": [
            Wrong("math.ceil of the break-even (a tie counted as cheaper)", '''
import math
def first_paying_call(w, r):
    if w < 0 or r < 0 or r >= 1:
        raise ValueError("bad multipliers")
    return max(1, math.ceil((w - r) / (1 - r)))
'''),
            Wrong("no ValueError when r >= 1 (loops forever or returns nonsense)", '''
def first_paying_call(w, r):
    k = 1
    while not w + (k - 1) * r < k and k < 1000:
        k += 1
    return k
'''),
            Wrong("calls the library's twin", '''
def first_paying_call(w, r):
    return formulas.first_paying_call(w, r)
'''),
        ],
        "choose_placement-tests": [
            Wrong("the first cheapest in dict order (no tie rule)", _PLACEMENT.replace(
                "best = min(tied, key=lambda name: (breakpoints[name], name != \"auto\"))", "best = tied[0]")),
            Wrong("input only: the output tokens left out of the totals", _PLACEMENT.replace(
                "pricing.usage_cost(u, model).total", "(lambda c: c.total - c.output)(pricing.usage_cost(u, model))")),
            Wrong("no ValueError for an unknown name or runs of different lengths", _PLACEMENT.replace(
                "    if unknown:\n", "    if False:\n").replace("0 in lengths or len(lengths) != 1", "0 in lengths")),
            Wrong("calls the library's twin (compare_placements)", """
def choose_placement(runs, model):
    rows = prompt_caching.compare_placements(runs, model)
    return rows[0]["placement"], {r["placement"]: float(r["usd"]) for r in rows}
"""),   # caught by the tie rule (the twin sorts by dollars only); the hidden test also replaces the twins
        ],
    },
    "04_ttl": {
        "ttl_from_log-tests": [
            Wrong('"none" left out (only 5m against 1h)', _TTL_LOG.replace('{"none": n,\n            "5m"', '{"5m"')),
            Wrong("hit rates compared instead of cost (the higher hit rate wins)", _TTL_LOG.replace(
                "    return min(cost, key=cost.get), ",
                '    choice = "1h" if hits_1h > hits_5m else "5m" if hits_5m else "none"\n    return choice, ')),
            Wrong("model ignored (the lesson's MODEL's multipliers)", _TTL_LOG.replace("get_model(model)", "get_model(MODEL)")),
            Wrong("the article's multipliers typed in (read 0.1x) instead of the model's", _TTL_LOG.replace(
                "    m = pricing.get_model(model)\n",
                "    from types import SimpleNamespace\n    m = SimpleNamespace(cache_write_5m_multiplier=1.25, "
                "cache_write_1h_multiplier=2.0, cache_read_multiplier=0.1)\n")),
            Wrong("gaps counted from the previous answer's end to the next start", _TTL_LOG.replace(_TTL_COUNTS, """\
    log = sorted(log)
    n = len(log)
    waits = [b[0] - a[1] for a, b in zip(log, log[1:])]
    hits_5m = sum(w < 300 for w in waits)
    hits_1h = sum(w < 3600 for w in waits)
""")),
            Wrong("gaps from traffic.gaps: requests at the same time read each other", _TTL_LOG.replace(_TTL_COUNTS, """\
    starts = [sent for sent, _done in log]
    n = len(starts)
    g = traffic.gaps(starts)
    hits_5m = sum(x < 300 for x in g)
    hits_1h = sum(x < 3600 for x in g)
""")),
            Wrong("the article's 80% hit rate at 5m assumed instead of counting", _TTL_LOG.replace(
                'hits_5m = sum(traffic.model_hits(starts, "5m"))', "hits_5m = round(0.8 * n)")),
            Wrong("the answer's end used as the send time", _TTL_LOG.replace(
                "[sent for sent, _done in log]", "[done for _sent, done in log]")),
            Wrong("the choice from the library's twin (compare_ttls), the counts from model_hits", '''
def ttl_from_log(log, model):
    starts = [sent for sent, _done in log]
    hits_5m = sum(traffic.model_hits(starts, "5m"))
    hits_1h = sum(traffic.model_hits(starts, "1h"))
    costs = traffic.compare_ttls(starts, 100_000, model=model)
    return traffic.cheapest(costs), hits_1h - hits_5m, len(starts) - hits_1h
''', passes="the checkout's compare_ttls is code, so the visible test (run here and in self-study) gets its right "
             "answer; in the graded build compare_ttls holds only the narrative's recorded calls and raises "
             "NotRecorded for the tests' logs (tests/test_graded_build.py)"),
        ],
        "ttl_costs-tests": [
            Wrong("the 5m write multiplier used for 1h", _TTL_COSTS.replace(
                "**{write_field: doc_tokens}", "cache_write_5m_tokens=doc_tokens")),
            Wrong("the question not charged when the document is cached", _TTL_COSTS.replace(
                "(model, **base, ", "(model, output_tokens=output_tokens, ")),
            Wrong("TTL passed to traffic.hit_rate in minutes (5, 60)", _TTL_COSTS.replace(
                '("5m", 300, ', '("5m", 5, ').replace('("1h", 3600, ', '("1h", 60, ')),
            Wrong("model ignored (always the lesson's MODEL)", _TTL_COSTS.replace("call_cost(model", "call_cost(MODEL")),
            Wrong("calls the library's twin (compare_ttls)", '''
def ttl_costs(times, doc_tokens, model="claude-opus-5-5", question_tokens=400, output_tokens=700):
    got = traffic.compare_ttls(times, doc_tokens, model=model, question_tokens=question_tokens,
                               output_tokens=output_tokens)
    return {ttl: v["cost_usd"] for ttl, v in got.items()}
''',
                  passes="the checkout's compare_ttls is code, so the visible test (run here and in self-study) gets its "
                         "right answer; in the graded build compare_ttls holds only the narrative's recorded calls and "
                         "raises NotRecorded for the tests' inputs (tests/test_graded_build.py)"),
        ],
    },
    "05_crossover": {
        "min_hit_rate_for_long_context-tests": [
            Wrong("judged at the article's 80% only (80% if long context wins there, else None)", '''
def min_hit_rate_for_long_context(doc_tokens, profile):
    if not crossover.fits(doc_tokens, profile):
        return None
    m = compare.compare(doc_tokens, 50, replace(profile, hit_rate=compare.ARTICLE_HIT_RATE)).monthly
    return compare.ARTICLE_HIT_RATE if m["long_context"] <= m["rag"] else None
'''),
            Wrong("the window ignored (compare raises for a document that does not fit)",
                  _MIN_HIT.replace("    if not crossover.fits(doc_tokens, profile):\n        return None\n", "")),
            Wrong("the no-cache option ignored (only the cached month at 0%)",
                  _MIN_HIT.replace('min(at0["long_context"], at0["long_context_no_cache"])', 'at0["long_context"]')),
            Wrong("a straight line in the document volume (crossover.line): Haiku 5.5's price tier is missed",
                  _MIN_HIT.replace(
                      "return compare.compare(doc_tokens, 50, replace(profile, ttl=ttl, hit_rate=h)).monthly",
                      "q = replace(profile, ttl=ttl, hit_rate=h)\n        return {k: crossover.line(k, q)(doc_tokens) "
                      "for k in (\"long_context\", \"long_context_no_cache\", \"rag\")}")),
            Wrong("percent, not a fraction", _MIN_HIT.replace(
                "return (at0[\"long_context\"] - at0[\"rag\"]) / (at0[\"long_context\"] - at1[\"long_context\"])",
                "return 100 * (at0[\"long_context\"] - at0[\"rag\"]) / (at0[\"long_context\"] - at1[\"long_context\"])")),
            Wrong("the TTL not fixed (ttl='auto' with a fixed hit rate prices at 5 minutes)",
                  _MIN_HIT.replace("replace(profile, ttl=ttl, hit_rate=h)", "replace(profile, hit_rate=h)")),
            Wrong("the team's model, database and chunks dropped (a default profile with the same traffic)",
                  _MIN_HIT.replace("replace(profile, ttl=ttl, hit_rate=h)",
                                   "compare.Profile(questions_per_month=profile.questions_per_month, ttl=ttl, hit_rate=h)")),
        ],
        "first_line-tests": [
            Wrong("a crossing of 0.0 taken for 'never crosses' (x or inf)", _FIRST_LINE.replace(
                "    if x is not None:\n        lines.append((\"cost\", x))",
                "    if x:\n        lines.append((\"cost\", x))")),
            Wrong("the whole window, not its 50%", _FIRST_LINE.replace(" * crossover.HALF_WINDOW", "")),
            Wrong("ttft_limit_s ignored (always the article's 3 s)", _FIRST_LINE.replace(
                "crossover.max_tokens_for_ttft(ttft_limit_s, profile.prompt_tokens)",
                "crossover.max_tokens_for_ttft(crossover.TTFT_LIMIT_S, profile.prompt_tokens)")),
            Wrong("only the cost line (None when it never crosses)", '''
def first_line(profile, ttft_limit_s=crossover.TTFT_LIMIT_S):
    x = crossover.crossover_tokens(profile)
    return None if x is None else ("cost", x)
'''),
        ],
    },
    "06_metadata_filtering": {
        "my_filter-tests": [
            Wrong("returns the library's department filter (select_files)", '''
def my_filter(question):
    return metadata_filtering.select_files(question)
'''),
            Wrong(OVERFIT_LABEL, OVERFIT_DICTIONARY,
                  passes="fits the 30 questions, so the visible tests (on the 30) pass it; the hidden test's 31 "
                         "held-out questions fail it (tests/test_filtering.py: "
                         "test_the_held_out_questions_fail_a_dictionary_fitted_to_the_30)"),
            Wrong("chooses files anew for each question (per_question_files)", '''
def my_filter(question):
    return metadata_filtering.per_question_files(question)
'''),
            Wrong("looks up the department dictionary before the cross-department sets", '''
def my_filter(question):
    event_bundles = [
        (("退職", "定年"),
         ["hr_shugyo_kisoku.txt", "hr_taishokukin.txt", "hr_saikoyo.txt", "it_account.txt", "ga_shataku.txt"]),
        (("決裁", "稟議", "承認", "見積"),
         ["fin_keiri.txt", "fin_keihi_2025.txt", "fin_kobai.txt", "fin_card.txt", "ga_kengen.txt", "ga_ringi.txt"]),
        (("在宅", "テレワーク", "リモート"),
         ["hr_shugyo_kisoku.txt", "hr_telework_2025.txt", "it_security_2025.txt", "it_kiki_riyo.txt"]),
        (("誤送信", "漏えい", "漏洩", "紛失", "盗難", "置き忘れ", "間違えて送"),
         ["common_kojin_joho.txt", "it_security_2025.txt", "it_incident.txt", "it_kiki_riyo.txt"]),
    ]
    found = metadata_filtering.match(question)
    if found:
        top = found[0]
        dept_files = metadata_filtering.current_files(top.dept)
        if len(dept_files) <= metadata_filtering.MAX_DOCS:
            return list(dept_files)
        return list(metadata_filtering.BUNDLES[top.bundle].files)
    q = metadata_filtering.normalize(question)
    for words, files in event_bundles:
        if any(w in q for w in words):
            return list(files)
    return list(metadata_filtering.BUNDLES[metadata_filtering.FALLBACK_BUNDLE].files)
'''),
            Wrong("a cross-department set holds a superseded version (hr_telework_2022.txt)", '''
def my_filter(question):
    event_bundles = [
        (("退職", "定年"),
         ["hr_shugyo_kisoku.txt", "hr_taishokukin.txt", "hr_saikoyo.txt", "it_account.txt", "ga_shataku.txt"]),
        (("決裁", "稟議", "承認", "見積"),
         ["fin_keiri.txt", "fin_keihi_2025.txt", "fin_kobai.txt", "fin_card.txt", "ga_kengen.txt", "ga_ringi.txt"]),
        (("在宅", "テレワーク", "リモート"),
         ["hr_shugyo_kisoku.txt", "hr_telework_2022.txt", "hr_telework_2025.txt", "it_security_2025.txt"]),
        (("誤送信", "漏えい", "漏洩", "紛失", "盗難", "置き忘れ", "間違えて送"),
         ["common_kojin_joho.txt", "it_security_2025.txt", "it_incident.txt", "it_kiki_riyo.txt"]),
    ]
    q = metadata_filtering.normalize(question)
    for words, files in event_bundles:
        if any(w in q for w in words):
            return list(files)
    return metadata_filtering.select_files(question)
'''),
            Wrong("a set built from a department bundle repeats a file", '''
def my_filter(question):
    work = list(metadata_filtering.BUNDLES["hr_work"].files[:4])   # holds hr_telework_2025.txt already
    event_bundles = [
        (("退職", "定年"),
         ["hr_shugyo_kisoku.txt", "hr_taishokukin.txt", "hr_saikoyo.txt", "it_account.txt", "ga_shataku.txt"]),
        (("決裁", "稟議", "承認", "見積"),
         ["fin_keiri.txt", "fin_keihi_2025.txt", "fin_kobai.txt", "fin_card.txt", "ga_kengen.txt", "ga_ringi.txt"]),
        (("在宅", "テレワーク", "リモート"),
         work + ["hr_telework_2025.txt", "it_security_2025.txt", "it_kiki_riyo.txt"]),
        (("誤送信", "漏えい", "漏洩", "紛失", "盗難", "置き忘れ", "間違えて送"),
         ["common_kojin_joho.txt", "it_security_2025.txt", "it_incident.txt", "it_kiki_riyo.txt"]),
    ]
    q = metadata_filtering.normalize(question)
    for words, files in event_bundles:
        if any(w in q for w in words):
            return list(files)
    return metadata_filtering.select_files(question)
'''),
        ],
        "pick_bundle-tests": [
            Wrong("counts a file twice when one inquiry lists it twice", '''
def pick_bundle(dept, log, max_docs=metadata_filtering.MAX_DOCS):
    if dept not in corpus.DEPARTMENTS or max_docs < 1:
        raise ValueError("bad arguments")
    files = corpus.by_file()
    counts = {}
    for entry in log:
        for name in entry:
            while files[name].superseded_by:
                name = files[name].superseded_by
            counts[name] = counts.get(name, 0) + 1
    order = [d.file for d in corpus.load()]
    candidates = [f for f in order if files[f].dept == dept and counts.get(f, 0) > 0]
    chosen = sorted(candidates, key=lambda f: -counts[f])[:max_docs]
    return [f for f in order if f in chosen]
'''),
            Wrong("counts an old version under its own name", '''
def pick_bundle(dept, log, max_docs=metadata_filtering.MAX_DOCS):
    if dept not in corpus.DEPARTMENTS or max_docs < 1:
        raise ValueError("bad arguments")
    files = corpus.by_file()
    counts = {}
    for entry in log:
        for name in set(entry):
            counts[name] = counts.get(name, 0) + 1
    order = [d.file for d in corpus.load()]
    candidates = [f for f in order if files[f].dept == dept and counts.get(f, 0) > 0]
    chosen = sorted(candidates, key=lambda f: -counts[f])[:max_docs]
    return [f for f in order if f in chosen]
'''),
            Wrong("returns the files most used first, not in catalog order", '''
def pick_bundle(dept, log, max_docs=metadata_filtering.MAX_DOCS):
    if dept not in corpus.DEPARTMENTS or max_docs < 1:
        raise ValueError("bad arguments")
    files = corpus.by_file()
    counts = {}
    for entry in log:
        for name in set(entry):
            while files[name].superseded_by:
                name = files[name].superseded_by
            counts[name] = counts.get(name, 0) + 1
    order = [d.file for d in corpus.load()]
    candidates = [f for f in order if files[f].dept == dept and counts.get(f, 0) > 0]
    return sorted(candidates, key=lambda f: -counts[f])[:max_docs]
'''),
            Wrong("breaks ties in the order of the log, not the catalog", '''
def pick_bundle(dept, log, max_docs=metadata_filtering.MAX_DOCS):
    if dept not in corpus.DEPARTMENTS or max_docs < 1:
        raise ValueError("bad arguments")
    files = corpus.by_file()
    counts = {}
    for entry in log:
        for name in dict.fromkeys(entry):
            while files[name].superseded_by:
                name = files[name].superseded_by
            counts[name] = counts.get(name, 0) + 1
    order = [d.file for d in corpus.load()]
    ranked = sorted(counts, key=lambda f: -counts[f])
    chosen = [f for f in ranked if files[f].dept == dept][:max_docs]
    return [f for f in order if f in chosen]
'''),
            Wrong("no ValueError for an unknown department or max_docs < 1", '''
def pick_bundle(dept, log, max_docs=metadata_filtering.MAX_DOCS):
    files = corpus.by_file()
    counts = {}
    for entry in log:
        for name in set(entry):
            while files[name].superseded_by:
                name = files[name].superseded_by
            counts[name] = counts.get(name, 0) + 1
    order = [d.file for d in corpus.load()]
    candidates = [f for f in order if files[f].dept == dept and counts.get(f, 0) > 0]
    chosen = sorted(candidates, key=lambda f: -counts[f])[:max_docs]
    return [f for f in order if f in chosen]
'''),
        ],
    },
    "07_citations": {
        "locate-tests": [
            Wrong("line numbers counted from 0", '''
def locate(citation, docs):
    doc = docs[citation.document_index]
    return doc.file, doc.text.count("\\n", 0, citation.start_char_index)
'''),
            Wrong("finds the line by searching for cited_text", '''
def locate(citation, docs):
    doc = docs[citation.document_index]
    start = doc.text.find(citation.cited_text)
    return doc.file, doc.text.count("\\n", 0, start) + 1
'''),
            Wrong("the line of end_char_index (where the citation ends)", '''
def locate(citation, docs):
    doc = docs[citation.document_index]
    return doc.file, doc.text.count("\\n", 0, citation.end_char_index) + 1
'''),
            Wrong("always reads the first document", '''
def locate(citation, docs):
    doc = docs[0]
    return doc.file, doc.text.count("\\n", 0, citation.start_char_index) + 1
'''),
            Wrong("returns a list, not a tuple", '''
def locate(citation, docs):
    doc = docs[citation.document_index]
    return [doc.file, doc.text.count("\\n", 0, citation.start_char_index) + 1]
'''),
        ],
        "mismatched-tests": [
            Wrong("compares the slice without checking the range (a slice past the end is cut short)", '''
def mismatched(cites, docs):
    bad = []
    for i, c in enumerate(cites):
        if not 0 <= c.document_index < len(docs):
            bad.append(i)
        elif docs[c.document_index].text[c.start_char_index:c.end_char_index] != c.cited_text:
            bad.append(i)
    return bad
'''),
            Wrong("a negative document_index is read as docs[-1]", '''
def mismatched(cites, docs):
    bad = []
    for i, c in enumerate(cites):
        try:
            text = docs[c.document_index].text
        except IndexError:
            bad.append(i)
            continue
        a, b = c.start_char_index, c.end_char_index
        if not 0 <= a <= b <= len(text) or text[a:b] != c.cited_text:
            bad.append(i)
    return bad
'''),
            Wrong("looks for cited_text anywhere in the document", '''
def mismatched(cites, docs):
    bad = []
    for i, c in enumerate(cites):
        if not 0 <= c.document_index < len(docs) or c.cited_text not in docs[c.document_index].text:
            bad.append(i)
    return bad
'''),
            Wrong("returns the citations, not their positions", '''
def mismatched(cites, docs):
    bad = []
    for c in cites:
        k, a, b = c.document_index, c.start_char_index, c.end_char_index
        if not 0 <= k < len(docs) or not 0 <= a <= b <= len(docs[k].text) or docs[k].text[a:b] != c.cited_text:
            bad.append(c)
    return bad
'''),
        ],
    },
    "08_measure": {
        "accuracy-tests": [
            Wrong("calls the library's twin", '''
def accuracy_by_method(graded, partial_weight=0.5):
    return {m: per["all"] for m, per in measure.by_method(graded, partial_weight).items()}
''', passes="the checkout's measure.by_method is code, so the visible test (run here and in self-study) gets its right answer; in "
             "the graded build it holds only the lessons' recorded calls and raises NotRecorded for the hidden tests' "
             "inputs (tests/test_tamper.py TWIN_CALLS)"),
            Wrong("partial_weight ignored (a partial always counts 0.5)", '''
def accuracy_by_method(graded, partial_weight=0.5):
    weight = {"correct": 1.0, "partial": 0.5, "wrong": 0.0}
    points, counts = {}, {}
    for g in graded:
        points[g.method] = points.get(g.method, 0.0) + weight[g.level]
        counts[g.method] = counts.get(g.method, 0) + 1
    return {m: points[m] / counts[m] for m in points}
'''),
            Wrong("divides by every answer, not the method's", '''
def accuracy_by_method(graded, partial_weight=0.5):
    weight = {"correct": 1.0, "partial": partial_weight, "wrong": 0.0}
    points = {}
    for g in graded:
        points[g.method] = points.get(g.method, 0.0) + weight[g.level]
    return {m: p / len(graded) for m, p in points.items()}
'''),
            Wrong("keys in alphabetical order", '''
def accuracy_by_method(graded, partial_weight=0.5):
    weight = {"correct": 1.0, "partial": partial_weight, "wrong": 0.0}
    points, counts = {}, {}
    for g in graded:
        points[g.method] = points.get(g.method, 0.0) + weight[g.level]
        counts[g.method] = counts.get(g.method, 0) + 1
    return {m: points[m] / counts[m] for m in sorted(points)}
'''),
        ],
        "decide-tests": [
            Wrong("exactly 50% of the window fails the premise (>=)", '''
def decide(doc_tokens, context_window, lc_monthly, rag_monthly, rag_budget_monthly,
           ttft_cached_s, lc_accuracy, rag_accuracy, accuracy_margin, reindex_hours, max_delay_hours):
    if doc_tokens / context_window >= 0.5:
        return ("filter_or_rag", "premise")
    reasons = []
    if lc_monthly - rag_monthly > rag_budget_monthly:
        reasons.append("cost")
    if ttft_cached_s > 3.0:
        reasons.append("latency")
    if rag_accuracy - lc_accuracy > accuracy_margin:
        reasons.append("accuracy")
    if not reasons:
        return ("long_context", "all_clear")
    if reindex_hours > max_delay_hours:
        return ("long_context", "freshness")
    return ("rag", reasons[0])
'''),
            Wrong("exactly 3 seconds counts as too slow (>=)", '''
def decide(doc_tokens, context_window, lc_monthly, rag_monthly, rag_budget_monthly,
           ttft_cached_s, lc_accuracy, rag_accuracy, accuracy_margin, reindex_hours, max_delay_hours):
    if doc_tokens / context_window > 0.5:
        return ("filter_or_rag", "premise")
    reasons = []
    if lc_monthly - rag_monthly > rag_budget_monthly:
        reasons.append("cost")
    if ttft_cached_s >= 3.0:
        reasons.append("latency")
    if rag_accuracy - lc_accuracy > accuracy_margin:
        reasons.append("accuracy")
    if not reasons:
        return ("long_context", "all_clear")
    if reindex_hours > max_delay_hours:
        return ("long_context", "freshness")
    return ("rag", reasons[0])
'''),
            Wrong("freshness checked before the reasons to move", '''
def decide(doc_tokens, context_window, lc_monthly, rag_monthly, rag_budget_monthly,
           ttft_cached_s, lc_accuracy, rag_accuracy, accuracy_margin, reindex_hours, max_delay_hours):
    if doc_tokens / context_window > 0.5:
        return ("filter_or_rag", "premise")
    if reindex_hours > max_delay_hours:
        return ("long_context", "freshness")
    if lc_monthly - rag_monthly > rag_budget_monthly:
        return ("rag", "cost")
    if ttft_cached_s > 3.0:
        return ("rag", "latency")
    if rag_accuracy - lc_accuracy > accuracy_margin:
        return ("rag", "accuracy")
    return ("long_context", "all_clear")
'''),
            Wrong("any accuracy gain is a reason (accuracy_margin ignored)", '''
def decide(doc_tokens, context_window, lc_monthly, rag_monthly, rag_budget_monthly,
           ttft_cached_s, lc_accuracy, rag_accuracy, accuracy_margin, reindex_hours, max_delay_hours):
    if doc_tokens / context_window > 0.5:
        return ("filter_or_rag", "premise")
    reasons = []
    if lc_monthly - rag_monthly > rag_budget_monthly:
        reasons.append("cost")
    if ttft_cached_s > 3.0:
        reasons.append("latency")
    if rag_accuracy > lc_accuracy:
        reasons.append("accuracy")
    if not reasons:
        return ("long_context", "all_clear")
    if reindex_hours > max_delay_hours:
        return ("long_context", "freshness")
    return ("rag", reasons[0])
'''),
            Wrong("reasons checked from accuracy back to cost", '''
def decide(doc_tokens, context_window, lc_monthly, rag_monthly, rag_budget_monthly,
           ttft_cached_s, lc_accuracy, rag_accuracy, accuracy_margin, reindex_hours, max_delay_hours):
    if doc_tokens / context_window > 0.5:
        return ("filter_or_rag", "premise")
    reasons = []
    if rag_accuracy - lc_accuracy > accuracy_margin:
        reasons.append("accuracy")
    if ttft_cached_s > 3.0:
        reasons.append("latency")
    if lc_monthly - rag_monthly > rag_budget_monthly:
        reasons.append("cost")
    if not reasons:
        return ("long_context", "all_clear")
    if reindex_hours > max_delay_hours:
        return ("long_context", "freshness")
    return ("rag", reasons[0])
'''),
        ],
    },
    "09_knowledge_check": {
        f"{qid}-tests": _quiz_wrongs(qid, tempting) for qid, tempting in
        [("q1", "b"), ("q2", "a"), ("q3", "a"), ("q4", "b"), ("q5", "b"), ("q6", "a"), ("q7", "d"), ("q8", "d"), ("q9", "b")]
    },
    "10_rag_lab": {
        "rrf-tests": [
            Wrong("sorted from the lowest score", '''
def rrf(rankings, k=60):
    score = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            score[item] = score.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(score, key=lambda item: score[item])
'''),
            Wrong("keeps only the ids every ranking has", '''
def rrf(rankings, k=60):
    score = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            score[item] = score.get(item, 0.0) + 1.0 / (k + rank)
    common = set.intersection(*(set(r) for r in rankings)) if rankings else set()
    return sorted(common, key=lambda item: -score[item])
'''),
            Wrong("calls the library's twin", '''
def rrf(rankings, k=60):
    return retrieval.rrf(rankings, k=k)
''', passes="the checkout's retrieval.rrf is code, so the visible test (run here and in self-study) gets its right answer; in "
             "the graded build it holds only the lessons' recorded calls and raises NotRecorded for the hidden tests' "
             "inputs (tests/test_tamper.py TWIN_CALLS)"),
            Wrong("ranks counted from 0", '''
def rrf(rankings, k=60):
    score = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking):
            score[item] = score.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(score, key=lambda item: -score[item])
'''),
        ],
        "failure-tests": [
            Wrong("returns recall, not 1 − recall", '''
def one_minus_recall_at_k(rankings, questions, texts, files, k=20):
    if k < 1:
        raise ValueError("k")
    values = []
    for ranking, q in zip(rankings, questions):
        facts = set(q.key_facts)
        if not facts:
            continue
        found = set()
        for i in list(ranking)[:k]:
            if files[i] in q.gold_files:
                found |= rag_lab.facts_held(texts[i], facts)
        values.append(len(found) / len(facts))
    if not values:
        raise ValueError("no answerable question")
    return sum(values) / len(values)
'''),
            Wrong("looks at the whole ranking, not the top k", '''
def one_minus_recall_at_k(rankings, questions, texts, files, k=20):
    if k < 1:
        raise ValueError("k")
    values = []
    for ranking, q in zip(rankings, questions):
        facts = set(q.key_facts)
        if not facts:
            continue
        found = set()
        for i in list(ranking):
            if files[i] in q.gold_files:
                found |= rag_lab.facts_held(texts[i], facts)
        values.append(len(found) / len(facts))
    if not values:
        raise ValueError("no answerable question")
    return 1 - sum(values) / len(values)
'''),
            Wrong("no ValueError for k < 1", '''
def one_minus_recall_at_k(rankings, questions, texts, files, k=20):
    values = []
    for ranking, q in zip(rankings, questions):
        facts = set(q.key_facts)
        if not facts:
            continue
        found = set()
        for i in list(ranking)[:k]:
            if files[i] in q.gold_files:
                found |= rag_lab.facts_held(texts[i], facts)
        values.append(len(found) / len(facts))
    return 1 - sum(values) / len(values) if values else 1.0
'''),
            Wrong("calls the library's twin", '''
def one_minus_recall_at_k(rankings, questions, texts, files, k=20):
    return 1 - lab.recall("bm25_articles", k)
''', passes="the visible test asks for the lesson's own method, whose recall the checkout's Lab computes; the hidden "
             "tests pass rankings of their own, and in the graded build the Lab's recall holds only the lesson's "
             "recorded calls (NotRecorded)"),
        ],
    },
    "11_decide": {
        "choose-tests": [
            Wrong("the unmeasured accuracy (None) counted as a reason to move",
                  _CHOOSE11.replace('if acc is not None and acc["long_context"] < acc["rag"]:',
                                    'if acc is None or acc["long_context"] < acc["rag"]:')),
            Wrong("the premise skipped: a document set over half the window still compared on the numbers",
                  _CHOOSE11.replace('if c["doc_tokens"] / c["context_window"] > 0.5:', "if False:")),
            Wrong("the cached month only, never the cheaper uncached one",
                  _CHOOSE11.replace('lc = min(c["lc_cached_monthly"], c["lc_no_cache_monthly"])', 'lc = c["lc_cached_monthly"]'),
                  passes="the visible cases have the cached month as the cheaper one or far over RAG either way; "
                         "the hidden test with a dear cache and a cheap uncached month catches it"),
            Wrong("exactly 3 s counted as too slow", _CHOOSE11.replace("> 3.0", ">= 3.0"),
                  passes="the visible cases are far from 3 s; the hidden test at exactly 3.0 s catches it"),
        ],
        "holds-tests": [
            Wrong("no ValueError for low < 1 or low > high",
                  _HOLDS.replace('    if low < 1 or low > high:\n        raise ValueError("need 1 <= low <= high")\n', "")),
            Wrong("returns a word instead of True / False", _HOLDS.replace("return all(", "return 'yes' if all(")
                  .replace("int(high) + 1))", "int(high) + 1)) else 'no'")),
            Wrong("looks only at the two ends of the range",
                  _HOLDS.replace("return all(side_at(d) == first for d in range(int(low), int(high) + 1))",
                                 "return side_at(high) == first"),
                  passes="the visible cases change once and stay changed, so the ends tell; the hidden test that "
                         "changes and changes back catches it"),
        ],
    },
}

