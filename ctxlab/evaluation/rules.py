"""The rule grader: three levels of an answer from the question's key facts, stale facts and abstention rule.

:func:`grade` compares an answer with the question's ``key_facts``, ``stale_facts`` and gold answer. It reads
words and a little grammar, not meaning: what it reads is below, and what it cannot read (a paraphrase that
shares no words with the fact, a number attached to the wrong subject) is measured on the labelled answers
(:mod:`ctxlab.evaluation.labelled`) and left to a person or a model judge (:mod:`ctxlab.evaluation.judge`).

**Notation** (:func:`normalize`, :mod:`ctxlab.evaluation._numbers`): full-width and half-width, whitespace,
thousands separators, 万・千・百・十 and kanji numerals (``5千円`` = ``5000円``, ``二十日`` = ``20日``), ``¥5,000``,
seconds and months where they make whole minutes and years (``600秒`` = ``10分``, ``72か月`` = ``6年``), ``週3回``
= ``週3日``, one form for an upper bound (「3日まで」「最大3日」「120分のうちに」「20日を超えないうちに」 are all
``…以内``), a rank and those above it (「部長職以上」「部長か、それより上」 = 「部長以上」) and a few equivalent
notations (「退職日をもって」 = 「退職日に」).

**Finding a key fact** (:func:`facts_found`). A fact is found where it occurs

* on a number boundary: ``20日`` is not in ``120日`` or ``0.20日``, ``2,000円`` not in ``12,000円``;
* in its slot: a time fact (``25日``, ``5日``, ``90日``) directly followed by a word that makes it another
  quantity (:data:`ROLE_CHANGERS`: 締め・前・後・目・ごと・おき・経過 …) is not the number asked for
  (「25日締め」 is a closing day, 「5日前まで」 a deadline), nor a fact made the topic of a sentence that gives it
  to something else (「2,500円は日帰りのときの額です」「5日もらえるのは子が結婚するときです」);
* with the gold answer's polarity: the predicate that follows the fact in the answer (up to the first
  です/ます, a contrast such as 「が、」「ただし」, or the next key fact) is negative (ません・ない・ず・不要・
  禁止・不可 ending a predicate; not 「なければなりません」「問題ありません」, nor a condition or a relative clause
  such as 「操作しないと」「ログインのないアカウント」) exactly when it is in the gold answer. So
  「多要素認証は不要です」 and 「暗号化USBメモリを含めて…一切認められていません」 do not state the fact, and
  ``…ではなく`` never does;
* through its complement: a negation after a word that turns to the fact's complement (:data:`COMPLEMENT`:
  「50,000円を超える部分は支給されず」「暗号化USBメモリ以外は使えません」), a fact that may not be left out
  (「多要素認証を省くことはできません」), and an 「N以上」 fact as 「N未満は…されません」「Nに満たないと…ません」.

**Stale facts stated as current** (:func:`stale_stated`). A stale fact, or its number with its counter
(``40日を上限`` -> ``40日``, when that number is not part of a key fact), stated in an answer, unless it is
named as superseded: its clause (sentences split at ``。！？`` and line breaks, clauses at ``、；`` and brackets)
or a neighbouring clause without a key fact holds a marker (:data:`SUPERSEDED`: 旧・以前・改定前・廃止・かつて・
これまで …, a date with までは such as 2024年9月までは, or a past tense でした・ました), it is followed by から in a
sentence that names a change (「3,000円から5,000円に引き上げ」), or it is negated.

**Abstention** (:func:`says_not_covered`): 「記載がありません」, 「定められていないようです」, 「見当たりませんでした」
and their kin (:data:`NOT_COVERED` and the forms around them). **A claim of its own**, for questions the documents
do not answer: a number with a unit (:func:`states_a_rule`; dates and article numbers aside), or a sentence about
the question's topic that is neither the abstention nor a referral (:func:`states_a_claim`; sentences are also
split at 「が、」「けれど」「ものの」, so 「記載はありませんが、…できます」 is a claim; the topic is the
question's nouns that no rule document contains, so 「ストックオプションは付与されます」 after 「記載がありません」
is a claim), and a guess (「おそらく」「通常は」「一般的に」…) is a claim whatever it speaks about.

The three levels:

* unanswerable questions: ``correct`` when the answer says the documents do not cover it and makes no claim of
  its own; otherwise ``wrong``;
* answerable questions: ``correct`` when every key fact is found, no stale fact is stated as current and the
  answer does not say the documents do not cover it; ``partial`` when some key facts are found but not all, or all
  are found and the answer also states a stale fact as current (old and new mixed) or abstains (a hedge);
  ``wrong`` when no key fact is found.

Only ``str`` answers are graded: anything else raises ``TypeError``, and a ``str`` subclass is read as the plain
string it holds (its own ``__eq__``/``__contains__`` are never called).
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable

from ctxlab.corpus import Question, load as load_documents
from ctxlab.evaluation._numbers import normalize as _normalize
from ctxlab.retrieval import content_nouns

#: phrases with which an answer says the documents do not cover the question (their kin: :data:`_NOT_COVERED`)
NOT_COVERED = (
    "記載がありません", "記載はありません", "記載されていません", "定めがありません", "定めはありません",
    "見当たりません", "見つかりません", "含まれていません", "書かれていません", "規定がありません",
    "わかりません", "分かりません", "答えられません", "確認できません", "該当する記述がありません",
    "文書がありません", "引用できる文書がありません",
)
#: words with which a clause names a rule as superseded (plus a date followed by までは, and a past tense)
SUPERSEDED = ("旧", "以前", "改定前", "改正前", "変更前", "廃止", "かつて", "従来", "これまで", "当初", "もともと")
#: words that, directly after a time fact, make it another quantity (a closing day, a deadline, an interval)
ROLE_CHANGERS = ("締め", "前", "後", "目", "ごと", "毎", "おき", "経過", "経", "超", "以降", "過ぎ")

_NOT_COVERED = re.compile(
    "|".join(map(re.escape, NOT_COVERED))
    + r"|(?:記載|定め|規定|記述|明記|言及|決まり)(?:が|は|も)?(?:ない|ございません|見当たら|見つから|確認でき)"
    + r"|(?:記載|規定|明記|言及|記述)されていな|(?:定め|決め)られていな|触れられていな|書かれていな|何も(?:書|記載|定め)"
    + r"|判断できませ|(?:見当たら|見つから|確認でき|わから|分から|判断でき)な(?:い(?=[。、,)）]|です|よう|$|ため|ので)|かった)"
    + r"|(?:規程|規則|文書)(?:に|には|の中に|のどこにも)(?:ありません|ない|見当たりません)"
)
#: words with which a sentence guesses (a claim all the same, when the documents say nothing)
_GUESS = re.compile(r"おそらく|恐らく|たぶん|多分|通常|一般的|一般に|普通は|多くの場合|多くの会社|と思われ|でしょう|はずです|推奨されて")
_REFERRAL = re.compile(r"ください|確認を|問い合わせ|お問合せ|相談|お尋ね|おすすめ|お勧め|勧めします")
_NEG = re.compile(r"ではなく|ではない|ではありません|じゃない|おらず|不要|禁止|不可|なし|無し"
                  r"|(?:ません|ない|なく|(?<![必ま])ず)(?=[。、,)）]|です|でしょ|よう|と(?:思|さ|定|な)|$|ん|こと|ので)")
_POS = re.compile(r"なければ(?:なりません|ならない)|なくては(?:なりません|ならない|いけません)"
                  r"|ないと(?:いけません|なりません)|(?:問題|差し支え|支障)(?:は|が)?(?:ありません|ない)"
                  r"|(?:構|かま)(?:いません|わない)|限りません")
_END = re.compile(r"です|ます|である|だ(?=[。、,]|$)")
#: words between a fact and a negation that make the negation about the fact's complement (「X以外は使えません」)
COMPLEMENT = ("を超える", "を超えた", "超過", "以外", "に満たな", "未満", "を除")
_MUST = re.compile(r"(?:省略|省く|省い|省|欠か|外)(?:す|し)?(?:こと)?(?:は|が|も)?(?:でき(?:ません|ない)|せ(?:ません|ない)|てはならな|てはいけな)")
_CONTRAST = re.compile(r"が、|が,|けど|けれど|ものの|一方|ただし|しかし|。")
_CONCESSIVE = re.compile(r"(?:であっても|でも|を含め(?:て)?|も)[、,]?$")
_TIME_FACT = re.compile(r"\d(?:営業日|日|時間|分|か月|ヶ月|カ月|年|週|秒)$")
_QUANTITY = re.compile(r"\d(?:円|日|時間|分|か月|ヶ月|カ月|箇月|年|週|回|%|件|社|歳|泊|人|名|文字|秒)")
_NOT_A_RULE = re.compile(r"\d{4}年(?:\d{1,2}月)?(?:\d{1,2}日)?|第\d+(?:条|項|号|章)")
_CORE = re.compile(r"\d+(?:\.\d+)?(?:営業日|日|時間|分|か月|ヶ月|カ月|年|週|回|円|%|件|社|歳|文字)")
_UNTIL = re.compile(r"(?:\d{4}年|\d{1,2}月)(?:\d{1,2}月)?(?:\d{1,2}日)?までは")
_PAST = re.compile(r"でした|ました|だった")
_CHANGE = re.compile(r"引き上げ|引上げ|引き下げ|引下げ|変更|改定|改正|増額|減額|見直|延長|短縮|変わ|改め|なりました|になった")
_SENTENCE = re.compile(r"[。！？!?\n]+")
_CLAUSE = re.compile(r"[、;；（）()「」『』【】\[\]]+")
_DIGIT = "0123456789."


def _text(answer) -> str:
    if not isinstance(answer, str):
        raise TypeError(f"an answer is a str, got {type(answer).__name__}")
    return str.__str__(answer)  # a plain str even for a str subclass


def normalize(text: str) -> str:
    """The normal form in which answers and facts are compared: '５千 円' -> '5000円' (see the module docstring)."""
    return _normalize(_text(text))


def _on_boundary(text: str, fact: str, i: int) -> bool:
    j = i + len(fact)
    if fact[0].isdigit() and i > 0 and text[i - 1] in _DIGIT:
        return False
    return not (fact[-1].isdigit() and j < len(text) and text[j].isdigit())


def _occurrences(text: str, fact: str) -> list[int]:
    """Start offsets of ``fact`` in ``text`` (both normalized) on number boundaries."""
    out, i = [], text.find(fact)
    while fact and i >= 0:
        if _on_boundary(text, fact, i):
            out.append(i)
        i = text.find(fact, i + 1)
    return out


def _negative_after(text: str, end: int, others: Iterable[str] = ()) -> bool:
    """Whether the predicate after ``text[:end]`` is negative (see "Finding a key fact")."""
    scope = text[end:]
    cut = len(scope)
    m = _CONTRAST.search(scope)
    if m:
        cut = m.start()
    for other in others:
        k = scope.find(other)
        if 0 <= k < cut and not _CONCESSIVE.search(scope[:k]):
            cut = k
    scope = scope[:cut]
    stops = [(m.start(), "pos") for m in (_POS.search(scope), _END.search(scope), _MUST.search(scope)) if m]
    neg = _NEG.search(scope)
    if neg and not any(c in scope[:neg.start()] for c in COMPLEMENT):
        stops.append((neg.start(), "neg"))
    if not stops:
        return False
    # at the same offset a positive form (なければなりません) wins over the negation inside it
    return min(stops, key=lambda s: (s[0], s[1] == "neg"))[1] == "neg"


def _polarity(text: str, fact: str, i: int, others: Iterable[str]) -> bool:
    return _negative_after(text, i + len(fact), [o for o in others if o != fact])


#: a fact made the topic of a sentence that gives it to something else: 「2,500円は日帰りのときの額です」
_GIVEN_ELSEWHERE = re.compile(r"(?:[^。、]{0,8}のは|は)[^。]{2,}?(?:とき|場合|額|上限|期限)(?:の額)?です")


def _in_slot(text: str, fact: str, i: int) -> bool:
    if _GIVEN_ELSEWHERE.match(text, i + len(fact)):
        return False
    return not (_TIME_FACT.search(fact) and text.startswith(ROLE_CHANGERS, i + len(fact)))


_AT_LEAST = re.compile(r"(\d+(?:\.\d+)?(?:営業日|日|時間|分|か月|ヶ月|カ月|年|円|社|歳|文字))以上$")


def _found_as_complement(text: str, fact: str) -> bool:
    """An 「N以上」 fact stated through its complement: 「N未満は…ません」「Nに満たないと…されません」."""
    m = _AT_LEAST.search(fact)
    if not m:
        return False
    core = m.group(1)
    for form in (core + "未満", core + "に満たな"):
        for i in _occurrences(text, form):
            scope = text[i + len(form):]
            scope = scope[:_CONTRAST.search(scope).start()] if _CONTRAST.search(scope) else scope
            if _NEG.search(scope):
                return True
    return False


def _found(text: str, fact: str, keys: list[str], gold_negative: bool) -> bool:
    if not gold_negative and _found_as_complement(text, fact):
        return True
    return any(_in_slot(text, fact, i) and _polarity(text, fact, i, keys) == gold_negative
               for i in _occurrences(text, fact))


def _gold_negative(gold: str | None, fact: str, keys: list[str]) -> bool:
    if not gold:
        return False
    g = normalize(gold)
    return any(_polarity(g, fact, i, keys) for i in _occurrences(g, fact))


def facts_found(answer: str, facts: Iterable[str], gold: str | None = None) -> list[str]:
    """The facts the answer states (see "Finding a key fact"); ``gold`` is the gold answer whose polarity counts."""
    a = normalize(answer)
    facts = list(facts)
    keys = [normalize(f) for f in facts]
    return [f for f, k in zip(facts, keys) if _found(a, k, keys, _gold_negative(gold, k, keys))]


def _marked(clause: str) -> bool:
    return any(m in clause for m in SUPERSEDED) or bool(_UNTIL.search(clause)) or bool(_PAST.search(clause))


def _stale_forms(q: Question) -> list[list[str]]:
    """Per stale fact, the forms that state it: the fact and its number with its counter (when no key fact has it)."""
    keys = [normalize(f) for f in q.key_facts]
    out = []
    for f in q.stale_facts:
        n = normalize(f)
        forms = [n]
        core = _CORE.search(n)
        if core and core.group(0) != n and not any(core.group(0) in k for k in keys):
            forms.append(core.group(0))
        out.append(forms)
    return out


def _stated_as_current(answer: str, forms: list[str], keys: list[str]) -> bool:
    for sentence in _SENTENCE.split(normalize(answer)):
        clauses = _CLAUSE.split(sentence)
        changed = bool(_CHANGE.search(sentence))
        for k, clause in enumerate(clauses):
            for form in forms:
                for i in _occurrences(clause, form):
                    if _marked(clause) or _negative_after(clause, i + len(form)):
                        continue
                    if changed and clause.startswith("から", i + len(form)):
                        continue
                    near = [clauses[n] for n in (k - 1, k + 1) if 0 <= n < len(clauses)]
                    if not any(_marked(c) and not any(key in c for key in keys) for c in near):
                        return True
    return False


def stale_stated(answer: str, q: Question) -> list[str]:
    """The stale facts the answer states as the current rule (not named as superseded)."""
    keys = [normalize(f) for f in q.key_facts]
    return [f for f, forms in zip(q.stale_facts, _stale_forms(q)) if _stated_as_current(answer, forms, keys)]


def says_not_covered(answer: str) -> bool:
    """Whether the answer says the documents do not cover the question."""
    return bool(_NOT_COVERED.search(normalize(answer)))


def states_a_rule(answer: str) -> bool:
    """Whether the answer states a quantity (a number with a unit; dates and article numbers aside)."""
    return bool(_QUANTITY.search(_NOT_A_RULE.sub("", normalize(answer))))


@lru_cache(maxsize=None)
def _uncovered_topic(question: str) -> tuple[str, ...]:
    """The question's content nouns that no rule document (current or superseded) contains."""
    text = normalize("".join(d.text for d in load_documents(current_only=False)))
    nouns = [normalize(n) for n in content_nouns(question)]
    return tuple(n for n in nouns if n not in text) or tuple(nouns)


