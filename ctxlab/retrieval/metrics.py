"""Recall@k of a ranking, the one definition the course uses, by ids or by key facts.

The one measure
    recall@k = the share of the relevant items covered by the first ``k`` results, where
    each result covers some of the relevant items. :func:`recall_curve` computes it for
    every ``k`` up to a depth in one pass (past the end of the ranking it stays flat);
    ``any_hit=True`` is the looser definition (1 as soon as anything relevant is covered).
    ``1 - recall@20`` is the failure rate of Anthropic's Contextual Retrieval article.

By ids
    :func:`recall_at_k`: each result covers its own id (results may be ``(id, score)``
    pairs, what :meth:`ctxlab.retrieval.BM25Index.search` returns).

By key facts (lesson 10)
    A result (a chunk) is relevant when it comes from a gold file and its text holds at
    least one key fact; it covers the facts it holds. :func:`fact_key` is how a fact and a
    text are compared: :func:`ctxlab._text.fold` (NFKC, lower case) without whitespace and
    thousands separators, so width, spaces and 「50,000」/「50000」 do not matter.
    :func:`fact_recall` is recall@k over the question's distinct key facts,
    :func:`hit_recall` the any-hit version. Counting facts rather than chunks makes
    different chunkings comparable (their chunks differ, the facts do not).
"""
from __future__ import annotations

import re
from typing import Any, Iterable, Sequence

from ctxlab import _text

__all__ = [
    "check_k",
    "recall_curve",
    "recall_at_k",
    "mean_recall_at_k",
    "fact_key",
    "facts_held",
    "fact_coverage",
    "fact_recall",
    "hit_recall",
]

_SEP = re.compile(r"(?<=\d),(?=\d{3})")
_SPACE = re.compile(r"\s+")


def check_k(k: Any, name: str = "k") -> None:
    """Raise ValueError unless ``k`` is a positive int (True and False are not counts)."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"{name} must be a positive int, got {k!r}")


def recall_curve(covered: Iterable[Iterable[Any]], relevant: Iterable[Any], depth: int, *,
                 any_hit: bool = False) -> list[float]:
    """recall@1 .. recall@depth of one ranking.

    ``covered`` gives, for each result in rank order, the relevant items it covers (items
    not in ``relevant`` are ignored); ``relevant`` must not be empty. With ``any_hit`` a
    value is 1.0 from the first result that covers anything relevant, else 0.0.
    """
    check_k(depth, "depth")
    relevant = set(relevant)
    if not relevant:
        raise ValueError("relevant is empty: recall needs at least one relevant item")
    found: set = set()
    row: list[float] = []
    for items in covered:
        if len(row) == depth:
            break
        found.update(x for x in items if x in relevant)
        row.append((1.0 if found else 0.0) if any_hit else len(found) / len(relevant))
    last = row[-1] if row else 0.0
    return row + [last] * (depth - len(row))


def _ids(results: Iterable[Any]) -> list[Any]:
    out = []
    for r in results:
        if isinstance(r, tuple) and len(r) == 2 and isinstance(r[1], (int, float)):
            out.append(r[0])
        else:
            out.append(r)
    return out


def recall_at_k(retrieved: Iterable[Any], relevant: Any, k: int = 20) -> float:
    """Share of the relevant ids found in the first ``k`` retrieved ones.

    ``retrieved`` is a ranked list of ids or of ``(id, score)`` pairs (what
    :meth:`ctxlab.retrieval.BM25Index.search` returns); ``relevant`` is one id or a
    collection of ids. recall@20 = 0.95 means 5% of the relevant chunks were missed.
    """
    check_k(k)
    if isinstance(relevant, (str, int)) or not isinstance(relevant, Iterable):
        relevant = {relevant}
    return recall_curve(([i] for i in _ids(retrieved)), relevant, k)[k - 1]


def mean_recall_at_k(runs: Iterable[tuple[Iterable[Any], Any]], k: int = 20) -> float:
    """Mean recall@k over ``(retrieved, relevant)`` pairs, one per question."""
    values = [recall_at_k(r, rel, k) for r, rel in runs]
    if not values:
        raise ValueError("no questions given: pass at least one (retrieved, relevant) pair")
    return sum(values) / len(values)


def fact_key(text: str) -> str:
    """A text as key facts are compared: folded (NFKC, lower case), no whitespace or thousands separators.

    >>> fact_key("上限は ５０，０００ 円")
    '上限は50000円'
    """
    return _SPACE.sub("", _SEP.sub("", _text.fold(text)))


def _distinct(key_facts: Iterable[str]) -> list[str]:
    facts = list(dict.fromkeys(key_facts))
    if not facts:
        raise ValueError("a question without key facts (unanswerable) has no recall: leave it out")
    return facts


def facts_held(text: str, key_facts: Iterable[str]) -> set[str]:
    """The key facts (as given) that ``text`` holds, compared with :func:`fact_key`."""
    t = fact_key(text)
    return {f for f in key_facts if fact_key(f) in t}


def fact_coverage(ranking: Sequence[int], texts: Sequence[str], files: Sequence[str | None],
                  key_facts: Iterable[str], gold_files: Iterable[str], *, keyed: bool = False):
    """For each chunk of ``ranking``, the key facts it covers (none unless it comes from a gold file).

    ``ranking`` holds chunk indices (best first) into ``texts`` (what reaches the model) and
    ``files`` (the file each chunk comes from). ``keyed=True`` says the texts already went
    through :func:`fact_key` (a caller that measures many rankings folds them once).
    """
    pairs = [(f, fact_key(f)) for f in dict.fromkeys(key_facts)]
    gold = set(gold_files)
    for i in ranking:
        if files[i] in gold:
            t = texts[i] if keyed else fact_key(texts[i])
            yield {f for f, key in pairs if key in t}
        else:
            yield ()


def fact_recall(ranking: Sequence[int], texts: Sequence[str], files: Sequence[str | None],
                key_facts: Sequence[str], gold_files: Iterable[str], k: int = 20, *,
                any_hit: bool = False) -> float:
    """Share of the distinct ``key_facts`` held by gold-file chunks among the first ``k`` of ``ranking``.

    See :func:`fact_coverage` for the arguments; ``any_hit=True`` is :func:`hit_recall`.
    """
    check_k(k)
    facts = _distinct(key_facts)
    return recall_curve(fact_coverage(list(ranking)[:k], texts, files, facts, gold_files), facts, k,
                        any_hit=any_hit)[k - 1]


def hit_recall(ranking: Sequence[int], texts: Sequence[str], files: Sequence[str | None],
               key_facts: Sequence[str], gold_files: Iterable[str], k: int = 20) -> float:
    """1.0 when any relevant chunk is among the first ``k``, else 0.0 (the any-hit definition)."""
    return fact_recall(ranking, texts, files, key_facts, gold_files, k, any_hit=True)
