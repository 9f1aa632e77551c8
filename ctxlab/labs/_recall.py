"""Lesson 06's yardstick for a filter: filter recall on the field questions, and why each failure failed.

:func:`filter_recall` runs a filter (``question -> file names``) on the 30 field questions and
reports the share of answerable questions whose gold files all survive it (使い分けの記事 puts the
line at :data:`VIABLE_RECALL`, 90%), the share of gold files that survive, the result per
category, the rule violations (superseded files, more than ``MAX_DOCS`` files, names that are
not files) and, for every failure, its reason in Japanese.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from ctxlab import _table, corpus
from ctxlab.labs._bundles import MAX_DOCS

#: 使い分けの記事: the filter option is viable when at least 90% of the needed files survive it
VIABLE_RECALL = 0.9
#: Japanese names of the question categories (corpus.CATEGORIES)
CATEGORY_JA = corpus.CATEGORY_JA


@dataclass(frozen=True)
class QuestionResult:
    """One answerable question under a filter."""

    id: str
    category: str
    question: str
    gold: tuple[str, ...]
    kept: tuple[str, ...]
    missing: tuple[str, ...]
    reason: str

    @property
    def ok(self) -> bool:
        return not self.missing


@dataclass
class RecallReport:
    """Filter recall over the answerable questions (unanswerable ones have no gold files)."""

    results: list[QuestionResult]
    skipped: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    #: how many different (ordered) file lists the filter returned over all the questions: each is its own cache entry
    distinct_sets: int = 0

    @property
    def recall(self) -> float:
        """Share of answerable questions whose gold files all survive the filter."""
        return sum(r.ok for r in self.results) / len(self.results) if self.results else 0.0

    @property
    def file_recall(self) -> float:
        """Share of all gold files (over all questions) that survive the filter."""
        total = sum(len(r.gold) for r in self.results)
        return sum(len(r.gold) - len(r.missing) for r in self.results) / total if total else 0.0

    def by_category(self) -> dict[str, tuple[int, int]]:
        """category -> (questions passed, questions), in corpus.CATEGORIES order."""
        out: dict[str, tuple[int, int]] = {}
        for c in corpus.CATEGORIES:
            rs = [r for r in self.results if r.category == c]
            if rs:
                out[c] = (sum(r.ok for r in rs), len(rs))
        return out

    @property
    def failures(self) -> list[QuestionResult]:
        return [r for r in self.results if not r.ok]

    @property
    def viable(self) -> bool:
        """使い分けの記事's line: at least VIABLE_RECALL of the answerable questions keep their files."""
        return self.recall >= VIABLE_RECALL

    def table(self) -> _table.Table:
        """The filter recall over all and per question category, as a table (the totals above it)."""
        intro = [f"filter recall: {self.recall:.0%}（{sum(r.ok for r in self.results)}/{len(self.results)} 問）"
                 f"  ファイル単位: {self.file_recall:.0%}  {VIABLE_RECALL:.0%} の線: {'越える' if self.viable else '届かない'}"
                 f"  返した組み合わせ: {self.distinct_sets} 種"]
        rows = [[CATEGORY_JA[c], f"{ok}/{n}", f"{ok / n:.0%}", c] for c, (ok, n) in self.by_category().items()]
        summary = ["規則違反: " + "; ".join(self.violations[:5])] if self.violations else []
        return _table.Table(["質問の種類", "残った", "割合", "種類の名前"], rows, align=["l", "r", "r", "l"],
                            intro=intro, summary=summary)

    def format(self) -> str:
        """:meth:`table` as text."""
        return str(self.table())


def _reason(gold: Sequence[str], kept: Sequence[str], missing: Sequence[str], by: dict) -> str:
    if not missing:
        return ""
    if not kept:
        return "何も渡していない"
    order = list(corpus.DEPARTMENTS)
    gold_depts = sorted({by[g].dept for g in gold}, key=order.index)
    kept_depts = {by[k].dept for k in kept if k in by}
    if len(gold_depts) > 1:
        return "部署をまたぐ（" + "・".join(corpus.DEPARTMENTS[d] for d in gold_depts) + "）"
    if gold_depts[0] not in kept_depts:
        return f"別の部署を渡した（必要: {corpus.DEPARTMENTS[gold_depts[0]]}）"
    if any(not by[m].current for m in missing):
        return "旧版が必要（現行版だけを渡している）"
    return "部署は合っているが、固定セットに入っていない"


def filter_recall(filter_fn: Callable[[str], Iterable[str]], questions: Sequence | None = None) -> RecallReport:
    """Run ``filter_fn(question) -> file names`` on the field questions and count what survives.

    A gold file survives when the filter returns it. The report also lists rule
    violations: superseded files, more than MAX_DOCS files, names that are not files; and
    how many distinct file lists the filter returned (:attr:`RecallReport.distinct_sets`).
    """
    qs = corpus.questions() if questions is None else list(questions)
    by = corpus.by_file()
    results, skipped, violations, sets = [], [], [], set()
    for q in qs:
        kept = tuple(filter_fn(q.question))
        sets.add(kept)
        for f in kept:
            if f not in by:
                violations.append(f"{q.id}: {f!r} はファイルではない")
            elif not by[f].current:
                violations.append(f"{q.id}: 旧版 {f}")
        if len(kept) > MAX_DOCS:
            violations.append(f"{q.id}: {len(kept)} 件 > MAX_DOCS={MAX_DOCS}")
        if not q.gold_files:
            skipped.append(q.id)
            continue
        missing = tuple(g for g in q.gold_files if g not in kept)
        results.append(QuestionResult(q.id, q.category, q.question, tuple(q.gold_files), kept, missing,
                                      _reason(q.gold_files, kept, missing, by)))
    return RecallReport(results, skipped, violations, len(sets))


__all__ = ["VIABLE_RECALL", "CATEGORY_JA", "QuestionResult", "RecallReport", "filter_recall"]
