"""ctxlab.labs.measure: grading, the harness (methods, folder, run, budget), reports, agreement, the grader widget."""
import dataclasses

import pytest

import ctxlab
from ctxlab import evaluation
from ctxlab.api import budget
from ctxlab import corpus
from ctxlab.labs import measure as evaluate
from ctxlab.labs import metadata_filtering
from ctxlab.corpus import Question
from ctxlab.labs.measure import Graded


def q(id="t1", category="single", facts=("20日",), stale=(), gold=("hr_yukyu_2025.txt",), text="有給の繰越上限は？"):
    return Question(id, text, "20日です。", tuple(facts), tuple(gold) if category != "unanswerable" else (),
                    category, tuple(stale))


def g(level, method="m", qid="t1", category="single"):
    return Graded(q(qid, category), method, "", level)


@pytest.fixture(scope="module")
def questions():
    return corpus.questions()


@pytest.fixture(scope="module")
def current():
    return corpus.load()


@pytest.fixture()
def client():
    return ctxlab.make_client(sandbox=ctxlab.Sandbox(time_scale=0))


# ---------------------------------------------------------------- grading


def test_grade_three_levels():
    two = q(facts=("部長以上", "8時間以上"))
    assert evaluate.grade("部長以上で、8 時間以上の路線です", two) == "correct"
    assert evaluate.grade("部長以上なら乗れます", two) == "partial"
    assert evaluate.grade("乗れません", two) == "wrong"


def test_grade_normalizes_width_spaces_and_separators():
    assert evaluate.grade("上限は月額５０００円", q(facts=("5,000円",))) == "correct"
    assert evaluate.grade("５，０００ 円", q(facts=("5,000円",))) == "correct"


def test_grade_contradiction_mixing_versions_is_partial():
    c = q(category="contradiction", facts=("20日",), stale=("10日を上限",))
    assert evaluate.grade("繰越しの上限は20日", c) == "correct"
    assert evaluate.grade("上限は20日。ただし10日を上限とする", c) == "partial"
    assert evaluate.grade("10日を上限とする", c) == "wrong"


def test_grade_unanswerable():
    u = q(category="unanswerable", facts=())
    assert evaluate.grade("規程に記載がありません", u) == "correct"
    assert evaluate.grade("誕生日休暇は1日です", u) == "wrong"


def test_accuracy_counts_partial_half_and_rejects_bad_levels():
    assert evaluate.accuracy(["correct", "partial", "wrong", "wrong"]) == pytest.approx(0.375)
    assert evaluate.accuracy(["partial"], partial_weight=0) == 0
    with pytest.raises(ValueError):
        evaluate.accuracy([])
    with pytest.raises(ValueError):
        evaluate.accuracy(["right"])


def test_by_method_and_format_table():
    graded = [g("correct", "a", "x1"), g("partial", "a", "x2", "multi"), g("wrong", "b", "x1")]
    acc = evaluate.by_method(graded)
    assert acc["a"]["all"] == pytest.approx(0.75)
    assert acc["a"]["multi"] == pytest.approx(0.5)
    assert acc["b"]["all"] == 0
    text = evaluate.format_table(graded)
    assert text.splitlines()[0] == "採点: ルール採点（ctxlab.evaluation.rules）"
    assert text.splitlines()[1].startswith("方式")
    assert "75%" in text and "multi" in text and evaluate.WIDENED not in text
    # the table says which grader gave the levels, and widens the interval by that grader's measured error
    judged = [dataclasses.replace(x, grader="judge:claude-sonnet-5") for x in graded]
    perfect = evaluation.compare(["correct", "partial", "wrong"], ["correct", "partial", "wrong"])
    noisy = evaluation.compare(["correct"] * 4 + ["wrong"] * 4, ["correct", "wrong", "wrong", "partial"] + ["wrong", "correct", "correct", "wrong"])
    t_perfect = evaluate.format_table(judged, grader_agreement=perfect)
    t_noisy = evaluate.format_table(judged, grader_agreement=noisy)
    assert "judge:claude-sonnet-5" in t_perfect.splitlines()[0] or "claude-sonnet-5" in t_perfect.splitlines()[0]
    assert evaluate.WIDENED in t_perfect and "95%区間" not in t_perfect and "広げたあとは 95% 区間ではない" in t_perfect and "高く付けた分 0% だけ下へ、低く付けた分 0%" in t_perfect
    # noisy: 3 of 8 graded correct were wrong or partial (1 + 1 + 0.5 points), 2 graded wrong were correct (2 points)
    assert "高く付けた分 31% だけ下へ、低く付けた分 25% だけ上へ" in t_noisy


