"""Automatic caching, the 20-position lookback and byte-stable prefixes in the sandbox, rule by rule.

Every rule below was checked against Anthropic's prompt-caching page,
https://platform.claude.com/docs/en/build-with-claude/prompt-caching (sections "Automatic
caching", "How automatic prefix checking works", "Cache limitations"); each test names the
section it pins. Where the page is silent, the test says so and pins the sandbox's choice.
"""
from __future__ import annotations

from pathlib import Path

import anthropic
import pytest

from ctxlab import estimate
from ctxlab.api.client import make_client
from ctxlab.sandbox import LOOKBACK_BLOCKS, MAX_BREAKPOINTS, Sandbox
from ctxlab.sandbox.cache import positions
from ctxlab.sandbox.request import AUTO_INELIGIBLE, parse_request

OPUS = "claude-opus-5"
AUTO = {"type": "ephemeral"}
BIG = "".join(f"第{i}条　申請は所属長の承認を得て{i % 28 + 2}日以内に行う。\n" for i in range(1, 400))


def text(t: str, ttl: str | None = None) -> dict:
    b = {"type": "text", "text": t}
    if ttl:
        b["cache_control"] = {"type": "ephemeral", "ttl": ttl}
    return b


@pytest.fixture
def sb() -> Sandbox:
    return Sandbox(realtime=False, time_scale=0)


@pytest.fixture
def client(sb):
    return make_client(offline=True, sandbox=sb)


def send(client, messages, **kw):
    return client.messages.create(model=OPUS, max_tokens=50, messages=messages, **kw).usage


def body(messages, **kw) -> dict:
    return {"model": OPUS, "max_tokens": 50, "messages": messages, **kw}


def total(u) -> int:
    return u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens


# ---------------------------------------------------------------- where the automatic breakpoint goes

def test_automatic_breakpoint_is_on_the_last_block(client):
    # "Automatic caching": "The system automatically applies the cache breakpoint to the last cacheable block."
    msgs = [{"role": "user", "content": [text(BIG), text("質問です")]}]
    parsed = parse_request(body(msgs, cache_control=AUTO), "messages")
    assert parsed.breakpoints == [len(parsed.blocks) - 1]
    u = send(client, msgs, cache_control=AUTO)
    assert u.input_tokens == 0 and u.cache_creation_input_tokens == total(u)  # everything written


def test_automatic_breakpoint_walks_back_over_blocks_that_cannot_carry_one():
    # "Edge cases": "If the last block is not eligible ... the system silently walks backwards to find the
    # nearest eligible block." The page says thinking blocks cannot carry cache_control; it lists no other
    # ineligible type, so AUTO_INELIGIBLE is the sandbox's choice.
    assert set(AUTO_INELIGIBLE) == {"thinking", "redacted_thinking"}
    # 03 §8 names the sandbox's choice in words (it no longer prints the constant)
    lesson = (Path(__file__).resolve().parent.parent / "solutions" / "03_prompt_caching" / "03_prompt_caching.py")
    assert " と ".join(AUTO_INELIGIBLE) + " のブロックだけを飛ばして" in lesson.read_text(encoding="utf-8")
    msgs = [{"role": "user", "content": [text(BIG)]},
            {"role": "assistant", "content": [text("考えます"), {"type": "thinking", "thinking": "…", "signature": "s"}]}]
    parsed = parse_request(body(msgs, cache_control=AUTO), "messages")
    assert [parsed.blocks[b].where for b in parsed.breakpoints] == ["messages[1].content[0]"]


def test_automatic_breakpoint_moves_forward_with_the_conversation(client):
    # "How automatic caching works in multi-turn conversations": each request reads everything the previous
    # one cached and writes only what the turn added.
    msgs = [{"role": "user", "content": [text(BIG), text("質問 1")]}]
    previous = None
    for turn in range(1, 5):
        u = send(client, msgs, cache_control=AUTO)
        if previous is None:
            assert u.cache_read_input_tokens == 0 and u.cache_creation_input_tokens == total(u)
        else:
            assert u.cache_read_input_tokens == total(previous)
            assert u.cache_creation_input_tokens == total(u) - total(previous) > 0
        assert u.input_tokens == 0
        previous = u
        msgs = msgs + [{"role": "assistant", "content": f"回答 {turn}"}, {"role": "user", "content": f"質問 {turn + 1}"}]


