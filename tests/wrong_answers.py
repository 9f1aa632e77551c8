"""Plausible wrong answers to the exercises, and what the visible tests must say about each.

Each entry replaces the learner's function with a wrong version that a learner could plausibly
write (an edge case the task states but the code misses, an off-by-one, a call to the library's
twin of the exercise). ``tests/test_visible_tests.py`` runs the lesson, then each wrong version
against the exercise's *visible* test cell, and checks the verdict recorded here: a wrong answer
is caught by the visible test with a message, unless ``passes`` says why the visible test
deliberately lets it through (the hidden tests still catch it at grading).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Wrong:
    label: str
    source: str
    passes: str = ""   # non-empty: the visible test lets this one through on purpose, and why


WRONG: dict[str, dict[str, list[Wrong]]] = {
    "03_prompt_caching": {
        "diagnose-tests": [
            Wrong("no ValueError for fewer than two calls", '''
def diagnose(usages):
    records = [usage_dict(u) for u in usages]
    reads = [u["cache_read_input_tokens"] > 0 for u in records]
    writes = [u["cache_creation_input_tokens"] > 0 for u in records]
    if not any(reads) and not any(writes):
        return "nothing_cached"
    if not any(reads):
        return "never_hits"
    if all(reads):
        return "hit"
    return "write_then_hit"
'''),
            Wrong("any read counts as a hit", '''
def diagnose(usages):
    records = [usage_dict(u) for u in usages]
    if len(records) < 2:
        raise ValueError("need two calls")
    if any(u["cache_read_input_tokens"] > 0 for u in records):
        return "hit"
    if any(u["cache_creation_input_tokens"] > 0 for u in records):
        return "never_hits"
    return "nothing_cached"
'''),
            Wrong("reads dict keys directly (SDK objects, missing or None fields break it)", '''
def diagnose(usages):
    if len(usages) < 2:
        raise ValueError("need two calls")
    reads = [u["cache_read_input_tokens"] > 0 for u in usages]
    writes = [u["cache_creation_input_tokens"] > 0 for u in usages]
    if not any(reads) and not any(writes):
        return "nothing_cached"
    if not any(reads):
        return "never_hits"
    return "hit" if all(reads) else "write_then_hit"
'''),
        ],
        "first_paying_call-tests": [
            Wrong("math.ceil of the break-even (a tie counted as cheaper)", '''
import math
def first_paying_call(w, r):
    if w < 0 or r < 0 or r >= 1:
        raise ValueError("bad multipliers")
    return max(1, math.ceil((w - r) / (1 - r)))
'''),
            Wrong("no ValueError when r >= 1 (loops forever or returns nonsense)", '''
def first_paying_call(w, r):
    k = 1
    while not w + (k - 1) * r < k and k < 1000:
        k += 1
    return k
'''),
            Wrong("calls the library's twin", '''
def first_paying_call(w, r):
    return formulas.first_paying_call(w, r)
'''),
        ],
    },
    "10_rag_lab": {
        "rrf-tests": [
            Wrong("sorted from the lowest score", '''
def rrf(rankings, k=60):
    score = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            score[item] = score.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(score, key=lambda item: score[item])
'''),
            Wrong("keeps only the ids every ranking has", '''
def rrf(rankings, k=60):
    score = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            score[item] = score.get(item, 0.0) + 1.0 / (k + rank)
    common = set.intersection(*(set(r) for r in rankings)) if rankings else set()
    return sorted(common, key=lambda item: -score[item])
'''),
            Wrong("calls the library's twin", '''
def rrf(rankings, k=60):
    return retrieval.rrf(rankings, k=k)
'''),
            Wrong("ranks counted from 0", '''
def rrf(rankings, k=60):
    score = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking):
            score[item] = score.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(score, key=lambda item: -score[item])
'''),
        ],
        "failure-tests": [
            Wrong("returns recall, not 1 − recall", '''
def one_minus_recall_at_k(rankings, questions, texts, files, k=20):
    if k < 1:
        raise ValueError("k")
    values = []
    for ranking, q in zip(rankings, questions):
        facts = set(q.key_facts)
        if not facts:
            continue
        found = set()
        for i in list(ranking)[:k]:
            if files[i] in q.gold_files:
                found |= rag_lab.facts_held(texts[i], facts)
        values.append(len(found) / len(facts))
    if not values:
        raise ValueError("no answerable question")
    return sum(values) / len(values)
'''),
            Wrong("looks at the whole ranking, not the top k", '''
def one_minus_recall_at_k(rankings, questions, texts, files, k=20):
    if k < 1:
        raise ValueError("k")
    values = []
    for ranking, q in zip(rankings, questions):
        facts = set(q.key_facts)
        if not facts:
            continue
        found = set()
        for i in list(ranking):
            if files[i] in q.gold_files:
                found |= rag_lab.facts_held(texts[i], facts)
        values.append(len(found) / len(facts))
    if not values:
        raise ValueError("no answerable question")
    return 1 - sum(values) / len(values)
'''),
            Wrong("no ValueError for k < 1", '''
def one_minus_recall_at_k(rankings, questions, texts, files, k=20):
    values = []
    for ranking, q in zip(rankings, questions):
        facts = set(q.key_facts)
        if not facts:
            continue
        found = set()
        for i in list(ranking)[:k]:
            if files[i] in q.gold_files:
                found |= rag_lab.facts_held(texts[i], facts)
        values.append(len(found) / len(facts))
    return 1 - sum(values) / len(values) if values else 1.0
'''),
            Wrong("calls the library's twin", '''
def one_minus_recall_at_k(rankings, questions, texts, files, k=20):
    return 1 - lab.recall("bm25_articles", k)
'''),
        ],
    },
}

