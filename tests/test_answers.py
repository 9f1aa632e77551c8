"""ctxlab.evaluation.rules: the grader grades the 30 questions' answers as a person would."""
import re

import pytest

from ctxlab import corpus
from ctxlab.corpus import Question
from ctxlab import evaluation as measure
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
        gr._buttons["correct"].click()       # a person marks every gold answer 正しい
    assert len(gr.human) == 30 and set(gr.human.values()) == {"correct"}
    a = gr.agreement()
    assert (a.n, a.agree) == (30, 30)
    assert "30 件採点、自動採点と一致 30 件" in gr._summary.value
    # the same clicks on a wrong automatic grade would show as a disagreement
    off = [Graded(x, "gold", x.answer, "partial") for x in QUESTIONS[:2]]
    gr_off = Grader(off)
    gr_off._buttons["correct"].click()
    assert gr_off.agreement().agree == 0 and "不一致" in gr_off._feedback.value