def states_a_claim(answer: str, q: Question) -> bool:
    """Whether a sentence of the answer (outside its abstention and referrals) speaks about the question's topic."""
    topic = _uncovered_topic(q.question)
    for sentence in re.split(r"[。！？!?\n（）()]+|が、|が,|けれど|ものの", normalize(answer)):
        if not sentence or _NOT_COVERED.search(sentence) or _REFERRAL.search(sentence):
            continue
        if any(t in sentence for t in topic) or _GUESS.search(sentence):
            return True
    return False


def grade(answer: str, q: Question) -> str:
    """Three-level grade of one answer (see the module docstring)."""
    answer = _text(answer)
    if not isinstance(q, Question):
        raise TypeError(f"q is a ctxlab.corpus.Question, got {type(q).__name__}")
    if q.category == "unanswerable":
        ok = says_not_covered(answer) and not states_a_rule(answer) and not states_a_claim(answer, q)
        return "correct" if ok else "wrong"
    found = facts_found(answer, q.key_facts, q.answer)
    if not found:
        return "wrong"
    if len(found) < len(q.key_facts) or stale_stated(answer, q) or says_not_covered(answer):
        return "partial"
    return "correct"


__all__ = ["NOT_COVERED", "SUPERSEDED", "ROLE_CHANGERS", "COMPLEMENT", "normalize", "facts_found", "stale_stated",
           "says_not_covered", "states_a_rule", "states_a_claim", "grade"]
