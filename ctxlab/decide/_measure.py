"""Lesson 11 (ctxlab decide): a user's questions file, and what decide measures through the API.

* :func:`read_questions` -- the course's question schema (:class:`ctxlab.corpus.Question`: question,
  answer, key facts, gold files) from JSONL or CSV; every problem named by line and field.
* :func:`count` -- ``count_tokens`` once per tokenizer family (online).
* :func:`latency` -- time to first token through streaming, uncached and cached, the median of a few
  calls, within the budget (online).
* :func:`accuracy` -- lesson 08's run (:func:`ctxlab.labs.measure.run`) of the three methods on the
  user's documents, graded by the model judge (:func:`ctxlab.evaluation.judge.judge`), within the budget.
* :func:`plan` -- offline: the calls an accuracy run would make and what they would cost on each model.
"""
from __future__ import annotations

import csv
import io
import json
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import pydantic

from ctxlab._schema import problems_of
from ctxlab.api import budget, tokens
from ctxlab.corpus import Question
from ctxlab.costs import pricing
from ctxlab.errors import BudgetExceeded, InputError, SchemaError
from ctxlab.evaluation import accuracy as level_accuracy
from ctxlab.evaluation import judge as judge_mod
from ctxlab.labs.measure import RAG, LongContext, Method, Passage, estimate_cost, plan as plan_calls, run
from ctxlab.retrieval.bm25 import BM25Index
from ctxlab.retrieval.chunk import chunk_by_articles

LIST_SEPARATORS = ("|", ";", "；")
#: calls per TTFT figure (the median is reported)
LATENCY_CALLS = 3
LATENCY_MAX_TOKENS = 16


def _split(value: str) -> list[str]:
    for sep in LIST_SEPARATORS:
        if sep in value:
            return [v.strip() for v in value.split(sep) if v.strip()]
    return [value.strip()] if value.strip() else []


def _row(raw: dict, n: int) -> dict:
    row = {k: v for k, v in raw.items() if v not in (None, "")}
    row.setdefault("id", f"q{n}")
    gold = row.get("gold_files", [])
    facts = row.get("key_facts", [])
    row.setdefault("category", "single" if gold or facts else "unanswerable")
    return row


