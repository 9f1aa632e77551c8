"""How the rule grader reads numbers and notation: one normal form for an answer and a fact.

:func:`normalize` applies, in order:

1. the retrieval layer's fact key (NFKC, so full-width ``２５`` is ``25``; lower case; no whitespace or thousands
   separators);
2. numerals with 万・千・百・十 or kanji digits written out as digits: ``5万円`` -> ``50000円``, ``5千円`` ->
   ``5000円``, ``1万5千円`` and ``1万5000円`` -> ``15000円``, ``1.5万円`` -> ``15000円``, ``1千万円`` ->
   ``10000000円``, ``二十五日`` -> ``25日``, ``三百万円`` -> ``3000000円``. A run of kanji numerals is read only
   when a counter follows it (:data:`COUNTERS`: 日・円・時間・分・か月・年・歳・社 …) or it is joined to digits, so
   一般・一切・万一 stay words, and ``十分`` followed by な・に・だ・で (enough) is not ten minutes;
3. hours written as minutes (``2時間以内`` -> ``120分以内``, so 「120分以内」 states it), seconds as minutes and
   months as years where they divide (``600秒`` -> ``10分``, ``72か月`` -> ``6年``), a yen sign as a counter
   (``¥5,000`` -> ``5000円``), times a week as days a week (``週3回`` -> ``週3日``), and equivalent notations
   (:data:`EQUIVALENT`): 「退職日をもって」 is 「退職日に」, 「5営業日目まで」 is 「5営業日以内」, and a rank with those
   above it (「部長職以上」「部長クラス以上」「部長か、それより上」 are 「部長以上」);
4. one form for an upper bound on a quantity: 「3日まで」「3日までに」「120分のうちに」「20日を超えないうちに」 and
   「最大3日」「最長6年」「上限は20日」 are all written ``…以内`` (``3日以内``), so a fact written with one of them is
   found where an answer uses another.

(A library such as kanjize converts a whole string that is a number; here numbers sit inside sentences and mix
digits with 万 and 千, so the run is found and read by :func:`read_numeral`.)
"""
from __future__ import annotations

import re

from ctxlab.retrieval import fact_key

KANJI_DIGITS = {"〇": 0, "零": 0, "一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
SMALL_UNITS = {"十": 10, "百": 100, "千": 1000}
LARGE_UNITS = {"万": 10_000, "億": 100_000_000}
#: counters after which a run of kanji numerals is a number
COUNTERS = ("営業日", "日", "円", "時間", "分", "秒", "か月", "ヶ月", "カ月", "箇月", "年", "週", "回", "社", "歳",
            "泊", "人", "名", "文字", "件", "%", "割", "倍", "条", "項", "号", "章", "等級", "台", "枚", "つ")
#: notations that say the same thing, as (form, normal form), applied after numbers are written out
EQUIVALENT = (
    ("をもって", "に"),
    ("営業日目まで", "営業日以内"),
)

_KANJI = "".join(KANJI_DIGITS) + "".join(SMALL_UNITS) + "".join(LARGE_UNITS)
_RUN = re.compile(rf"[0-9.{_KANJI}]*[0-9{''.join(KANJI_DIGITS)}{''.join(SMALL_UNITS)}][0-9.{_KANJI}]*")
_TOKEN = re.compile(rf"\d+(?:\.\d+)?|[{_KANJI}]")
_HOURS = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)時間(?!目)")
_ENOUGH = re.compile(r"十分(?=[なにだで](?!す))")
#: a rank and those above it, in other words: 部長職以上, 部長クラス以上, 部長か、それより上 -> 部長以上
_RANK = re.compile(r"(?<=[長役])(?:職|クラス|級)?(?:以上|か、?それ(?:より|以)上|またはそれ以上)")
_YEN = re.compile(r"[¥￥](\d+(?:\.\d+)?)(?!\d)")
_SECONDS = re.compile(r"(?<![\d.])(\d+)秒")
_MONTHS = re.compile(r"(?<![\d.])(\d+)(?:か月|ヶ月|カ月|箇月)")
_TIMES_A_WEEK = re.compile(r"週(\d+)回")
_QTY = r"\d+(?:\.\d+)?(?:営業日|日|時間|分|か月|ヶ月|カ月|年|週|円|回|社|歳)"
#: an upper bound written after the quantity (3日まで, 120分のうちに) or before it (最大3日, 上限は20日)
_BOUND_AFTER = re.compile(rf"({_QTY})(?:間)?(?:までに|まで|のうちに|を超えないうちに|を超えない範囲で|を過ぎないうちに)")
_BOUND_BEFORE = re.compile(rf"(?:最大|最長|上限は|上限が)(?:で|月額|1日|1回)?({_QTY})(?!以内|まで|以上|未満|超)")


def read_numeral(run: str) -> int | float | None:
    """The value of a numeral such as ``1万5千``, ``二十五``, ``3.5万`` or ``1千万``; None when it is not one."""
    total, section, current = 0, 0, None
    for tok in _TOKEN.findall(run):
        if tok in KANJI_DIGITS:
            current = (current or 0) * 10 + KANJI_DIGITS[tok]
        elif tok in SMALL_UNITS:
            section += (1 if current is None else current) * SMALL_UNITS[tok]
            current = None
        elif tok in LARGE_UNITS:
            if section == 0 and current is None:
                return None  # 万 with nothing before it (万一)
            total += (section + (current or 0)) * LARGE_UNITS[tok]
            section, current = 0, None
        else:
            if current is not None:
                return None  # two numbers side by side
            current = float(tok) if "." in tok else int(tok)
    if "".join(_TOKEN.findall(run)) != run:
        return None
    value = total + section + (current or 0)
    return int(value) if value == int(value) else value


def _write_out(m: re.Match) -> str:
    run = m.group(0)
    if not any(c in _KANJI for c in run):
        return run  # digits alone: nothing to read
    after = m.string[m.end():]
    joined_to_digits = any(c.isdigit() for c in run)
    if not joined_to_digits and not after.startswith(COUNTERS):
        return run
    value = read_numeral(run)
    return run if value is None else str(value)


def normalize(text: str) -> str:
    """The normal form of an answer or a fact (see the module docstring)."""
    t = fact_key(text)
    t = _ENOUGH.sub("十_分", t)  # keep 十分な (enough) away from the numeral reader
    t = _RUN.sub(_write_out, t).replace("十_分", "十分")
    t = _HOURS.sub(lambda m: f"{float(m.group(1)) * 60:g}分", t)
    t = _YEN.sub(r"\1円", t)
    t = _RANK.sub("以上", t)
    t = _SECONDS.sub(lambda m: f"{int(m.group(1)) // 60}分" if int(m.group(1)) % 60 == 0 else m.group(0), t)
    t = _MONTHS.sub(lambda m: f"{int(m.group(1)) // 12}年" if int(m.group(1)) % 12 == 0 else m.group(0), t)
    t = _TIMES_A_WEEK.sub(r"週\1日", t)
    t = _BOUND_AFTER.sub(r"\1以内", t)
    t = _BOUND_BEFORE.sub(r"\1以内", t)
    for form, normal in EQUIVALENT:
        t = t.replace(form, normal)
    return t


__all__ = ["KANJI_DIGITS", "COUNTERS", "EQUIVALENT", "read_numeral", "normalize"]
