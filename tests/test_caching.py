"""ctxlab.labs.prompt_caching: reading usage, dollars, request layout, the cost article's model, and the cache breakers."""
import json
import math
from datetime import datetime, timedelta
from types import SimpleNamespace as NS

import pytest

from ctxlab.costs import usage as usage_reader
from ctxlab.labs import prompt_caching as caching
from ctxlab.plots.prompt_caching import cost_curves
from ctxlab import corpus
from ctxlab.api import messages
from ctxlab.costs import pricing
from ctxlab.api.client import make_client
from ctxlab.sandbox import Sandbox

MODEL = "claude-haiku-4-5"


def usage(write=0, read=0, tail=20, out=100, w1h=0):
    return {"input_tokens": tail, "cache_creation_input_tokens": write + w1h, "cache_read_input_tokens": read,
            "cache_creation": {"ephemeral_5m_input_tokens": write, "ephemeral_1h_input_tokens": w1h},
            "output_tokens": out}


# ---------------------------------------------------------------- usage records

def test_usage_dict_reads_dicts_with_missing_and_none_fields():
    u = usage_reader.usage_dict({"input_tokens": 5, "cache_read_input_tokens": None})
    assert u["input_tokens"] == 5 and u["cache_read_input_tokens"] == 0
    assert u["cache_creation_input_tokens"] == 0 and u["output_tokens"] == 0
    assert u["cache_creation"] == {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}


def test_usage_dict_without_breakdown_counts_creation_as_5m():
    u = usage_reader.usage_dict({"input_tokens": 1, "cache_creation_input_tokens": 900})
    assert u["cache_creation"] == {"ephemeral_5m_input_tokens": 900, "ephemeral_1h_input_tokens": 0}


def test_usage_dict_reads_attribute_objects_and_fills_total_from_breakdown():
    obj = NS(input_tokens=3, cache_creation_input_tokens=None, cache_read_input_tokens=7, output_tokens=2,
             cache_creation=NS(ephemeral_5m_input_tokens=0, ephemeral_1h_input_tokens=40))
    u = usage_reader.usage_dict(obj)
    assert u["cache_creation_input_tokens"] == 40
    assert u["cache_creation"]["ephemeral_1h_input_tokens"] == 40
    assert usage_reader.total_input(obj) == 3 + 40 + 7


@pytest.mark.parametrize("bad", [{"input_tokens": -1}, {"cache_read_input_tokens": "many"},
                                 {"input_tokens": True}, {"output_tokens": float("nan")}])
def test_usage_dict_refuses_bad_counts(bad):
    with pytest.raises(ValueError):
        usage_reader.usage_dict(bad)


def test_usage_dict_refuses_none():
    with pytest.raises(ValueError, match="resp.usage"):
        usage_reader.usage_dict(None)


@pytest.mark.parametrize("u, kind", [(usage(write=10), "write"), (usage(read=10), "read"),
                                     (usage(write=5, read=10), "read+write"), (usage(), "none"),
                                     (usage(w1h=10), "write")])
def test_call_kind(u, kind):
    assert usage_reader.call_kind(u) == kind


def test_uncached_cost_prices_every_input_token_at_base():
    u = usage(write=1000, read=2000, tail=30, out=50)
    base = caching.uncached_cost(u, MODEL)
    m = pricing.get_model(MODEL)
    assert math.isclose(base.input, 3030 * m.input_per_token)
    assert math.isclose(base.output, 50 * m.output_per_token)
    assert base.cache_write == base.cache_read == 0


def test_explain_names_the_case_and_the_dollars():
    m = pricing.get_model(MODEL)
    text = caching.explain(usage(write=8000, tail=20), MODEL)
    assert "書き込み 8,000" in text and "1.25 倍" in text
    text = caching.explain(usage(read=8000, tail=20), MODEL)
    assert "読み出し 8,000" in text and "0.10 倍" in text
    text = caching.explain(usage(tail=3000), MODEL)
    assert f"{m.min_cacheable_tokens:,}" in text and "エラーにはならない" in text
    assert "読み出し + 書き込み" in caching.explain(usage(write=10, read=8000), MODEL)


def test_format_calls_sums_both_dollar_columns():
    calls = [usage(write=8000), usage(read=8000), usage(read=8000)]
    text = caching.format_calls(calls, MODEL, ["a", "b", "c"])
    total = sum(pricing.usage_cost(u, MODEL).total for u in calls)
    base = sum(caching.uncached_cost(u, MODEL).total for u in calls)
    last, caption = text.splitlines()[-2:]   # the total row, then the caption with the prices' model
    assert last.startswith("合計") and f"{total:.5f}" in last and f"{base:.5f}" in last and MODEL in caption
    assert len(text.splitlines()) == 2 + 3 + 2
    with pytest.raises(ValueError):
        caching.format_calls(calls, MODEL, ["only one label"])


# ---------------------------------------------------------------- request layout

def test_layout_lists_tools_system_messages_in_order_and_marks_the_breakpoint():
    docs = corpus.load()[:2]
    req = messages.question_request(docs, "質問です", model=MODEL)
    req["tools"] = [{"name": "lookup", "input_schema": {"type": "object"}}]
    lines = caching.layout(req).splitlines()
    assert lines[0].startswith("tools[0]") and lines[1].startswith("system")
    assert "cache_control（5m）" in lines[3] and lines[3].startswith("messages[0].content[1]")
    assert "区切りの後ろ" in lines[4] and "質問です" in lines[4]