def test_the_interval_widens_with_the_graders_measured_error():
    from ctxlab.evaluation.uncertainty import accuracy_interval
    levels = ["correct"] * 15 + ["wrong"] * 15
    plain = accuracy_interval(levels)
    perfect = accuracy_interval(levels, evaluation.compare(levels, levels))
    assert perfect == plain
    labels = ["correct"] * 10 + ["wrong"] * 5 + ["wrong"] * 10 + ["correct"] * 5
    noisy = accuracy_interval(levels, evaluation.compare(levels, labels))
    assert noisy[0] == plain[0] == 0.5
    assert noisy[2] - noisy[1] > plain[2] - plain[1]


def test_compare_levels_marks_changes():
    before = [g("partial", "lc", "c1", "contradiction"), g("wrong", "lc", "s1")]
    after = [g("correct", "lc", "c1", "contradiction"), g("correct", "lc", "s1")]
    t = evaluate.compare_levels(before, after)
    assert "partial → correct" in t and "s1" not in t
    assert "s1" in evaluate.compare_levels(before, after, category=None)
    with pytest.raises(ValueError):
        evaluate.compare_levels(before, after, category="whole")


# ---------------------------------------------------------------- methods and folder


def test_folder_update_is_seen_by_readers_of_the_folder_only(current):
    folder = evaluate.Folder(current)
    live = evaluate.LongContext(folder)
    once = evaluate.LongContext(folder.docs(), name="once")
    doc = next(d for d in current if d.file == "ga_bousai.txt")
    assert "2時間以内" in doc.text
    folder.update("ga_bousai.txt", doc.text.replace("2時間以内", "1時間以内"))
    assert folder.version == 1
    question = "安否確認のメッセージにはいつまでに返信しますか？"
    assert live.sees("1時間以内", question)
    assert not once.sees("1時間以内", question) and once.sees("2時間以内", question)
    # the corpus itself is untouched
    assert "2時間以内" in next(d for d in corpus.load() if d.file == "ga_bousai.txt").text
    with pytest.raises(KeyError):
        folder.update("nope.txt", "x")
    with pytest.raises(ValueError):
        folder.update("ga_bousai.txt", "  ")


def test_rag_index_is_stale_until_reindexed(current):
    folder = evaluate.Folder(current)
    rag = evaluate.RAG(folder)
    question = "大きな地震のとき、安否確認のメッセージにはいつまでに返信すればいいですか？"
    assert rag.sees("2時間以内", question), "the rule's chunk should be in the top 8"
    doc = next(d for d in current if d.file == "ga_bousai.txt")
    folder.update("ga_bousai.txt", doc.text.replace("2時間以内", "1時間以内"))
    assert rag.behind == 1
    assert not rag.sees("1時間以内", question)
    rag.reindex()
    assert rag.behind == 0 and rag.sees("1時間以内", question)


def test_rag_selects_at_most_k_chunks_of_bounded_size(current):
    rag = evaluate.RAG(current, k=8, chunk_tokens=800)
    passages = rag.select("出張の日当はいくらですか？")
    assert 0 < len(passages) <= 8
    assert all(len(p.text) <= 900 for p in passages)
    assert {p.file for p in passages} <= {d.file for d in current}
    with pytest.raises(ValueError):
        evaluate.RAG(current, k=0)


