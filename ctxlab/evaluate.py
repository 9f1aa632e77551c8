"""Grading answers to the field questions into three levels: correct / partial / wrong.

Automatic grading compares an answer with the question's ``key_facts`` (after NFKC
normalisation, ignoring spaces and thousands separators):

* answerable questions: every key fact present -> correct, some -> partial, none -> wrong;
  a contradiction answer that also states a superseded fact (``stale_facts``) mixes the
  old and the new regulation and is at best partial;
* unanswerable questions: correct when the answer says the documents do not cover it and
  states no rule of its own, otherwise wrong.

It is a yardstick, not a judge: the lesson shows a widget for a person to grade the same
answers and compares the two.
"""
from __future__ import annotations

import re
import unicodedata
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Iterable

from .corpus import CATEGORIES, Question

LEVELS = ("correct", "partial", "wrong")

#: phrases with which an answer says the documents do not cover the question
NOT_COVERED = (
    "記載がありません", "記載はありません", "記載されていません", "定めがありません", "定めはありません",
    "見当たりません", "見つかりません", "含まれていません", "書かれていません", "規定がありません",
    "わかりません", "分かりません", "答えられません", "確認できません", "該当する記述がありません",
    "文書がありません", "引用できる文書がありません",
)

_SEP = re.compile(r"(?<=\d),(?=\d{3})")
_SPACE = re.compile(r"\s+")


def normalize(text: str) -> str:
    """NFKC, no whitespace, no thousands separators: '50,000 円' -> '50000円'."""
    t = unicodedata.normalize("NFKC", text)
    t = _SEP.sub("", t)
    return _SPACE.sub("", t)


def facts_found(answer: str, facts: Iterable[str]) -> list[str]:
    a = normalize(answer)
    return [f for f in facts if normalize(f) in a]


def says_not_covered(answer: str) -> bool:
    a = normalize(answer)
    return any(normalize(p) in a for p in NOT_COVERED)


def grade(answer: str, q: Question) -> str:
    """Three-level grade of one answer (see the module docstring)."""
    if q.category == "unanswerable":
        return "correct" if says_not_covered(answer) else "wrong"
    found = facts_found(answer, q.key_facts)
    if len(found) == len(q.key_facts):
        level = "correct"
    elif found:
        level = "partial"
    else:
        level = "wrong"
    if level == "correct" and facts_found(answer, q.stale_facts):
        level = "partial"
    return level


@dataclass(frozen=True)
class Graded:
    """One answer and its grade. The last three fields say what the method sent."""

    question: Question
    method: str
    answer: str
    level: str
    #: files the method put into the request (RAG: the files of its chunks)
    files: tuple[str, ...] = ()
    #: input tokens of the request (usage: uncached + cache write + cache read)
    input_tokens: int = 0
    #: what the call cost (online) or would have cost (offline), in dollars
    cost_usd: float = 0.0


def accuracy(levels: Iterable[str], partial_weight: float = 0.5) -> float:
    """Share of correct answers, partial ones counted with ``partial_weight``."""
    levels = list(levels)
    if not levels:
        raise ValueError("no graded answers")
    bad = [lv for lv in levels if lv not in LEVELS]
    if bad:
        raise ValueError(f"levels must be one of {LEVELS}, got {bad[0]!r}")
    c = Counter(levels)
    return (c["correct"] + partial_weight * c["partial"]) / len(levels)


def table(graded: Iterable[Graded]) -> dict[str, dict[str, Counter]]:
    """Counts of levels per method and per category: ``t[method][category][level]``."""
    t: dict[str, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    for g in graded:
        t[g.method][g.question.category][g.level] += 1
        t[g.method]["all"][g.level] += 1
    return t


def format_table(graded: list[Graded], partial_weight: float = 0.5) -> str:
    """A text table: per method, correct/partial/wrong and accuracy overall and per category."""
    t = table(graded)
    cats = [c for c in CATEGORIES if any(c in t[m] for m in t)]
    head = f"{'方式':14s}{'正しい':>6s}{'惜しい':>6s}{'違う':>6s}{'正答率':>8s}  " + "  ".join(f"{c:>13s}" for c in cats)
    lines = [head]
    for m, per in t.items():
        allc = per["all"]
        acc = accuracy(list(allc.elements()), partial_weight)
        cells = []
        for c in cats:
            n = sum(per[c].values())
            cells.append(f"{per[c]['correct']:>3d}/{n:<3d}" + f"{accuracy(list(per[c].elements()), partial_weight):>6.0%}" if n else f"{'-':>13s}")
        lines.append(f"{m:14s}{allc['correct']:>6d}{allc['partial']:>6d}{allc['wrong']:>6d}{acc:>8.0%}  " + "  ".join(cells))
    return "\n".join(lines)
