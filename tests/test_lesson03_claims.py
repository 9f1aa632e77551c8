"""What lesson 03's prose says about its printed results, checked against the library and sandbox the lesson
prints from (the authoring asserts that sat in its demo cells live here now: issue 43). Each test names the
section whose sentence it guards; the sandbox runs are the lesson's own requests, rebuilt here, not the notebook
executed again."""
from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import jupytext
import pytest

import ctxlab
from ctxlab import corpus
from ctxlab.api import messages
from ctxlab.costs import pricing
from ctxlab.labs import prompt_caching as pc

LESSON = Path(__file__).resolve().parent.parent / "solutions" / "03_prompt_caching" / "03_prompt_caching.py"
DEMO = pricing.SMALL_MODEL
DOCS = [d for d in corpus.load() if d.file in ("hr_kyuyo_kitei.txt", "hr_yukyu_2025.txt")]
SYSTEM = f"{messages.SYSTEM_PROMPT}\n（実行 ID: test03）"
QUESTIONS = ["有給休暇は何日まで繰り越せますか？", "給与の支払日はいつですか？", "時間単位の年休は取れますか？"]


def ask(question, model=DEMO, system=SYSTEM):
    return messages.question_request(DOCS, question, model=model, max_tokens=200, cache_ttl="5m", system=system)


@pytest.fixture()
def client():
    """The lesson's client: an offline sandbox whose clock moves only when a cell moves it."""
    return ctxlab.make_client(offline=True, sandbox=ctxlab.Sandbox(realtime=False, time_scale=0))


def test_no_demo_cell_asserts():
    """Authoring checks live in tests/, not in the learner's cells (test cells are graded and may assert)."""
    nb = jupytext.read(LESSON)
    demo = [c.source for c in nb.cells if c.cell_type == "code"
            and not (c.metadata.get("nbgrader") or {}).get("grade")]
    assert not [s.splitlines()[0] for s in demo if any(l.lstrip().startswith("assert ") for l in s.splitlines())]


def test_02_the_demo_model_reads_at_0_1_and_todays_models_read_lower():
    # section 2's field table: 「このレッスンの DEMO のモデルは 0.1 倍」 and 「今日のモデルでは下がっています」
    assert pricing.get_model(DEMO).cache_read_multiplier == 0.1
    assert min(m.cache_read_multiplier for m in pricing.current_models().values()) < 0.1
    text = LESSON.read_text(encoding="utf-8")
    assert "このレッスンの DEMO のモデルは 0.1 倍" in text


def test_04_a_clock_before_the_breakpoint_bills_just_under_the_write_multiple_and_the_fix_reads(client):
    """4.1: 「入力の請求は…書き込みの倍率（1.25 倍）に近く…わずかに下回ります」, then the fix reads from the first call."""
    for q in QUESTIONS[:2]:
        client.messages.create(**ask(q))   # section 2 wrote the prefix
    start = datetime(2026, 12, 1, 9, 0)
    clock = [client.messages.create(**dict(ask(q), system=f"現在日時: {start + timedelta(minutes=i):%Y-%m-%d %H:%M}\n{SYSTEM}"))
             for i, q in enumerate(QUESTIONS)]
    assert all(c.usage.cache_read_input_tokens == 0 and c.usage.cache_creation_input_tokens > 0 for c in clock)
    billed = (sum(pricing.usage_cost(c.usage, DEMO).input for c in clock)
              / sum(pc.uncached_cost(c.usage, DEMO).input for c in clock))
    w = pricing.get_model(DEMO).cache_write_5m_multiplier
    assert w == 1.25 and 1.2 < billed < w
    fixed = [client.messages.create(**ask(f"現在日時: {start + timedelta(minutes=i):%Y-%m-%d %H:%M}\n{q}"))
             for i, q in enumerate(QUESTIONS)]
    assert all(c.usage.cache_read_input_tokens > 0 and c.usage.cache_creation_input_tokens == 0 for c in fixed)


def test_a1_haiku_5_5s_minimum_length_is_labelled_unconfirmed():
    """Appendix A.1 prints each model's minimum length; Haiku 5.5's source is third-party only (FACTS.md)."""
    n, confirmed = pricing.min_cacheable_tokens(DEMO)
    assert n == 512 and confirmed
    assert pricing.get_model(DEMO).sources["min_cacheable_tokens"].source.startswith("third-party")
    assert "（未確認: 第三者の情報のみで、公式のページでは確かめられない）" in LESSON.read_text(encoding="utf-8")


