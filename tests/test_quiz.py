"""The question banks (ctxlab.quiz), the quiz widget, and lesson 09's notebooks."""
import html
import json
import re
from pathlib import Path

import pytest
import yaml

from ctxlab import corpus
from ctxlab.costs import formulas, pricing
from ctxlab.labs.metadata_filtering import VIABLE_RECALL
from ctxlab import cli
from ctxlab import quiz as qz
from ctxlab.plots import quiz as quiz_plots
from ctxlab.widgets.quiz import WRITE_LINE, Quiz, progress_text

ROOT = Path(__file__).resolve().parent.parent
BANK_FILE = ROOT / "quizzes" / "knowledge_check.yaml"
SOURCE_NB = ROOT / "solutions" / "09_knowledge_check" / "09_knowledge_check.ipynb"
RELEASE_NB = ROOT / "course" / "09_knowledge_check" / "09_knowledge_check.ipynb"
CHECKED_LESSONS = qz.LESSONS[:9]          # 00_start_here .. 08_measure


@pytest.fixture(scope="module")
def bank():
    """The knowledge check with its key (the instructor's key file)."""
    return qz.instructor_bank()


@pytest.fixture
def raw():
    with open(BANK_FILE, encoding="utf-8") as f:
        return yaml.safe_load(f)


# ------------------------------------------------------------------ the bank

def test_knowledge_check_has_nine_valid_questions(bank, raw):
    assert qz.problems(raw) == []
    assert len(bank) == 9
    assert len(set(bank.ids)) == 9
    for q in bank:
        assert q.lesson in CHECKED_LESSONS
        assert 3 <= len(q.choices) <= 5
        assert q.text and q.explanation and q.topic
        correct = [c.id for c in q.choices if q.is_correct(c.id)]
        assert len(correct) == 1, f"{q.id}: exactly one correct choice, got {correct}"
        for c in q.choices:
            assert c.text and c.note, f"{q.id}/{c.id}: every choice has a text and a note"


def test_questions_are_japanese_scenarios(bank):
    for q in bank:
        assert re.search(r"[\u3040-\u30ff]", q.text), f"{q.id}: the question is in Japanese"
    # scenario style: most questions end by asking what to do / how to judge
    asks = sum(bool(re.search(r"(どうしますか|何をしますか|どう返しますか|どう判断しますか|どう直しますか|どれですか|どうなりますか)", q.text))
               for q in bank)
    assert asks == len(bank)


def test_bank_covers_the_required_topics(bank):
    text = {q.id: " ".join([q.text, q.explanation] + [c.text + c.note for c in q.choices]) for q in bank}
    everything = " ".join(text.values())
    for needle in ("50%", "向きが逆", "2 回目から", "3 回目から", "cache_read_input_tokens", "区切りより前",
                   "9 割", "1 ファイル 1 ブロック", "構造化出力", "r − s", "Lost in the Middle", "先頭", "有効な版"):
        assert needle in everything, f"no question covers {needle!r}"
    assert {q.lesson for q in bank} >= set(CHECKED_LESSONS) - {"02_pricing"}


def test_bank_file_holds_no_key_no_note_no_explanation(raw):
    """The graded bank learners can reach holds questions and choices only; the rest is in the key file."""
    assert raw["graded"] is True and "salt" not in raw
    for q in raw["questions"]:
        assert not {"correct", "key", "explanation"} & set(q)
        assert all(set(c) == {"id", "text"} for c in q["choices"])
    public = qz.load()
    assert public.graded and all(not q.has_key for q in public)
    with pytest.raises(qz.QuizError, match="graded"):
        public.questions[0].correct_id()


