"""Numbers in a lesson's prose that no output of their section prints (issue 43: prose that cannot drift).

    python tools/prose_numbers.py [build/site/executed] [--lesson 05_crossover ...]

Reads executed lessons (the site build's ``build/site/executed``, or ``tools/drift_check.py``'s run on another
default model) and lists every **figure** in a learner-facing markdown cell that is none of:

(a) a definition: a number inside a glossary term (course/glossary.md, e.g. 「50% の前提」「3 段階の採点」) or one
    of :data:`ctxlab.published.DEFINITIONS` (the API's TTLs, the course's 50% rule, each with its source);
(b) a seed article's or a paper's figure quoted with its source in the same sentence (「記事の」, 「論文」, a title
    such as Lost in the Middle: :data:`SOURCE_MARKERS`; a list item counts the sentence that introduces its list);
(c) printed by a code cell of the same level-2 section (``## ``; the header before the first one is a section
    too): its text, HTML tables or the text fallback of a widget (the header, まとめ and 確認問題 sum up the
    lesson: any section's output counts for them; a sentence that says 「上の表」「N 節の表」 may cite any earlier
    section's output); or, in a sentence that states an assumption
    (:data:`ASSUMPTION`: 「…とします」「…なら」「…になったら」), written as a literal in the section's code
    outside asserts and strings (the premise the code runs on).

What is **not a figure** (removed before numbers are read), precisely:

- a heading's or a list item's own number (``## 3. …``, ``1. …``), section references (§3, §3–5, 3 節),
  lesson numbers (two digits 00–11: 「00、03」「レッスン 10」「（04）」), exercise / question / check numbers
  (演習 2, 問 3, 確認問題 1, q9, Q3, c05-2) and point counts (（3 点）);
- the stated time (the whole 「**所要時間**」 line) and years / dates (2026 年, 2026-12-05, 12 月 5 日);
- model names and ids (Opus 5.5, Haiku 4.5, claude-sonnet-5-5), identifiers and code spans (`…`), file names,
  recall@20-style names, and digits inside a word (m0, q9, 5m in an id);
- quoted text 「…」: an example string (「600秒」は「10分」), a saying or a scenario's words;
- subsection references: a number that is a ``###`` heading's number in the same lesson (5.1, 8.2);
- counting words: an integer from 0 to 10 with no unit of measure (「2 つの方式」「3 回」「1 ファイル」). A decimal,
  an integer above 10, or any number with a unit ($, %, 倍, ×, k, 万, トークン, 円, 秒 …) is a figure.

A model named in prose (Opus 5.5, Haiku 4.5) is checked the same way: its section's output names it (by name or
id), or the sentence names a source (「記事のモデル Opus 5」, or 「価格表」 for a fact of the price table). The numbers of a sentence belong to the model it
names, so a default model switched under unchanged prose shows here first.

Normalisation: thousands separators (1,234 = 1234), a currency sign, full-width digits, the minus sign, and
world: a sentence that names neither the article nor one of its models (Opus 5, Sonnet 5, Haiku 4.5) is about
today's models, so output lines about the article's world do not vouch for it (「読み出しは 0.1 倍」 in a summary is
not vouched for by the article's Opus 5 printing 0.1x);
kind: a multiplier (0.05 倍, 0.05×) matches only a printed multiplier (0.05x, 0.05 倍, r = 0.05) and an amount of
money ($58) only a printed amount ($58.2), so that s = 0.05 does not vouch for 「読み出し 0.05 倍」 (a multiplier is
a number on a line that prints multipliers: 0.05x, 倍, ×, r =, 比率); and
precision: a prose figure matches a printed one that rounds to it at the prose's precision (「約 107k」 matches
107,355; 「0.05 倍」 matches 0.05×; 「40%」 matches 40% or 0.4; 「約 17 万トークン」 matches 169,659).
"""
from __future__ import annotations

import argparse
import bisect
import html
import re
import sys
import unicodedata
from functools import lru_cache
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ctxlab.published import DEFINITIONS  # noqa: E402

GLOSSARY = ROOT / "course" / "glossary.md"
#: a sentence that names one of these quotes a published figure (rule b)
SOURCE_MARKERS = ("記事", "論文", "Lost in the Middle", "RULER", "Contextual Retrieval", "Anthropic の発表",
                  "Anthropic のドキュメント", "公表", "という報告")