def test_a5_diagnostics_name_the_cause_usage_cannot(client):
    """A.5: a question change is no miss; a model switch is model_changed; a clock in system and a rewritten
    system are system_changed (the prose: usage shows one symptom, the diagnostics two causes)."""
    first = client.messages.create(**ask(QUESTIONS[0]), diagnostics={"previous_message_id": None})
    changes = {
        "question": ask(QUESTIONS[1]),
        "clock": dict(ask(QUESTIONS[1]), system=f"現在日時: 2026-12-01 11:00\n{SYSTEM}"),
        "model": ask(QUESTIONS[1], model=pricing.DEFAULT_MODEL),
        "system": dict(ask(QUESTIONS[1]), system=SYSTEM + "\n回答は表で書いてください。"),
    }
    got = {}
    for what, req in changes.items():
        r = client.messages.create(**req, diagnostics={"previous_message_id": first.id})
        reason = r.diagnostics.cache_miss_reason if r.diagnostics else None
        got[what] = reason.type if reason else None
    assert got == {"question": None, "clock": "system_changed", "model": "model_changed", "system": "system_changed"}


@pytest.fixture(scope="module")
def placements():
    """Section 7's three request shapes, sent as the lesson sends them."""
    lab = pc.manual_clock(ctxlab.make_client(offline=True))
    kw = dict(model=DEMO, system=messages.SYSTEM_PROMPT)
    single = {p: pc.run_single(lab, DOCS, QUESTIONS, p, gap_s=60, **kw) for p in pc.PLACEMENTS}
    conv = {p: pc.run_conversation(lab, DOCS, pc.CONVERSATION, p, tag="conv", gap_s=45, **kw) for p in pc.PLACEMENTS}
    second = {p: pc.run_conversation(lab, DOCS, pc.SECOND, p, tag="conv", gap_s=45, lead_s=45, **kw) for p in pc.PLACEMENTS}
    usd = lambda runs: {p: pc.run_usd(calls, DEMO) for p, calls in runs.items()}   # noqa: E731
    return {"single": single, "conv": conv, "second": second, "usd_single": usd(single), "usd_conv": usd(conv),
            "usd_two": usd({p: conv[p] + second[p] for p in pc.PLACEMENTS})}


def test_07_single_questions(placements):
    """「自動キャッシュだけだと…次の質問からは読めません」「明示の区切りのほうがわずかに安く」"""
    assert all(c.usage.cache_read_input_tokens == 0 for c in placements["single"]["auto"])
    usd = placements["usd_single"]
    assert usd["explicit"] < usd["both"] < usd["auto"]
    assert pc.shapes_table({"s": placements["single"]}, DEMO, "src").rows[1][1].startswith("◎")   # explicit marked


def test_07_one_conversation(placements):
    """「明示の区切りだけだと…送り直し」「併用も 1 本の会話では同じ動きで、合計も同じ」"""
    usd = placements["usd_conv"]
    assert abs(usd["auto"] - usd["both"]) < 1e-12 and usd["auto"] < usd["explicit"]
    uncached = [c.usage.input_tokens for c in placements["conv"]["explicit"]]
    assert uncached == sorted(uncached) and uncached[-1] > uncached[0]


def test_07_a_second_user(placements):
    """「自動キャッシュだけ…2 人目は文書を書き込み直します」「明示の区切りと併用…1 ターン目から文書を読み出せます」"""
    first_turn = {p: placements["second"][p][0].usage for p in pc.PLACEMENTS}
    assert first_turn["auto"].cache_read_input_tokens == 0
    assert first_turn["explicit"].cache_read_input_tokens > 0 and first_turn["both"].cache_read_input_tokens > 0
    usd = placements["usd_two"]
    assert usd["both"] < min(usd["auto"], usd["explicit"])


def test_07_exercise_4s_rule_is_what_the_simulation_says():
    """The model answer and the hint (「2 ターンの会話なら何回読まれますか」): conversations of two turns or fewer
    favour the fixed breakpoint; longer ones the moving one, with the documents' entry once there is a second user."""
    lab = pc.manual_clock(ctxlab.make_client(offline=True))
    for turns in range(1, 6):
        for conversations in (1, 2, 4):
            usd = pc.shape_costs(lab, DOCS, turns, conversations, model=DEMO, system=messages.SYSTEM_PROMPT,
                                 questions=pc.CONVERSATION + pc.SECOND)
            best = {p for p in usd if usd[p] - min(usd.values()) < 1e-9}
            rule = "explicit" if turns <= 2 else ("auto" if conversations == 1 else "both")
            assert rule in best, (turns, conversations, usd)


def test_c4_the_articles_figure_uses_another_read_multiple_than_todays_table():
    """C.4 says 「ここで r を変えています」: the article's r differs from today's Opus's (C.3's table)."""
    assert pc.COST_ARTICLE["r"] != pricing.get_model(pricing.DEFAULT_MODEL).cache_read_multiplier
