"""Lesson 08 (measure): the field questions through three methods, graded, and the reports of a run.

The pieces live in their own modules and are re-exported here, so the lesson has one import:

* :mod:`ctxlab.evaluation` (the home of answer grading) -- the rule grader (:func:`grade`, :data:`LEVELS`,
  :func:`facts_found`, :func:`stale_stated`, :func:`accuracy`), :class:`Graded`, and :func:`agreement` between two
  graders;
* :mod:`ctxlab.labs._analysis` -- :func:`mcnemar` and :func:`paired_interval` (paired uncertainty),
  :func:`error_causes` (why each answer was not correct) and :func:`edge_order`;
* :mod:`ctxlab.labs._methods` -- :class:`LongContext`, :class:`MetadataFilter` (lesson 06's
  filter) and :class:`RAG`, which differ only in who picks the documents of a request, and
  :class:`Folder` (whose files can change, for the freshness experiment).

This module runs them: :func:`run` asks every question with every method through the client
(real API or sandbox) with a progress bar, after :func:`ctxlab.api.budget.check` has seen the
estimated cost (:func:`plan`, :func:`estimate_cost`), and returns :class:`Graded` records;
:func:`format_table`, :func:`by_method`, :func:`compare_levels`, :func:`version_mixing` and
:func:`summary` report them (the figure is :func:`ctxlab.plots.measure.accuracy`).
:func:`position_sweep` moves the gold file through the prompt (online only: the sandbox ignores
positions).
"""
from __future__ import annotations

from collections import Counter, defaultdict
from functools import partial
from dataclasses import dataclass
from typing import Iterable

from ctxlab import _progress, _table, estimate
from ctxlab.api import budget, online
from ctxlab.api.client import is_offline, make_client
from ctxlab.api.messages import answer_text, question_request
from ctxlab.corpus import CATEGORIES, CATEGORY_JA, RULES_DIR, Question, by_file
from ctxlab.costs import pricing
from ctxlab.costs.usage import total_input
from ctxlab.labs._analysis import (CAUSE_JA, CAUSES, Paired, causes_table, edge_order, error_causes, format_causes,
                                   mcnemar, paired_interval, review_order, SPOT_CHECK, SpotCheck, spot_check)
from ctxlab.evaluation import (LEVELS, NOT_COVERED, SUPERSEDED, Agreement, Graded, accuracy, agreement,
                               facts_found, grade, normalize, says_not_covered, stale_stated, states_a_rule)
from ctxlab.evaluation.levels import GRADER_JA
from ctxlab.evaluation.uncertainty import accuracy_interval, grader_bias
from ctxlab.sandbox.answer import NOT_COVERED_TEXT
from ctxlab.labs._methods import RAG, Folder, LongContext, Method, MetadataFilter, Passage

__all__ = [
    "LEVELS", "NOT_COVERED", "SUPERSEDED", "normalize", "facts_found", "stale_stated", "says_not_covered",
    "states_a_rule", "grade", "Graded", "accuracy",
    "Agreement", "agreement", "Passage", "Folder", "Method", "LongContext", "MetadataFilter", "RAG",
    "table", "results_table", "format_table", "by_method", "levels_table", "compare_levels", "version_mixing",
    "version_mixing_table", "format_version_mixing", "summary_table",
    "Planned", "plan", "estimate_cost", "run", "summary", "place_at", "position_sweep",
    "Paired", "mcnemar", "paired_interval", "CAUSES", "CAUSE_JA", "error_causes", "causes_table", "format_causes",
    "review_order", "SPOT_CHECK", "SpotCheck", "spot_check", "edge_order",
    "SANDBOX_SOURCE", "WIDENED", "source_label",
]

#: what an offline table measured: the sandbox's extractive answers, not a model
SANDBOX_SOURCE = "sandbox（抽出型・モデルではない）"
#: what a bootstrap interval widened by the grader's measured error is called (it is no longer a 95% interval)
WIDENED = "採点の誤りで広げた区間"


