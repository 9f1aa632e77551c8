"""Benchmark of the RAG lab's retrieval: index build and query latency. Prints figures, never fails.

    .venv/bin/python bench/bench_retrieval.py [--runs 5]

Corpora come from ``ctxlab.corpus.scaled`` (copies of the current regulations for more
fictional sites, articles shuffled), cut to 200,000 and 2,000,000 characters.

* index build: article chunks of 800 tokens (inline captions recognised) + fugashi
  tokenization + the bm25s index, with the tokenizer's cache cleared before each run
  (what a nightly re-index does); the parts are timed once more, separately;
* query latency: BM25 top 20 for the 30 field questions, the question's cached tokens
  dropped before each query (tokenization included), median and 95th percentile over
  all queries; the same for the hybrid (morphological + character-bigram BM25 fused with RRF);
* the lesson's own work: ``rag.Lab()`` and its table on the real corpus.

Goals (from the task): build of 200,000 characters under 2 s, a query under 5 ms (median).
Figures depend on the machine and on its load: run on a quiet machine before you compare.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _util import measure, report  # noqa: E402

from ctxlab import corpus, retrieval
from ctxlab.retrieval import tokens as search_tokens  # its token cache is cleared between runs
from ctxlab.labs import rag_lab as rag  # noqa: E402

GOAL_BUILD_S = 2.0
GOAL_QUERY_S = 0.005


def docs_of(chars: int) -> list[tuple[str, str]]:
    """(name, text) pairs from corpus.scaled, in order, until ``chars`` characters (the last one cut)."""
    base = sum(len(t) for _n, t in corpus.scaled(1))
    out, total = [], 0
    for name, text in corpus.scaled(chars // base + 1):
        take = text[: chars - total]
        out.append((name, take))
        total += len(take)
        if total >= chars:
            break
    return out


def chunk(docs) -> list[retrieval.Chunk]:
    return [c for name, text in docs
            for c in retrieval.chunk_by_articles(text, 800, 100, doc_id=name, inline_captions=True)]


def build(docs) -> tuple[list[retrieval.Chunk], retrieval.BM25Index]:
    search_tokens.clear_cache()
    chunks = chunk(docs)
    return chunks, retrieval.BM25Index.from_chunks(chunks)


def parts(docs) -> None:
    search_tokens.clear_cache()
    t0 = time.perf_counter()
    chunks = chunk(docs)
    t1 = time.perf_counter()
    toks = retrieval.tokenize_many([c.text for c in chunks])
    t2 = time.perf_counter()
    retrieval.BM25Index(tokens=toks)
    t3 = time.perf_counter()
    print(f"    parts: chunking {t1 - t0:.2f} s, tokenization {t2 - t1:.2f} s, bm25s index {t3 - t2:.2f} s "
          f"({len(chunks):,} chunks)")


def query_times(idx: retrieval.BM25Index, questions: list[str], rounds: int) -> list[float]:
    times = []
    for _ in range(rounds):
        for q in questions:
            search_tokens.clear_cache()
            t0 = time.perf_counter()
            idx.search(q, k=20)
            times.append(time.perf_counter() - t0)
    return times


def hybrid_times(lemma: retrieval.BM25Index, bigram: retrieval.BM25Index, questions: list[str],
                 rounds: int) -> list[float]:
    times = []
    for _ in range(rounds):
        for q in questions:
            search_tokens.clear_cache()
            t0 = time.perf_counter()
            a = [i for i, _ in lemma.search(q, k=50)]
            b = [i for i, _ in bigram.search(retrieval.bigram_tokens(q), k=50)]
            retrieval.rrf([a, b])[:20]
            times.append(time.perf_counter() - t0)
    return times


def quantiles(name: str, times: list[float], goal: float | None = None) -> None:
    report(name, times, goal, decimals=2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"machine: {os.cpu_count()} cores, load average {load:.1f} (a loaded machine gives slower figures)")
    questions = [q.question for q in corpus.questions()]
    retrieval.tokenize("準備")  # create the tagger outside the timings
    for chars, runs, goal in ((200_000, args.runs, GOAL_BUILD_S), (2_000_000, max(1, args.runs // 2), None)):
        docs = docs_of(chars)
        print(f"== {sum(len(t) for _n, t in docs):,} characters, {len(docs)} documents")
        report(f"index build ({chars:,} chars, cold tokenizer cache)", measure(lambda: build(docs), runs=runs, warmup=0),
               goal_s=goal)
        parts(docs)
        chunks, idx = build(docs)
        quantiles(f"BM25 query, top 20 ({len(chunks):,} chunks, tokenization incl.)",
                  query_times(idx, questions, rounds=5), goal=GOAL_QUERY_S)
        bigram = retrieval.BM25Index(tokens=[retrieval.bigram_tokens(c.text) for c in chunks])
        quantiles(f"hybrid query: BM25 + bigram BM25 + RRF ({len(chunks):,} chunks)",
                  hybrid_times(idx, bigram, questions, rounds=5))

    print("== the lesson's work on the real corpus (10_rag_lab)")

    def lesson() -> None:
        search_tokens.clear_cache()
        lab = rag.Lab()
        lab.table(20)
        for name in rag.METHODS:
            lab.curve(name, range(1, 51))

    report("rag.Lab() + table + recall curves (cold tokenizer cache)", measure(lesson, runs=max(1, args.runs // 2), warmup=0))


if __name__ == "__main__":
    main()