def test_metadata_filter_sends_exactly_what_lesson_06_selects(current, questions):
    f = evaluate.MetadataFilter(current)
    for x in questions:
        assert [p.file for p in f.select(x.question)] == list(metadata_filtering.select(x.question).files), x.id
    # at most MAX_DOCS files, never a whole 15-file department
    assert max(len(f.select(x.question)) for x in questions) <= metadata_filtering.MAX_DOCS
    fallback = [p.file for p in f.select("犬を連れてきてもいいですか")]
    assert fallback == list(metadata_filtering.BUNDLES[metadata_filtering.FALLBACK_BUNDLE].files)
    # the keys are lesson 06's table: full-width letters are matched after NFKC there too
    assert [p.file for p in f.select("ＵＳＢメモリは使えますか")] == list(metadata_filtering.BUNDLES["it"].files)
    assert not hasattr(evaluate, "DEPT_KEYWORDS") and not hasattr(evaluate, "departments")


def test_metadata_filter_on_an_unmanaged_folder_sends_old_versions_before_their_successor():
    all_versions = corpus.load(current_only=False)
    by = {d.file: d for d in all_versions}
    question = "有給休暇は翌年に何日まで繰り越せますか？"
    files = [p.file for p in evaluate.MetadataFilter(all_versions).select(question)]
    bundle = metadata_filtering.select(question).files
    old = by["hr_yukyu_2025.txt"].supersedes
    assert "hr_yukyu_2025.txt" in bundle and old and old in files
    assert files.index(old) == files.index("hr_yukyu_2025.txt") - 1
    assert [f for f in files if by[f].current] == list(bundle)
    # a folder that lacks a bundle's file sends the rest of the bundle
    partial = [d for d in corpus.load() if d.file != "hr_yukyu_2025.txt"]
    assert [p.file for p in evaluate.MetadataFilter(partial).select(question)] == \
        [f for f in bundle if f != "hr_yukyu_2025.txt"]


def test_on_all_versions_the_filter_sends_an_old_version_for_every_contradiction(questions, client):
    # lesson 08 (section 7) says: on the unmanaged folder long context and the filter always send an old version
    cq = [x for x in questions if x.category == "contradiction"]
    graded = evaluate.run([evaluate.MetadataFilter(corpus.load(current_only=False))], cq, client, progress=False)
    mix = evaluate.version_mixing(graded)["filter"]
    assert mix["sent_old"] == mix["n"] == len(cq)


def test_long_context_keeps_catalog_order_and_caches(current):
    lc = evaluate.LongContext(current)
    req, passages = lc.request("有給の繰越上限は？", model="claude-opus-5", max_tokens=100)
    assert [p.file for p in passages] == [d.file for d in current]
    content = req["messages"][0]["content"]
    assert content[-1] == {"type": "text", "text": "有給の繰越上限は？"}
    assert content[-2]["cache_control"] == {"type": "ephemeral"}
    rag_req, _ = evaluate.RAG(current).request("有給の繰越上限は？", model="claude-opus-5", max_tokens=100)
    assert not any("cache_control" in b for b in rag_req["messages"][0]["content"])


# ---------------------------------------------------------------- run


def test_run_grades_every_question_with_every_method(questions, current, client, capsys):
    qs = [x for x in questions if x.category in ("single", "contradiction")][:6]
    methods = [evaluate.LongContext(current), evaluate.MetadataFilter(current), evaluate.RAG(current)]
    graded = evaluate.run(methods, qs, client, progress=False)
    assert "[sandbox]" in capsys.readouterr().out  # the budget line is printed offline too
    assert len(graded) == 18
    assert [x.method for x in graded[:6]] == ["long_context"] * 6
    for x in graded:
        assert x.level == evaluate.grade(x.answer, x.question)
        assert x.input_tokens > 0 and x.cost_usd > 0 and x.files
    lc = [x for x in graded if x.method == "long_context"]
    rag = [x for x in graded if x.method == "rag"]
    assert min(x.input_tokens for x in lc) > 10 * max(x.input_tokens for x in rag)
    text = evaluate.summary(graded)
    assert "long_context" in text and "rag" in text