# ---------------------------------------------------------------- the 4-breakpoint budget

def test_automatic_breakpoint_takes_one_of_the_four_slots(client):
    # "Combining with block-level caching": "the automatic cache breakpoint uses one of the 4 available
    # breakpoint slots"; "Edge cases": 4 explicit breakpoints already -> 400 (no slot left).
    three = [text(f"{k}: {BIG}", "5m") for k in range(MAX_BREAKPOINTS - 1)]
    u = send(client, [{"role": "user", "content": three + [text("質問")]}], cache_control=AUTO)
    assert u.input_tokens == 0  # the automatic breakpoint took the 4th slot, on the question
    four = [text(f"{k}: {BIG}", "5m") for k in range(MAX_BREAKPOINTS)]
    with pytest.raises(anthropic.BadRequestError, match="breakpoint slots"):
        send(client, [{"role": "user", "content": four + [text("質問")]}], cache_control=AUTO)


def test_automatic_on_an_explicit_breakpoint_same_ttl_is_a_no_op_other_ttl_is_400(client):
    # "Edge cases": same TTL -> no-op (so it takes no slot); a different TTL -> 400.
    four = [text(f"{k}: {BIG}", "5m") for k in range(MAX_BREAKPOINTS)]
    msgs = [{"role": "user", "content": four}]
    assert len(parse_request(body(msgs, cache_control=AUTO), "messages").breakpoints) == MAX_BREAKPOINTS
    send(client, msgs, cache_control=AUTO)
    with pytest.raises(anthropic.BadRequestError, match="ttl='5m'"):
        send(client, msgs, cache_control={"type": "ephemeral", "ttl": "1h"})


# ---------------------------------------------------------------- TTL and minimum length, as for explicit ones

def test_automatic_caching_ttl_default_5m_and_1h_on_request(sb, client):
    # "TTL support": 5 minutes by default, "ttl": "1h" at 2x; "What stays the same": pricing and thresholds.
    five = [{"role": "user", "content": [text("5m " + BIG), text("質問")]}]
    hour = [{"role": "user", "content": [text("1h " + BIG), text("質問")]}]
    w5 = send(client, five, cache_control=AUTO)
    w1 = send(client, hour, cache_control={"type": "ephemeral", "ttl": "1h"})
    assert w5.cache_creation.ephemeral_5m_input_tokens == total(w5) and w5.cache_creation.ephemeral_1h_input_tokens == 0
    assert w1.cache_creation.ephemeral_1h_input_tokens == total(w1) and w1.cache_creation.ephemeral_5m_input_tokens == 0
    sb.advance(301)
    assert send(client, five, cache_control=AUTO).cache_read_input_tokens == 0
    assert send(client, hour, cache_control={"type": "ephemeral", "ttl": "1h"}).cache_read_input_tokens == total(w1)


def test_automatic_caching_below_the_minimum_caches_nothing_and_does_not_fail(client):
    # "What stays the same": minimum token thresholds; "Cache limitations": no error is returned.
    u = send(client, [{"role": "user", "content": "短い質問です"}], cache_control=AUTO)
    assert u.cache_creation_input_tokens == u.cache_read_input_tokens == 0 and u.input_tokens > 0


# ---------------------------------------------------------------- the lookback window

def _turns(n_blocks: int) -> list[dict]:
    """One user message of ``n_blocks`` text blocks: a long first block, then short ones."""
    return [{"role": "user", "content": [text(BIG)] + [text(f"補足 {k}") for k in range(2, n_blocks + 1)]}]


