"""Lesson 08's reading of a run: paired uncertainty, causes of the wrong answers, and the order of what is sent.

* :func:`mcnemar` compares two methods on the same questions (paired): only the questions on
  which exactly one of them was correct say anything about which is better. With ``b`` questions
  only A got right and ``c`` only B got right, the exact two-sided McNemar test asks how likely a
  split at least that uneven is when each such question is a fair coin (binomial, p = 1/2).
  It counts "correct" against everything else: a partial answer counts as not correct.
  :func:`paired_interval` gives a 95% interval of the difference in accuracy from a seeded paired
  bootstrap over the questions, with partial = 0.5 (the accuracy of the tables); with ``agreement``
  (the grader measured on the labelled answers) both ends move out by the grader's measured error
  (:func:`ctxlab.evaluation.uncertainty.grader_bias`: the points it gave above and below the labels).
  With few discordant questions the bootstrap has few distinct values to draw from: its interval
  shows the direction and rough size of a difference, not a precise range.
* :func:`error_causes` files each answer under one cause, in this order (:data:`CAUSES`): a person
  graded it differently from the machine (``grader``, only where a person graded it: checked first,
  also when the machine said correct); then, for the answers not graded correct, the gold files were
  not all sent (``not_sent``), a superseded value was stated as current (``stale``), the answer says
  the documents do not cover it (``abstained``), a question the documents do not answer got an answer
  of its own (``claimed``: there is no answer sentence to miss), or the files were sent and the
  answer still missed (``missed``).
* :func:`review_order` orders a run's answers for a person's spot check: first an ordinary answer (the
  method sent the answer's files and the machine graded it correct, so the first screen shows what the
  widget is for, not a corner case), then one answer of each (automatic grade, method) pair in turn, so that
  the first 10 to 15 graded answers already cover every method and every automatic grade.
* :func:`spot_check` is that spot check as a step of the measurement: the first :data:`SPOT_CHECK` answers of
  :func:`review_order`, and how often the person who graded them disagrees with the machine (a :class:`SpotCheck`,
  not done until the person has graded all of them).
* :func:`edge_order` puts the strongest passage first and the second strongest last (the
  ordering the 長文コンテキストの記事 recommends, from the U-shaped accuracy by position).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

from ctxlab import _table
from ctxlab.evaluation import LEVELS, Agreement, Graded, agreement, says_not_covered, stale_stated
from ctxlab.evaluation.uncertainty import bootstrap, grader_bias

__all__ = ["Paired", "mcnemar", "paired_interval", "CAUSES", "CAUSE_JA", "error_causes", "causes_table",
           "format_causes", "review_order", "SPOT_CHECK", "SpotCheck", "spot_check", "edge_order"]

#: how many answers of a run a person grades in lesson 08 §7 (the first of :func:`review_order`)
SPOT_CHECK = 15

CAUSES = ("grader", "not_sent", "stale", "abstained", "claimed", "missed")
CAUSE_JA = {"grader": "人と自動採点が食い違った", "not_sent": "答えのファイルを送っていない",
            "stale": "旧版の値を今の規則として答えた", "abstained": "送ったが「記載がない」と答えた",
            "claimed": "記載のない質問に答えを作った", "missed": "送ったが答えの文を拾えなかった"}

_SCORE = {"correct": 1.0, "partial": 0.5, "wrong": 0.0}


@dataclass(frozen=True)
class Paired:
    """Two methods on the same questions: who alone got which right, and the exact McNemar p-value."""

    a: str
    b: str
    n: int
    only_a: int
    only_b: int
    p_value: float

    def __str__(self) -> str:
        return (f"{self.a} vs {self.b}: {self.n} 問のうち {self.a} だけ正しい {self.only_a} 問、"
                f"{self.b} だけ正しい {self.only_b} 問（惜しいは正しくない側） → McNemar の正確検定 p = {self.p_value:.2f}")


def _by_question(graded: Iterable[Graded], method: str) -> dict[str, Graded]:
    out = {g.question.id: g for g in graded if g.method == method}
    if not out:
        raise ValueError(f"no answer of method {method!r} in the run")
    return out


def _pairs(graded: Sequence[Graded], a: str, b: str) -> list[tuple[Graded, Graded]]:
    ga, gb = _by_question(graded, a), _by_question(graded, b)
    shared = [q for q in ga if q in gb]
    if not shared:
        raise ValueError(f"{a!r} and {b!r} answered no question in common")
    return [(ga[q], gb[q]) for q in shared]


def mcnemar(graded: Sequence[Graded], a: str, b: str) -> Paired:
    """Exact two-sided McNemar test of "correct" between methods ``a`` and ``b`` on their shared questions."""
    pairs = _pairs(list(graded), a, b)
    only_a = sum(x.level == "correct" and y.level != "correct" for x, y in pairs)
    only_b = sum(y.level == "correct" and x.level != "correct" for x, y in pairs)
    d = only_a + only_b
    if d == 0:
        p = 1.0
    else:
        tail = sum(math.comb(d, i) for i in range(min(only_a, only_b) + 1)) / 2 ** d
        p = min(1.0, 2 * tail)
    return Paired(a, b, len(pairs), only_a, only_b, p)


def paired_interval(graded: Sequence[Graded], a: str, b: str, *, rounds: int = 2000, seed: int = 0,
                    level: float = 0.95, agreement: Agreement | None = None) -> tuple[float, float, float]:
    """(difference, low, high): accuracy of ``a`` minus ``b`` (partial = 0.5) and a paired bootstrap interval,
    widened by the grader's measured error when ``agreement`` is given (see the module docstring)."""
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level!r}")
    diffs = [_SCORE[x.level] - _SCORE[y.level] for x, y in _pairs(list(graded), a, b)]
    n = len(diffs)
    lo, hi = bootstrap(diffs, rounds=rounds, seed=seed, level=level)
    over, under = grader_bias(agreement)
    lo, hi = max(-1.0, lo - over - under), min(1.0, hi + over + under)
    return sum(diffs) / n, lo, hi


