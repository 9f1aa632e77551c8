"""The rule grader: three levels of an answer from the question's key facts, stale facts and abstention rule.

:func:`grade` compares an answer with the question's ``key_facts`` and ``stale_facts``.

**Matching a fact** (:func:`normalize`, :func:`facts_found`). Answer and fact are compared after
NFKC (全角 -> 半角), with whitespace and thousands separators removed, and with 万 written out
(``1万円`` -> ``10000円``, ``1.5万円`` -> ``15000円``, ``1万5000円`` -> ``15000円``; 千・億 and kanji
numerals such as 二十日 are not read). A fact that begins or ends with a digit matches only on a
number boundary: ``20日`` is not found in ``120日`` or ``0.20日``, ``2,000円`` not in ``12,000円``.
An occurrence followed directly by a negation (``5,000円ではありません``, ``…ではなく``) does not count.

**Stale facts stated as current** (:func:`stale_stated`). The answer is split into sentences at
``。！？!?`` and line breaks, and sentences into clauses at ``、，；`` and brackets (``（）()「」『』【】[]``). A stale fact names the old
rule as superseded when its clause contains a marker (:data:`SUPERSEDED`: 旧・以前・改定前・廃止・
かつて・変更前・従来, or a date with までは such as 2024年9月までは), or when the clause just before or
after it in the same sentence contains a marker and no key fact (「旧規程では、3,000円でした」), or when
it is negated. Every other mention states the old rule as current. The markers are words, not
grammar: 「翌月10日以前に申請」 reads as naming 翌月10日 as old, and a new value named as old
(「5,000円は廃止」) still counts as found.

**Not covered** (:func:`says_not_covered`): one of the phrases in :data:`NOT_COVERED`. **A rule of
its own** (:func:`states_a_rule`): a number with a unit (円・日・時間・分・か月・年・週・回・%・件・社・歳・
泊・人・名・文字; dates such as 2025年4月1日 and article numbers such as 第3条 do not count).

The three levels:

* unanswerable questions: ``correct`` when the answer says the documents do not cover it and
  states no rule of its own; otherwise ``wrong``;
* answerable questions: ``correct`` when every key fact is found, no stale fact is stated as
  current and the answer does not say the documents do not cover it; ``partial`` when some key
  facts are found but not all, or all are found and the answer also states a stale fact as
  current (old and new mixed) or says the documents do not cover it (a hedge); ``wrong`` when no
  key fact is found (so a 'not covered' answer, or the stale rule alone, is wrong).

Only ``str`` answers are graded: anything else raises ``TypeError``, and a ``str`` subclass is read
as the plain string it holds (its own ``__eq__``/``__contains__`` are never called).

It is a yardstick, not a judge: :mod:`ctxlab.widgets.grader` lets a person grade the same
answers, and :mod:`ctxlab.evaluation.agreement` compares the two.
"""
from __future__ import annotations

import re
import unicodedata
from typing import Iterable

from ctxlab.corpus import Question
from ctxlab.retrieval import fact_key

#: phrases with which an answer says the documents do not cover the question
NOT_COVERED = (
    "記載がありません", "記載はありません", "記載されていません", "定めがありません", "定めはありません",
    "見当たりません", "見つかりません", "含まれていません", "書かれていません", "規定がありません",
    "わかりません", "分かりません", "答えられません", "確認できません", "該当する記述がありません",
    "文書がありません", "引用できる文書がありません",
)

#: words with which a clause names a rule as superseded (plus a date followed by までは)
SUPERSEDED = ("旧", "以前", "改定前", "改正前", "変更前", "廃止", "かつて", "従来")

#: a thousands separator (removed before clauses are split at commas)
_SEP = re.compile(r"(?<=\d),(?=\d{3})")
_MAN = re.compile(r"(\d+(?:\.\d+)?)万(?:(\d{1,4})(?![\d千百十]))?")
_DIGIT = "0123456789."
_NEGATED = re.compile(r"(?:では|じゃ)(?:なく|ない|ありません)")
_UNTIL = re.compile(r"(?:\d{4}年|\d{1,2}月)(?:\d{1,2}月)?(?:\d{1,2}日)?までは")
_SENTENCE = re.compile(r"[。！？!?\n]+")
_CLAUSE = re.compile(r"[、,;（）()「」『』【】\[\]]+")
_NOT_A_RULE = re.compile(r"\d{4}年(?:\d{1,2}月)?(?:\d{1,2}日)?|第\d+(?:条|項|号|章)")
_QUANTITY = re.compile(r"\d(?:円|日|時間|分|か月|ヶ月|カ月|箇月|年|週|回|%|件|社|歳|泊|人|名|文字)")


