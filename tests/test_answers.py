"""ctxlab.evaluation.rules: the grader grades the 30 questions' answers as a person would."""
import re

import pytest

from ctxlab import corpus
from ctxlab.corpus import Question
from ctxlab import evaluation as measure
from ctxlab.evaluation import rules as _rules
from ctxlab.evaluation import Graded
from ctxlab.widgets.grader import Grader

QUESTIONS = corpus.questions()
ANSWERABLE = [q for q in QUESTIONS if q.category != "unanswerable"]
CONTRADICTIONS = [q for q in QUESTIONS if q.category == "contradiction"]
NUMBERED = [(q, f) for q in ANSWERABLE for f in q.key_facts if re.search(r"\d", f)]


def ids(qs):
    return [q.id if isinstance(q, Question) else f"{q[0].id}-{q[1]}" for q in qs]


def q(facts=("5,000円",), stale=(), category="contradiction"):
    return Question("t", "在宅勤務手当は？", "", tuple(facts), () if category == "unanswerable" else ("x.txt",),
                    category, tuple(stale))


def stated(q):
    """An answer that states every key fact of ``q`` and nothing else."""
    return "、".join(q.key_facts) + "です。"


# ---------------------------------------------------------------- the 30 questions


def test_the_questions_cover_every_case():
    assert len(QUESTIONS) == 30
    assert {q.category for q in QUESTIONS} == set(corpus.CATEGORIES)
    assert len(CONTRADICTIONS) == 6 and all(q.stale_facts for q in CONTRADICTIONS)
    assert len(NUMBERED) >= 20


@pytest.mark.parametrize("x", QUESTIONS, ids=ids(QUESTIONS))
def test_every_gold_answer_grades_correct(x):
    assert measure.grade(x.answer, x) == "correct"


@pytest.mark.parametrize("x", ANSWERABLE, ids=ids(ANSWERABLE))
def test_the_key_facts_alone_grade_correct_and_all_but_one_partial(x):
    assert measure.grade(stated(x), x) == "correct"
    if len(x.key_facts) > 1:
        assert measure.grade("、".join(x.key_facts[1:]) + "です。", x) == "partial"


@pytest.mark.parametrize("x", CONTRADICTIONS, ids=ids(CONTRADICTIONS))
def test_contradictions_old_rule_alone_mixed_or_named_as_superseded(x):
    keys, old = "、".join(x.key_facts), "、".join(x.stale_facts)
    assert measure.grade(f"{old}です。", x) == "wrong"                      # the stale rule alone
    assert measure.grade(f"{keys}です。{old}です。", x) == "partial"         # old and new both as current
    assert measure.grade(f"{keys}です。また{old}とも定められています。", x) == "partial"
    assert measure.grade(f"旧規程の{old}は廃止され、現在は{keys}です。", x) == "correct"
    assert measure.grade(f"{keys}です（改定前は{old}）。", x) == "correct"
    assert measure.grade(f"以前は、{old}でした。今は{keys}です。", x) == "correct"  # the marker opens the sentence
    assert measure.grade(f"{old}ではなく、{keys}です。", x) == "correct"     # named as not the rule
    assert measure.stale_stated(f"{keys}です。{old}です。", x) == list(x.stale_facts)
    assert measure.stale_stated(x.answer, x) == []


@pytest.mark.parametrize("pair", NUMBERED, ids=ids(NUMBERED))
def test_a_key_number_with_a_digit_added_is_not_correct(pair):
    x, fact = pair
    others = [f for f in x.key_facts if f != fact]
    number = re.search(r"\d[\d,]*", fact)
    for changed in (fact[:number.start()] + "1" + fact[number.start():],      # prepended: 20日 -> 120日
                    fact[:number.end()] + "0" + fact[number.end():]):         # appended: 20日 -> 200日
        answer = "、".join([changed, *others]) + "です。"
        assert measure.grade(answer, x) != "correct", answer


@pytest.mark.parametrize("x", QUESTIONS, ids=ids(QUESTIONS))
def test_not_covered_is_right_only_for_unanswerable_questions(x):
    for answer in ("わかりません", "規程には記載がありません。"):
        assert measure.grade(answer, x) == ("correct" if x.category == "unanswerable" else "wrong")