def test_run_checks_its_arguments(current, client, questions):
    with pytest.raises(ValueError):
        evaluate.run([], questions[:1], client)
    with pytest.raises(ValueError):
        evaluate.run([evaluate.LongContext(current), evaluate.LongContext(current)], questions[:1], client)
    with pytest.raises(ValueError):
        evaluate.run([evaluate.LongContext(current)], questions[:1], client, over_budget="ignore")


def test_estimate_reads_the_cache_for_repeated_documents(current, questions):
    lc = evaluate.LongContext(current)
    one = evaluate.estimate_cost(evaluate.plan([lc], questions[:1]))
    three = evaluate.estimate_cost(evaluate.plan([lc], questions[:3]))
    # the 2nd and 3rd calls read ~0.1x of what the first wrote at 1.25x
    assert one < three < 1.5 * one
    rag = evaluate.RAG(current)
    r3 = evaluate.estimate_cost(evaluate.plan([rag], questions[:3]))
    assert r3 < one


def test_estimate_matches_what_the_sandbox_bills(current, questions, client):
    lc = evaluate.LongContext(current)
    qs = questions[:3]
    est = evaluate.estimate_cost(evaluate.plan([lc], qs, max_tokens=700))
    graded = evaluate.run([lc], qs, client, progress=False, max_tokens=700)
    billed = sum(x.cost_usd for x in graded)
    assert billed <= est * 1.02  # output is estimated at max_tokens, an upper bound
    assert billed > est * 0.5


class _FakeOnline:
    """Looks online to budget.check (no sandbox attribute, a real-looking base URL)."""

    base_url = "https://api.anthropic.com"


def test_run_over_budget_online_falls_back_to_the_sandbox_or_raises(current, questions, monkeypatch, capsys):
    monkeypatch.setenv("CTXLAB_BUDGET_USD", "0.0001")
    lc = evaluate.LongContext(current)
    with pytest.raises(budget.BudgetExceeded):
        evaluate.run([lc], questions[:1], _FakeOnline(), progress=False, over_budget="raise")
    graded = evaluate.run([lc], questions[:1], _FakeOnline(), progress=False)
    assert "sandbox" in capsys.readouterr().out
    assert len(graded) == 1 and graded[0].answer.startswith("[sandbox")


def test_version_mixing_counts_old_versions_sent(questions, client):
    cq = [x for x in questions if x.category == "contradiction"]
    all_versions = corpus.load(current_only=False)
    lc_all = evaluate.run([evaluate.LongContext(all_versions)], cq, client, progress=False)
    lc_cur = evaluate.run([evaluate.LongContext(corpus.load())], cq, client, progress=False)
    mix_all = evaluate.version_mixing(lc_all)["long_context"]
    mix_cur = evaluate.version_mixing(lc_cur)["long_context"]
    assert mix_all["n"] == mix_cur["n"] == len(cq)
    assert mix_all["sent_old"] == len(cq) and mix_cur["sent_old"] == 0
    assert mix_cur["quoted_old"] == 0  # an old value cannot be quoted when it was not sent
    table = evaluate.format_version_mixing({"全版": lc_all, "現行版のみ": lc_cur})
    assert "全版" in table and "現行版のみ" in table


# ---------------------------------------------------------------- agreement and plots