def _text(answer) -> str:
    if not isinstance(answer, str):
        raise TypeError(f"an answer is a str, got {type(answer).__name__}")
    return str.__str__(answer)  # a plain str even for a str subclass


def _man(m: re.Match) -> str:
    value = float(m.group(1)) * 10000 + int(m.group(2) or 0)
    return str(int(value)) if value == int(value) else str(value)


def normalize(text: str) -> str:
    """The retrieval layer's fact key (NFKC, lower case, no whitespace or thousands separators)
    with 万 written out: '5 万円' -> '50000円'."""
    return _MAN.sub(_man, fact_key(_text(text)))


#: NOT_COVERED as normalised once (the phrases are fixed)
_NOT_COVERED_KEYS = tuple(normalize(p) for p in NOT_COVERED)


def _spans(text: str, fact: str) -> list[int]:
    """Start offsets of ``fact`` in ``text`` (both normalized) on number boundaries, not negated."""
    out, i = [], text.find(fact)
    while fact and i >= 0:
        j = i + len(fact)
        ok = not (fact[0].isdigit() and i > 0 and text[i - 1] in _DIGIT)
        ok = ok and not (fact[-1].isdigit() and j < len(text) and text[j].isdigit())
        if ok and not _NEGATED.match(text, j):
            out.append(i)
        i = text.find(fact, i + 1)
    return out


def facts_found(answer: str, facts: Iterable[str]) -> list[str]:
    """The facts the answer states (see "Matching a fact" in the module docstring)."""
    a = normalize(answer)
    return [f for f in facts if _spans(a, normalize(f))]


def _marked(clause: str) -> bool:
    return any(m in clause for m in SUPERSEDED) or bool(_UNTIL.search(clause))


def _clauses(answer: str) -> list[list[str]]:
    """Sentences of the answer, each a list of normalized clauses (see the module docstring)."""
    t = _SEP.sub("", unicodedata.normalize("NFKC", _text(answer)))
    return [[normalize(c) for c in _CLAUSE.split(s)] for s in _SENTENCE.split(t)]


def _stated_as_current(sentences: list[list[str]], fact: str, keys: list[str]) -> bool:
    for clauses in sentences:
        for k, clause in enumerate(clauses):
            if not _spans(clause, fact) or _marked(clause):
                continue
            near = [clauses[n] for n in (k - 1, k + 1) if 0 <= n < len(clauses)]
            if not any(_marked(c) and not any(_spans(c, key) for key in keys) for c in near):
                return True
    return False


def stale_stated(answer: str, q: Question) -> list[str]:
    """The stale facts the answer states as the current rule (not named as superseded)."""
    sentences = _clauses(answer)
    keys = [normalize(f) for f in q.key_facts]
    return [f for f in q.stale_facts if _stated_as_current(sentences, normalize(f), keys)]


def says_not_covered(answer: str) -> bool:
    a = normalize(answer)
    return any(p in a for p in _NOT_COVERED_KEYS)


def states_a_rule(answer: str) -> bool:
    """Whether the answer states a quantity (a number with a unit; dates and article numbers aside)."""
    return bool(_QUANTITY.search(_NOT_A_RULE.sub("", normalize(answer))))


def grade(answer: str, q: Question) -> str:
    """Three-level grade of one answer (see the module docstring)."""
    answer = _text(answer)
    if not isinstance(q, Question):
        raise TypeError(f"q is a ctxlab.corpus.Question, got {type(q).__name__}")
    if q.category == "unanswerable":
        return "correct" if says_not_covered(answer) and not states_a_rule(answer) else "wrong"
    found = facts_found(answer, q.key_facts)
    if not found:
        return "wrong"
    if len(found) < len(q.key_facts) or stale_stated(answer, q) or says_not_covered(answer):
        return "partial"
    return "correct"


__all__ = ["NOT_COVERED", "SUPERSEDED", "normalize", "facts_found", "stale_stated", "says_not_covered",
           "states_a_rule", "grade"]