def test_figures_in_the_bank_match_the_library(bank):
    opus = pricing.get_model("claude-opus-5")
    w5, w1, r = opus.cache_write_5m_multiplier, opus.cache_write_1h_multiplier, opus.cache_read_multiplier
    # q5: 5m pays from the 2nd call, 1h from the 3rd; two calls 20 minutes apart
    assert formulas.first_paying_call(w5, r) == 2 and formulas.first_paying_call(w1, r) == 3
    assert "2.1" in bank.question("q5").explanation and round(w1 + r, 2) == 2.1
    assert "2.5" in bank.question("q5").explanation and 2 * w5 == 2.5
    # q6: rho < r - s = 0.08, k = 50 -> about 0.12 per call, retrieval 0.17
    assert round(formulas.rho_asymptote(r, 0.02), 2) == 0.08
    assert round(formulas.cached_cost_per_call(50, w5, r), 2) == 0.12
    assert round(formulas.relative_cost(0, 1, 0.15, 0.02, w5, r), 2) == 0.17
    assert "0.08" in bank.question("q6").explanation and "2.4 万" in bank.question("q6").explanation
    assert round(0.08 * 300_000) == 24_000
    # q4: writing every time raises the input bill by about a quarter ("2 割以上")
    written = pricing.call_cost("claude-opus-5", input_tokens=400, cache_write_5m_tokens=197_000).total
    plain = pricing.call_cost("claude-opus-5", input_tokens=197_400).total
    assert 0.2 < written / plain - 1 < 0.3
    # q1: 580k of 1M is over the premise, the 420k estimate under it, and 420k characters at
    # 1.0-1.5 tokens each straddle it (lesson 01's range)
    assert 580_000 / 1_000_000 > 0.5 >= 420_000 / 1_000_000
    assert 420_000 * 1.0 / 1_000_000 <= 0.5 < 420_000 * 1.5 / 1_000_000
    assert "42〜63%" in bank.question("q1").explanation and round(420_000 * 1.5 / 1_000_000, 2) == 0.63
    # q7: lesson 06 counts filter recall on the 25 answerable questions of the 30; 20/25 is under its 90% line
    field = corpus.questions()
    assert len(field) == 30 and sum(q.category != "unanswerable" for q in field) == 25
    assert "30 問" in bank.question("q7").text and "25 問" in bank.question("q7").text
    assert "20 / 25 = 80%" in bank.question("q7").explanation and 20 / 25 == 0.8 < VIABLE_RECALL == 0.9
    # q9: the same 30 questions lesson 08 measures
    assert "30 問" in bank.question("q9").text


# ------------------------------------------------------------------ cues: nothing but understanding helps

MAX_CUE = 3     # of 9: what a rule that ignores the content may score at most (issue 16)


def cue_scores(bank, field="text"):
    """How many questions of ``bank`` each content-blind rule answers right.

    ``longest`` / ``shortest`` pick the choice whose ``field`` (text or note) is longest / shortest,
    ``longest N`` the N-th longest (so "always the second longest" is a rule too); a tie counts
    for the rule when the correct choice is among the tied ones. ``authored N`` / ``shown N``
    always pick the N-th choice in the authored order / in the order the widget shows
    (:meth:`Question.shuffled`).
    """
    scores = {}

    def add(rule, hit):
        scores[rule] = scores.get(rule, 0) + bool(hit)

    for q in bank:
        right = q.correct_id()
        lengths = {c.id: len(getattr(c, field)) for c in q.choices}
        mine = lengths[right]
        longer = sum(n > mine for n in lengths.values())
        not_shorter = sum(n >= mine for n in lengths.values())
        add("longest", mine == max(lengths.values()))
        add("shortest", mine == min(lengths.values()))
        for rank in range(2, len(lengths)):
            add(f"longest {rank}", longer < rank <= not_shorter)   # ties share their ranks
        for order, choices in (("authored", q.choices), ("shown", q.shuffled())):
            for n, c in enumerate(choices, 1):
                add(f"{order} {n}", c.id == right)
    return scores


def _format_cues(scores, total):
    return ", ".join(f"{rule} {n}/{total}" for rule, n in scores.items())


def test_no_cue_in_the_choices_gives_the_answer_away(bank):
    scores = cue_scores(bank)
    print(f"\ncue scores of {bank.id} (choice texts): {_format_cues(scores, len(bank))}")
    over = {rule: n for rule, n in scores.items() if n > MAX_CUE}
    assert not over, f"these content-blind rules score more than {MAX_CUE} of {len(bank)}: {over}"
    # every rule was applied to every question: the rules of one kind share out all 9 answers
    assert sum(scores[f"authored {n}"] for n in range(1, 5)) == len(bank) == sum(scores[f"shown {n}"] for n in range(1, 5))
    assert scores["longest"] + scores["longest 2"] + scores["longest 3"] + scores["shortest"] >= len(bank)


