"""Lesson 08's reading of a run (paired uncertainty, error causes, edge order)."""
from __future__ import annotations

import pytest

from ctxlab import corpus
from ctxlab.labs import measure
from ctxlab.labs.measure import Graded


@pytest.fixture(scope="module")
def qs():
    return {q.id: q for q in corpus.questions()}


def _run(qs, levels_a, levels_b):
    ids = sorted(qs)[: len(levels_a)]
    return ([Graded(qs[i], "a", "", lv) for i, lv in zip(ids, levels_a)]
            + [Graded(qs[i], "b", "", lv) for i, lv in zip(ids, levels_b)])


def test_mcnemar_counts_only_discordant_questions_and_gives_the_exact_p_value(qs):
    run = _run(qs, ["correct"] * 6 + ["wrong"] * 4, ["wrong"] * 6 + ["wrong"] * 4)
    p = measure.mcnemar(run, "a", "b")
    assert (p.n, p.only_a, p.only_b) == (10, 6, 0)
    assert p.p_value == pytest.approx(2 / 2 ** 6)
    tie = measure.mcnemar(_run(qs, ["correct", "wrong"], ["wrong", "correct"]), "a", "b")
    assert tie.p_value == 1.0
    same = measure.mcnemar(_run(qs, ["correct"] * 3, ["correct"] * 3), "a", "b")
    assert (same.only_a, same.only_b, same.p_value) == (0, 0, 1.0)
    with pytest.raises(ValueError):
        measure.mcnemar(run, "a", "nope")


def test_paired_interval_is_seeded_and_holds_the_difference(qs):
    run = _run(qs, ["correct"] * 5 + ["partial"] * 5, ["wrong"] * 5 + ["partial"] * 5)
    d, lo, hi = measure.paired_interval(run, "a", "b")
    assert d == pytest.approx(0.5) and lo <= d <= hi and lo > 0
    assert measure.paired_interval(run, "a", "b") == (d, lo, hi)
    flat = measure.paired_interval(_run(qs, ["correct"] * 4, ["correct"] * 4), "a", "b")
    assert flat == (0.0, 0.0, 0.0)


def test_error_causes_files_each_wrong_answer_under_its_first_cause(qs):
    q20, q01, q27 = qs["q20"], qs["q01"], qs["q27"]
    gs = [
        Graded(q01, "m", "わかりません", "wrong", files=()),                                 # gold file not sent
        Graded(q20, "m", "上限は40日を上限とします", "wrong", files=q20.gold_files),            # stale value stated
        Graded(q01, "n", "記載がありません", "wrong", files=q01.gold_files),                    # abstained
        Graded(q01, "o", "毎月20日", "wrong", files=q01.gold_files),                           # sent, missed
        Graded(q27, "o", "記載がありません", "correct", files=()),                              # correct: not listed
        Graded(q27, "p", "社員食堂は8時からです", "wrong", files=("hr_kyuyo_kitei.txt",)),        # no answer to miss
    ]
    c = measure.error_causes(gs)
    assert [g.question.id for g in c["m"]["not_sent"]] == ["q01"]
    assert [g.question.id for g in c["m"]["stale"]] == ["q20"]
    assert [g.question.id for g in c["n"]["abstained"]] == ["q01"]
    assert [g.question.id for g in c["o"]["missed"]] == ["q01"] and not any(c["o"][k] for k in ("grader", "stale"))
    human = {("q01", "o"): "correct", ("q27", "o"): "wrong"}
    ch = measure.error_causes(gs, human)
    assert [g.question.id for g in ch["o"]["grader"]] == ["q01", "q27"] and not ch["o"]["missed"]
    assert [g.question.id for g in c["p"]["claimed"]] == ["q27"] and not c["p"]["missed"]
    assert "送っていない" in measure.format_causes(c)
    # the order of the table is the order in which the causes are checked (a person's grade first)
    assert measure.CAUSES[0] == "grader" and measure.CAUSES[-1] == "missed"


def test_edge_order_puts_the_two_strongest_at_the_edges():
    assert measure.edge_order([]) == [] and measure.edge_order(["a", "b"]) == ["a", "b"]
    assert measure.edge_order(["a", "b", "c", "d"]) == ["a", "c", "d", "b"]
    assert measure.edge_order(["x", "y", "z"], [0.1, 0.9, 0.5]) == ["y", "x", "z"]
    with pytest.raises(ValueError):
        measure.edge_order(["x"], [1, 2])


def test_rag_edge_order_sends_the_same_chunks_in_the_edge_order(qs):
    docs = corpus.load()
    rank, edge = measure.RAG(docs), measure.RAG(docs, order="edge", name="rag_edge")
    a, b = rank.select(qs["q20"].question), edge.select(qs["q20"].question)
    assert b == measure.edge_order(a)
    with pytest.raises(ValueError):
        measure.RAG(docs, order="random")


def test_source_label_says_sandbox_offline():
    from ctxlab.api.client import make_client

    client = make_client(offline=True)
    assert measure.source_label(client) == measure.SANDBOX_SOURCE
    assert "sandbox（抽出型・モデルではない）" in measure.format_table([Graded(corpus.questions()[0], "m", "", "wrong")],
                                                                   source=measure.source_label(client))


def test_the_paired_interval_widens_with_the_graders_measured_error():
    from ctxlab import evaluation
    qs = corpus.questions()
    run = ([Graded(q, "a", "", "correct" if i % 3 else "wrong") for i, q in enumerate(qs)]
           + [Graded(q, "b", "", "correct" if i % 2 else "wrong") for i, q in enumerate(qs)])
    plain = measure.paired_interval(run, "a", "b")
    levels = ["correct"] * 20 + ["wrong"] * 20
    perfect = measure.paired_interval(run, "a", "b", agreement=evaluation.compare(levels, levels))
    noisy = measure.paired_interval(run, "a", "b", agreement=evaluation.compare(
        levels, ["correct"] * 14 + ["wrong"] * 6 + ["wrong"] * 14 + ["correct"] * 6))
    assert perfect == plain
    assert noisy[0] == plain[0]
    assert noisy[2] - noisy[1] > plain[2] - plain[1]


def test_review_order_starts_with_an_ordinary_answer_and_covers_every_group_early(qs):
    gold = [q for q in qs.values() if q.gold_files]
    q1, q2, q3 = gold[:3]
    odd = Graded(q1, "lc", "・内部通報の文", "correct", files=())           # correct, but the answer's file was not sent
    run = [odd,
           Graded(q1, "rag", "・文", "wrong", files=q1.gold_files),
           Graded(q2, "lc", "・文", "correct", files=q2.gold_files),     # the first ordinary answer
           Graded(q3, "lc", "・文", "correct", files=q3.gold_files),
           Graded(q2, "rag", "・文", "partial", files=q2.gold_files),
           Graded(q3, "rag", "・文", "wrong", files=q3.gold_files)]
    order = measure.review_order(run)
    assert sorted(map(id, order)) == sorted(map(id, run))            # every answer once, nothing added
    assert order[0] is run[2]
    groups = {(g.level, g.method) for g in run}
    head = order[:1 + len(groups)]
    assert {(g.level, g.method) for g in head} == groups            # one of each group before any repeats
    assert measure.review_order(run) == order                       # the order depends only on the run
    no_ordinary = [g for g in run if g.level != "correct" or not g.files]
    assert sorted(map(id, measure.review_order(no_ordinary))) == sorted(map(id, no_ordinary))
    assert measure.review_order([]) == []