def source_label(client, model: str | None = None) -> str:
    """The source line of a run's tables: the sandbox offline, the real API and the model online."""
    return SANDBOX_SOURCE if is_offline(client) else f"実 API（{model or pricing.DEFAULT_MODEL}）"


# ---------------------------------------------------------------- reports


def table(graded: Iterable[Graded]) -> dict[str, dict[str, Counter]]:
    """Counts of levels per method and per category: ``t[method][category][level]``."""
    t: dict[str, dict[str, Counter]] = defaultdict(partial(defaultdict, Counter))   # picklable (the graded build records it)
    for g in graded:
        t[g.method][g.question.category][g.level] += 1
        t[g.method]["all"][g.level] += 1
    return t


def results_table(graded: list[Graded], partial_weight: float = 0.5, source: str | None = None,
                  grader_agreement: Agreement | None = None, measured_on: str = "ラベル付き回答") -> _table.Table:
    """Per method, correct/partial/wrong and accuracy overall and per category, as a table.

    ``source`` (e.g. :func:`source_label`) is the table's caption; without it, the source is read from the answers
    themselves (:func:`ctxlab.api.online.source_line`). The grader that gave the levels (``Graded.grader``) is
    named above it. With ``grader_agreement`` (that grader measured on the labelled answers; ``measured_on`` names
    which of them) a column gives each accuracy's bootstrap interval widened by the grader's measured error
    (:func:`ctxlab.evaluation.uncertainty.accuracy_interval`), called 「採点の誤りで広げた区間」: once widened it is
    no longer a 95% interval of anything.
    """
    graded = list(graded)
    t = table(graded)
    cats = [c for c in CATEGORIES if any(c in t[m] for m in t)]
    wide = grader_agreement is not None
    columns = ["方式", "正しい", "惜しい", "違う", "正答率"] + ([WIDENED] if wide else []) + cats
    graders = "・".join(GRADER_JA.get(n, n) for n in dict.fromkeys(g.grader for g in graded))
    notes = []
    if wide:
        over, under = grader_bias(grader_agreement, partial_weight)
        notes.append(f"{WIDENED}は、質問の 95% ブートストラップ区間を、この採点が{measured_on} {grader_agreement.n} 件で"
                     f"人より高く付けた分 {over:.0%} だけ下へ、低く付けた分 {under:.0%} だけ上へ広げたもの。広げたあとは 95% 区間ではない")
    rows = []
    for m, per in t.items():
        allc = per["all"]
        row = [m, allc["correct"], allc["partial"], allc["wrong"], f"{accuracy(list(allc.elements()), partial_weight):.0%}"]
        if wide:
            _, lo, hi = accuracy_interval(list(allc.elements()), grader_agreement, partial_weight=partial_weight)
            row.append(f"[{lo:.0%}, {hi:.0%}]")
        for c in cats:
            n = sum(per[c].values())
            row.append(f"{per[c]['correct']}/{n} {accuracy(list(per[c].elements()), partial_weight):.0%}" if n else "-")
        rows.append(row)
    caption = f"出典: {source}" if source else online.source_line(graded)
    return _table.Table(columns, rows, caption=caption, align=["l"] + ["r"] * (len(columns) - 1),
                        intro=[f"採点: {graders}"], notes=notes)


def format_table(graded: list[Graded], partial_weight: float = 0.5, source: str | None = None,
                 grader_agreement: Agreement | None = None, measured_on: str = "ラベル付き回答") -> str:
    """:func:`results_table` as text."""
    return str(results_table(graded, partial_weight, source, grader_agreement, measured_on))


def by_method(graded: Iterable[Graded], partial_weight: float = 0.5) -> dict[str, dict[str, float]]:
    """Accuracy per method and category: ``r[method][category]``, with ``r[method]["all"]``."""
    return {m: {c: accuracy(list(cnt.elements()), partial_weight) for c, cnt in per.items()}
            for m, per in table(graded).items()}