def test_the_correct_choice_is_mostly_neither_longest_nor_shortest(bank):
    middle = [q.id for q in bank
              if min(len(c.text) for c in q.choices) < len(q.choice(q.correct_id()).text) < max(len(c.text) for c in q.choices)]
    assert len(middle) >= 6, f"the correct choice is strictly between the shortest and the longest only in {middle}"
    # and the choices of one question are of similar length
    for q in bank:
        lengths = [len(c.text) for c in q.choices]
        assert max(lengths) <= 1.35 * min(lengths), f"{q.id}: choice lengths {lengths} differ too much"


def test_no_cue_in_the_notes_gives_the_answer_away(bank):
    """The notes appear after answering; the right one should not stand out by length either."""
    for q in bank:
        assert all(len(c.note) >= 40 for c in q.choices), f"{q.id}: every note explains, in a sentence or more"
    scores = cue_scores(bank, field="note")
    print(f"\ncue scores of {bank.id} (notes): longest {scores['longest']}/{len(bank)}, shortest {scores['shortest']}/{len(bank)}")
    assert scores["longest"] <= MAX_CUE and scores["shortest"] <= MAX_CUE, scores


def _bigrams(text):
    text = "".join(text.split())
    return {text[i:i + 2] for i in range(len(text) - 1)}


def overlap_score(bank, above) -> int:
    """How many questions the rule "pick the choice that shares the most of ``above(q)``" answers right.

    A choice's share is the part of its character bigrams found in the text; a tie counts for the rule
    when the correct choice is among the tied ones, unless every choice ties (the text says nothing).
    """
    hits = 0
    for q in bank:
        seen = _bigrams(above(q))
        share = {c.id: len(seen & _bigrams(c.text)) / len(_bigrams(c.text)) for c in q.choices}
        best = [cid for cid, v in share.items() if v == max(share.values())]
        hits += q.correct_id() in best and len(best) < len(share)
    return hits


def _shown_above_the_choices(bank):
    """The text the widget shows above the choices before answering (its text form: progress line, question)."""
    quiz = Quiz(qz.load(bank.id) if bank.id == qz.KNOWLEDGE_CHECK else bank)

    def above(q):
        quiz.go(bank.ids.index(q.id))
        return quiz.as_text().split("\n\n")[0]
    return above


def test_no_cue_in_the_text_above_the_choices(bank):
    """Issue 41: the line above each question named the idea of the right choice (q8 「出典（1 ファイル 1 ブロック、
    構造化出力とは併用しない）」). Words shared with the text shown above the choices must not point at the answer."""
    above = _shown_above_the_choices(bank)
    line_score = overlap_score(bank, lambda q: above(q).splitlines()[0])
    all_score = overlap_score(bank, above)
    topic_score = overlap_score(bank, lambda q: q.topic)
    print(f"\noverlap with the text above the choices of {bank.id}: the line above the question {line_score}/{len(bank)}, "
          f"line and question {all_score}/{len(bank)}; the topics (shown only after answering) {topic_score}/{len(bank)}")
    assert line_score <= MAX_CUE and all_score <= MAX_CUE, (line_score, all_score)
    # the check can fail: shown before answering, the topics pointed at the answer
    assert topic_score > MAX_CUE
    assert all(q.topic not in above(q) for q in bank)


def test_cue_scores_catch_a_bank_with_a_cue(tmp_path):
    """The cue check fails a bank whose answer is always the longest choice in the first place."""
    salt = "s"
    raw = {"id": "cued", "title": "T", "salt": salt, "questions": [{
        "id": f"x{n}", "lesson": "03_prompt_caching", "topic": "t", "question": "問い？", "explanation": "なぜ",
        "choices": [{"id": "a", "text": "正しくて、いちばん長い選択肢", "note": "注"}]
                   + [{"id": cid, "text": f"短い {cid}", "note": "注"} for cid in "bcd"],
        "key": qz.key_hash(salt, f"x{n}", "a"),
    } for n in range(9)]}
    path = tmp_path / "cued.yaml"
    path.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    scores = cue_scores(qz.load(path))
    assert scores["longest"] == 9 and scores["shortest"] == 0 and scores["longest 2"] == 0 and scores["authored 1"] == 9
    assert sum(scores[f"shown {n}"] for n in range(1, 5)) == 9


# ------------------------------------------------------------------ validation

