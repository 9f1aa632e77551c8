"""The offline sandbox, exercised only through the real anthropic SDK (max_retries=0)."""
from __future__ import annotations

import builtins
import json

import anthropic
import pytest

from ctxlab.costs import pricing
from ctxlab import estimate
from ctxlab.api import tokens
from ctxlab.api.client import make_client
from ctxlab.sandbox import ANSWER_MARKER, Sandbox

OPUS = "claude-opus-5"
SONNET = "claude-sonnet-5"
HAIKU = "claude-haiku-4-5"
QUESTION = "有給休暇の申請は何日前までに行いますか？"

TOPICS = ["有給休暇", "出張旅費", "情報セキュリティ", "文書管理", "育児休業", "通勤手当", "時間外労働", "個人情報"]


def make_doc(n_chars: int, seed: int = 0) -> str:
    """A deterministic Japanese regulation-like text of exactly n_chars characters."""
    parts, i, size = [], 0, 0
    while size < n_chars:
        topic = TOPICS[(i + seed) % len(TOPICS)]
        s = f"第{i + 1}条　{topic}に関する手続は、所属長の承認を得て{(i * 7 + seed) % 28 + 2}日以内に行う。\n"
        parts.append(s)
        size += len(s)
        i += 1
    return "".join(parts)[:n_chars]


def doc_block(text: str, title: str | None = None, ttl: str | None = None, citations: bool | None = None) -> dict:
    block: dict = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": text}}
    if title is not None:
        block["title"] = title
    if citations is not None:
        block["citations"] = {"enabled": citations}
    if ttl is not None:
        block["cache_control"] = {"type": "ephemeral", "ttl": ttl}
    return block


def question(text: str = QUESTION) -> dict:
    return {"type": "text", "text": text}


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    monkeypatch.setenv("CTXLAB_TIME_SCALE", "0")
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    monkeypatch.delenv("CTXLAB_OFFLINE", raising=False)


@pytest.fixture
def sb() -> Sandbox:
    return Sandbox(realtime=False)


@pytest.fixture
def client(sb):
    c = make_client(offline=True, sandbox=sb)
    assert c.max_retries == 0
    return c


def ask(client, content, model=OPUS, max_tokens=400, **kw):
    return client.messages.create(
        model=model, max_tokens=max_tokens, messages=[{"role": "user", "content": content}], **kw
    )


def prefix_tokens(*blocks) -> int:
    """Tokens of a one-message prefix made of ``blocks`` (the documented estimator)."""
    return estimate.REQUEST_OVERHEAD + estimate.PER_MESSAGE_OVERHEAD + sum(estimate.estimate_blocks(blocks))


# ---------------------------------------------------------------- prompt caching


def test_two_identical_calls_write_then_read_exact_counts(client):
    content = [doc_block(make_doc(6000), ttl="5m"), question()]
    cached = prefix_tokens(content[0])
    after = estimate.estimate_blocks([content[1]])[0]

    first = ask(client, content)
    assert first.usage.cache_creation_input_tokens == cached
    assert first.usage.cache_creation.ephemeral_5m_input_tokens == cached
    assert first.usage.cache_creation.ephemeral_1h_input_tokens == 0
    assert first.usage.cache_read_input_tokens == 0
    assert first.usage.input_tokens == after

    second = ask(client, content)
    assert second.usage.cache_read_input_tokens == cached
    assert second.usage.cache_creation_input_tokens == 0
    assert second.usage.cache_creation.ephemeral_5m_input_tokens == 0
    assert second.usage.input_tokens == after

    counted = client.messages.count_tokens(model=OPUS, messages=[{"role": "user", "content": content}])
    for u in (first.usage, second.usage):
        assert u.cache_read_input_tokens + u.cache_creation_input_tokens + u.input_tokens == counted.input_tokens


def test_timestamp_before_the_breakpoint_never_reads(client):
    doc = make_doc(6000)
    for minute in range(3):
        system = [
            {"type": "text", "text": f"現在時刻: 2026-11-30 10:{minute:02d}"},
            {"type": "text", "text": doc, "cache_control": {"type": "ephemeral"}},
        ]
        r = client.messages.create(model=OPUS, max_tokens=200, system=system,
                                   messages=[{"role": "user", "content": QUESTION}])
        assert r.usage.cache_read_input_tokens == 0
        assert r.usage.cache_creation_input_tokens > 0