def levels_table(before: Iterable[Graded], after: Iterable[Graded], category: str | None = "contradiction",
                 source: str | None = None) -> _table.Table:
    """How each question's level changed between two runs (per method), as a table.

    Rows are questions (of ``category``, or all when None), columns methods; a cell reads
    ``wrong`` when nothing changed and ``partial → correct`` when it did.
    """
    old = {(g.question.id, g.method): g for g in before}
    new = {(g.question.id, g.method): g for g in after}
    keys = [k for k in old if k in new and (category is None or old[k].question.category == category)]
    if not keys:
        raise ValueError("the two runs share no question of that category")
    methods = list(dict.fromkeys(m for _, m in keys))
    qids = list(dict.fromkeys(q for q, _ in keys))
    rows = []
    for q in qids:
        cells = [q]
        for m in methods:
            if (q, m) not in old or (q, m) not in new:
                cells.append("-")
                continue
            a, b = old[(q, m)].level, new[(q, m)].level
            cells.append(a if a == b else f"{a} → {b}")
        rows.append(cells)
    return _table.Table(["質問"] + methods, rows, caption=f"出典: {source}" if source else None,
                        align=["l"] * (len(methods) + 1))


#: the question categories as the lesson's figure and tables name them (the course's one set, and all of them)
CATEGORY_NAMES = {**CATEGORY_JA, "all": "全体"}


def category_table(acc: dict[str, dict[str, float]], offline: bool,
                   categories: Iterable[str] = ("single", "whole", "unanswerable")) -> _table.Table:
    """Accuracy per question category (rows) and method (columns) from :func:`by_method`, with the
    method that scored highest. Offline the accuracy is the sandbox's extracts, not a model's, and the
    table names no winner."""
    methods = list(acc)
    rows = []
    for cat in categories:
        values = {m: acc[m].get(cat, 0) for m in methods}
        top = [m for m, v in values.items() if v == max(values.values())]
        if offline:
            verdict = "出さない"
        else:
            verdict = "差なし" if len(top) == len(values) else "・".join(top)
        rows.append([f"{CATEGORY_NAMES.get(cat, cat)}（{cat}）", *(f"{values[m]:.0%}" for m in methods), verdict])
    summary = ["オフラインの正答率は sandbox の抜き出しで、モデルの正答率ではないので、勝ち負けは出しません。"] if offline else []
    return _table.Table(["質問の種類", *methods, "最も高い方式"], rows, align=["l", *["r"] * len(methods), "l"],
                        summary=summary)


def abstentions_table(graded: Iterable[Graded]) -> _table.Table:
    """Per method: how many answers were the sandbox's 「記載がありません」, how many of the questions the
    rules do not cover got it (right), and which questions the rules do cover got it anyway (a miss)."""
    graded = list(graded)
    rows = []
    for m in dict.fromkeys(g.method for g in graded):
        mine = [g for g in graded if g.method == m]
        said = [g for g in mine if NOT_COVERED_TEXT in g.answer]
        right = sum(g.question.category == "unanswerable" for g in said)
        n_unans = sum(g.question.category == "unanswerable" for g in mine)
        wrongly = [g.question.id for g in said if g.question.category != "unanswerable"]
        rows.append([m, len(said), f"{right}/{n_unans}", len(wrongly), " ".join(wrongly) or "-"])
    return _table.Table(["方式", "「記載なし」と答えた", "うち記載のない質問", "うち答えのある質問", "答えのある質問"],
                        rows, align=["l", "r", "r", "r", "l"])


def old_versions_table(before: dict[str, dict[str, float]], after: dict[str, dict[str, float]],
                       mixing: dict[str, dict[str, int]]) -> _table.Table:
    """The contradiction questions per method: accuracy (:func:`by_method`) with all versions sent
    (``before``) and with the current ones only (``after``), and, of the current-only run
    (:func:`version_mixing`), the answers that stated an old value, the correct ones and those still wrong."""
    rows = []
    for m in before:
        r = mixing[m]
        rows.append([m, f"{before[m]['all']:.0%}", f"{after[m]['all']:.0%}", f"{r['quoted_old']}/{r['n']}",
                     f"{r['correct']}/{r['n']}", r["n"] - r["correct"]])
    return _table.Table(["方式", "正答率（全版）", "正答率（現行版だけ）", "旧版の値を答えた", "正しい", "正しくないまま（問）"],
                        rows, align=["l", "r", "r", "r", "r", "r"], intro=["contradiction の質問の正答率と、現行版だけのときの内訳"])