def test_agreement_and_kappa():
    graded = [g("correct", qid="a"), g("wrong", qid="b"), g("partial", qid="c"), g("wrong", qid="d")]
    human = {("a", "m"): "correct", ("b", "m"): "wrong", ("c", "m"): "wrong"}
    a = evaluate.agreement(graded, human)
    assert (a.n, a.agree) == (3, 2)
    assert a.rate == pytest.approx(2 / 3)
    assert a.confusion[("partial", "wrong")] == 1
    assert a.kappa is not None and -1 <= a.kappa < 1
    perfect = evaluate.agreement(graded, {("a", "m"): "correct", ("b", "m"): "wrong"})
    assert perfect.kappa == pytest.approx(1.0)
    assert evaluate.agreement(graded, {}).n == 0
    assert "まだ" in str(evaluate.agreement(graded, {}))
    with pytest.raises(ValueError):
        evaluate.agreement(graded, {("a", "m"): "ok"})


def test_plot_accuracy_draws_one_bar_group_per_category():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ctxlab.plots import measure as measure_plot

    graded = [g("correct", "a", "x1"), g("wrong", "b", "x1"), g("partial", "a", "x2", "multi"), g("wrong", "b", "x2", "multi")]
    ax = measure_plot.accuracy(graded)
    assert len(ax.patches) == 2 * 3  # 2 methods x (single, multi, all)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["単一ファイル", "複数ファイル", "全体"]
    assert [p.get_height() for p in ax.patches] == [100, 50, 75, 0, 0, 0]  # method a, then method b
    _, mine = plt.subplots()
    assert measure_plot.accuracy(graded, ax=mine) is mine
    plt.close("all")


# ---------------------------------------------------------------- position sweep


def test_place_at():
    docs = list("abcdefghij")
    assert evaluate.place_at("X", docs, 1, 5) == ["X", "a", "b", "c", "d"]
    assert evaluate.place_at("X", docs, 5, 5) == ["a", "b", "c", "d", "X"]
    assert evaluate.place_at("X", docs, 3, 5)[2] == "X"
    with pytest.raises(ValueError):
        evaluate.place_at("X", docs, 6, 5)
    with pytest.raises(ValueError):
        evaluate.place_at("X", docs[:2], 1, 5)


def test_position_sweep_is_skipped_offline(questions, current, client, capsys):
    assert evaluate.position_sweep(questions, current, client) is None
    assert "オフライン" in capsys.readouterr().out


def test_position_sweep_runs_when_allowed(questions, current, client):
    singles = [x for x in questions if x.category == "single"][:2]
    out = evaluate.position_sweep(singles, current, client, positions=(1, 4), n_docs=4, progress=False,
                                  allow_offline=True)
    assert set(out) == {1, 4}
    assert all(len(v) == 2 for v in out.values())
    assert all(x.level in evaluate.LEVELS for v in out.values() for x in v)


# ---------------------------------------------------------------- the grader widget


def test_grader_widget_records_grades_and_agreement():
    from ctxlab.widgets.grader import Grader

    graded = [g("correct", qid="a"), g("wrong", qid="b"), g("partial", qid="c")]
    gr = Grader(graded)
    assert gr.index == 0 and gr.human == {}
    gr._buttons["correct"].click()           # what a person's click does
    assert gr.human == {("a", "m"): "correct"}
    # the reveal the prose describes, on the answer just graded: the automatic grade and the method
    assert gr.index == 0 and "一致" in gr._feedback.value and "自動「正しい」" in gr._feedback.value
    assert "<code>m</code>" in gr._header.value
    gr._next.click()                         # then on to the next answer
    assert gr.index == 1 and "<code>m</code>" not in gr._header.value
    gr.grade("partial")                     # b: automatic "wrong" -> disagreement
    assert "不一致" in gr._feedback.value
    a = gr.agreement()
    assert (a.n, a.agree) == (2, 1)
    assert "2 件採点" in gr._summary.value
    assert [x.level for x in gr.human_graded()] == ["correct", "partial"]
    gr.go(99)
    assert gr.index == 2 and gr._next.disabled
    gr._prev.click()
    assert gr.index == 1
    with pytest.raises(ValueError):
        gr.grade("ok")


