"""Lesson 03 (caching in conversations and agent loops): where the breakpoints go, sent through a client.

Lesson 03's last section compares the three ways to cache, on the same requests:

* ``"auto"`` -- automatic caching: one top-level ``cache_control``; the API puts the breakpoint
  on the last cacheable block of every request;
* ``"explicit"`` -- one breakpoint on the last document (:func:`ctxlab.api.messages.question_request`);
* ``"both"`` -- the breakpoint after the documents and the top-level one.

:func:`run_single` sends the single-question pattern (same documents, a new question each time),
:func:`run_conversation` a conversation (each answer sent back as history), :func:`run_agent` an
agent session whose second turn adds a reply with many tool calls, with one trailing breakpoint
(automatic caching), with the breakpoint also on the previous request's last block (``"rolling"``),
or on the last two messages (``"last_two"``). Every request goes through the client it is given:
the real API, or an offline sandbox on a manual clock (:class:`Lab`, :func:`manual_clock`), so a
demonstration prints the same whatever time the learner takes between cells.

:func:`compare_placements` totals each run's dollars (:func:`ctxlab.costs.pricing.usage_cost`).
"""
from __future__ import annotations

import copy
import uuid
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from ctxlab import _table
from ctxlab.api import messages
from ctxlab.api.client import get_sandbox, make_client
from ctxlab.costs import pricing
from ctxlab.costs.usage import usage_dict
from ctxlab.sandbox import MAX_BREAKPOINTS, Sandbox

PLACEMENTS = ("auto", "explicit", "both")
STRATEGIES = ("auto", "rolling", "last_two")
#: lesson 03's demonstration conversations: the first user's six questions and a second user's three
CONVERSATION = ("有給休暇は何日まで繰り越せますか？", "繰り越した分はいつ消えますか？", "時間単位でも取れますか？",
                "給与の支払日はいつですか？", "支払日が休日ならどうなりますか？", "賞与は年に何回ですか？")
SECOND = ("育児休業は何か月取れますか？", "給与は出ますか？", "申請はいつまでですか？")
#: the placements as a learner reads them in a table (the code id in parentheses: it is what one passes)
PLACEMENT_LABELS = {"auto": "自動キャッシュ（auto）", "explicit": "明示の区切り（explicit）", "both": "併用（both）"}
AUTO = {"type": "ephemeral"}
#: the tool of the agent session
LOOKUP_TOOL = {"name": "lookup_rule", "description": "規程の条文を、ファイル名と条番号で引く",
               "input_schema": {"type": "object", "properties": {"file": {"type": "string"},
                                                                  "article": {"type": "integer"}},
                                "required": ["file", "article"]}}


@dataclass
class Lab:
    """The clients a demonstration sends with, and their clocks.

    Offline, each run (one placement or strategy, by its key) talks to its own fresh sandbox
    whose clock moves only on :meth:`advance`, so the runs compared side by side each start at
    t = 0 and cannot expire one another's entries. Online every run uses the client given: the
    real API's clock cannot be moved, so :meth:`advance` only records the gap the
    demonstration assumes (the requests go out seconds apart, well within a 5-minute TTL).
    """

    client: Any
    manual: bool
    _sandboxes: dict = field(default_factory=dict)
    _assumed: dict = field(default_factory=dict)
    _nonce: str = field(default_factory=lambda: uuid.uuid4().hex[:8])

    def _sandbox(self, key: str) -> Sandbox:
        if key not in self._sandboxes:
            sb = Sandbox(realtime=False, time_scale=0)
            self._sandboxes[key] = (sb, make_client(offline=True, sandbox=sb))
        return self._sandboxes[key][0]

    def client_for(self, key: str):
        """The client of run ``key``: its own manual-clock sandbox offline, the real client online."""
        if not self.manual:
            return self.client
        self._sandbox(key)
        return self._sandboxes[key][1]

    def sandbox(self, key: str) -> Sandbox | None:
        """The sandbox of run ``key`` (None online)."""
        return self._sandbox(key) if self.manual else None

    def advance(self, key: str, seconds: float) -> None:
        """Move run ``key``'s clock (offline) and count the assumed time (both)."""
        if self.manual:
            self._sandbox(key).advance(seconds)
        self._assumed[key] = self._assumed.get(key, 0.0) + float(seconds)

    def now(self, key: str) -> float:
        """Seconds on run ``key``'s clock: its sandbox's, or the assumed gaps online."""
        return self._sandbox(key).now() if self.manual else self._assumed.get(key, 0.0)

    @property
    def source(self) -> str:
        """Where the figures a demonstration prints come from."""
        if self.manual:
            return "出典: sandbox のシミュレーション（手動の時計、料金は実 API の単価で換算）"
        return "出典: 実 API が返した usage（料金は単価表で換算）"

    def system(self, base: str, tag: str) -> str:
        """``base`` with a marker unique to this lab and ``tag``: every demonstration starts cold,
        also online and when a cell is run again."""
        return f"{base}\n（実演 {self._nonce}-{tag}）"