@pytest.mark.parametrize("x", QUESTIONS, ids=ids(QUESTIONS))
def test_another_questions_fact_is_wrong(x):
    unrelated = {f for other in QUESTIONS if other.id != x.id for f in other.key_facts
                 if not any(mine in f or f in mine for mine in x.key_facts)}
    assert len(unrelated) >= 30
    for fact in sorted(unrelated):
        assert measure.grade(f"{fact}です。", x) == "wrong", fact


# ---------------------------------------------------------------- numbers


@pytest.mark.parametrize("answer, fact, found", [
    ("20日です", "20日", True), ("120日です", "20日", False), ("200日です", "20日", False),
    ("１５日", "5日", False), ("0.5日", "5日", False), ("２０日", "20日", True), ("20 日", "20日", True),
    ("12,000円", "2,000円", False), ("１２，０００円", "12,000円", True), ("12000円", "12,000円", True),
    ("1万円", "10,000円", True), ("1.5万円", "15,000円", True), ("1万5000円", "15,000円", True),
    ("10万円", "10,000円", False), ("1,000万円未満", "1,000万円", True), ("100万円", "1,000万円", False),
    ("10,000,000円", "1,000万円", True), ("月額5,000円ではありません", "5,000円", False),
])
def test_numbers_match_on_boundaries_with_units_width_and_separators(answer, fact, found):
    assert (measure.facts_found(answer, [fact]) == [fact]) is found


def test_normalize():
    assert measure.normalize("５０，０００ 円") == "50000円"
    assert measure.normalize("300万円未満") == "3000000円未満"
    assert measure.normalize("万一のとき") == "万一のとき"


# ---------------------------------------------------------------- the examples of the brief


def test_superseded_markers_in_one_sentence():
    c = q(facts=("5,000円",), stale=("3,000円",))
    assert measure.grade("旧規程の3,000円は廃止され、現在は5,000円です", c) == "correct"
    assert measure.grade("3,000円です", c) == "wrong"
    assert measure.grade("5,000円または3,000円です", c) == "partial"
    assert measure.grade("2024年6月までは3,000円でしたが、今は5,000円です", c) == "correct"
    assert measure.grade("5,000円です、3,000円です", c) == "partial"
    # a marker in a neighbouring clause that states the new value does not cover the stale one
    assert measure.grade("旧規程は廃止され5,000円、3,000円です", c) == "partial"


def test_unanswerable_answers_state_no_rule_of_their_own():
    u = q(facts=(), category="unanswerable")
    assert measure.grade("規程に記載がありません", u) == "correct"
    assert measure.grade("規程に記載がありません（2025年4月1日施行の第3条を確認しました）", u) == "correct"
    assert measure.grade("誕生日休暇は1日です", u) == "wrong"
    assert measure.grade("規程には記載がありませんが、誕生日休暇は年1日です", u) == "wrong"
    assert measure.states_a_rule("年1日") and not measure.states_a_rule("第3条、2025年4月1日")


def test_a_hedged_answer_to_an_answerable_question_is_partial():
    single = q(facts=("25日",), category="single")
    assert measure.grade("規程には記載がありませんが、25日だと思います", single) == "partial"
    assert measure.grade("25日です", single) == "correct"


class _AlwaysEqual:
    def __eq__(self, other):
        return True

    def __contains__(self, item):
        return True

    __hash__ = object.__hash__


class _SneakyStr(str):
    def __eq__(self, other):
        return True

    def __contains__(self, item):
        return True

    __hash__ = str.__hash__


@pytest.mark.parametrize("x", [QUESTIONS[0], CONTRADICTIONS[0], QUESTIONS[-1]], ids=["single", "contradiction",
                                                                                       "unanswerable"])
def test_a_non_string_answer_raises_and_a_str_subclass_is_read_as_its_text(x):
    for bad in (_AlwaysEqual(), None, 25, ["25日"]):
        with pytest.raises(TypeError, match="an answer is a str"):
            measure.grade(bad, x)
    assert measure.grade(_SneakyStr("違う答え"), x) == "wrong"
    assert measure.grade(_SneakyStr(x.answer), x) == "correct"
    with pytest.raises(TypeError):
        measure.grade(x.answer, _AlwaysEqual())


