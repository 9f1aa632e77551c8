"""The budget holds on requests: online clients meter what they send, against one ledger per kernel.

The "API" is a local stand-in (tests/standin.py): the offline sandbox served over real HTTP on
127.0.0.1, which counts what it receives and can answer 429/529 first. The key is a fake one.
"""
from __future__ import annotations

import json
import threading
import traceback
from pathlib import Path

import anthropic
import httpx2
import pytest

import ctxlab
from ctxlab.api import budget
from ctxlab.api._ledger import LEDGER, Ledger
from ctxlab.api._metered import MeteredHttpClient, request_estimate, surface_refusal
from ctxlab.api.client import make_client
from ctxlab.costs import pricing
from ctxlab.errors import BudgetExceeded
from ctxlab.sandbox import Sandbox
from standin import FAKE_KEY, StandIn, online_env, run_online

ROOT = Path(__file__).resolve().parent.parent
MODEL = "claude-haiku-4-5"
QUESTION = "有給休暇は何日まで繰り越せますか？" * 40


@pytest.fixture
def stand_in():
    with StandIn() as s:
        yield s


@pytest.fixture(autouse=True)
def fresh_ledger():
    LEDGER.reset()
    yield
    LEDGER.reset()


@pytest.fixture
def online(stand_in, monkeypatch):
    """make_client() as a learner with a key gets it, pointed at the stand-in; the default budget."""
    monkeypatch.delenv("CTXLAB_OFFLINE", raising=False)
    monkeypatch.delenv("CTXLAB_BUDGET_USD", raising=False)
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", stand_in.url)
    client = make_client()
    assert not ctxlab.is_offline(client)
    return client


def ask(max_tokens=200, question=QUESTION, **extra):
    return dict(model=MODEL, max_tokens=max_tokens, messages=[{"role": "user", "content": question}], **extra)


def cost(resp) -> float:
    return pricing.usage_cost(resp.usage, MODEL).total


# ---------------------------------------------------------------- the client


def test_make_client_online_is_metered_and_keeps_the_sdk_defaults(online, stand_in):
    assert online.max_retries == anthropic.DEFAULT_MAX_RETRIES
    assert online.timeout == anthropic.DEFAULT_TIMEOUT
    resp = online.messages.create(**ask())
    assert stand_in.messages() == 1
    assert budget.spent_usd() == pytest.approx(cost(resp)) and cost(resp) > 0
    s = budget.state()
    assert (s.requests, s.refused, s.stopped, s.reserved_usd) == (1, 0, False, 0)


def test_a_sequence_stops_at_the_request_that_would_exceed_the_budget_and_sends_nothing_after(online, stand_in):
    assert budget.budget_usd() == budget.DEFAULT_BUDGET_USD == 0.05
    sent, refused_at = [], None
    for i in range(200):
        before = budget.spent_usd()
        estimate = request_estimate(ask())
        try:
            sent.append(online.messages.create(**ask()))
        except BudgetExceeded as e:
            refused_at, message = i, str(e)
            assert before + estimate > 0.05, "refused although it fitted"
            break
        assert before + estimate <= 0.05, "sent although its estimate did not fit"
    assert refused_at is not None and refused_at >= 2, "the default budget should allow a few requests"
    assert stand_in.messages() == len(sent) == refused_at
    # after the refusal nothing is sent, not even a request that would fit
    for small in (ask(max_tokens=1, question="こんにちは"), ask()):
        with pytest.raises(BudgetExceeded, match="予算を上げるまで"):
            online.messages.create(**small)
    with pytest.raises(BudgetExceeded):
        with online.messages.stream(**ask(max_tokens=1, question="短い")) as s:
            s.get_final_message()
    assert stand_in.messages() == len(sent)
    assert budget.spent_usd() == pytest.approx(sum(map(cost, sent))) and budget.spent_usd() <= 0.05
    assert budget.state().refused == 4
    # count_tokens is free: it goes through and records nothing
    n = online.messages.count_tokens(model=MODEL, messages=[{"role": "user", "content": "こんにちは"}])
    assert n.input_tokens > 0 and budget.spent_usd() == pytest.approx(sum(map(cost, sent)))
    # the message says what was wrong and how to raise the budget
    for text in ("$0.05", "CTXLAB_BUDGET_USD", "budget.set_budget(", "budget.report()"):
        assert text in message, text