#: a sentence that points at output shown earlier in the lesson: every earlier section's output counts for it
EARLIER = re.compile(r"上の(?:表|出力|図)|\d+\s*節の(?:表|出力)")
#: sections that sum up the lesson: their figures may be printed by any section of it
WHOLE_LESSON = re.compile(r"^(?:\(header\)|まとめ|確認問題)")

# ---------------------------------------------------------------- what is not a figure
_NOT_FIGURES = [
    r"^\s*\*\*所要時間\*\*.*$",                                  # the stated time
    r"^#+\s*\d+(?:\.\d+)*\.?",                                   # a heading's number
    r"^\s*(?:[-*]\s*)?\d+[.)]\s",                                # list numbering
    r"`[^`]*`",                                                  # code spans
    r"https?://\S+",
    r"[\w.-]+\.(?:txt|md|py|ipynb|json|csv|yaml|html|pdf)\b",    # file names
    r"\b(?:claude-[a-z0-9.-]+)",                                  # model ids
    r"(?:Opus|Sonnet|Haiku|Claude|GPT|Gemini)[\s-]*\d+(?:\.\d+)?",   # model names
    r"§\s*\d+(?:\s*[〜~–-]\s*§?\s*\d+)?(?:\s*[、,]\s*§?\s*\d+)*",   # section references
    r"\d+\s*節",
    r"(?:レッスン|lesson|Lesson)\s*\d{1,2}(?:\s*[、,と〜–-]\s*\d{2})*",
    r"(?<![\d.,])(?:0\d|1[01])(?:\s*[、,・〜–-]\s*(?:0\d|1[01]))+(?![\d.,])",   # lists of lessons: 00、03
    r"(?<![\d.,$])0\d(?![\d.,%])",                                 # a zero-padded lesson number
    r"[（(]\s*1[01]\s*[）)]",                                      # (10), (11)
    r"(?<![\d.,])1[01](?=\s*(?:で|の(?:演習|手順|メモ|ラボ|レッスン)|番目のレッスン))",
    r"(?:演習|問題?|確認問題|設問|質問|Q|q|c)\s*\d+(?:\s*[-–]\s*\d+)*",   # exercise / question numbers
    r"第\s*\d+\s*(?:問|節|章)",
    r"\d+\s*問目",
    r"[（(]\s*\d+\s*点\s*[）)]|\d+\s*点満点|\d+\s*点",             # points
    r"(?:19|20)\d{2}\s*年(?:\s*\d{1,2}\s*月(?:\s*\d{1,2}\s*日)?)?",   # years and dates
    r"(?:19|20)\d{2}-\d{2}(?:-\d{2})?",
    r"\b(?:19|20)\d{2}\b(?!\s*[,\d])",
    r"\d{1,2}\s*月\s*\d{1,2}\s*日",
    r"[A-Za-z_]+\d+[A-Za-z_\d]*",                                 # digits inside a word: m0, q9, h1
    r"(?:Python|Py)\s*\d+(?:\.\d+)*",                                # software versions
    r"\d+(?:\.\d+)?e-?\d+",                                          # scientific notation (1e-9: a tolerance)
    r"「[^「」]*」",                                                  # quoted text: an example string or a saying
    r"@\d+|[Tt]op-?\d+",                                           # recall@20, top-20
]
_NOT = re.compile("|".join(f"(?:{p})" for p in _NOT_FIGURES), re.M)

_UNIT = r"(?:\s*(?P<unit>%|％|倍|×|x\b|k\b|K\b|万|億|千|トークン|tok\b|円|秒|ms|s\b|ドル|字|文字|行|件|個|回|問|ファイル|分|時間|日|か月|ヶ月|人|チャンク|段))?"
_NUM = re.compile(r"(?P<cur>[$＄])?\s?(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)" + _UNIT)
_MEASURE_UNITS = {"%", "％", "倍", "×", "x", "k", "K", "万", "億", "千", "トークン", "tok", "円", "秒", "ms", "s", "ドル"}
_SCALE = {"k": 1e3, "K": 1e3, "千": 1e3, "万": 1e4, "億": 1e8}
_OUT_NUM = re.compile(r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)\s*(?P<unit>%|％|k\b|K\b|万)?")


def _normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)      # full-width digits, ％, ＄
    return text.replace("−", "-").replace("\u2009", " ").replace("\xa0", " ")


@dataclass(frozen=True)
class Figure:
    """One figure in the prose: its text, the sentence it is in, and the values it may stand for."""

    text: str
    sentence: str
    candidates: tuple[tuple[float, float], ...]   # (value, half-width of the rounding interval)
    lead: str = ""      # for a list item: the sentence that introduces the list (it may name the source)
    kind: str = ""      # "mult" (倍, ×) or "usd" ($): only printed numbers of the same kind match it