def manual_clock(client) -> Lab:
    """A :class:`Lab` for ``client``: offline, manual-clock sandboxes (one per run, no simulated
    waiting); online, the client itself."""
    return Lab(client, get_sandbox(client) is not None)


def _check(name: str, value: str, allowed: Sequence[str]) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")


def single_request(docs, question: str, placement: str, *, model: str, system: str, max_tokens: int = 200) -> dict:
    """Documents then the question, cached as ``placement`` says (see the module doc)."""
    _check("placement", placement, PLACEMENTS)
    req = messages.question_request(docs, question, model=model, max_tokens=max_tokens, system=system,
                                    cache_ttl=None if placement == "auto" else "5m")
    if placement != "explicit":
        req["cache_control"] = dict(AUTO)
    return req


def _answer(resp) -> str:
    text = messages.answer_text(resp).strip()
    return text or "（回答なし）"


@dataclass
class Call:
    """One request of a demonstration: a label, the usage the API returned, the clock then."""

    label: str
    usage: Any
    at_s: float


def run_single(lab: Lab, docs, questions: Iterable[str], placement: str, *, model: str, system: str,
               gap_s: float = 60.0, max_tokens: int = 200) -> list[Call]:
    """The single-question pattern: each question alone after the same documents, ``gap_s`` apart."""
    sys_text = lab.system(system, f"single-{PLACEMENTS.index(placement)}")
    key, calls = f"single-{placement}", []
    for k, q in enumerate(questions):
        if k:
            lab.advance(key, gap_s)
        resp = lab.client_for(key).messages.create(**single_request(docs, q, placement, model=model, system=sys_text,
                                                                    max_tokens=max_tokens))
        calls.append(Call(f"質問 {k + 1}", resp.usage, lab.now(key)))
    return calls


def run_conversation(lab: Lab, docs, questions: Sequence[str], placement: str, *, model: str, system: str,
                     tag: str = "conv", gap_s: float = 45.0, lead_s: float = 0.0, max_tokens: int = 200) -> list[Call]:
    """A conversation: turn k sends the documents, every earlier question and answer, and question k.

    The answers come from the responses and go back unchanged (byte for byte) as history.
    ``tag`` names the application: conversations with the same ``tag`` and placement share the
    system prompt, the documents and (offline) one sandbox and clock, as two users of one
    application do; ``lead_s`` is the time before this conversation's first turn.
    """
    sys_text = lab.system(system, f"{tag}-{PLACEMENTS.index(placement)}")
    first = single_request(docs, questions[0], placement, model=model, system=sys_text, max_tokens=max_tokens)
    history, key, calls = first["messages"], f"{tag}-{placement}", []
    if lead_s:
        lab.advance(key, lead_s)
    for k in range(len(questions)):
        if k:
            lab.advance(key, gap_s)
            history = history + [{"role": "user", "content": questions[k]}]
        resp = lab.client_for(key).messages.create(**dict(first, messages=history))
        calls.append(Call(f"ターン {k + 1}", resp.usage, lab.now(key)))
        history = history + [{"role": "assistant", "content": _answer(resp)}]
    return calls


# ---------------------------------------------------------------- the agent session

def tool_reply(calls: Sequence[tuple[str, int]], *, narrate: bool = True) -> tuple[dict, dict]:
    """An assistant reply that calls ``lookup_rule`` once per (file, article), and the user message
    with the results. With ``narrate`` each call follows a sentence, so every block is its own
    lookback position; without it the calls form one run (one position), as do the results."""
    reply, results = [], []
    for k, (file, article) in enumerate(calls):
        if narrate:
            reply.append({"type": "text", "text": f"{file} の第{article}条を確認します。"})
        tid = f"toolu_demo{k:02d}"
        reply.append({"type": "tool_use", "id": tid, "name": LOOKUP_TOOL["name"], "input": {"file": file, "article": article}})
        results.append({"type": "tool_result", "tool_use_id": tid, "content": f"{file} 第{article}条（抜粋）"})
    return {"role": "assistant", "content": reply}, {"role": "user", "content": results}


def _as_blocks(msg: dict) -> dict:
    content = msg["content"]
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    return {"role": msg["role"], "content": [dict(b) for b in content]}