def _cause(g: Graded) -> str:
    if g.question.gold_files and not all(f in g.files for f in g.question.gold_files):
        return "not_sent"
    if stale_stated(g.answer, g.question):
        return "stale"
    if g.question.gold_files and says_not_covered(g.answer):
        return "abstained"
    if not g.question.gold_files:
        return "claimed"
    return "missed"


def error_causes(graded: Iterable[Graded], human: dict | None = None) -> dict[str, dict[str, list[Graded]]]:
    """``r[method][cause]``: the answers not graded correct, each under its first cause (see the module doc).

    ``human`` is a person's grades by ``(question id, method)`` (``Grader.human``). Where the
    person and the machine disagree on "correct" (one says correct, the other not), the answer
    is filed under ``grader``, also when the machine said correct.
    """
    human = human or {}
    out: dict[str, dict[str, list[Graded]]] = {}
    for g in graded:
        per = out.setdefault(g.method, {c: [] for c in CAUSES})
        person = human.get((g.question.id, g.method))
        if person is not None and (person == "correct") != (g.level == "correct"):
            per["grader"].append(g)
        elif g.level != "correct":
            per[_cause(g)].append(g)
    return out


def causes_table(causes: dict[str, dict[str, list[Graded]]], source: str | None = None) -> _table.Table:
    """Per method, how many answers fell under each cause, with their question ids, as a table."""
    rows = [[m, CAUSE_JA[c], len(per[c]), " ".join(g.question.id for g in per[c])]
            for m, per in causes.items() for c in CAUSES if per[c]]
    return _table.Table(["方式", "原因", "件数", "質問"], rows, caption=f"出典: {source}" if source else None,
                        align=["l", "l", "r", "l"])


def format_causes(causes: dict[str, dict[str, list[Graded]]]) -> str:
    """:func:`causes_table` as text."""
    return str(causes_table(causes))


def _ordinary(g: Graded) -> bool:
    return (g.level == "correct" and bool(g.question.gold_files)
            and all(f in g.files for f in g.question.gold_files) and not says_not_covered(g.answer))


def review_order(graded: Iterable[Graded]) -> list[Graded]:
    """The answers of ``graded`` in the order a person should grade them (see the module doc): an
    ordinary answer first, then round robin over the (automatic grade, method) groups, each group in the
    run's order. Every answer appears once; the order depends only on the run."""
    items = list(graded)
    first = next((g for g in items if _ordinary(g)), None)
    groups: dict[tuple[str, str], list[Graded]] = {}
    for g in items:
        if g is not first:
            groups.setdefault((g.level, g.method), []).append(g)
    methods = list(dict.fromkeys(g.method for g in items))   # in the order they first appear
    queues = [groups[k] for k in sorted(groups, key=lambda k: (LEVELS.index(k[0]), methods.index(k[1])))]
    out = [first] if first is not None else []
    depth = 0
    while len(out) < len(items):
        out.extend(q[depth] for q in queues if depth < len(q))
        depth += 1
    return out


@dataclass(frozen=True)
class SpotCheck:
    """A person's grades of the chosen answers against the machine's: the spot check's measurement."""

    chosen: tuple[Graded, ...]
    #: the machine's levels against the person's (the reference), on the chosen answers the person graded
    agreement: Agreement

    @property
    def done(self) -> bool:
        return self.agreement.n >= len(self.chosen)

    def format(self, labelled: Agreement | None = None, measured_on: str = "検証用のラベル付き回答") -> str:
        """What the spot check measured, next to the grader's disagreement on the labelled answers."""
        a, k = self.agreement, len(self.chosen)
        lines = [f"抜き取り {k} 件（measure.review_order の先頭）のうち、人が採点したもの {a.n} 件"]
        if a.n:
            off = a.n - a.agree
            lines.append(f"  自動採点と人の採点の食い違い {off} 件 / {a.n} 件（{off / a.n:.0%}）")
        if labelled is not None and labelled.n:
            lines.append(f"  {measured_on}での食い違い {labelled.n - labelled.agree} 件 / {labelled.n} 件"
                         f"（{labelled.disagreement:.0%}）")
        if not self.done:
            lines.append(f"  測定は終わっていません: あと {k - a.n} 件を上のウィジェットで採点し、このセルをもう一度実行してください")
        return "\n".join(lines)


def spot_check(graded: Iterable[Graded], human: dict, n: int = SPOT_CHECK) -> SpotCheck:
    """The first ``n`` answers of :func:`review_order` and the machine's agreement with ``human`` on them
    (``human[(question id, method)] = level``, as the grader widget keeps it)."""
    chosen = tuple(review_order(graded)[:n])
    return SpotCheck(chosen, agreement(chosen, human))


def edge_order(items: Sequence, scores: Sequence[float] | None = None) -> list:
    """``items`` best first by ``scores`` (or in the given order), rearranged as
    strongest, 3rd, 4th, ..., weakest, 2nd: the two strongest at the two edges.

    >>> edge_order(["a", "b", "c", "d"])
    ['a', 'c', 'd', 'b']
    """
    items = list(items)
    if scores is not None:
        if len(scores) != len(items):
            raise ValueError(f"{len(items)} items but {len(scores)} scores")
        order = sorted(range(len(items)), key=lambda i: (-scores[i], i))
        items = [items[i] for i in order]
    if len(items) < 3:
        return items
    return [items[0]] + items[2:] + [items[1]]