def _precision(num: str) -> float:
    return 10.0 ** -len(num.split(".")[1]) if "." in num else 1.0


def figures_in(markdown: str, subsections: frozenset[str] = frozenset()) -> list[Figure]:
    """Every figure in a markdown cell (see the module docstring for what is not a figure);
    ``subsections``: the lesson's ``###`` heading numbers (5.1, 8.2), which are references."""
    text = _normalise(markdown)
    text = re.sub(r"<[^>]+>", " ", text)
    # an article model's name (Haiku 4.5) becomes a mark the checker keeps: the sentence is about the article's world
    text = _MODEL.sub(lambda m: ARTICLE_MARK + " " * (len(m.group(0)) - 1)
                      if m.group(0) in _article_names() else m.group(0), text)
    text = re.sub(r"claude-[a-z0-9.-]+", lambda m: ARTICLE_MARK + " " * (len(m.group(0)) - 1)
                  if m.group(0) in _article_names() else m.group(0), text)
    text = _NOT.sub(lambda m: " " * len(m.group(0)), text)
    for ref in sorted(subsections, key=len, reverse=True):
        text = re.sub(rf"(?<![\d.]){re.escape(ref)}(?![\d.])", " " * len(ref), text)
    out = []
    for sentence, lead in _sentences(text):
        for m in _NUM.finditer(sentence):
            num, unit, cur = m.group("num"), m.group("unit"), m.group("cur")
            start = m.start("num")
            if start and (sentence[start - 1].isalpha() and sentence[start - 1].isascii() or sentence[start - 1] in "_."):
                continue
            value = float(num.replace(",", ""))
            if "." not in num and value <= 10 and not cur and unit not in _MEASURE_UNITS:
                continue                                  # a counting word
            step = _precision(num)
            scale = _SCALE.get(unit or "", 1.0)
            cands = [(value * scale, step * scale / 2)]
            if unit in ("%", "％"):
                cands.append((value / 100, step / 200))
            kind = "mult" if unit in ("倍", "×", "x") else "usd" if cur or unit == "ドル" else ""
            out.append(Figure(m.group(0).strip(), sentence.strip(), tuple(cands), lead, kind))
    return out


def _split_sentences(paragraph: str) -> list[str]:
    """Sentences end at 。！？ outside brackets: a parenthesis stays with its sentence."""
    out, cur, depth = [], "", 0
    for ch in paragraph:
        cur += ch
        depth += ch in "（(" and 1 or (ch in "）)" and -1 or 0)
        if ch in "。！？" and depth <= 0:
            out.append(cur)
            cur, depth = "", 0
    return [s for s in out + [cur] if s.strip()]


def _sentences(text: str) -> list[tuple[str, str]]:
    """(sentence, lead) pairs: a list item's lead is the last sentence of the paragraph before its list."""
    out, lead, last = [], "", ""
    for para in re.split(r"\n\s*\n|\n\s*(?=[-*|#>]\s|\d+[.)]\s)", text):
        item = bool(re.match(r"\s*(?:[-*]|\d+[.)])\s", para))
        if not item:
            lead = ""
        elif not lead:
            lead = last
        sents = _split_sentences(para.replace("\n", ""))
        out += [(s, lead if item else "") for s in sents]
        if sents and not item:
            last = sents[-1]
    return out


_MODEL = re.compile(r"(Opus|Sonnet|Haiku|Fable)\s*(\d+(?:\.\d+)?)(?![\d])")


def models_in(markdown: str) -> list[Figure]:
    """The models a markdown cell names (Opus 5.5, Haiku 4.5), each with its sentence: a model named in prose is
    a figure too (the price table's model that the sentence's numbers belong to)."""
    text = re.sub(r"`[^`]*`", " ", _normalise(markdown))
    return [Figure(m.group(0), sentence.strip(), (), lead) for sentence, lead in _sentences(text)
            for m in _MODEL.finditer(sentence)]


def model_printed(name: str, printed: str) -> bool:
    """Whether output names the model ``name`` (「Opus 5.5」) by its name or its id (claude-opus-5-5)."""
    family, version = _MODEL.match(name).groups()
    by_name = rf"{family}\s*{re.escape(version)}(?![.\d])"
    by_id = rf"{family.lower()}-{version.replace('.', '-')}(?![-\d])"
    return re.search(by_name, printed) is not None or re.search(by_id, printed) is not None