# ---------------------------------------------------------------- the person and the machine


def test_the_widget_and_the_grader_agree_on_the_30_gold_answers():
    graded = [Graded(x, "gold", x.answer, measure.grade(x.answer, x)) for x in QUESTIONS]
    gr = Grader(graded)
    for _ in graded:
        gr._buttons["correct"].click()       # a person marks every gold answer 正しい ...
        gr._next.click()                     # ... reads the reveal, then moves on
    assert len(gr.human) == 30 and set(gr.human.values()) == {"correct"}
    a = gr.agreement()
    assert (a.n, a.agree) == (30, 30)
    assert "30 件採点、自動採点と一致 30 件" in gr._summary.value
    # the same clicks on a wrong automatic grade would show as a disagreement
    off = [Graded(x, "gold", x.answer, "partial") for x in QUESTIONS[:2]]
    gr_off = Grader(off)
    gr_off._buttons["correct"].click()
    assert gr_off.agreement().agree == 0 and "不一致" in gr_off._feedback.value


# ---------------------------------------------------------------- the classes rules can read (issue: grade the grader)
# Each test builds its answers from the questions' own facts, so it tests a class, not a sentence.

TIME_FACTS = [(q, f) for q in ANSWERABLE for f in q.key_facts if re.search(r"\d(日|時間|分|年|か月)$", f)]
YEN_FACTS = [(q, f) for q in ANSWERABLE for f in q.key_facts if re.fullmatch(r"[\d,]+円", f)]
KANJI = "〇一二三四五六七八九"


def kanji(n: int) -> str:
    """n (below 10,000) in kanji numerals: 25 -> 二十五, 300 -> 三百."""
    out = ""
    for unit, name in ((1000, "千"), (100, "百"), (10, "十")):
        d, n = divmod(n, unit)
        if d:
            out += ("" if d == 1 else KANJI[d]) + name
    return out + (KANJI[n] if n else "")


@pytest.mark.parametrize("pair", NUMBERED, ids=ids(NUMBERED))
def test_a_key_number_in_kanji_or_full_width_is_found(pair):
    x, fact = pair
    m = re.search(r"\d+", fact.replace(",", ""))
    plain = fact.replace(",", "")
    value = int(m.group(0))
    man, rest = divmod(value, 10_000)
    as_kanji = plain[:m.start()] + (kanji(man) + "万" if man else "") + kanji(rest) + plain[m.end():]
    full = plain.translate(str.maketrans("0123456789", "０１２３４５６７８９"))
    for form in (as_kanji, full):
        assert measure.facts_found(f"規程では{form}です。", [fact], x.answer) == [fact], form


@pytest.mark.parametrize("pair", YEN_FACTS, ids=ids(YEN_FACTS))
def test_yen_written_with_sen_and_man_is_found_and_a_wrong_amount_is_not(pair):
    x, fact = pair
    value = int(fact[:-1].replace(",", ""))
    man, rest = divmod(value, 10_000)
    sen, rest = divmod(rest, 1000)
    form = (f"{man}万" if man else "") + (f"{sen}千" if sen else "") + (str(rest) if rest else "") + "円"
    assert measure.facts_found(f"月額{form}です。", [fact], x.answer) == [fact], form
    wrong = (f"{man}万" if man else "") + f"{sen + 1}千円"
    assert measure.facts_found(f"月額{wrong}です。", [fact], x.answer) == [], wrong


@pytest.mark.parametrize("pair", TIME_FACTS, ids=ids(TIME_FACTS))
def test_a_time_fact_in_another_slot_is_not_the_number_asked_for(pair):
    x, fact = pair
    assert measure.facts_found(f"{fact}です。", [fact], x.answer) == [fact]
    for changer in ("締めです。", "前までに申請します。", "後に通知されます。", "ごとに見直します。", "経過すると削除されます。"):
        answer = f"{fact}{changer}"
        assert measure.facts_found(answer, [fact], x.answer) == [], answer


KEYED = [(q, f) for q in ANSWERABLE for f in q.key_facts]