def compare_levels(before: Iterable[Graded], after: Iterable[Graded], category: str | None = "contradiction") -> str:
    """:func:`levels_table` as text."""
    return str(levels_table(before, after, category))


def version_mixing(graded: Iterable[Graded], rules_dir=None) -> dict[str, dict[str, int]]:
    """For the contradiction questions, per method: how many requests carried a superseded
    version of the answer's regulation (``sent_old``), how many answers state a superseded
    fact as the current rule (``quoted_old``, :func:`stale_stated`), and how many were graded correct (``correct``), out of ``n``."""
    files = by_file(rules_dir or RULES_DIR)
    out: dict[str, dict[str, int]] = {}
    for g in graded:
        if g.question.category != "contradiction":
            continue
        row = out.setdefault(g.method, {"n": 0, "sent_old": 0, "quoted_old": 0, "correct": 0})
        old = {files[f].supersedes for f in g.question.gold_files if f in files and files[f].supersedes}
        row["n"] += 1
        row["sent_old"] += bool(old & set(g.files))
        row["quoted_old"] += bool(stale_stated(g.answer, g.question))
        row["correct"] += g.level == "correct"
    return out


def version_mixing_table(runs: dict[str, Iterable[Graded]], source: str | None = None) -> _table.Table:
    """:func:`version_mixing` of several runs (e.g. all versions / current only) as one table."""
    rows = []
    for name, graded in runs.items():
        for m, r in version_mixing(graded).items():
            n = r["n"]
            rows.append([name, m, f"{r['sent_old']}/{n}", f"{r['quoted_old']}/{n}", f"{r['correct']}/{n}"])
    return _table.Table(["渡した文書", "方式", "旧版も渡した", "旧版の値を答えた", "正しい"], rows,
                        caption=f"出典: {source}" if source else None, align=["l", "l", "r", "r", "r"])


def format_version_mixing(runs: dict[str, Iterable[Graded]]) -> str:
    """:func:`version_mixing_table` as text."""
    return str(version_mixing_table(runs))


# ---------------------------------------------------------------- running


@dataclass(frozen=True)
class Planned:
    method: Method
    question: Question
    request: dict
    files: tuple[str, ...]


def plan(methods: Iterable[Method], questions: Iterable[Question], *, model: str | None = None,
         max_tokens: int = 700) -> list[Planned]:
    """Every request of a run, method by method (so a method's cache stays warm)."""
    model = model or pricing.DEFAULT_MODEL
    questions = list(questions)
    out = []
    for m in methods:
        for q in questions:
            req, passages = m.request(q.question, model=model, max_tokens=max_tokens)
            out.append(Planned(m, q, req, tuple(dict.fromkeys(p.file for p in passages))))
    return out