def read_questions(path: str | Path, files: Sequence[str]) -> list[Question]:
    """Questions from JSONL (one object a line) or CSV (``key_facts`` and ``gold_files`` separated by ``|``).

    ``files`` are the document paths (relative to the folder); a gold file may be given by its
    path or by its file name. All problems raise one SchemaError, each with its line and field.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: 質問のファイルがありません。--questions に CSV か JSONL を指定してください。")
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(f"{path}: UTF-8 で読めません。UTF-8 で保存し直してください。") from None
    rows: list[tuple[int, dict]] = []
    problems: list[str] = []
    if path.suffix.lower() == ".csv":
        reader = csv.DictReader(io.StringIO(text))
        missing = [c for c in ("question", "answer", "key_facts", "gold_files") if c not in (reader.fieldnames or [])]
        if missing:
            raise SchemaError(path, [f"1 行目（見出し）: 列 {', '.join(missing)} がありません"])
        for raw in reader:
            n = reader.line_num
            row = {k: v for k, v in raw.items() if k is not None}
            for k in ("key_facts", "gold_files"):
                row[k] = _split(row.get(k) or "")
            rows.append((n, _row(row, n)))
    else:
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
            except json.JSONDecodeError as exc:
                problems.append(f"{n} 行目: JSON として読めません（{exc.msg}）")
                continue
            if not isinstance(raw, dict):
                problems.append(f"{n} 行目: 1 行に 1 つの JSON オブジェクトを書いてください")
                continue
            rows.append((n, _row(raw, n)))
    by_name = {Path(f).name: f for f in files}
    out = []
    for n, row in rows:
        try:
            q = pydantic.TypeAdapter(Question).validate_python(row)
        except pydantic.ValidationError as exc:
            problems += problems_of(exc, prefix=f"{n} 行目: ")
            continue
        gold = []
        for g in q.gold_files:
            if g in files or g in by_name:
                gold.append(g if g in files else by_name[g])
            else:
                problems.append(f"{n} 行目: gold_files: {g!r} はフォルダにありません")
        out.append(Question(q.id, q.question, q.answer, q.key_facts, tuple(gold), q.category, q.stale_facts))
    if not out and not problems:
        problems.append("質問が 1 つもありません")
    if problems:
        raise SchemaError(path, problems)
    return out


class SubfolderFilter(Method):
    """Metadata filtering by the folder's structure: the subfolder of the best-matching chunk, all its files.

    The key (the department) is the first subfolder; the question is routed to the department
    whose chunk BM25 ranks first. One department is one fixed prefix, so the cache stays warm per department.
    """

    label = "メタデータで絞る（サブフォルダ）"

    def __init__(self, docs, name: str = "filter"):
        self.docs = list(docs)
        self.name = name
        chunks = [c for d in self.docs for c in chunk_by_articles(d.text, 800, doc_id=d.file, title=d.title)]
        self.chunks = chunks
        self.index = BM25Index.from_chunks(chunks)

    def select(self, question: str) -> list[Passage]:
        hits = self.index.search(question, k=1)
        if not hits:
            return []
        dept = self.chunks[hits[0][0]].doc_id.split("/")[0]
        return [Passage(d.file, d.title, d.text) for d in self.docs if d.file.split("/")[0] == dept]


def methods(docs, with_filter: bool) -> list[Method]:
    out: list[Method] = [LongContext(docs)]
    if with_filter:
        out.append(SubfolderFilter(docs))
    out.append(RAG(docs))
    return out


def count(texts: list[str], client, models: Sequence[str]) -> dict[str, int]:
    """count_tokens once per tokenizer family of ``models`` (online); model id -> tokens."""
    by_family: dict[str, int] = {}
    out = {}
    for mid in models:
        fam = pricing.get_model(mid).tokenizer_family
        if fam not in by_family:
            by_family[fam] = tokens.count_documents(texts, client=client, model=mid).tokens
        out[mid] = by_family[fam]
    return out


@dataclass(frozen=True)
class Latency:
    uncached_s: float
    cached_s: float
    calls: int
    cost_usd: float


def _ttft(client, request: dict) -> float:
    start = time.perf_counter()
    with client.messages.stream(**request) as stream:
        for _event in stream:
            first = time.perf_counter() - start
            break
        else:  # pragma: no cover - a stream always starts with message_start
            first = time.perf_counter() - start
        stream.get_final_message()
    return first


def latency(texts: list[str], doc_tokens: int, client, model: str, calls: int = LATENCY_CALLS) -> Latency:
    """Median TTFT of ``calls`` uncached and ``calls`` cached requests of the documents (streaming).

    Uncached: no cache breakpoint. Cached: a first call writes (not timed), the next ``calls`` read.
    The estimate is checked against the budget first (BudgetExceeded when not one pair fits).
    """
    m = pricing.get_model(model)
    q = "この文書の要点を一文で。"
    docs = [{"type": "text", "text": t} for t in texts]
    plain = {"model": model, "max_tokens": LATENCY_MAX_TOKENS,
             "messages": [{"role": "user", "content": docs + [{"type": "text", "text": q}]}]}
    cached_docs = docs[:-1] + [{**docs[-1], "cache_control": {"type": "ephemeral"}}]
    cached = {**plain, "messages": [{"role": "user", "content": cached_docs + [{"type": "text", "text": q}]}]}
    one_plain = pricing.call_cost(m, input_tokens=doc_tokens + 20, output_tokens=LATENCY_MAX_TOKENS).total
    write = pricing.call_cost(m, input_tokens=20, cache_write_5m_tokens=doc_tokens, output_tokens=LATENCY_MAX_TOKENS).total
    read = pricing.call_cost(m, input_tokens=20, cache_read_tokens=doc_tokens, output_tokens=LATENCY_MAX_TOKENS).total
    left = budget.budget_usd() - budget.spent_usd()
    while calls > 1 and calls * (one_plain + read) + write > left:
        calls -= 1
    est = calls * (one_plain + read) + write
    budget.check(est, client, f"待ち時間の測定（{model}、キャッシュなし {calls} 回・書き込み 1 回・読み出し {calls} 回）")
    before = budget.spent_usd()
    uncached = statistics.median(_ttft(client, plain) for _ in range(calls))
    _ttft(client, cached)
    warm = statistics.median(_ttft(client, cached) for _ in range(calls))
    return Latency(uncached, warm, calls, budget.spent_usd() - before)


@dataclass(frozen=True)
class Accuracy:
    by_method: dict[str, float]          # method name -> accuracy by the judge
    n: int
    rows: list[dict]                     # the spot-check sheet: one row per answer
    cost_usd: float


def accuracy(docs, questions: list[Question], client, model: str, with_filter: bool) -> Accuracy:
    """The three methods answered and graded by the model judge, within the budget (BudgetExceeded otherwise)."""
    ms = methods(docs, with_filter)
    before = budget.spent_usd()
    graded = run(ms, questions, client, model=model, progress=False, over_budget="raise",
                 what=f"正答率の測定: {len(questions)} 問 × {len(ms)} 方式")
    verdicts = judge_mod.judge([(g.answer, g.question) for g in graded], client, questions=questions, progress=False)
    rows = [{"id": g.question.id, "method": g.method, "question": g.question.question, "answer": g.answer,
             "rule_grade": g.level, "judge_grade": v.level, "judge_reason": v.reason, "your_grade": ""}
            for g, v in zip(graded, verdicts)]
    by: dict[str, list[str]] = {}
    for g, v in zip(graded, verdicts):
        by.setdefault(g.method, []).append(v.level)
    return Accuracy({k: level_accuracy(v) for k, v in by.items()}, len(questions), rows, budget.spent_usd() - before)


def plan(docs, questions: list[Question], models: Sequence[str], with_filter: bool) -> list[tuple[str, int, float]]:
    """(model, calls, dollars at most) of an accuracy run with the judge, per model (offline estimates)."""
    ms = methods(docs, with_filter)
    out = []
    judge_reqs = [judge_mod.request(q, q.answer, questions=questions) for _ in ms for q in questions]
    judge_usd = judge_mod.estimate_cost(judge_reqs)
    for mid in models:
        planned = plan_calls(ms, questions, model=mid)
        out.append((mid, len(planned) + len(judge_reqs), estimate_cost(planned) + judge_usd))
    return out


__all__ = ["read_questions", "SubfolderFilter", "methods", "count", "Latency", "latency", "Accuracy", "accuracy",
           "plan", "BudgetExceeded"]