#: a line of output that prints multipliers: 0.05x, 1.25 倍, × 2, r = 0.1, 比率 1.0〜1.5
_MULT_LINE = re.compile(r"倍|比率|\d\s*x\b|×|\b[rw]\s*=")
#: an amount of money as output prints it: $0.864, $1,234
_OUT_USD = re.compile(r"\$\s*(?P<a>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)")


def printed_kind(text: str, kind: str) -> list[float]:
    """The printed numbers of one kind: ``"mult"`` (on a line that prints multipliers) or ``"usd"`` ($ before)."""
    text = _normalise(text)
    if kind == "mult":
        return printed_values("\n".join(line for line in text.splitlines() if _MULT_LINE.search(line)))
    return sorted(float(m.group("a").replace(",", "")) for m in _OUT_USD.finditer(text))


def printed_values(text: str) -> list[float]:
    """Every number in printed output, as values (a percentage also as a fraction, 107k as 107,000)."""
    vals = []
    for m in _OUT_NUM.finditer(_normalise(text)):
        v = float(m.group("num").replace(",", ""))
        vals.append(v)
        unit = m.group("unit")
        if unit in ("%", "％"):
            vals.append(v / 100)
        elif unit:
            vals.append(v * _SCALE[unit])
    return sorted(vals)


def _matches(values: list[float], value: float, half: float) -> bool:
    """A printed value that rounds to ``value`` at its precision: strictly within ``half`` (0.05 is not 0.1)."""
    eps = 1e-9 * max(1.0, abs(value))
    i = bisect.bisect_right(values, value - half + eps)
    return i < len(values) and values[i] < value + half - eps


# ---------------------------------------------------------------- notebooks
def _output_text(cell) -> str:
    parts = []
    for o in cell.get("outputs", []):
        if o.get("output_type") == "stream":
            parts.append(o.get("text", ""))
        data = o.get("data", {})
        for mime in ("text/plain", "text/html", "text/markdown", "text/latex"):
            if mime in data:
                t = data[mime]
                t = "".join(t) if isinstance(t, list) else t
                if mime == "text/html":
                    t = html.unescape(re.sub(r"<[^>]+>", " ", t))
                parts.append(t)
    return "\n".join(parts)


@dataclass
class Section:
    heading: str
    markdown: list[str]
    printed: str
    code: str = ""


def sections(nb) -> list[Section]:
    """The lesson's level-2 sections (the header before the first ``## `` is one too), each with its
    markdown cells and everything its code cells printed."""
    out = [Section("(header)", [], "")]
    for cell in nb.cells:
        src = cell.source
        if cell.cell_type == "markdown":
            for i, part in enumerate(re.split(r"^(?=## )", src, flags=re.M)):
                if part.startswith("## "):
                    out.append(Section(part.splitlines()[0][3:].strip(), [], ""))
                if part.strip():
                    out[-1].markdown.append(part)
        elif cell.cell_type == "code":
            out[-1].printed += "\n" + _output_text(cell)
            out[-1].code += "\n" + src
    return out


def _glossary_terms() -> list[str]:
    if not GLOSSARY.exists():
        return []
    terms = re.findall(r"^\|\s*([^|]*\d[^|]*?)\s*\|", GLOSSARY.read_text(encoding="utf-8"), re.M)
    return [t for t in terms if t and not set(t) <= set("-: ")]


def _strip_definitions(markdown: str) -> str:
    text = _normalise(markdown)
    for term in _glossary_terms():
        text = text.replace(_normalise(term), " ")
    for phrase in DEFINITIONS:
        text = text.replace(_normalise(phrase), " ")
    return text


@dataclass(frozen=True)
class Flag:
    lesson: str
    section: str
    figure: str
    sentence: str

    def __str__(self):
        return f"{self.lesson} §「{self.section}」: {self.figure} — {self.sentence}"


#: a sentence that states an assumption the section's code runs on
ASSUMPTION = re.compile(r"とします|とする|と置きます|と置く|としたら|なったら|なら|仮に|想定")


def subsection_numbers(nb) -> frozenset[str]:
    return frozenset(m for c in nb.cells if c.cell_type == "markdown"
                     for m in re.findall(r"^#{3,}\s*(\d+(?:\.\d+)+)", c.source, re.M))