def test_raising_the_budget_reopens_the_kernel(online, stand_in, capsys):
    budget.set_budget(0.0001)
    with pytest.raises(BudgetExceeded):
        online.messages.create(**ask())
    assert stand_in.messages() == 0
    budget.set_budget(1.0)
    assert "予算 $1.00" in capsys.readouterr().out
    online.messages.create(**ask())
    assert stand_in.messages() == 1 and not budget.state().stopped


def test_the_budget_comes_from_the_environment(online, stand_in, monkeypatch):
    monkeypatch.setenv("CTXLAB_BUDGET_USD", "0")
    with pytest.raises(BudgetExceeded, match=r"予算 \$0\.0000"):
        online.messages.create(**ask(max_tokens=1))
    assert stand_in.messages() == 0
    monkeypatch.setenv("CTXLAB_BUDGET_USD", "lots")
    with pytest.raises(BudgetExceeded, match="CTXLAB_BUDGET_USD"):
        budget.budget_usd()


def test_streaming_requests_are_metered_with_their_actual_usage(online, stand_in):
    with online.messages.stream(**ask()) as s:
        first = s.get_final_message()
    events = list(online.messages.create(**ask(question="給与の支払日はいつですか？" * 30), stream=True))
    assert [e.type for e in events][0] == "message_start" and events[-1].type == "message_stop"
    usage = {**events[0].message.usage.model_dump(), **events[-2].usage.model_dump(exclude_none=True)}
    plain = online.messages.create(**ask(question="時間単位の年休は取れますか？" * 30))
    assert stand_in.messages() == 3
    expected = cost(first) + pricing.usage_cost(usage, MODEL).total + cost(plain)
    assert budget.spent_usd() == pytest.approx(expected)
    assert budget.spent_usd() == pytest.approx(stand_in.billed_usd())
    assert first.content[0].text.startswith(ctxlab.sandbox.ANSWER_MARKER)


def test_cached_requests_are_charged_their_write_and_read_prices(online, stand_in):
    budget.set_budget(1.0)
    doc = "第1条 年次有給休暇は、翌年度に限り繰り越すことができる。" * 300
    req = ask(system=[{"type": "text", "text": doc, "cache_control": {"type": "ephemeral"}}])
    write, read = online.messages.create(**req), online.messages.create(**req)
    assert write.usage.cache_creation_input_tokens > 0 and read.usage.cache_read_input_tokens > 0
    assert budget.spent_usd() == pytest.approx(cost(write) + cost(read))
    assert request_estimate(req) > cost(write)  # the guard's estimate is the worst case
    # a streamed 1-hour write: only message_start says the write is a 1-hour one (priced 2x, not 1.25x)
    hour = ask(system=[{"type": "text", "text": doc + "（別版）", "cache_control": {"type": "ephemeral", "ttl": "1h"}}])
    before = budget.spent_usd()
    with online.messages.stream(**hour) as s:
        streamed = s.get_final_message()
    assert streamed.usage.cache_creation.ephemeral_1h_input_tokens > 0
    assert budget.spent_usd() - before == pytest.approx(cost(streamed))
    assert budget.spent_usd() == pytest.approx(stand_in.billed_usd())


def test_a_retried_request_is_charged_once(online, stand_in):
    stand_in.fail = [429, 529]
    resp = online.messages.create(**ask())
    assert stand_in.messages() == 3  # two errors, then the answer
    assert budget.spent_usd() == pytest.approx(cost(resp))
    assert budget.state().reserved_usd == 0 and budget.state().requests == 3