def _mark(messages: list[dict], *block_numbers: int) -> list[dict]:
    """The same messages with explicit breakpoints on the given blocks (1-based, as the docs count)."""
    content = [dict(b) for b in messages[0]["content"]]
    for n in block_numbers:
        content[n - 1]["cache_control"] = {"type": "ephemeral"}
    return [{"role": "user", "content": content}]


def test_lookback_checks_20_positions_counting_the_breakpoint_the_docs_example(client):
    # "How automatic prefix checking works", "Example: Lookback in a growing conversation": 10, 15, then 35
    # blocks with the breakpoint on the last one; turn 3 checks blocks 35..16 and misses the entry at 15.
    # "Adding a second breakpoint at block 15 starts a second lookback window there."
    assert LOOKBACK_BLOCKS == 20
    send(client, _mark(_turns(10), 10))
    second = send(client, _mark(_turns(15), 15))
    assert second.cache_read_input_tokens > 0
    assert send(client, _mark(_turns(35), 35)).cache_read_input_tokens == 0
    sb2 = Sandbox(realtime=False, time_scale=0)
    c2 = make_client(offline=True, sandbox=sb2)
    send(c2, _mark(_turns(10), 10))
    send(c2, _mark(_turns(15), 15))
    third = send(c2, _mark(_turns(35), 15, 35))
    assert third.cache_read_input_tokens == total(second)


@pytest.mark.parametrize("n_blocks, hit", [(29, True), (30, False)])
def test_lookback_applies_to_the_automatic_breakpoint_too(client, n_blocks, hit):
    # "What stays the same": "the 20-block lookback window" applies to automatic caching. The previous write
    # is at block 10; a breakpoint on block 29 is the 20th position counting itself, block 30 the 21st.
    send(client, _turns(10), cache_control=AUTO)
    u = send(client, _turns(n_blocks), cache_control=AUTO)
    assert (u.cache_read_input_tokens > 0) is hit


def _agent_history(n_calls: int, narrate: bool) -> list[dict]:
    """A question, then one assistant reply with n_calls tool calls (each after a sentence when
    ``narrate``), then the tool results."""
    calls = []
    for k in range(n_calls):
        if narrate:
            calls.append(text(f"第{k + 1}条を確認します。"))
        calls.append({"type": "tool_use", "id": f"toolu_{k:02d}", "name": "lookup_rule", "input": {"article": k + 1}})
    results = [{"type": "tool_result", "tool_use_id": f"toolu_{k:02d}", "content": f"第{k + 1}条の本文"}
               for k in range(n_calls)]
    return [{"role": "user", "content": [text(BIG), text("質問")]},
            {"role": "assistant", "content": calls},
            {"role": "user", "content": results}]


TOOLS = [{"name": "lookup_rule", "description": "条文を引く", "input_schema": {"type": "object"}}]


def test_a_run_of_tool_use_blocks_and_a_run_of_tool_results_are_one_position_each(client):
    # "How automatic prefix checking works", principle 3: "On the Claude API, a run of consecutive tool_use
    # blocks counts as one position, and so does a run of consecutive tool_result blocks". The page does not
    # say how other platforms count; the sandbox follows the Claude API.
    history = _agent_history(25, narrate=False)
    parsed = parse_request(body(history, tools=TOOLS), "messages")
    pos = positions(parsed.blocks)
    assert pos[-1] - pos[parsed.blocks.index(next(b for b in parsed.blocks if b.kind == "tool_use"))] == 1
    send(client, history[:1], tools=TOOLS, cache_control=AUTO)
    assert send(client, history, tools=TOOLS, cache_control=AUTO).cache_read_input_tokens > 0