def estimate_cost(planned: Iterable[Planned]) -> float:
    """Dollars a run would cost online: estimated tokens, output at ``max_tokens`` (an upper bound).

    A cached method reads its documents from the cache when it already sent the same
    documents earlier in the run (each entry is assumed to stay warm: a run takes minutes
    and every read refreshes the TTL), and writes them (5 minutes) otherwise; an uncached
    method pays the base rate. Offline the sandbox bills the same estimates.
    """
    memo: dict[str, int] = {}

    def doc_tokens_of(block: dict) -> int:
        text = block["source"]["data"]
        n = memo.get(text)
        if n is None:
            n = memo[text] = estimate.estimate_blocks([{**block, "source": {**block["source"], "data": ""}}])[0] \
                + estimate.estimate_text(text)
        return n

    total = 0.0
    seen: dict[int, set] = defaultdict(set)
    for p in planned:
        content = p.request["messages"][0]["content"]
        docs = [b for b in content if b.get("type") == "document"]
        doc_tokens = sum(doc_tokens_of(b) for b in docs)
        rest_request = {**p.request, "messages": [{"role": "user",
                                                    "content": [b for b in content if b.get("type") != "document"]}]}
        rest = estimate.estimate_request(rest_request)
        key = tuple(b["source"]["data"] for b in docs)
        model = p.request["model"]
        out = p.request["max_tokens"]
        if not docs or p.method.cache_ttl is None:
            cost = pricing.call_cost(model, input_tokens=doc_tokens + rest, output_tokens=out)
        elif key in seen[id(p.method)]:
            cost = pricing.call_cost(model, input_tokens=rest, cache_read_tokens=doc_tokens, output_tokens=out)
        else:
            cost = pricing.call_cost(model, input_tokens=rest, cache_write_5m_tokens=doc_tokens, output_tokens=out)
        seen[id(p.method)].add(key)
        total += cost.total
    return total


def _ask(client, request: dict, question: Question, method: str, files: tuple[str, ...], model: str) -> Graded:
    """Send one request and grade its answer (usage read by ``ctxlab.costs.usage``)."""
    msg = client.messages.create(**request)
    text = answer_text(msg)
    return Graded(question, method, text, grade(text, question), files, total_input(msg.usage),
                  pricing.usage_cost(msg.usage, model).total)


def run(methods: Iterable[Method], questions: Iterable[Question], client, *, model: str | None = None,
        max_tokens: int = 700, progress: bool = True, what: str | None = None,
        over_budget: str = "sandbox") -> list[Graded]:
    """Ask every question with every method and grade each answer automatically.

    The requests are planned first and their cost estimated; :func:`ctxlab.api.budget.check`
    prints the estimate and, online, refuses a run that does not fit ``CTXLAB_BUDGET_USD``.
    Then (``over_budget="sandbox"``) the run goes to the offline sandbox instead, and says
    so; with ``over_budget="raise"`` the :class:`~ctxlab.api.budget.BudgetExceeded` propagates.
    A text progress bar (:func:`ctxlab._progress.progress`) shows the progress. Returns one :class:`Graded` per (method, question).
    """
    if over_budget not in ("sandbox", "raise"):
        raise ValueError(f"over_budget must be 'sandbox' or 'raise', got {over_budget!r}")
    methods = list(methods)
    questions = online.limit_questions(questions, client)  # CTXLAB_QUESTIONS, online only
    if not methods or not questions:
        raise ValueError("run() needs at least one method and one question")
    names = [m.name for m in methods]
    if len(set(names)) != len(names):
        raise ValueError(f"two methods share a name: {names}")
    model = model or pricing.DEFAULT_MODEL
    planned = plan(methods, questions, model=model, max_tokens=max_tokens)
    what = what or f"{len(questions)} 問 × {len(methods)} 方式（{len(planned)} 回の呼び出し）"
    try:
        budget.check(estimate_cost(planned), client, what)
    except budget.BudgetExceeded as exc:
        if over_budget == "raise":
            raise
        print(f"{exc}\n→ 代わりにオフラインの sandbox で実行します（結果は sandbox の抜粋回答です）。")
        client = make_client(offline=True)

    bar = _progress.progress(total=len(planned), desc="呼び出し（質問 × 方式）", unit="回", enabled=progress)
    out = []
    try:
        for p in planned:
            bar.set_postfix_str(p.method.name)
            out.append(_ask(client, p.request, p.question, p.method.name, p.files, model))
            bar.update(1)
    finally:
        bar.close()
    return out