def _valid_raw():
    salt = "s"
    return {"id": "t", "title": "T", "salt": salt, "questions": [{
        "id": "x1", "lesson": "03_prompt_caching", "topic": "t", "question": "問い？", "explanation": "なぜ",
        "choices": [{"id": cid, "text": f"選択肢 {cid}", "note": f"注 {cid}"} for cid in "abc"],
        "key": qz.key_hash(salt, "x1", "b"),
    }]}


def test_problems_accepts_a_valid_bank():
    assert qz.problems(_valid_raw()) == []


@pytest.mark.parametrize("breakage, expected", [
    (lambda q: q.update(key=qz.key_hash("s", "x1", "z")), "matches 0 choices"),
    (lambda q: q.update(key=None), "needs a 'key'"),
    (lambda q: q.update(lesson="11_nope"), "lesson"),
    (lambda q: q.update(explanation=""), "explanation"),
    (lambda q: q["choices"].pop(), "3 to 5 choices"),
    (lambda q: q["choices"].extend({"id": c, "text": "x", "note": "y"} for c in "dea"), "3 to 5 choices"),
    (lambda q: q["choices"][0].update(note=""), "needs a non-empty 'note'"),
    (lambda q: q["choices"][1].update(id="a"), "duplicate choice id"),
    (lambda q: q["choices"][1].update(correct=True), "never as 'correct'"),
])
def test_problems_finds_broken_questions(breakage, expected):
    raw = _valid_raw()
    breakage(raw["questions"][0])
    found = qz.problems(raw)
    assert any(expected in p for p in found), found


def test_two_matching_keys_are_rejected():
    raw = _valid_raw()
    # a salt collision cannot be forced, so give two choices the same id: the key then matches twice
    raw["questions"][0]["choices"][2]["id"] = "b"
    assert any("duplicate choice id" in p or "matches 2" in p for p in qz.problems(raw))


def test_load_reports_every_problem(tmp_path):
    raw = _valid_raw()
    raw["questions"][0]["lesson"] = "nope"
    raw["questions"][0]["explanation"] = ""
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    with pytest.raises(qz.QuizError) as e:
        qz.load(path)
    assert "lesson" in str(e.value) and "explanation" in str(e.value)


def test_quiz_for_collects_questions_by_lesson(tmp_path):
    raw = _valid_raw()
    (tmp_path / "a.yaml").write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    other = _valid_raw()
    other["questions"][0].update(id="x2", lesson="04_ttl", key=qz.key_hash("s", "x2", "c"))
    (tmp_path / "b.yaml").write_text(yaml.safe_dump(other, allow_unicode=True), encoding="utf-8")
    got = qz.quiz_for("03_prompt_caching", tmp_path)
    assert got.ids == ("x1",) and got.questions[0].correct_id() == "b"
    assert qz.quiz_for("04_ttl", tmp_path).questions[0].correct_id() == "c"
    assert len(qz.quiz_for("08_measure", tmp_path)) == 0
    with pytest.raises(qz.QuizError):
        qz.quiz_for("99_nope", tmp_path)
    # the lessons' own check questions, never the graded knowledge check's
    assert [q.id for q in qz.quiz_for("03_prompt_caching")] == ["c03-1", "c03-2", "c03-3"]


# ------------------------------------------------------------------ answers and scores

def test_answer_problems_and_score(bank):
    right = {q.id: q.correct_id() for q in bank}
    assert qz.answer_problems(bank, right) == []
    s = qz.score(bank, right)
    assert s.points == s.total == 9 and not s.wrong and str(s) == "9 問中 9 問正解"
    wrong = dict(right, q2=next(c for c in bank.question("q2").choice_ids if c != right["q2"]))
    s = qz.score(bank, wrong)
    assert s.points == 8 and s.wrong == ("q2",) and s.by_lesson["00_start_here"] == (0, 1)
    partial = {k: v for k, v in right.items() if k != "q9"}
    assert "q9" in qz.answer_problems(bank, partial)[0]
    assert qz.score(bank, partial).unanswered == ("q9",)
    assert any("'z'" in p for p in qz.answer_problems(bank, dict(right, q1="z")))
    assert any("q10" in p for p in qz.answer_problems(bank, dict(right, q10="a")))
    assert "辞書" in qz.answer_problems(bank, ["q1"])[0]
    with pytest.raises(AssertionError, match="答えのない問題"):
        qz.check_answers(bank, {})
    assert qz.score(bank, {}).points == 0 and qz.score(bank, None).unanswered == bank.ids


