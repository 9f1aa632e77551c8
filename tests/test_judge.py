"""ctxlab.evaluation.judge: the model judge's request, its cached prefix, its parsing and budget, offline and online.

Online means the real SDK through the metered client to the local HTTP stand-in (tests/standin.py): the requests'
shape is checked as it arrived over HTTP. Offline the sandbox answers; its verdict is a simulation of the plumbing.
"""
from __future__ import annotations

import json
import types

import pytest

import ctxlab
from ctxlab import corpus
from ctxlab.api._ledger import LEDGER
from ctxlab.api.budget import BudgetExceeded
from ctxlab.api.client import make_client
from ctxlab.evaluation import Graded, judge, labelled
from standin import FAKE_KEY, StandIn

QUESTIONS = corpus.questions()


def test_the_request_carries_the_rubric_in_a_cached_prefix_and_asks_for_a_schema():
    q = QUESTIONS[0]
    r = judge.request(q, "毎月25日です。")
    assert set(r) == {"model", "max_tokens", "system", "messages", "output_config"}  # no temperature
    instructions, rubric = r["system"]
    assert "cache_control" not in instructions and rubric["cache_control"] == {"type": "ephemeral"}
    for x in QUESTIONS:                                   # every question's rubric is in the one shared prefix
        assert f"## {x.id}（{x.category}）" in rubric["text"] and x.answer in rubric["text"]
        assert all(f in rubric["text"] for f in x.key_facts + x.stale_facts)
    assert rubric["text"].count("記載がないと答えるのが正解") == sum(x.category == "unanswerable" for x in QUESTIONS)
    user = r["messages"][0]["content"][0]["text"]
    assert f"質問ID: {q.id}" in user and "<answer>\n毎月25日です。\n</answer>" in user
    schema = r["output_config"]["format"]
    assert schema["type"] == "json_schema" and schema["schema"]["properties"]["level"]["enum"] == list(judge.LEVELS)
    # the prefix is the same for every answer, so it is cached once per run
    other = judge.request(QUESTIONS[5], "別の回答")
    assert other["system"] == r["system"]
    with pytest.raises(TypeError):
        judge.request(q, None)


def _message(text):
    return types.SimpleNamespace(content=[types.SimpleNamespace(type="text", text=text)])


def test_parse_accepts_the_schema_and_refuses_anything_else():
    assert judge.parse(_message('{"level": "partial", "reason": "一部だけ"}')) == judge.Verdict(level="partial",
                                                                                               reason="一部だけ")
    for bad in ("正しいです", '{"level": "right", "reason": "x"}', '{"level": "correct"}',
                '{"level": "correct", "reason": "x", "score": 1}'):
        with pytest.raises(judge.JudgeError, match="JSON スキーマどおりではありません"):
            judge.parse(_message(bad))


def test_the_estimate_writes_the_prefix_once_and_reads_it_after():
    reqs = [judge.request(q, q.answer) for q in QUESTIONS[:3]]
    one = judge.estimate_cost(reqs[:1])
    three = judge.estimate_cost(reqs)
    assert 0 < three - one < 2 * one     # the 2nd and 3rd read the prefix at the cache-read rate


def test_offline_the_sandbox_stands_in_and_the_records_say_so():
    client = ctxlab.make_client(sandbox=ctxlab.Sandbox(time_scale=0))
    run = [Graded(q, "m", q.answer, "correct") for q in QUESTIONS[:4]]
    judged = judge.regrade(run, client, progress=False)
    assert [g.grader for g in judged] == [judge.SANDBOX_JUDGE] * 4
    assert all(g.level in judge.LEVELS for g in judged)
    assert "模擬" in judge.GRADER_JA[judge.SANDBOX_JUDGE] and "判定ではない" in judge.GRADER_JA[judge.SANDBOX_JUDGE]
    rows = labelled.load()[:6]
    m = judge.measure_on_labels(client, rows, progress=False)
    assert m.measured.name == judge.SANDBOX_JUDGE and m.measured.agreement.n == 6 and m.cost_usd > 0


@pytest.fixture
def online(monkeypatch):
    with StandIn() as s:
        monkeypatch.delenv("CTXLAB_OFFLINE", raising=False)
        monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
        monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", s.url)
        monkeypatch.setenv("CTXLAB_BUDGET_USD", "1.00")
        LEDGER.reset()
        client = make_client()
        assert not ctxlab.is_offline(client)
        yield s, client
        LEDGER.reset()


def test_online_the_judge_sends_the_documented_shape_and_reads_its_cache(online):
    s, client = online
    items = [(q.answer, q) for q in QUESTIONS[:3]]
    verdicts = judge.judge(items, client, progress=False)
    assert len(verdicts) == 3 and all(v.level in judge.LEVELS for v in verdicts)
    sent = [r for r in s.received if r.path == "/v1/messages"]
    assert len(sent) == 3 and all(r.status == 200 for r in sent)
    for r, (answer, q) in zip(sent, items):
        assert r.body == json.loads(json.dumps(judge.request(q, answer)))   # exactly the request, over HTTP
        assert "temperature" not in r.body and r.model == judge.JUDGE_MODEL
    log = s.sandbox.log
    usage = [e.usage for e in log if e.endpoint == "messages"]
    assert usage[0]["cache_creation_input_tokens"] > 0 and usage[0]["cache_read_input_tokens"] == 0
    assert all(u["cache_read_input_tokens"] == usage[0]["cache_creation_input_tokens"] for u in usage[1:])
    assert sum(v.cost_usd for v in verdicts) == pytest.approx(s.billed_usd())
    assert judge.grader_name(client).startswith("judge:")


def test_online_a_judge_run_over_the_budget_sends_nothing(online, monkeypatch):
    s, client = online
    from ctxlab.api import budget
    budget.set_budget(0.001)
    with pytest.raises(BudgetExceeded):
        judge.judge([(q.answer, q) for q in QUESTIONS], client, progress=False)
    assert s.messages() == 0