def summary_table(graded: Iterable[Graded]) -> _table.Table:
    """Per method: calls, mean input tokens, total cost, and how often the gold files were all sent."""
    rows: dict[str, list[Graded]] = defaultdict(list)
    for g in graded:
        rows[g.method].append(g)
    cells = []
    for m, gs in rows.items():
        answerable = [g for g in gs if g.question.gold_files]
        covered = sum(all(f in g.files for f in g.question.gold_files) for g in answerable)
        mean_in = sum(g.input_tokens for g in gs) / len(gs)
        cover = f"{covered}/{len(answerable)}" if answerable else "-"
        cells.append([m, len(gs), f"{mean_in:,.0f}", f"${sum(g.cost_usd for g in gs):.3f}", cover])
    return _table.Table(["方式", "呼び出し", "平均入力tok", "料金計", "正解ファイルを全部渡せた"], cells,
                        caption=online.source_line([g for gs in rows.values() for g in gs]),
                        align=["l", "r", "r", "r", "r"])


def summary(graded: Iterable[Graded]) -> str:
    """:func:`summary_table` as text."""
    return str(summary_table(graded))


# ---------------------------------------------------------------- position sweep (online)


def place_at(gold, others: Iterable, position: int, n_docs: int) -> list:
    """``n_docs`` documents with ``gold`` at 1-based ``position`` and the first others around it."""
    others = [d for d in others if d is not gold]
    if not 1 <= position <= n_docs:
        raise ValueError(f"position must be between 1 and n_docs ({n_docs}), got {position!r}")
    if len(others) < n_docs - 1:
        raise ValueError(f"need {n_docs - 1} other documents, got {len(others)}")
    docs = others[: n_docs - 1]
    return docs[: position - 1] + [gold] + docs[position - 1:]


def position_sweep(questions: Iterable[Question], docs: Iterable, client, *, positions=(1, 5, 10),
                   n_docs: int = 10, model: str = pricing.SMALL_MODEL, max_tokens: int = 300,
                   progress: bool = True, allow_offline: bool = False) -> dict[int, list[Graded]] | None:
    """Ask single-file questions with the gold file moved through ``positions`` among ``n_docs`` files.

    Online only by default: the sandbox picks sentences by BM25 and ignores their position, so
    offline the sweep would draw a flat line that says nothing about a model; it prints why and
    returns None. Online the estimate goes through :func:`ctxlab.api.budget.check` first (it raises
    :class:`~ctxlab.api.budget.BudgetExceeded` when the run does not fit). Nothing is cached.
    """
    if is_offline(client) and not allow_offline:
        print("オフラインなので位置の掃引は実行しません。sandbox の抜粋回答は BM25 で文を選び、文書の位置を"
              "見ないので、測っても平らな線になるだけです。ANTHROPIC_API_KEY を設定し、CTXLAB_BUDGET_USD で"
              "予算を決めてから、このセルを実行し直してください。")
        return None
    docs = list(docs)
    by_file = {d.file: d for d in docs}
    qs = [q for q in questions if q.category == "single" and len(q.gold_files) == 1 and q.gold_files[0] in by_file]
    qs = online.limit_questions(qs, client)  # CTXLAB_QUESTIONS, online only
    if not qs:
        raise ValueError("no single-file question whose gold file is among the documents")
    jobs = []
    for pos in positions:
        for q in qs:
            gold = by_file[q.gold_files[0]]
            others = [d for d in docs if d.file != gold.file]
            req = question_request(place_at(gold, others, pos, n_docs), q.question, model=model,
                                   max_tokens=max_tokens, cache_ttl=None)
            jobs.append((pos, q, req))
    est = sum(pricing.call_cost(model, input_tokens=estimate.estimate_request(r), output_tokens=max_tokens).total
              for _, _, r in jobs)
    budget.check(est, client, f"位置の掃引（{len(qs)} 問 × {len(positions)} 位置、{n_docs} 文書）")
    out: dict[int, list[Graded]] = {p: [] for p in positions}
    for pos, q, req in _progress.progress(jobs, desc="位置", unit="問", enabled=progress):
        out[pos].append(_ask(client, req, q, f"position {pos}", (q.gold_files[0],), model))
    return out