def test_plot_by_lesson(bank):
    import matplotlib
    matplotlib.use("Agg")
    right = {q.id: q.correct_id() for q in bank}
    ax = quiz_plots.by_lesson(bank, dict(right, q1="a"))
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[0] == "00_start_here" and "03_prompt_caching" in labels
    assert "9 問中 8 問正解" in ax.get_title()


def test_key_cli(capsys):
    assert cli.main(["quiz", "key", "knowledge_check", "q1", "b"]) == 0
    assert capsys.readouterr().out.strip() == qz.key_hash(qz.instructor_bank().questions[0].salt, "q1", "b")
    assert cli.main(["quiz", "check"]) == 0


# ------------------------------------------------------------------ shuffle

def test_shuffle_is_stable_and_not_the_authored_order(bank):
    again = qz.load(BANK_FILE)
    positions = []
    for q in bank:
        order = [c.id for c in q.shuffled()]
        assert sorted(order) == sorted(q.choice_ids)
        assert order == [c.id for c in again.question(q.id).shuffled()]
        assert order != list(q.choice_ids), f"{q.id}: shown in the authored order"
        positions.append(order.index(q.correct_id()))
    assert len(set(positions)) >= 3, f"the correct choice sits at too few positions: {positions}"


def test_shuffle_depends_only_on_the_question_id():
    def make(qid, texts):
        return qz.Question(qid, "04_ttl", "t", "q", tuple(qz.Choice(c, t, "n") for c, t in zip("abcd", texts)),
                           "e", "k", "salt")
    a = make("q5", ["1", "2", "3", "4"])
    b = make("q5", ["w", "x", "y", "z"])
    assert [c.id for c in a.shuffled()] == [c.id for c in b.shuffled()]
    # no id gives back the authored order (the identity is rotated away)
    for n in range(200):
        q = make(f"id{n}", "abcd")
        assert [c.id for c in q.shuffled()] != ["a", "b", "c", "d"]


# ------------------------------------------------------------------ the widget

def _wrong(q):
    return next(c for c in q.choice_ids if c != q.correct_id())


def test_widget_feedback_progress_and_score(bank):
    quiz = Quiz(bank)
    q1 = bank.questions[0]
    assert "01 / 09" in quiz.progress.value
    assert quiz.choices.value is None and quiz.submit_button.disabled and quiz.next_button.disabled
    # choices appear in the stable shuffled order
    assert [v for _, v in quiz.choices.options] == [c.id for c in q1.shuffled()]
    wrong = _wrong(q1)
    quiz.select(wrong)
    assert not quiz.submit_button.disabled
    quiz.submit_button.click()
    note = q1.choice(wrong).note
    assert "不正解" in quiz.feedback.value and note[:20] in quiz.feedback.value
    assert q1.explanation.splitlines()[0][:20] in quiz.feedback.value
    assert "01 / 09" in quiz.progress.value
    assert quiz.answers == {"q1": wrong}
    # the first answer counts: the choices are locked
    assert quiz.choices.disabled and quiz.submit_button.disabled
    quiz.choices.value = q1.correct_id()
    quiz.submit_button.click()
    assert quiz.answers == {"q1": wrong}
    for n, q in enumerate(bank.questions[1:], start=2):
        quiz.next_button.click()
        assert progress_text(n - 1, 9) == f"{n:02d} / 09" and f"{n:02d} / 09" in quiz.progress.value
        quiz.select(q.correct_id())
        quiz.submit_button.click()
        assert "正解" in quiz.feedback.value and "不正解" not in quiz.feedback.value
    assert quiz.next_button.description == "結果を見る"
    quiz.next_button.click()
    assert quiz.finished and "9 問中 8 問正解" in quiz.prompt.value
    assert "01_count_tokens: 0 / 1" in quiz.choice_list.value
    assert quiz.score().wrong == ("q1",)
    assert quiz.answers == dict({"q1": wrong}, **{q.id: q.correct_id() for q in bank.questions[1:]})
    # 「最初から」 asks first: 「やめる」 keeps every answer, the confirmation clears them
    quiz.restart_button.click()
    assert "9 問の答えを消して" in quiz.feedback.value and len(quiz.answers) == 9 and quiz.finished
    assert quiz.buttons.children == (quiz.confirm_button, quiz.cancel_button)
    quiz.cancel_button.click()
    assert len(quiz.answers) == 9 and quiz.finished and quiz.buttons.children == (quiz.restart_button,)
    quiz.restart_button.click()
    quiz.confirm_button.click()
    assert quiz.answers == {} and "01 / 09" in quiz.progress.value and not quiz.finished