def test_timestamp_after_the_breakpoint_reads(client):
    doc = make_doc(6000)
    system = [{"type": "text", "text": doc, "cache_control": {"type": "ephemeral"}}]
    reads = []
    for minute in range(3):
        r = client.messages.create(
            model=OPUS, max_tokens=200, system=system,
            messages=[{"role": "user", "content": f"現在時刻: 10:{minute:02d}。{QUESTION}"}],
        )
        reads.append(r.usage.cache_read_input_tokens)
    assert reads[0] == 0 and reads[1] == reads[2] > 0


def test_key_order_of_a_block_is_part_of_the_prefix(client):
    doc = make_doc(6000)
    a = {"type": "text", "text": doc, "cache_control": {"type": "ephemeral"}}
    b = {"text": doc, "type": "text", "cache_control": {"type": "ephemeral"}}  # same content, other key order
    msgs = [{"role": "user", "content": QUESTION}]
    client.messages.create(model=OPUS, max_tokens=100, system=[a], messages=msgs)
    same = client.messages.create(model=OPUS, max_tokens=100, system=[dict(a)], messages=msgs)
    other = client.messages.create(model=OPUS, max_tokens=100, system=[b], messages=msgs)
    assert same.usage.cache_read_input_tokens > 0
    assert other.usage.cache_read_input_tokens == 0
    assert other.usage.cache_creation_input_tokens > 0


def test_tool_choice_invalidates_messages_but_not_system(client):
    tools = [{"name": "lookup", "description": "規程を探す", "input_schema": {"type": "object", "properties": {}}}]
    system = [{"type": "text", "text": make_doc(6000, seed=5), "cache_control": {"type": "ephemeral"}}]
    messages = [{"role": "user", "content": [doc_block(make_doc(3000, seed=6), ttl="5m"), question()]}]
    first = client.messages.create(model=OPUS, max_tokens=100, tools=tools, system=system, messages=messages)
    changed = client.messages.create(model=OPUS, max_tokens=100, tools=tools, system=system, messages=messages,
                                     tool_choice={"type": "any"})
    system_prefix = estimate.estimate_request({"tools": tools, "system": system})  # no messages
    assert first.usage.cache_read_input_tokens == 0
    assert changed.usage.cache_read_input_tokens == system_prefix  # tools + system still hit
    assert changed.usage.cache_creation_input_tokens == first.usage.cache_creation_input_tokens - system_prefix