def _mark_last(msg: dict) -> dict:
    out = _as_blocks(msg)
    out["content"][-1]["cache_control"] = dict(AUTO)
    return out


def place_breakpoints(request: dict, strategy: str, previous_length: int | None) -> dict:
    """A copy of ``request`` cached by ``strategy``:

    * ``"auto"``: the top-level ``cache_control`` only (one trailing breakpoint);
    * ``"rolling"``: the top-level one, plus an explicit breakpoint on the last block of the
      previous request (message ``previous_length - 1``), where that request wrote its entry;
    * ``"last_two"``: explicit breakpoints on the last block of each of the last two messages.

    Never more than :data:`~ctxlab.sandbox.MAX_BREAKPOINTS` (4) in all.
    """
    _check("strategy", strategy, STRATEGIES)
    req = copy.deepcopy(request)
    msgs = req["messages"]
    if strategy == "auto":
        req["cache_control"] = dict(AUTO)
    elif strategy == "rolling":
        req["cache_control"] = dict(AUTO)
        if previous_length and previous_length < len(msgs):
            msgs[previous_length - 1] = _mark_last(msgs[previous_length - 1])
    else:
        for i in range(max(0, len(msgs) - 2), len(msgs)):
            msgs[i] = _mark_last(msgs[i])
    used = sum(1 for m in msgs if isinstance(m["content"], list) for b in m["content"] if "cache_control" in b)
    if used + ("cache_control" in req) > MAX_BREAKPOINTS:
        raise ValueError(f"{strategy}: {used + 1} breakpoints is over the API's limit of {MAX_BREAKPOINTS}; "
                         "remove explicit cache_control from the request before placing these")
    return req


def run_agent(lab: Lab, docs, turns: Sequence[str], tool_calls: Sequence[tuple[str, int]], strategy: str, *,
              model: str, system: str, narrate: bool = True, gap_s: float = 30.0, max_tokens: int = 200) -> list[Call]:
    """An agent session of three user turns; in turn 2 the agent replies with ``tool_calls``.

    Requests: turn 1; turn 2; the tool results (the reply of turn 2 is the scripted tool calls,
    not what the API answered); turn 3. The system prompt, the tool definition and the
    documents stay the same throughout, so only the breakpoints differ between strategies.
    """
    if len(turns) != 3:
        raise ValueError(f"an agent session here has 3 user turns, got {len(turns)}")
    sys_text = lab.system(system, f"agent-{STRATEGIES.index(strategy)}{int(narrate)}")
    key = f"agent-{strategy}-{int(narrate)}"
    base = messages.question_request(docs, turns[0], model=model, max_tokens=max_tokens, system=sys_text,
                                     cache_ttl=None)
    base["tools"] = [LOOKUP_TOOL]
    reply, results = tool_reply(tool_calls, narrate=narrate)
    plan = [("ターン 1", None), ("ターン 2", turns[1]), ("ツール結果", None), ("ターン 3", turns[2])]
    history, previous, calls = base["messages"], None, []
    for k, (label, question) in enumerate(plan):
        if k == 2:
            history = history + [reply, results]
        elif question is not None:
            history = history + [{"role": "user", "content": [{"type": "text", "text": question}]}]
        if k:
            lab.advance(key, gap_s)
        req = place_breakpoints(dict(base, messages=history), strategy, previous)
        resp = lab.client_for(key).messages.create(**req)
        calls.append(Call(label, resp.usage, lab.now(key)))
        previous = len(history)
        if k != 1:  # the reply to turn 2 is the scripted tool calls
            history = history + [{"role": "assistant", "content": [{"type": "text", "text": _answer(resp)}]}]
    return calls


# ---------------------------------------------------------------- dollars

def run_usd(calls: Iterable[Any], model: str) -> float:
    """Dollars of a run (its calls' usage priced with :func:`ctxlab.costs.pricing.usage_cost`)."""
    return sum(pricing.usage_cost(c.usage if isinstance(c, Call) else c, model).total for c in calls)


def compare_placements(runs: Mapping[str, Sequence[Any]], model: str) -> list[dict]:
    """One row per run: its name, dollars, and tokens read, written and uncached, cheapest first."""
    rows = []
    for name, calls in runs.items():
        us = [usage_dict(c.usage if isinstance(c, Call) else c) for c in calls]
        rows.append({"placement": name, "usd": run_usd(us, model),
                     "read": sum(u["cache_read_input_tokens"] for u in us),
                     "written": sum(u["cache_creation_input_tokens"] for u in us),
                     "uncached": sum(u["input_tokens"] for u in us)})
    return sorted(rows, key=lambda r: r["usd"])