def test_grader_escapes_html_and_hides_the_automatic_grade_before_grading():
    from ctxlab.widgets.grader import Grader

    x = dataclasses.replace(g("wrong", qid="a"), answer="<script>alert(1)</script>")
    gr = Grader([x])
    assert "<script>" not in gr._answer.value and "&lt;script&gt;" in gr._answer.value
    assert "違う" not in gr._feedback.value  # the machine's grade is shown only after the person's
    assert "<code>m</code>" not in gr._header.value  # blind: the method is hidden before grading
    gr.grade("wrong")
    assert "<code>m</code>" in gr._header.value
    assert "<code>m</code>" in Grader([x], blind=False)._header.value
    assert "application/vnd.jupyter.widget-view+json" in gr._repr_mimebundle_()


def test_grader_rejects_empty_and_duplicate_input():
    from ctxlab.widgets.grader import Grader

    with pytest.raises(ValueError):
        Grader([])
    with pytest.raises(ValueError):
        Grader([g("correct"), g("wrong")])


def test_the_spot_check_is_the_first_answers_of_review_order_and_says_when_it_is_not_done():
    from pathlib import Path
    qs = corpus.questions()[:10]
    run = [Graded(q, m, "a", ("correct", "wrong")[i % 2]) for i, q in enumerate(qs) for m in ("long_context", "rag")]
    chosen = evaluate.review_order(run)[:evaluate.SPOT_CHECK]
    none = evaluate.spot_check(run, {})
    assert none.chosen == tuple(chosen) and not none.done and none.agreement.n == 0
    assert f"あと {evaluate.SPOT_CHECK} 件" in none.format()
    # a person grades all of them, disagreeing on two
    human = {(g.question.id, g.method): g.level for g in chosen}
    for g in chosen[:2]:
        human[(g.question.id, g.method)] = "partial"
    human[(qs[-1].id, "zz")] = "wrong"           # an answer outside the spot check is not counted
    done = evaluate.spot_check(run, human)
    assert done.done and done.agreement.n == evaluate.SPOT_CHECK and done.agreement.agree == evaluate.SPOT_CHECK - 2
    labelled_ = evaluation.compare(["correct"] * 8 + ["wrong"] * 2, ["correct"] * 10)
    text = done.format(labelled_)
    assert f"食い違い 2 件 / {evaluate.SPOT_CHECK} 件（{2 / evaluate.SPOT_CHECK:.0%}）" in text
    assert "検証用のラベル付き回答での食い違い 2 件 / 10 件（20%）" in text and "終わっていません" not in text
    # lesson 08 §7 names the number of answers it measures
    lesson = (Path(__file__).parent.parent / "solutions" / "08_measure" / "08_measure.py").read_text(encoding="utf-8")
    assert "先頭 `measure.SPOT_CHECK` 件" in lesson and f"{evaluate.SPOT_CHECK} 件を採点し終えたら" in lesson


def test_rag_on_all_versions_sends_old_chunks_with_current_ones_on_every_contradiction_question():
    """What lesson 08 §11 (optional) prints and 09 q9's note b says (issue 41 item 7): no 'one version only' for RAG here."""
    docs = corpus.load(current_only=False)
    rag = evaluate.RAG(docs)
    version = {d.file: d for d in docs}
    contradictions = [q for q in corpus.questions() if q.category == "contradiction"]
    assert contradictions
    for q in contradictions:
        sent = {p.file for p in rag.select(q.question)}
        old = {version[f].supersedes for f in q.gold_files if version[f].supersedes}
        assert sent & old and sent & set(q.gold_files), (q.id, sent)
    from pathlib import Path
    key = (Path(__file__).parent.parent / "solutions" / "09_knowledge_check" / "knowledge_check.key.yaml").read_text(encoding="utf-8")
    assert "矛盾の質問のどれでも旧版のチャンクを現行版のチャンクと一緒に上位に入れました" in key