def code_literals(code: str) -> list[float]:
    """The numbers written as literals in code, outside ``assert`` statements and strings (an assertion's
    expected value is a typed result, not a premise)."""
    import io
    import tokenize

    vals, in_assert = [], False
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            if tok.type == tokenize.NEWLINE:
                in_assert = False
            elif tok.type == tokenize.NAME and tok.string == "assert":
                in_assert = True
            elif tok.type == tokenize.NUMBER and not in_assert:
                try:
                    vals.append(float(tok.string.replace("_", "")))
                except ValueError:
                    pass
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return sorted(vals)


#: what an article model's name becomes in a sentence the checker reads
ARTICLE_MARK = "Ⓐ"


@lru_cache(maxsize=1)
def _article_names() -> tuple[str, ...]:
    from ctxlab.costs import pricing

    names = []
    for mid, m in pricing.article_models().items():
        family_version = _MODEL.search(m.display_name)
        names += [mid] + ([family_version.group(0)] if family_version else [])
    return tuple(names)


def today_lines(text: str) -> str:
    """Output without the lines about the article's world (a line naming 記事 or one of the article's models):
    such a line vouches only for a sentence that names the article or its model."""
    article = _article_names()
    keep = [line for line in text.splitlines() if "記事" not in line
            and not any(model_printed(n, line) if _MODEL.fullmatch(n) else re.search(rf"{re.escape(n)}(?![-\d])", line)
                        for n in article)]
    return "\n".join(keep)


def _pools(text: str) -> dict[str, list[float]]:
    return {"": printed_values(text), "mult": printed_kind(text, "mult"), "usd": printed_kind(text, "usd")}


def check_section(lesson: str, sec: Section, subsections: frozenset[str] = frozenset(),
                  lesson_printed: str = "", earlier_printed: str = "") -> list[Flag]:
    scope = sec.printed + (lesson_printed if WHOLE_LESSON.match(sec.heading) else "")
    before = earlier_printed + sec.printed
    world = {True: (_pools(scope), _pools(before)), False: (_pools(today_lines(scope)), _pools(today_lines(before)))}
    article = _article_names()
    literals = code_literals(sec.code)
    flags = []
    for md in sec.markdown:
        for fig in figures_in(_strip_definitions(md), subsections):
            if any(m in fig.sentence or m in fig.lead for m in SOURCE_MARKERS):
                continue                                   # (b) a quoted figure with its source
            names_article = ARTICLE_MARK in fig.sentence
            pools, earlier = world[names_article]
            if any(_matches(pools[fig.kind], v, h) for v, h in fig.candidates):
                continue                                   # (c) printed in the section
            if EARLIER.search(fig.sentence) and any(_matches(earlier[fig.kind], v, h) for v, h in fig.candidates):
                continue                                   # (c) 「上の表の …」: printed earlier in the lesson
            if ASSUMPTION.search(fig.sentence) and any(_matches(literals, v, h) for v, h in fig.candidates):
                continue                                   # (c) an assumption the section's code runs on
            flags.append(Flag(lesson, sec.heading, fig.text, fig.sentence[:160]))
        for fig in models_in(md):
            if any(m in fig.sentence or m in fig.lead for m in SOURCE_MARKERS + ("価格表",)):
                continue
            if model_printed(fig.text, scope) or (EARLIER.search(fig.sentence)
                                                  and model_printed(fig.text, earlier_printed + sec.printed)):
                continue
            flags.append(Flag(lesson, sec.heading, fig.text, fig.sentence[:160]))
    return flags


def check_notebook(path: Path) -> list[Flag]:
    import nbformat

    nb = nbformat.read(path, as_version=4)
    lesson = Path(path).stem
    subs = subsection_numbers(nb)
    secs = sections(nb)
    everything = "\n".join(sec.printed for sec in secs)
    return [f for i, sec in enumerate(secs)
            for f in check_section(lesson, sec, subs, everything, "\n".join(s.printed for s in secs[:i]))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("executed", nargs="?", type=Path, default=ROOT / "build" / "site" / "executed")
    ap.add_argument("--lesson", action="append", default=[])
    args = ap.parse_args(argv)
    paths = sorted(args.executed.glob("*.ipynb"))
    if args.lesson:
        paths = [p for p in paths if p.stem in args.lesson]
    if not paths:
        print(f"実行済みのレッスンが {args.executed} にありません: 先に make site（または tools/build_site.py）を実行してください",
              file=sys.stderr)
        return 2
    flags = [f for p in paths for f in check_notebook(p)]
    for f in flags:
        print(f)
    print(f"{len(flags)} figure(s) in prose not printed in their section, in {len(paths)} lesson(s)")
    return 1 if flags else 0


if __name__ == "__main__":
    sys.exit(main())