@pytest.mark.parametrize("pair", KEYED, ids=ids(KEYED))
def test_a_key_fact_under_a_negation_or_prohibition_is_not_stated(pair):
    x, fact = pair
    for answer in (f"{fact}は不要です。", f"{fact}であっても、一切認められていません。", f"{fact}ではなく、別の定めです。",
                   f"{fact}は禁止されています。", f"{fact}は使えず、ほかの方法になります。"):
        assert measure.facts_found(answer, [fact], x.answer) == [], answer
    # an obligation, "no problem" and a condition are not negations
    for answer in (f"{fact}でなければなりません。", f"{fact}で問題ありません。", f"操作しないと{fact}です。"):
        assert measure.facts_found(answer, [fact], x.answer) == [fact], answer


def test_the_negation_of_one_fact_does_not_reach_the_next_one():
    two = q(facts=("3日まで", "多要素認証"), category="multi")
    assert measure.grade("週3日までで、多要素認証は不要です。", two) == "partial"
    assert measure.grade("週3日までは不要で、多要素認証が必要です。", two) == "partial"
    assert measure.grade("週3日までで、多要素認証が必須です。", two) == "correct"


UNANSWERABLE = [q for q in QUESTIONS if q.category == "unanswerable"]


@pytest.mark.parametrize("x", UNANSWERABLE, ids=ids(UNANSWERABLE))
def test_an_abstention_followed_by_a_claim_about_the_topic_is_wrong(x):
    from ctxlab.retrieval import content_nouns
    topic = content_nouns(x.question)
    assert measure.grade(x.answer, x) == "correct"
    for abstain in ("規程には記載がありません。", "規程には定められていないようです。", "該当する記述は見当たりませんでした。",
                    "その定めは規程にありません。", "規程からは判断できません。"):
        assert measure.grade(abstain, x) == "correct", abstain
        assert measure.grade(abstain + "総務部に確認してください。", x) == "correct"
        for noun in topic:
            claim = f"{abstain}ただし{noun}は認められます。"
            if noun in _rules._uncovered_topic(x.question):
                assert measure.grade(claim, x) == "wrong", claim
                contrast = f"記載はありませんが、{noun}なら認められます。"
                assert measure.grade(contrast, x) == "wrong", contrast


@pytest.mark.parametrize("x", CONTRADICTIONS, ids=ids(CONTRADICTIONS))
def test_a_paraphrased_stale_number_is_stale_unless_named_as_changed(x):
    keys = "、".join(x.key_facts)
    cores = [re.search(r"\d[\d,]*(?:営業日|日|円)", f).group(0) for f in x.stale_facts]
    for core in cores:
        if any(core in k for k in x.key_facts):
            continue
        assert measure.grade(f"{keys}です。合計では{core}まで認められます。", x) == "partial"
        assert measure.grade(f"{core}まで認められます。", x) == "wrong"
        assert measure.grade(f"{core}から{keys}に引き上げられました。", x) == "correct"
        assert measure.grade(f"以前は{core}でしたが、今は{keys}です。", x) == "correct"
        assert measure.grade(f"{core}でしたが、{keys}に変わりました。", x) == "correct"


@pytest.mark.parametrize("text, normal", [
    ("月額5千円", "月額5000円"), ("1万5千円", "15000円"), ("1千万円未満", "10000000円未満"), ("二十五日", "25日"),
    ("三百万円", "3000000円"), ("満六十五歳", "満65歳"), ("十分な時間", "十分な時間"), ("十分間", "10分間"),
    ("一般に一切", "一般に一切"), ("万一のとき", "万一のとき"), ("２時間以内", "120分以内"),
    ("退職日をもって停止", "退職日に停止"), ("翌月5営業日目までに", "翌月5営業日以内に"),
])
def test_normalize_reads_numerals_and_equivalent_notations(text, normal):
    assert measure.normalize(text) == normal


@pytest.mark.parametrize("x", ANSWERABLE, ids=ids(ANSWERABLE))
def test_a_quoted_condition_is_not_an_abstention(x):
    # rules quoted by an extractive answer say 「分からない場合は」: that is a condition, not "the documents do not say"
    assert measure.grade(f"{stated(x)}分からない場合や見つからないときは、窓口に相談できます。", x) == "correct"
    assert measure.grade(f"{stated(x)}ただ、規程からは分からないです。", x) == "partial"
