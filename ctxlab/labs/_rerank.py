"""Reranking for lesson 10: Claude reorders each question's first candidates (online only).

Offline, :func:`rerank` prints :data:`RERANK_SKIPPED` and returns None: the sandbox's
extractive answers cannot order passages. Online, the estimate goes through
:func:`ctxlab.api.budget.check` first. :mod:`ctxlab.labs.rag_lab` re-exports these names.
"""
from __future__ import annotations

import json
import re
from typing import Sequence

from ctxlab._progress import progress
from ctxlab.api import budget
from ctxlab.api.client import is_offline
from ctxlab.api.messages import answer_text
from ctxlab.costs import pricing
from ctxlab.estimate import estimate_request
from ctxlab.labs._contextual import CONTEXT_MODEL

__all__ = ["RERANK_INSTRUCTION", "RERANK_SKIPPED", "rerank_request", "parse_rerank", "rerank"]

RERANK_INSTRUCTION = (
    "次の質問に答えるのに役立つ順に、上の候補の番号を並べてください。"
    "役立つものを最大 {top_n} 件、JSON の整数の配列だけで答えてください（例: [3, 0, 7]）。\n質問: {question}"
)
RERANK_SKIPPED = "リランキングはオンライン（実 API）の手順です。オフラインでは実行せず、表には載せません。"


def rerank_request(question: str, candidates: Sequence[str], *, top_n: int = 20, model: str = CONTEXT_MODEL,
                   max_tokens: int = 300) -> dict:
    """A request that asks Claude to order ``candidates`` (chunk texts) for ``question``."""
    listing = "\n\n".join(f"<candidate id=\"{i}\">\n{t}\n</candidate>" for i, t in enumerate(candidates))
    return {"model": model, "max_tokens": max_tokens, "messages": [{"role": "user", "content": [
        {"type": "text", "text": listing},
        {"type": "text", "text": RERANK_INSTRUCTION.format(top_n=top_n, question=question)},
    ]}]}


def parse_rerank(text: str, n_candidates: int) -> list[int]:
    """The candidate numbers of a reranking answer, valid and without repeats, in order."""
    m = re.search(r"\[[\d,\s]*\]", text)
    if not m:
        return []
    try:
        numbers = json.loads(m.group())
    except json.JSONDecodeError:
        return []
    out: list[int] = []
    for i in numbers:
        if isinstance(i, int) and 0 <= i < n_candidates and i not in out:
            out.append(i)
    return out


def rerank(lab, client, method: str = "ctx_hybrid_articles", *, candidates: int = 50, top_n: int = 20,
           model: str = CONTEXT_MODEL) -> list[list[int]] | None:
    """Rerank each question's first ``candidates`` chunks with Claude (online only).

    ``lab`` is a :class:`ctxlab.labs.rag_lab.Lab` (its methods, texts, rankings and questions).

    Offline this prints :data:`RERANK_SKIPPED` and returns None (the sandbox's extractive
    answers cannot order passages). Online the estimate goes through
    :func:`ctxlab.api.budget.check` first; over the budget it returns None with the reason.
    The reordered top ``top_n`` is followed by the rest of the original ranking.
    """
    if is_offline(client):
        print(RERANK_SKIPPED)
        return None
    m = lab.method(method)
    texts = lab.texts(m)
    rankings = lab.rankings(m)
    reqs = [rerank_request(q.question, [texts[i] for i in r[:candidates]], top_n=top_n, model=model)
            for q, r in zip(lab.questions, rankings)]
    est = sum(pricing.call_cost(model, input_tokens=estimate_request(req), output_tokens=top_n * 4).total
              for req in reqs)
    try:
        budget.check(est, client, f"リランキング（{len(reqs)} 問 × 候補 {candidates} 件、{model}）")
    except budget.BudgetExceeded as exc:
        print(exc)
        return None
    out = []
    for r, req in progress(list(zip(rankings, reqs)), desc="リランキング", unit="問"):
        order = parse_rerank(answer_text(client.messages.create(**req)), min(candidates, len(r)))
        head = [r[i] for i in order]
        out.append(head + [i for i in r if i not in head])
    return out