def test_final_screen_names_the_variable_that_holds_the_widget(bank):
    from IPython.testing.globalipapp import get_ipython as start_ipython
    shell = start_ipython()
    check = Quiz(bank)
    shell.user_ns["check"] = check
    try:
        for q in bank.questions:
            check.select(q.correct_id())
            check.submit()
            check.next()
        # the knowledge check's final screen says how its answers reach the grade, with this variable's name
        assert "<code>answers = check.write_answers()</code>" in check.feedback.value
        assert "quiz." not in check.feedback.value
    finally:
        del shell.user_ns["check"]


def test_widget_without_selection_and_navigation(bank):
    quiz = Quiz(bank)
    assert quiz.submit() is None and quiz.answers == {}
    with pytest.raises(qz.QuizError):
        quiz.select("z")
    quiz.select(bank.questions[0].correct_id())
    assert quiz.submit() is True
    quiz.next()
    quiz.go(0)     # an answered question shows its answer and feedback again
    assert quiz.choices.value == bank.questions[0].correct_id() and quiz.choices.disabled
    assert "正解" in quiz.feedback.value and not quiz.next_button.disabled
    quiz.go(1)
    assert quiz.choices.value is None and not quiz.choices.disabled


def test_widget_renders_as_a_widget_and_escapes_html(bank, tmp_path):
    quiz = Quiz(bank)
    bundle = quiz._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    raw = _valid_raw()
    raw["questions"][0]["question"] = "<script>x</script> と `cache_control`"
    path = tmp_path / "esc.yaml"
    path.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    small = Quiz(qz.load(path))
    assert "<script>" not in small.prompt.value and "<code>cache_control</code>" in small.prompt.value
    assert "01 / 01" in small.progress.value


def test_as_text_shows_no_notes(bank):
    quiz = Quiz(bank)
    q1 = bank.questions[0]
    text = quiz.as_text()
    assert text.startswith("01 / 09") and q1.text.splitlines()[0] in text
    assert [line.split(")")[0].strip() for line in text.splitlines() if line.startswith("  ")] == \
        [c.id for c in q1.shuffled()]
    assert all(c.note not in text for c in q1.choices)
    quiz.select(q1.correct_id())
    quiz.submit()
    assert "正解" in quiz.as_text()
    quiz.go(len(bank))
    assert quiz.as_text().endswith("9 問中 1 問正解（未回答 8 問）")


def test_progress_text():
    assert progress_text(0, 9) == "01 / 09"
    assert progress_text(8, 9) == "09 / 09"
    assert progress_text(11, 120) == "012 / 120"


# ------------------------------------------------------------------ lesson 09's notebooks

def _cells(path):
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def test_released_notebook_has_no_plain_answer_key(bank):
    text = RELEASE_NB.read_text(encoding="utf-8")
    cells = _cells(RELEASE_NB)
    source = "\n".join("".join(c["source"]) for c in cells)
    for q in bank:
        right = q.correct_id()
        # no mapping question id -> correct choice id, in any quoting
        pattern = rf"""["']?\b{q.id}\b["']?\s*[:=]\s*["']{right}["']"""
        assert not re.search(pattern, source), f"{q.id}: the release maps it to its answer"
        # the stored key and the choice texts are not in the notebook at all (the widget reads the bank)
        assert q.key not in text
        for c in q.choices:
            assert c.text[:25] not in source, f"{q.id}/{c.id}: a choice text is written into the release"
    assert "correct_id" not in source and "is_correct" not in source
    # and the untouched release cannot pass: its answer cell's only code is the line that writes the clicks
    # (with none, it writes nothing and answers is {}: tests/test_quiz_submission.py)
    answer = [c for c in cells if c["metadata"].get("nbgrader", {}).get("grade_id") == "answers"]
    assert len(answer) == 1
    code = [line for line in "".join(answer[0]["source"]).splitlines() if line.strip() and not line.startswith("#")]
    assert code == [WRITE_LINE]