def test_layout_says_when_there_is_no_breakpoint():
    req = messages.question_request(corpus.load()[:1], "q", cache_ttl=None)
    assert "区切り（cache_control）がありません" in caching.layout(req)


def test_layout_shows_1h_ttl_and_automatic_caching():
    req = messages.question_request(corpus.load()[:1], "q", cache_ttl="1h")
    assert "cache_control（1h）" in caching.layout(req)
    auto = {"model": MODEL, "messages": [{"role": "user", "content": "hello"}], "cache_control": {"type": "ephemeral"}}
    assert "cache_control（5m）" in caching.layout(auto).splitlines()[-1]


# ---------------------------------------------------------------- the cost article

def test_per_call_table_matches_the_cost_article():
    table = {row["k"]: (round(row[1.25], 3), round(row[2.0], 3)) for row in caching.per_call_table()}
    assert table == {1: (1.25, 2.0), 2: (0.675, 1.05), 3: (0.483, 0.733), 5: (0.33, 0.48),
                     10: (0.215, 0.29), 20: (0.158, 0.195)}


def test_total_costs_and_where_cache_meets_retrieval():
    t = caching.total_costs(1)
    assert math.isclose(t["full"], 1) and math.isclose(t["cache"], 1.25) and math.isclose(t["retrieval"], 0.37)
    assert math.isclose(caching.meeting_call(), 5.0)
    t5 = caching.total_costs(5)
    assert math.isclose(t5["cache"], t5["retrieval"])  # even at the 5th call
    t6 = caching.total_costs(6)
    assert t6["cache"] < t6["retrieval"]
    t4 = caching.total_costs(4)
    assert t4["cache"] > t4["retrieval"]


def test_meeting_call_is_infinite_when_retrieval_is_as_cheap_per_call_as_a_read():
    assert caching.meeting_call(rho=0.05, s=0.02) == math.inf
    assert caching.meeting_call(rho=0.9, E=2.0) < 1  # the cache is cheaper from the first call


@pytest.mark.parametrize("n", [0, -1, True, float("nan")])
def test_total_costs_refuses_bad_n(n):
    with pytest.raises(ValueError):
        caching.total_costs(n)


def test_plot_of_the_cost_article_draws_two_panels():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = cost_curves(n_max=8, k_max=10)
    left, right = fig.axes
    assert len(left.lines) == 3 and len(left.lines[0].get_xdata()) == 8
    assert [ln.get_label() for ln in right.lines][:1] == ["キャッシュ w = 1.25"]
    assert any("並ぶ" in t.get_text() for t in left.texts)
    plt.close(fig)
    with pytest.raises(ValueError):
        cost_curves(n_max=1)


# ---------------------------------------------------------------- the cache breakers, through the SDK

@pytest.fixture()
def client():
    return make_client(offline=True, sandbox=Sandbox(time_scale=0))


def _docs():
    return [d for d in corpus.load() if d.file in ("hr_kyuyo_kitei.txt", "hr_yukyu_2025.txt")]


def test_write_then_read(client):
    calls = [client.messages.create(**messages.question_request(_docs(), q, model=MODEL, max_tokens=50))
             for q in ("一つ目", "二つ目")]
    assert [usage_reader.call_kind(c.usage) for c in calls] == ["write", "read"]
    assert usage_reader.total_input(calls[0].usage) > 8000


def test_timestamp_in_system_never_reads_and_bills_about_125_percent(client):
    start = datetime(2026, 12, 1, 9, 0)
    calls = []
    for i in range(3):
        req = messages.question_request(_docs(), "質問", model=MODEL, max_tokens=50)
        req["system"] = f"現在日時: {start + timedelta(minutes=i):%H:%M}\n" + req["system"]
        calls.append(client.messages.create(**req))
    assert [usage_reader.call_kind(c.usage) for c in calls] == ["write"] * 3
    billed = sum(pricing.usage_cost(c.usage, MODEL).input for c in calls)
    plain = sum(caching.uncached_cost(c.usage, MODEL).input for c in calls)
    assert 1.24 < billed / plain < 1.25


def test_tool_key_order_misses_and_sort_keys_fixes_it(client):
    a = {"name": "t", "input_schema": {"type": "object", "properties": {"x": {"type": "string"}, "y": {"type": "integer"}}}}
    b = {"name": "t", "input_schema": {"type": "object", "properties": {"y": {"type": "integer"}, "x": {"type": "string"}}}}
    assert a == b and json.dumps(a) != json.dumps(b)

    def send(tool):
        req = dict(messages.question_request(_docs(), "質問", model=MODEL, max_tokens=50), tools=[tool])
        return usage_reader.call_kind(client.messages.create(**req).usage)

    assert [send(a), send(b)] == ["write", "write"]
    canon = [json.loads(json.dumps(t, sort_keys=True)) for t in (a, b)]
    assert [send(canon[0]), send(canon[1])] == ["write", "read"]


def test_model_switch_misses(client):
    req = messages.question_request(_docs(), "質問", model=MODEL, max_tokens=50)
    client.messages.create(**req)
    other = client.messages.create(**dict(req, model="claude-sonnet-5"))
    assert usage_reader.call_kind(other.usage) == "write"


def test_prefix_below_minimum_is_silently_not_cached(client):
    short = [d for d in corpus.load() if d.file == "hr_tsukin.txt"]
    req = messages.question_request(short, "質問", model=MODEL, max_tokens=50)
    assert usage_reader.total_input(client.messages.create(**req).usage) < pricing.get_model(MODEL).min_cacheable_tokens
    second = client.messages.create(**req)
    assert usage_reader.call_kind(second.usage) == "none"