def test_retries_that_run_out_cost_nothing_and_say_what_happened(online, stand_in):
    stand_in.fail = [529, 529, 529]
    with pytest.raises(anthropic.APIStatusError) as info:
        online.messages.create(**ask())
    assert info.value.status_code == 529 and "stand-in 529" in str(info.value)
    assert isinstance(info.value, anthropic.OverloadedError), "the SDK's own error class is kept"
    for text in ("529", "再試行（最大 2 回）", "料金はかかっていません", "待ってから", "max_retries=5"):
        assert text in str(info.value), text
    assert FAKE_KEY not in "".join(traceback.format_exception(info.value))
    assert not isinstance(info.value, BudgetExceeded)
    assert budget.spent_usd() == 0 and budget.state().reserved_usd == 0 and not budget.state().stopped


def test_no_key_text_in_any_refusal(online, stand_in):
    online.messages.create(**ask())
    budget.set_budget(budget.spent_usd())
    errors = []
    for _ in range(2):  # the first refusal, then the stopped kernel's
        with pytest.raises(BudgetExceeded) as info:
            online.messages.create(**ask())
        errors.append(info.value)
    budget.set_budget(0)
    with pytest.raises(BudgetExceeded) as info:
        budget.check(0.01, online, "演習")
    errors.append(info.value)
    for e in errors:
        shown = "".join(traceback.format_exception(e)) + repr(e.args)
        assert FAKE_KEY not in shown and FAKE_KEY[:12] not in shown
        assert e.__cause__ is None and (e.__suppress_context__ or e.__context__ is None), \
            "a refusal should not chain the SDK's APIConnectionError"