def comparison_table(runs: Mapping[str, Sequence[Any]], model: str, title: str, source: str | None = None) -> _table.Table:
    """:func:`compare_placements` as a table: ``title`` above it, the source and the prices it used under it.

    Every column says its unit: the token columns count tokens, the price column is dollars."""
    rows = [[PLACEMENT_LABELS.get(r["placement"], r["placement"]), f"{r['read']:,}", f"{r['written']:,}",
             f"{r['uncached']:,}", f"{r['usd']:.5f}"] for r in compare_placements(runs, model)]
    where = f"{source}。" if source else ""
    return _table.Table(["置き方", "読み出し（tokens）", "書き込み（tokens）", "キャッシュされない入力（tokens）",
                         "料金（$、出力込み）"], rows, intro=[title],
                        caption=f"{where}{model} の単価で計算（pricing.usage_cost）", align=["l", "r", "r", "r", "r"])


def shapes_table(shapes: Mapping[str, Mapping[str, Sequence[Any]]], model: str, source: str) -> _table.Table:
    """One row per placement, one dollar column per request shape (``shapes``: title -> runs by placement),
    the cheapest of each shape marked with ◎ (ties within $1e-9 all marked)."""
    usd = {title: {p: run_usd(calls, model) for p, calls in runs.items()} for title, runs in shapes.items()}
    rows = []
    for p in PLACEMENTS:
        row = [PLACEMENT_LABELS[p]]
        for title in shapes:
            v = usd[title][p]
            row.append(f"{'◎ ' if v - min(usd[title].values()) < 1e-9 else ''}{v:.6f}")
        rows.append(row)
    return _table.Table(["置き方"] + [f"{t}（$）" for t in shapes], rows,
                        caption=f"{source}。{model} の単価で計算（出力込み）。◎ はその形でいちばん安い置き方",
                        align=["l"] + ["r"] * len(shapes))


def format_comparison(runs: Mapping[str, Sequence[Any]], model: str, title: str) -> str:
    """:func:`comparison_table` as text."""
    return str(comparison_table(runs, model, title))


def month_usd(calls: Iterable[Any], model: str, *, sessions_per_day: float, days: float) -> float:
    """What a run repeated ``sessions_per_day`` times a day for ``days`` days would cost."""
    if sessions_per_day < 0 or days < 0:
        raise ValueError("sessions_per_day and days must be >= 0")
    return run_usd(list(calls), model) * sessions_per_day * days


def estimate_usd(n_requests: int, prefix_tokens: int, model: str, max_tokens: int = 200) -> float:
    """An upper bound for a demonstration: every request writes its whole prefix and answers in full."""
    return n_requests * pricing.call_cost(model, cache_write_5m_tokens=prefix_tokens, output_tokens=max_tokens).total


def shape_costs(lab: Lab, docs, turns: int, conversations: int, *, model: str, system: str,
                questions: Sequence[str], gap_s: float = 45.0) -> dict[str, float]:
    """Dollars of each placement for one request shape: ``conversations`` conversations of ``turns`` turns
    each on the same documents, one after the other (``gap_s`` between turns and between conversations).

    ``turns == 1`` is the single-question pattern. Conversation ``c`` asks ``turns`` questions taken in
    turn from ``questions`` (starting at ``2 c``), so the users do not all ask the same thing. Each shape
    runs under its own tag: it starts cold.
    """
    for name, n in (("turns", turns), ("conversations", conversations)):
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"{name} must be a whole number >= 1, got {n!r}")
    if not questions:
        raise ValueError("questions must hold at least one question")
    tag = f"shape{turns}x{conversations}-{uuid.uuid4().hex[:6]}"   # a fresh tag: every call starts cold
    out = {}
    for p in PLACEMENTS:
        calls = []
        for c in range(conversations):
            qs = [questions[(2 * c + t) % len(questions)] for t in range(turns)]
            calls += run_conversation(lab, docs, qs, p, model=model, system=system, tag=tag, gap_s=gap_s,
                                      lead_s=gap_s if c else 0.0)
        out[p] = run_usd(calls, model)
    return out


__all__ = [
    "PLACEMENTS", "STRATEGIES", "LOOKUP_TOOL", "Lab", "manual_clock", "single_request", "Call", "run_single",
    "run_conversation", "tool_reply", "place_breakpoints", "run_agent", "run_usd", "compare_placements",
    "comparison_table", "format_comparison", "month_usd", "estimate_usd", "shape_costs", "PLACEMENT_LABELS", "shapes_table", "CONVERSATION", "SECOND",
]