def test_tool_calls_between_sentences_push_the_last_write_out_of_the_window(client):
    # The same 10 calls, each after a sentence: 20 positions of reply, 1 of results -> the automatic
    # breakpoint's window (20 positions) no longer reaches the question the previous request wrote.
    history = _agent_history(10, narrate=True)
    send(client, history[:1], tools=TOOLS, cache_control=AUTO)
    missed = send(client, history, tools=TOOLS, cache_control=AUTO)
    assert missed.cache_read_input_tokens == 0 and missed.cache_creation_input_tokens == total(missed)
    # a second breakpoint on the previous request's last block keeps the read (4-slot budget: 2 used)
    rolling = [dict(m) for m in history]
    rolling[0] = {"role": "user", "content": [text(BIG), text("質問", "5m")]}
    send(client, history[:1], tools=TOOLS, cache_control=AUTO)  # fresh write at the question
    kept = send(client, rolling, tools=TOOLS, cache_control=AUTO)
    assert kept.cache_read_input_tokens > 0 and kept.cache_read_input_tokens + kept.cache_creation_input_tokens == total(kept)


# ---------------------------------------------------------------- bytes before a breakpoint

def test_a_whitespace_block_that_appears_before_the_breakpoint_forces_a_full_write(client):
    # "How automatic prefix checking works", principle 1: "changing any block at or before the breakpoint
    # produces a different hash" (the symptom of microsoft/vscode issue #323642: a " " anchor block that
    # appears and disappears).
    plain = [{"role": "user", "content": [text(BIG), text("質問 1")]}]
    spaced = [{"role": "user", "content": [text(BIG), text(" "), text("質問 1")]}]
    first = send(client, plain, cache_control=AUTO)
    assert send(client, plain, cache_control=AUTO).cache_read_input_tokens == total(first)
    changed = send(client, spaced, cache_control=AUTO)
    assert changed.cache_read_input_tokens == 0 and changed.cache_creation_input_tokens == total(changed)
    # an explicit breakpoint on the long block, before the change, keeps that part readable
    doc = "別版 " + BIG
    send(client, [{"role": "user", "content": [text(doc, "5m"), text("質問 1")]}], cache_control=AUTO)
    g = send(client, [{"role": "user", "content": [text(doc, "5m"), text("  "), text("質問 1")]}], cache_control=AUTO)
    assert g.cache_read_input_tokens == (estimate.REQUEST_OVERHEAD + estimate.PER_MESSAGE_OVERHEAD
                                         + estimate.estimate_blocks([text(doc)])[0])


def test_combined_single_question_reads_the_documents_and_writes_only_the_question(client):
    # The course's pattern (same documents, a new question each time), by the rules above: automatic caching
    # alone writes everything each time; with an explicit breakpoint after the documents as well, each new
    # question reads the documents and writes only itself.
    def req(q, explicit):
        return [{"role": "user", "content": [text(BIG, "5m" if explicit else None), text(q)]}]

    autos = [send(client, req(f"自動 {k}", False), cache_control=AUTO) for k in range(3)]
    assert all(u.cache_read_input_tokens == 0 and u.cache_creation_input_tokens == total(u) for u in autos)
    both = [send(client, req(f"併用 {k}", True), cache_control=AUTO) for k in range(3)]
    question_tokens = estimate.estimate_blocks([text("併用 1")])[0]
    for u in both[1:]:
        assert u.cache_read_input_tokens > 0 and u.cache_creation_input_tokens == question_tokens


def test_a_one_hour_automatic_breakpoint_after_a_five_minute_one_is_refused(client):
    # "Mixing different TTLs": longer TTLs must come before shorter ones. The page does not say how this
    # meets automatic caching; the sandbox checks the automatic breakpoint like an explicit one at its place.
    msgs = [{"role": "user", "content": [text(BIG, "5m"), text("質問")]}]
    with pytest.raises(anthropic.BadRequestError, match="must not come after"):
        send(client, msgs, cache_control={"type": "ephemeral", "ttl": "1h"})
    hour_first = [{"role": "user", "content": [text(BIG, "1h"), text("質問")]}]
    u = send(client, hour_first, cache_control=AUTO)
    assert u.cache_creation.ephemeral_1h_input_tokens > 0 and u.cache_creation.ephemeral_5m_input_tokens > 0