def test_below_the_minimum_nothing_is_cached_and_no_error(client):
    minimum = pricing.get_model(OPUS).min_cacheable_tokens
    content = [doc_block(make_doc(minimum // 2), ttl="5m"), question()]
    for _ in range(2):
        r = ask(client, content)
        assert r.usage.cache_creation_input_tokens == 0
        assert r.usage.cache_read_input_tokens == 0
        assert r.usage.input_tokens == estimate.estimate_request({"messages": [{"role": "user", "content": content}]})


def test_minimum_is_per_model(client):
    opus_min = pricing.get_model(OPUS).min_cacheable_tokens
    sonnet_min = pricing.get_model(SONNET).min_cacheable_tokens
    assert opus_min < sonnet_min   # 512 and 1,024 in the docs table
    content = [doc_block(make_doc((sonnet_min + opus_min) // 2), ttl="5m"), question()]
    assert ask(client, content, model=SONNET).usage.cache_creation_input_tokens == 0
    assert ask(client, content, model=OPUS).usage.cache_creation_input_tokens > 0


def test_new_models_are_accepted_and_an_unconfirmed_minimum_is_the_stated_assumption(client):
    assumed, confirmed = pricing.min_cacheable_tokens("claude-opus-5-5")
    assert not confirmed
    for model in ("claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5", "claude-fable-5-2"):
        below = [doc_block(make_doc(pricing.min_cacheable_tokens(model)[0] // 2), ttl="5m"), question()]
        above = [doc_block(make_doc(pricing.min_cacheable_tokens(model)[0] * 2), ttl="5m"), question()]
        assert ask(client, below, model=model).usage.cache_creation_input_tokens == 0
        assert ask(client, above, model=model).usage.cache_creation_input_tokens > 0


def test_model_switch_misses_and_caches_are_per_model(client):
    content = [doc_block(make_doc(6000), ttl="5m"), question()]
    assert ask(client, content, model=OPUS).usage.cache_creation_input_tokens > 0
    switched = ask(client, content, model=SONNET)
    assert switched.usage.cache_read_input_tokens == 0
    assert switched.usage.cache_creation_input_tokens > 0
    assert ask(client, content, model=OPUS).usage.cache_read_input_tokens > 0


def test_five_breakpoints_are_refused_four_are_fine(client):
    doc = make_doc(2000)
    system = [{"type": "text", "text": f"{k}: {doc}", "cache_control": {"type": "ephemeral"}} for k in range(5)]
    with pytest.raises(anthropic.BadRequestError) as e:
        client.messages.create(model=OPUS, max_tokens=100, system=system,
                               messages=[{"role": "user", "content": QUESTION}])
    assert e.value.status_code == 400
    assert e.value.body["error"]["type"] == "invalid_request_error"
    assert e.value.body["error"]["message"] == "A maximum of 4 blocks with cache_control may be provided. Found 5."
    ok = client.messages.create(model=OPUS, max_tokens=100, system=system[:4],
                                messages=[{"role": "user", "content": QUESTION}])
    assert ok.usage.cache_creation_input_tokens > 0


def test_ttl_expiry_and_refresh_on_read(sb, client):
    content = [doc_block(make_doc(6000), ttl="5m"), question()]
    assert ask(client, content).usage.cache_creation_input_tokens > 0
    sb.advance(240)
    assert ask(client, content).usage.cache_read_input_tokens > 0  # read at 4 min refreshes
    sb.advance(240)  # 8 min after the write: alive only because the read refreshed it
    assert ask(client, content).usage.cache_read_input_tokens > 0
    sb.advance(301)  # 5 min and 1 s without a read
    expired = ask(client, content)
    assert expired.usage.cache_read_input_tokens == 0
    assert expired.usage.cache_creation_input_tokens > 0


def test_one_hour_entry_outlives_five_minute_entry(sb, client):
    five = [doc_block(make_doc(6000, seed=1), ttl="5m"), question()]
    hour = [doc_block(make_doc(6000, seed=2), ttl="1h"), question()]
    w5 = ask(client, five).usage
    w1 = ask(client, hour).usage
    assert w5.cache_creation.ephemeral_5m_input_tokens > 0 and w5.cache_creation.ephemeral_1h_input_tokens == 0
    assert w1.cache_creation.ephemeral_1h_input_tokens > 0 and w1.cache_creation.ephemeral_5m_input_tokens == 0
    sb.advance(10 * 60)
    assert ask(client, five).usage.cache_read_input_tokens == 0
    assert ask(client, hour).usage.cache_read_input_tokens > 0
    sb.advance(3601)
    assert ask(client, hour).usage.cache_read_input_tokens == 0


def test_mixed_ttls_split_the_creation_and_1h_must_come_first(client):
    sys_text = make_doc(5000, seed=3)
    doc = doc_block(make_doc(3000, seed=4), ttl="5m")
    system = [{"type": "text", "text": sys_text, "cache_control": {"type": "ephemeral", "ttl": "1h"}}]
    r = client.messages.create(model=OPUS, max_tokens=100, system=system,
                               messages=[{"role": "user", "content": [doc, question()]}])
    system_part = estimate.REQUEST_OVERHEAD + estimate.estimate_blocks(system)[0]
    doc_part = estimate.PER_MESSAGE_OVERHEAD + estimate.estimate_blocks([doc])[0]
    assert r.usage.cache_creation.ephemeral_1h_input_tokens == system_part
    assert r.usage.cache_creation.ephemeral_5m_input_tokens == doc_part
    assert r.usage.cache_creation_input_tokens == system_part + doc_part

    wrong = [{"type": "text", "text": sys_text, "cache_control": {"type": "ephemeral", "ttl": "5m"}}]
    with pytest.raises(anthropic.BadRequestError) as e:
        client.messages.create(model=OPUS, max_tokens=100, system=wrong,
                               messages=[{"role": "user", "content": [doc_block(sys_text, ttl="1h"), question()]}])
    assert "ttl='1h'" in e.value.body["error"]["message"] and "must not come after" in e.value.body["error"]["message"]


def test_lookback_reaches_20_blocks_back_not_further():
    doc = doc_block(make_doc(6000), ttl="5m")
    doc_tokens = prefix_tokens(doc)

    def conversation(n_extra: int) -> list:
        plain = {k: v for k, v in doc.items() if k != "cache_control"}
        extra = [{"type": "text", "text": f"補足{k}。"} for k in range(n_extra)]
        extra[-1] = dict(extra[-1], cache_control={"type": "ephemeral"})
        return [plain, *extra, question()]

    for n_extra, expect_hit in ((15, True), (25, False)):
        sb = Sandbox(realtime=False)
        c = make_client(offline=True, sandbox=sb)
        ask(c, [doc, question()])  # writes the entry at the document
        r = ask(c, conversation(n_extra))
        assert (r.usage.cache_read_input_tokens == doc_tokens) is expect_hit
        if not expect_hit:
            assert r.usage.cache_read_input_tokens == 0


def test_parallel_first_requests_all_miss(sb, client):
    content = [doc_block(make_doc(6000), ttl="5m"), question()]
    with sb.concurrent():
        a, b = ask(client, content), ask(client, content)
    assert a.usage.cache_read_input_tokens == b.usage.cache_read_input_tokens == 0
    assert a.usage.cache_creation_input_tokens == b.usage.cache_creation_input_tokens > 0
    assert ask(client, content).usage.cache_read_input_tokens == a.usage.cache_creation_input_tokens


def test_top_level_cache_control_marks_the_last_block(client):
    content = [doc_block(make_doc(6000)), question()]
    r1 = ask(client, content, cache_control={"type": "ephemeral"})
    r2 = ask(client, content, cache_control={"type": "ephemeral"})
    assert r1.usage.cache_creation_input_tokens == r2.usage.cache_read_input_tokens > 0
    assert r2.usage.input_tokens == 0  # the marked block is the last one


# ---------------------------------------------------------------- answers and citations

DOCS = [
    ("就業規則", "第1条　従業員の所定労働時間は、1日8時間とする。\n第2条　始業時刻は午前9時、終業時刻は午後6時とする。"),
    ("出張旅費規程", "第1条　出張の日当は、1日につき3000円とする。\n第2条　宿泊料は、1泊につき12000円を上限とする。"),
    ("情報セキュリティ規程", "第1条　パスワードは12文字以上とし、90日ごとに変更する。\n第2条　私物のUSBメモリの業務利用は禁止する。"),
]


def _docs_request(question_text: str, citations: bool = True) -> list:
    first = [doc_block(text, title=title, citations=citations) for title, text in DOCS[:2]]
    last = [doc_block(DOCS[2][1], title=DOCS[2][0], citations=citations), question(question_text)]
    return [
        {"role": "user", "content": first + [question("この2つの規程を読んでください。")]},
        {"role": "assistant", "content": "読みました。"},
        {"role": "user", "content": last},
    ]


def _check_citations(message) -> list:
    found = []
    for block in message.content:
        for c in block.citations or []:
            title, text = DOCS[c.document_index]
            assert c.type == "char_location"
            assert c.cited_text == text[c.start_char_index : c.end_char_index]
            assert c.document_title == title
            assert block.text == c.cited_text  # extractive: the block quotes the cited sentence
            found.append(c)
    return found


@pytest.mark.parametrize(
    "q, doc_index, needle",
    [
        ("出張の日当はいくらですか？", 1, "3000円"),
        ("パスワードは何文字以上必要ですか？", 2, "12文字"),
        ("始業時刻は何時ですか？", 0, "午前9時"),
    ],
)
def test_citations_over_several_documents(client, q, doc_index, needle):
    msg = client.messages.create(model=OPUS, max_tokens=500, messages=_docs_request(q))
    assert msg.content[0].text.startswith(ANSWER_MARKER)
    cites = _check_citations(msg)
    assert cites, "an answer over documents with citations enabled must cite"
    top = cites[0]
    assert top.document_index == doc_index
    assert needle in top.cited_text


def test_citations_stream_matches_plain(client):
    msgs = _docs_request("宿泊料の上限はいくらですか？")
    plain = client.messages.create(model=OPUS, max_tokens=500, messages=msgs)
    with client.messages.stream(model=OPUS, max_tokens=500, messages=msgs) as s:
        text = "".join(s.text_stream)
        final = s.get_final_message()
    assert text == "".join(b.text for b in plain.content)
    assert [b.model_dump() for b in final.content] == [b.model_dump() for b in plain.content]
    assert any(c.document_index == 1 and "12000円" in c.cited_text for c in _check_citations(final))
    raw = client.messages.create(model=OPUS, max_tokens=500, messages=msgs, stream=True)
    kinds = [(e.type, getattr(getattr(e, "delta", None), "type", None)) for e in raw]
    assert ("content_block_delta", "citations_delta") in kinds


def test_citations_with_structured_output_is_refused(client):
    fmt = {"type": "json_schema", "schema": {"type": "object", "properties": {"answer": {"type": "string"}},
                                             "required": ["answer"], "additionalProperties": False}}
    with pytest.raises(anthropic.BadRequestError) as e:
        client.messages.create(model=OPUS, max_tokens=300, messages=_docs_request("日当は？"),
                               output_config={"format": fmt})
    assert "structured outputs" in e.value.body["error"]["message"]
    # without citations the same format is answered with JSON that follows the schema
    ok = client.messages.create(model=OPUS, max_tokens=300, messages=_docs_request("出張の日当は？", citations=False),
                                output_config={"format": fmt})
    value = json.loads(ok.content[0].text)
    assert set(value) == {"answer"} and value["answer"].startswith(ANSWER_MARKER) and "3000円" in value["answer"]


def test_citations_on_some_documents_only_is_refused(client):
    msgs = _docs_request("日当は？")
    msgs[0]["content"][0]["citations"] = {"enabled": False}
    with pytest.raises(anthropic.BadRequestError) as e:
        client.messages.create(model=OPUS, max_tokens=300, messages=msgs)
    assert "all documents or on none" in e.value.body["error"]["message"]


def test_answer_without_documents_says_so(client):
    msg = ask(client, "有給休暇は何日ありますか？")
    assert msg.content[0].text.startswith(ANSWER_MARKER)
    assert "文書がありません" in msg.content[0].text
    assert msg.stop_reason == "end_turn"


def test_user_text_is_material_too(client):
    material = "第5条　通勤手当は、月額5万円を上限として支給する。\n第6条　在宅勤務手当は月額3000円とする。"
    msg = ask(client, [question(material), question("通勤手当の上限は？")])
    assert "5万円" in msg.content[0].text


def test_answer_uses_the_caption_of_an_article(client):
    doc = ("年次有給休暇取扱規程\n\n（繰越し）\n第6条　残った年休は、次の付与年度に限って繰り越す。\n"
           "２　上限は20日とする。\n\n（時季指定）\n第7条　会社は年5日について時季を指定する。")
    msg = ask(client, [doc_block(doc, title="年休規程", citations=True), question("繰越しの上限は何日？")])
    cites = [c for b in msg.content for c in (b.citations or [])]
    assert cites[0].cited_text == "２　上限は20日とする。"
    assert all(c.cited_text not in ("（繰越し）", "年次有給休暇取扱規程") for c in cites)  # headings are not answers


def test_content_documents_cite_block_locations(client):
    doc = {"type": "document", "title": "旅費", "citations": {"enabled": True},
           "source": {"type": "content", "content": [{"type": "text", "text": "日当は1日3000円とする。"},
                                                       {"type": "text", "text": "宿泊料は1泊12000円までとする。"}]}}
    msg = ask(client, [doc, question("1泊の宿泊料はいくらまで？")])
    c = [c for b in msg.content for c in (b.citations or [])][0]
    assert c.type == "content_block_location"
    assert (c.start_block_index, c.end_block_index, c.document_index) == (1, 2, 0)
    assert c.cited_text == "宿泊料は1泊12000円までとする。" and c.document_title == "旅費"


def test_stop_sequence_ends_the_answer(client):
    msgs = _docs_request("出張の日当は？", citations=False)
    msg = client.messages.create(model=OPUS, max_tokens=300, messages=msgs, stop_sequences=["・"])
    assert msg.stop_reason == "stop_sequence" and msg.stop_sequence == "・"
    assert "・" not in msg.content[0].text and msg.content[0].text.startswith(ANSWER_MARKER)


def test_max_tokens_cuts_the_answer(client):
    msgs = _docs_request("パスワードは何文字以上必要ですか？")
    msg = client.messages.create(model=OPUS, max_tokens=10, messages=msgs)
    assert msg.stop_reason == "max_tokens"
    assert 1 <= msg.usage.output_tokens <= 10
    assert sum(estimate.estimate_text(b.text) for b in msg.content) <= 10


def test_response_shape_is_the_documented_one(client):
    raw = client.messages.with_raw_response.create(model=OPUS, max_tokens=300, messages=_docs_request("日当は？"))
    data = raw.http_response.json()
    assert data["id"].startswith("msg_")
    assert data["type"] == "message" and data["role"] == "assistant" and data["model"] == OPUS
    assert {"id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage"} <= set(data)
    assert data["stop_reason"] == "end_turn" and data["stop_sequence"] is None
    assert set(data["usage"]) >= {"input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
                                  "cache_creation", "output_tokens"}
    assert set(data["usage"]["cache_creation"]) == {"ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens"}
    for block in data["content"]:
        assert block["type"] == "text" and isinstance(block["text"], str)
    assert raw.http_response.headers["request-id"].startswith("req_")
    extra = data["sandbox"]
    assert extra["simulated_total_s"] >= extra["simulated_ttft_s"] > 0 and "simulated" in extra["note"]


def test_sandbox_never_opens_gold_answers(client, monkeypatch):
    real_open = builtins.open

    def guarded(file, *args, **kwargs):
        assert "data/eval" not in str(file).replace("\\", "/"), f"the sandbox opened {file}"
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", guarded)
    msg = client.messages.create(model=OPUS, max_tokens=300, messages=_docs_request("日当は？"))
    assert msg.content[0].text.startswith(ANSWER_MARKER)


# ---------------------------------------------------------------- streaming, time, log


def test_streaming_text_and_final_usage(client):
    content = [doc_block(make_doc(6000), ttl="5m"), question()]
    written = ask(client, content)
    with client.messages.stream(model=OPUS, max_tokens=400, messages=[{"role": "user", "content": content}]) as s:
        pieces = list(s.text_stream)
        final = s.get_final_message()
    assert len(pieces) > 1
    assert "".join(pieces) == "".join(b.text for b in final.content)
    again = ask(client, content)
    assert final.usage.cache_read_input_tokens == written.usage.cache_creation_input_tokens
    for field in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens"):
        assert getattr(final.usage, field) == getattr(again.usage, field)
    assert final.stop_reason == "end_turn"
    events = [e.type for e in client.messages.create(model=OPUS, max_tokens=400, stream=True,
                                                     messages=[{"role": "user", "content": content}])]
    assert events[0] == "message_start" and events[-2:] == ["message_delta", "message_stop"]
    assert "content_block_start" in events and "content_block_stop" in events


def test_simulated_time_log_and_cost(sb, client):
    content = [doc_block(make_doc(6000), ttl="5m"), question()]
    cold, warm = ask(client, content), ask(client, content)
    assert warm.sandbox["simulated_ttft_s"] < cold.sandbox["simulated_ttft_s"]
    entries = [e for e in sb.log if e.endpoint == "messages"]
    assert len(entries) == 2
    for entry, msg in zip(entries, (cold, warm)):
        u = msg.usage
        assert entry.message_id == msg.id and entry.status == 200
        assert entry.cost == pricing.usage_cost(u, OPUS)
        expected = pricing.ttft_seconds(u.input_tokens + u.cache_creation_input_tokens, u.cache_read_input_tokens)
        assert entry.simulated_ttft_s == pytest.approx(expected, abs=1e-3)
        assert msg.sandbox["cost_usd"] == pytest.approx(entry.cost.total, abs=1e-6)
    assert sb.summary()["cache_read_input_tokens"] == warm.usage.cache_read_input_tokens


def test_waits_follow_the_time_scale(monkeypatch):
    sb = Sandbox(realtime=False, time_scale=0.5)
    waits: list[float] = []
    sb.sleep = waits.append  # record the waits instead of sleeping
    c = make_client(offline=True, sandbox=sb)
    with c.messages.stream(model=OPUS, max_tokens=300, messages=[{"role": "user", "content": QUESTION}]) as s:
        "".join(s.text_stream)
    simulated = sb.log[-1].simulated_ttft_s
    assert waits[0] == pytest.approx(simulated * 0.5, abs=1e-3)
    assert sum(waits) == pytest.approx(sb.log[-1].simulated_total_s * 0.5, rel=0.05)
    clock_before = sb.now()
    ask(c, QUESTION)
    assert sb.now() == clock_before  # waiting never moves the clock: only advance() does
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert sb.time_scale == 0.0


def test_diagnostics_name_what_changed(client):
    doc = make_doc(6000)
    msgs = [{"role": "user", "content": QUESTION}]
    first = client.messages.create(model=OPUS, max_tokens=100, messages=msgs, diagnostics={"previous_message_id": None},
                                   system=[{"type": "text", "text": doc, "cache_control": {"type": "ephemeral"}}])
    assert first.diagnostics is None
    changed = client.messages.create(
        model=OPUS, max_tokens=100, messages=msgs, diagnostics={"previous_message_id": first.id},
        system=[{"type": "text", "text": "変更: " + doc, "cache_control": {"type": "ephemeral"}}],
    )
    reason = changed.diagnostics.cache_miss_reason
    assert reason.type == "system_changed"
    assert reason.cache_missed_input_tokens == first.usage.cache_creation_input_tokens


# ---------------------------------------------------------------- count_tokens


def test_count_tokens_agrees_with_create(client):
    tools = [{"name": "lookup_rule", "description": "規程を検索する",
              "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}}}]
    system = [{"type": "text", "text": "あなたは社内規程のアシスタントです。", "cache_control": {"type": "ephemeral"}}]
    messages = [
        {"role": "user", "content": [doc_block(make_doc(6000), title="規程", ttl="5m"), question()]},
        {"role": "assistant", "content": "確認します。"},
        {"role": "user", "content": "第3条の期限も教えてください。"},
    ]
    counted = client.messages.count_tokens(model=OPUS, tools=tools, system=system, messages=messages).input_tokens
    assert counted == estimate.estimate_request({"tools": tools, "system": system, "messages": messages})
    for _ in range(2):  # a write, then a read: the total stays the same
        u = client.messages.create(model=OPUS, max_tokens=100, tools=tools, system=system, messages=messages).usage
        assert u.cache_read_input_tokens + u.cache_creation_input_tokens + u.input_tokens == counted
    assert tokens.count_request({"messages": messages, "system": system, "tools": tools}, client, OPUS).tokens == counted


def test_count_tokens_does_not_create_a_cache(sb, client):
    content = [doc_block(make_doc(6000), ttl="5m"), question()]
    client.messages.count_tokens(model=OPUS, messages=[{"role": "user", "content": content}])
    assert sb.cache_entries() == []
    assert ask(client, content).usage.cache_read_input_tokens == 0


# ---------------------------------------------------------------- errors

M = [{"role": "user", "content": QUESTION}]


@pytest.mark.parametrize(
    "kwargs, exc, status, message",
    [
        (dict(model=OPUS, messages=M, max_tokens=anthropic.omit, timeout=30),
         anthropic.BadRequestError, 400, "max_tokens: Field required"),
        (dict(model=anthropic.omit, messages=M, max_tokens=100),
         anthropic.BadRequestError, 400, "model: Field required"),
        (dict(model="claude-nope-9", messages=M, max_tokens=100),
         anthropic.NotFoundError, 404, "model: claude-nope-9"),
        (dict(model=OPUS, messages=[], max_tokens=100),
         anthropic.BadRequestError, 400, "messages: at least one message is required"),
        (dict(model=OPUS, messages=[{"role": "assistant", "content": "はい"}], max_tokens=100),
         anthropic.BadRequestError, 400, 'messages: first message must use the "user" role'),
        (dict(model=OPUS, messages=M + M, max_tokens=100),
         anthropic.BadRequestError, 400, 'roles must alternate between "user" and "assistant"'),
        (dict(model=OPUS, messages=[{"role": "user", "content": 42}], max_tokens=100),
         anthropic.BadRequestError, 400, "messages.0.content: Input should be a valid string or a list"),
        (dict(model=OPUS, messages=[{"role": "user", "content": [{"text": "no type"}]}], max_tokens=100),
         anthropic.BadRequestError, 400, "messages.0.content.0.type: Field required"),
        (dict(model=OPUS, messages=[{"role": "system", "content": "x"}], max_tokens=100),
         anthropic.BadRequestError, 400, "messages.0.role: Input should be 'user' or 'assistant'"),
        (dict(model=OPUS, messages=[{"role": "user", "content": ""}], max_tokens=100),
         anthropic.BadRequestError, 400, "messages.0: user messages must have non-empty content"),
        (dict(model=OPUS, messages=M, max_tokens=0),
         anthropic.BadRequestError, 400, "max_tokens: Input should be greater than or equal to 1"),
    ],
)
def test_request_errors(client, kwargs, exc, status, message):
    with pytest.raises(exc) as e:
        client.messages.create(**kwargs)
    assert e.value.status_code == status
    assert e.value.body["error"]["type"] == ("not_found_error" if status == 404 else "invalid_request_error")
    assert message in e.value.body["error"]["message"]


def test_prompt_over_the_context_window(client):
    window = pricing.get_model(HAIKU).context_window
    content = [doc_block(make_doc(window * 5 // 4)), question()]
    total = estimate.estimate_request({"messages": [{"role": "user", "content": content}]})
    assert total > window
    with pytest.raises(anthropic.BadRequestError) as e:
        ask(client, content, model=HAIKU)
    assert e.value.body["error"]["message"] == f"prompt is too long: {total} tokens > {window} maximum"
    # the same text fits the 1M window of Opus
    assert ask(client, content, model=OPUS).usage.input_tokens == total


def test_non_json_body_and_unknown_path(client):
    with pytest.raises(anthropic.BadRequestError) as e:
        client.post("/v1/messages", cast_to=object, content=b"{not json",
                    options={"headers": {"content-type": "application/json"}})
    assert e.value.body["error"]["type"] == "invalid_request_error" and "not valid JSON" in e.value.body["error"]["message"]
    with pytest.raises(anthropic.NotFoundError) as e:
        client.get("/v1/does-not-exist", cast_to=object)
    assert e.value.body["error"]["type"] == "not_found_error"
    assert [m.id for m in client.models.list().data] == list(pricing.models())


def test_bad_requests_and_internal_errors_keep_the_cache(sb, client, monkeypatch):
    content = [doc_block(make_doc(6000), ttl="5m"), question()]
    written = ask(client, content).usage.cache_creation_input_tokens
    with pytest.raises(anthropic.BadRequestError):
        client.messages.create(model=OPUS, max_tokens=100,
                               system=[{"type": "text", "text": f"{k}", "cache_control": {"type": "ephemeral"}}
                                       for k in range(5)],
                               messages=M)
    import ctxlab.sandbox.core as core

    def boom(*args, **kwargs):
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(core, "build_answer", boom)
    with pytest.raises(anthropic.InternalServerError) as e:
        ask(client, content)
    assert e.value.status_code == 500 and e.value.body["error"]["type"] == "api_error"
    assert "simulated bug" in e.value.body["error"]["message"]
    monkeypatch.undo()
    monkeypatch.setenv("CTXLAB_TIME_SCALE", "0")
    assert [x.status for x in sb.log] == [200, 400, 500]
    assert ask(client, content).usage.cache_read_input_tokens == written


def test_the_sandbox_abstains_when_no_sentence_holds_most_of_the_question_nouns(client):
    from ctxlab.labs import measure
    from ctxlab.sandbox import answer

    doc = ("年次有給休暇取扱規程\n\n（繰越し）\n第6条　残った年休は、次の付与年度に限って繰り越す。\n"
           "２　上限は20日とする。")
    not_there = ask(client, [doc_block(doc, title="年休規程"), question("社員食堂は何時から使えますか？")])
    text = not_there.content[0].text
    assert answer.NOT_COVERED_TEXT in text and "20日" not in text
    from ctxlab import corpus

    q = next(q for q in corpus.questions() if q.id == "q27")
    assert measure.grade(text, q) == "correct"
    there = ask(client, [doc_block(doc, title="年休規程"), question("年休の繰越しの上限は？")])
    assert "20日" in there.content[0].text and answer.NOT_COVERED_TEXT not in there.content[0].text
    # the threshold is a share of the question's nouns held by one sentence (with its headings)
    srcs = [answer.Source(doc, "text", 0, "年休規程")]
    assert answer.coverage(srcs, "社員食堂は何時から使えますか？") <= answer.ABSTAIN_AT_OR_BELOW
    assert answer.coverage(srcs, "年休の繰越しの上限は？") == 1.0


@pytest.mark.parametrize("param, value", [("temperature", 0.0), ("top_p", 0.9), ("top_k", 5)])
def test_sampling_parameters_removed_in_2026_10_21_are_a_400(client, param, value):
    with pytest.raises(anthropic.BadRequestError) as e:
        ask(client, [question()], extra_body={param: value})   # the SDK 2.x no longer has these arguments
    err = e.value.body["error"]
    assert e.value.status_code == 400 and err["type"] == "invalid_request_error"
    assert err["message"].startswith(f"{param}:") and "2026-10-21" in err["message"]


CITATION = {"type": "char_location", "cited_text": "有給", "document_index": 0, "start_char_index": 0,
            "end_char_index": 2}


@pytest.mark.parametrize("block", [
    {"type": "text", "text": "有給は何日？", "citations": [CITATION]},
    {"type": "search_result", "source": "hr", "title": "就業規則",
     "content": [{"type": "text", "text": "有給休暇は 20 日", "citations": [CITATION]}]},
])
def test_a_user_text_block_with_citations_is_a_400(client, block):
    with pytest.raises(anthropic.BadRequestError) as e:
        ask(client, [block, question()])
    assert e.value.status_code == 400 and "citations" in e.value.body["error"]["message"]
    # an empty citations array is still accepted
    assert ask(client, [{"type": "text", "text": "有給は何日？", "citations": []}]).content