class _AlwaysEqual:
    def __eq__(self, other):
        return True

    __hash__ = object.__hash__


class _LyingStr(str):
    def __eq__(self, other):
        return True

    __hash__ = str.__hash__


def test_source_solution_and_hidden_tests_agree_with_the_bank(bank, capsys):
    cells = _cells(SOURCE_NB)
    by_id = {c["id"]: "".join(c["source"]) for c in cells}
    # the solution clicks through the widget, then runs the released line: answers are the clicks
    solution = by_id["answers"].replace("### BEGIN SOLUTION", "").replace("### END SOLUTION", "")
    namespace = {"quiz": Quiz(bank)}
    exec(solution, namespace)
    assert namespace["answers"] == {q.id: q.correct_id() for q in bank}
    assert by_id["answers"].rstrip().endswith(WRITE_LINE)
    points = 0
    for q in bank:
        cell = next(c for c in cells if c["id"] == f"{q.id}-tests")
        points += cell["metadata"]["nbgrader"]["points"]
        src = "".join(cell["source"])
        visible, hidden = src.split("### BEGIN HIDDEN TESTS")
        assert "check_answers" in visible and q.correct_id() not in re.findall(r'"(\w)"', visible)
        body = hidden.split("### END HIDDEN TESTS")[0]
        # the hidden test passes for the right choice only, and prints every choice's note
        for cid in q.choice_ids:
            env = {"answers": {q.id: cid}}
            if q.is_correct(cid):
                exec(body, env)
            else:
                with pytest.raises(AssertionError):
                    exec(body, env)
        printed = capsys.readouterr().out
        assert all(c.note in printed for c in q.choices) and f"正解: {q.correct_id()}" in printed
        # shortcuts earn nothing: an object equal to everything, a str that lies about equality
        for fake in (_AlwaysEqual(), _LyingStr("z")):
            with pytest.raises(AssertionError):
                exec(body, {"answers": {q.id: fake}})
    assert points == 9
    written = [c for c in cells if c["metadata"].get("nbgrader", {}).get("grade_id") == "why"]
    assert written and written[0]["cell_type"] == "markdown" and written[0]["metadata"]["nbgrader"]["points"] > 0


def test_a_learner_who_answered_some_questions_gets_their_explanations(bank, capsys):
    """A learner who answered fewer than all 9 is graded, and shown the explanation, on each one answered."""
    cells = {c["id"]: "".join(c["source"]) for c in _cells(SOURCE_NB)}
    answered = {q.id: (q.correct_id() if i % 2 else next(c for c in q.choice_ids if not q.is_correct(c)))
                for i, q in enumerate(bank) if i < 4}
    passed = []
    for q in bank:
        code = cells[f"{q.id}-tests"].replace("### BEGIN HIDDEN TESTS", "").replace("### END HIDDEN TESTS", "")
        try:
            exec(code, {"answers": dict(answered)})
            passed.append(q.id)
        except AssertionError as exc:
            if q.id not in answered:
                assert f"{q.id} に答えがありません" in str(exc)
        printed = capsys.readouterr().out
        assert (f"正解: {q.correct_id()}" in printed) == (q.id in answered), q.id
    assert passed == [q.id for i, q in enumerate(bank) if i < 4 and i % 2]


def test_final_screen_has_no_stray_answer_label_and_the_order_is_explained(bank):
    """Issue 44: the radio group's 「答え」 label stood alone above 「最初から」; the shuffled a–d order was
    explained only in lesson 09's prose."""
    from ctxlab.widgets.quiz import ORDER_NOTE

    quiz = Quiz(bank)
    for q in bank:
        shown = [c.id for c in q.shuffled()]
        assert (ORDER_NOTE in quiz.choice_list.value) == (shown != sorted(shown)), q.id
        assert quiz.choices.layout.display is None and html.escape(q.topic) not in quiz.progress.value
        quiz.select(q.correct_id())
        quiz.submit()
        assert html.escape(q.topic) in quiz.feedback.value   # the topic comes with the feedback, after answering
        quiz.next()
    assert quiz.finished and quiz.choices.layout.display == "none"
    assert quiz.buttons.children == (quiz.restart_button,)
    quiz.restart_button.click()
    quiz.confirm_button.click()
    assert quiz.choices.layout.display is None and quiz.choices.options
