"""ctxlab.labs._agent_loop (lesson 03, section 8): placements, the agent session, the lab's clocks, dollars."""
from __future__ import annotations

import anthropic
import httpx2
import pytest

from ctxlab import corpus
from ctxlab.api import messages
from ctxlab.api.client import make_client
from ctxlab.costs import pricing
from ctxlab.labs import _agent_loop as al
from ctxlab.labs import prompt_caching
from ctxlab.sandbox import MAX_BREAKPOINTS, Sandbox

MODEL = "claude-haiku-4-5"
DOCS = [d for d in corpus.load() if d.file in ("hr_kyuyo_kitei.txt", "hr_yukyu_2025.txt")]
CALLS = [("hr_yukyu_2025.txt", k) for k in range(1, 11)]
TURNS = ["繰越は？", "条文を確認して", "消える日数は？"]


@pytest.fixture
def lab():
    return al.manual_clock(make_client(offline=True))


def test_single_request_places_the_breakpoints_as_named():
    auto = al.single_request(DOCS, "q", "auto", model=MODEL, system="s")
    explicit = al.single_request(DOCS, "q", "explicit", model=MODEL, system="s")
    both = al.single_request(DOCS, "q", "both", model=MODEL, system="s")
    marked = lambda r: [b for b in r["messages"][0]["content"] if "cache_control" in b]  # noqa: E731
    assert auto["cache_control"] == {"type": "ephemeral"} and marked(auto) == []
    assert "cache_control" not in explicit and marked(explicit) == [explicit["messages"][0]["content"][-2]]
    assert "cache_control" in both and len(marked(both)) == 1
    with pytest.raises(ValueError, match="placement"):
        al.single_request(DOCS, "q", "rolling", model=MODEL, system="s")


def test_each_run_has_its_own_manual_clock_and_starts_cold(lab):
    a = al.run_single(lab, DOCS, ["q1", "q2"], "explicit", model=MODEL, system="s", gap_s=60)
    b = al.run_single(lab, DOCS, ["q1", "q2"], "auto", model=MODEL, system="s", gap_s=60)
    assert [c.at_s for c in a] == [c.at_s for c in b] == [0, 60]
    assert a[0].usage.cache_read_input_tokens == 0 and a[1].usage.cache_read_input_tokens > 0
    again = al.run_single(al.manual_clock(make_client(offline=True)), DOCS, ["q1"], "explicit", model=MODEL, system="s")
    assert again[0].usage.cache_read_input_tokens == 0  # a new lab: a new marker, nothing warm


def test_two_conversations_of_one_application_share_the_documents_entry(lab):
    first = al.run_conversation(lab, DOCS, ["q1", "q2"], "both", model=MODEL, system="s", tag="app")
    second = al.run_conversation(lab, DOCS, ["r1"], "both", model=MODEL, system="s", tag="app", lead_s=45)
    assert second[0].at_s == first[-1].at_s + 45
    assert second[0].usage.cache_read_input_tokens > 0
    other = al.run_conversation(lab, DOCS, ["r1"], "both", model=MODEL, system="s", tag="other-app")
    assert other[0].usage.cache_read_input_tokens == 0


def test_rolling_keeps_the_read_that_one_trailing_breakpoint_loses(lab):
    runs = {s: al.run_agent(lab, DOCS, TURNS, CALLS, s, model=MODEL, system="s") for s in al.STRATEGIES}
    tool_step = {s: calls[2].usage for s, calls in runs.items()}
    assert tool_step["auto"].cache_read_input_tokens == tool_step["last_two"].cache_read_input_tokens == 0
    assert tool_step["rolling"].cache_read_input_tokens > 0
    assert al.run_usd(runs["rolling"], MODEL) < al.run_usd(runs["auto"], MODEL)
    parallel = al.run_agent(lab, DOCS, TURNS, CALLS, "auto", model=MODEL, system="s", narrate=False)
    assert all(c.usage.cache_read_input_tokens > 0 for c in parallel[1:])
    with pytest.raises(ValueError, match="3 user turns"):
        al.run_agent(lab, DOCS, TURNS[:2], CALLS, "auto", model=MODEL, system="s")


def test_place_breakpoints_stays_within_the_budget_and_leaves_the_request_alone():
    req = {"model": MODEL, "max_tokens": 5, "messages": [{"role": "user", "content": "a"},
                                                         {"role": "assistant", "content": "b"},
                                                         {"role": "user", "content": "c"}]}
    rolled = al.place_breakpoints(req, "rolling", 1)
    assert rolled["messages"][0]["content"][-1]["cache_control"] and rolled["cache_control"]
    assert req["messages"][0]["content"] == "a"  # a copy
    two = al.place_breakpoints(req, "last_two", None)
    assert [isinstance(m["content"], list) for m in two["messages"]] == [False, True, True]
    full = dict(req, messages=[{"role": "user", "content": [{"type": "text", "text": f"{k}",
                                                              "cache_control": {"type": "ephemeral"}}
                                                             for k in range(MAX_BREAKPOINTS)]}])
    with pytest.raises(ValueError, match="limit of 4"):
        al.place_breakpoints(full, "auto", None)
    with pytest.raises(ValueError, match="strategy"):
        al.place_breakpoints(req, "everything", None)


def test_dollars_and_the_month():
    u = {"input_tokens": 10, "cache_creation_input_tokens": 1000, "cache_read_input_tokens": 0, "output_tokens": 5}
    one = pricing.usage_cost(u, MODEL).total
    assert al.run_usd([u, u], MODEL) == pytest.approx(2 * one)
    assert al.month_usd([u], MODEL, sessions_per_day=200, days=20) == pytest.approx(4000 * one)
    with pytest.raises(ValueError):
        al.month_usd([u], MODEL, sessions_per_day=-1, days=20)
    rows = al.compare_placements({"auto": [u, u], "explicit": [u]}, MODEL)
    assert [r["placement"] for r in rows] == ["explicit", "auto"] and rows[1]["written"] == 2000
    text = al.format_comparison({"auto": [u]}, MODEL, "題")
    assert text.splitlines()[0] == "題" and MODEL in text.splitlines()[-1]
    assert al.estimate_usd(2, 1000, MODEL, 100) == pytest.approx(
        2 * pricing.call_cost(MODEL, cache_write_5m_tokens=1000, output_tokens=100).total)


def test_online_the_lab_uses_the_client_it_is_given_and_only_records_the_gaps():
    sb = Sandbox(time_scale=0)  # stands in for the real API: a client the lab does not know as offline
    real = anthropic.Anthropic(api_key="sk-test", base_url="http://sandbox.local", max_retries=0,
                               http_client=httpx2.Client(transport=sb.transport()))
    lab = prompt_caching.manual_clock(real)
    assert not lab.manual and lab.client_for("x") is real and lab.sandbox("x") is None
    calls = al.run_single(lab, DOCS, ["q1", "q2"], "explicit", model=MODEL, system=messages.SYSTEM_PROMPT, gap_s=60)
    assert [c.at_s for c in calls] == [0, 60] and "実 API" in lab.source
    assert calls[1].usage.cache_read_input_tokens > 0  # sent seconds apart, within the TTL