def test_the_budget_holds_across_threads(online, stand_in):
    budget.set_budget(5 * request_estimate(ask()) + 1e-9)
    results = []

    def send():
        try:
            online.messages.create(**ask())
            results.append("sent")
        except BudgetExceeded:
            results.append("refused")

    threads = [threading.Thread(target=send) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    s = budget.state()
    assert results.count("sent") == stand_in.messages() == s.requests >= 5
    assert results.count("refused") == s.refused == 12 - s.requests
    assert s.spent_usd <= s.budget_usd and s.reserved_usd == pytest.approx(0)


# ---------------------------------------------------------------- check, offline


def test_check_refuses_only_what_does_not_fit_and_records_nothing(online, stand_in, capsys):
    budget.check(0.04, online, "実演")
    assert "見積もり $0.0400" in capsys.readouterr().out
    with pytest.raises(BudgetExceeded, match="CTXLAB_BUDGET_USD"):
        budget.check(0.06, online, "大きな実演")
    assert budget.spent_usd() == 0 and not budget.state().stopped  # the requests are charged, not the estimate
    online.messages.create(**ask())
    assert stand_in.messages() == 1


def test_offline_clients_are_never_metered_or_refused(monkeypatch, capsys):
    monkeypatch.setenv("CTXLAB_BUDGET_USD", "0")
    sb = Sandbox(time_scale=0)
    client = make_client(offline=True, sandbox=sb)
    for _ in range(3):
        client.messages.create(**ask())
    with client.messages.stream(**ask()) as s:
        s.get_final_message()
    budget.check(10.0, client, "大きな実演")
    assert "[sandbox]" in capsys.readouterr().out
    assert len(sb.log) == 4 and budget.spent_usd() == 0 and budget.state().requests == 0


# ---------------------------------------------------------------- the HTTP layer itself


def _sse_in_odd_chunks(sandbox: Sandbox, request: httpx2.Request) -> httpx2.Response:
    resp = sandbox.handle(request)
    data = resp.read()

    class Chunks(httpx2.SyncByteStream):
        def __iter__(self):
            for i in range(0, len(data), 7):
                yield data[i:i + 7]

    return httpx2.Response(resp.status_code, headers=resp.headers, stream=Chunks())


def test_a_stream_cut_before_its_final_usage_is_charged_the_worst_case():
    sb = Sandbox(time_scale=0)

    def cut(request):
        data = sb.handle(request).read()
        return httpx2.Response(200, headers={"content-type": "text/event-stream"},
                               content=data.split(b"event: message_delta")[0])

    ledger = Ledger()
    ledger.set_budget(1.0)
    client = anthropic.Anthropic(api_key=FAKE_KEY, base_url="http://stand-in.test", max_retries=0,
                                 http_client=MeteredHttpClient(ledger=ledger, transport=httpx2.MockTransport(cut)))
    events = list(client.messages.create(**ask(), stream=True))
    assert events[0].type == "message_start" and "message_delta" not in {e.type for e in events}
    assert ledger.state().spent_usd == pytest.approx(request_estimate(ask()))
    assert ledger.state().reserved_usd == 0


def test_metering_a_stream_split_anywhere_leaves_it_intact():
    sb = Sandbox(time_scale=0)
    ledger = Ledger()
    ledger.set_budget(1.0)
    http = MeteredHttpClient(ledger=ledger, transport=httpx2.MockTransport(lambda r: _sse_in_odd_chunks(sb, r)))
    client = anthropic.Anthropic(api_key=FAKE_KEY, base_url="http://stand-in.test", http_client=http,
                                 middleware=[surface_refusal], max_retries=0)
    with client.messages.stream(**ask()) as s:
        text = "".join(s.text_stream)
        final = s.get_final_message()
    assert text == final.content[0].text and text.startswith(ctxlab.sandbox.ANSWER_MARKER)
    assert ledger.state().spent_usd == pytest.approx(cost(final)) == pytest.approx(sb.log[-1].cost_usd)
    assert LEDGER.state().requests == 0  # a ledger of its own: the kernel's is untouched


# ---------------------------------------------------------------- lessons 03 and 07, online, top to bottom


def _error_names(cell) -> list[str]:
    return [o.get("ename", "") for o in cell.get("outputs", []) if o.get("output_type") == "error"]


@pytest.mark.slow
@pytest.mark.parametrize("lesson, sends_some", [
    ("03_prompt_caching", True),  # Haiku: a few requests fit in $0.05
    ("07_citations", False),      # Opus 5 over a 26k-token document: the first request does not fit
])
def test_lesson_online_sends_nothing_past_the_budget(stand_in, lesson, sends_some):
    path = ROOT / "solutions" / lesson / f"{lesson}.ipynb"
    run = run_online(path, online_env(stand_in, 0.05), stand_in=stand_in, allow_errors=True)
    nb, state = run.notebook, run.ledger
    assert "モード: 実 API" in _shown(nb.cells[[c.cell_type for c in nb.cells].index("code")].outputs[0]), \
        "the lesson should have run online"
    refusing = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and "BudgetExceeded" in _error_names(c)
                and "を送りませんでした" in "".join(o.get("evalue", "") for o in c.outputs)]
    assert refusing, "with $0.05 the lesson's requests should reach the budget"
    first = refusing[0]
    assert run.received_after[-1] == run.received_after[first], "requests were received after the first refusal"
    assert state["stopped"] and state["refused"] >= len(refusing)
    assert stand_in.messages() == state["requests"]
    assert (state["requests"] > 0) == sends_some
    assert state["spent_usd"] <= 0.05
    assert stand_in.billed_usd() == pytest.approx(state["spent_usd"]) and stand_in.billed_usd() <= 0.05
    saved = json.dumps(nb.dict(), ensure_ascii=False)
    assert FAKE_KEY not in saved


def _shown(output) -> str:
    """What an output shows as text: a stream's text or a display's text/plain (the lesson's banner)."""
    return output.get("text", "") or output.get("data", {}).get("text/plain", "")
