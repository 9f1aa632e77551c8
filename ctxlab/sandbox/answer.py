"""Extractive answers of the sandbox.

The sandbox does not generate language. It answers the last user turn's question with
sentences copied from the material of the request (document blocks and the text blocks
of user turns), chosen by BM25 over sentences (:mod:`ctxlab.retrieval`), and it marks the
answer as such (``ANSWER_MARKER``). With citations enabled, each quoted sentence of a
document is a text block carrying a ``char_location`` citation whose ``cited_text`` is
exactly ``document[start_char_index:end_char_index]``.

**Abstention.** A real model says when the documents do not answer a question; an extractive
answer would otherwise quote the nearest sentence whatever it is. The sandbox's rule: the
question's content nouns (:func:`ctxlab.retrieval.content_nouns`: common and proper nouns, not
何・いつ・とき) are looked up in every quotable sentence together with its headings and title; a
sentence *covers* the question when it holds more than :data:`ABSTAIN_AT_OR_BELOW` of them. When
no sentence covers the question, the answer is 「記載がありません」 (:data:`NOT_COVERED_TEXT`) and
quotes nothing. The rule knows words, not meaning: it abstains when the question uses words the
documents do not (給料 for 給与), and answers when the words are there but the rule is not.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ctxlab import retrieval
from ctxlab.estimate import estimate_text
from ctxlab.sandbox.request import documents_of
from ctxlab import _text

ANSWER_MARKER = "[sandbox の抜粋回答]"
MAX_SENTENCES = 3
MIN_SENTENCE_CHARS = 6
#: BM25 length normalization: lower than the usual 0.75 so that a full rule sentence is
#: not beaten by a short fragment that happens to share a word
BM25_B = 0.5
RELATIVE_SCORE_FLOOR = 0.35
LONG_QUESTION_CHARS = 400
#: abstain when no sentence holds more than this share of the question's content nouns
ABSTAIN_AT_OR_BELOW = 0.5
NOT_COVERED_TEXT = "渡された文書には、この質問に答える記載がありません。"


@dataclass
class Unit:
    """A quotable piece: a sentence of a text, or one block of a content document."""

    source: int
    start: int
    end: int
    block: int | None = None  # content documents: index of the block


@dataclass(frozen=True)
class Source:
    """A text the answer may quote. Equal (and cached alike) when text, kind, title and blocks are."""

    text: str
    kind: str  # "text" (plain-text document), "content" (custom content document), "plain" (user text)
    doc_index: int | None = field(compare=False)
    title: str | None
    blocks: tuple[str, ...] | None = None


@dataclass
class Answer:
    content: list[dict]
    stop_reason: str
    stop_sequence: str | None
    output_tokens: int
    quoted: list[str]


@dataclass
class Analysis:
    """Sentences of one text: spans, search tokens (with context) and which are quotable."""

    spans: list[tuple[int, int]]
    tokens: list[tuple[str, ...]]
    quotable: list[bool]


@lru_cache(maxsize=256)
def _analyse(text: str) -> Analysis:
    """Split into sentences; give each the words of its title, chapter and article heading.

    A rule's sentence rarely repeats the topic its caption names (「（繰越し）」 above
    「２　上限は20日とする。」), so the caption's words are added to the sentence's search
    terms. Headings themselves are context, not answers.
    """
    spans = retrieval.split_sentences(text)
    toks: list[tuple[str, ...]] = []
    quotable: list[bool] = []
    title: tuple[str, ...] = ()
    chapter: tuple[str, ...] = ()
    article: tuple[str, ...] = ()
    prev_heading = False
    for k, (a, b) in enumerate(spans):
        sent = text[a:b]
        own = retrieval.terms(sent)
        heading = True
        if k == 0 and len(spans) > 1 and len(sent) <= 40 and "。" not in sent:
            title = own
        elif _text.CHAPTER_OR_SECTION.match(sent) and len(sent) <= 40:
            chapter, article = own, ()
        elif _text.CAPTION.match(sent) or _text.ARTICLE_HEAD.match(sent):
            article = own if not prev_heading else article + own
        else:
            heading = False
            if _text.ARTICLE_START.match(sent) and not prev_heading:
                article = ()
        toks.append(own + title + chapter + (article if not heading else ()))
        quotable.append(not heading and len(sent) >= MIN_SENTENCE_CHARS)
        prev_heading = heading
    return Analysis(spans, toks, quotable)


def clear_caches() -> None:
    _analyse.cache_clear()
    _index.cache_clear()


# ---------------------------------------------------------------- material


def _question(messages: list) -> tuple[str, int | None, int | None]:
    """Text of the question (last text of the last user turn), with its position."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m.get("role") != "user":
            continue
        c = m.get("content")
        if isinstance(c, str):
            return c, i, None
        for j in range(len(c) - 1, -1, -1):
            b = c[j]
            if isinstance(b, dict) and b.get("type") == "text":
                return b.get("text", ""), i, j
        return "", i, None
    return "", None, None


def _content_doc_blocks(block: dict) -> list[str]:
    content = block["source"].get("content")
    if isinstance(content, str):
        return [content]
    return [b.get("text", "") for b in content if isinstance(b, dict)]


def _gather(messages: list) -> tuple[list[Source], str]:
    """Sources of the request and the query."""
    question, qi, qj = _question(messages)
    query = question
    sources: list[Source] = []
    doc_index = {id(b): k for k, (_, _, b) in enumerate(documents_of(messages))}
    for i, m in enumerate(messages):
        if m.get("role") != "user":
            continue
        c = m.get("content")
        items = [(None, {"type": "text", "text": c})] if isinstance(c, str) else list(enumerate(c))
        for j, b in items:
            if not isinstance(b, dict):
                continue
            t = b.get("type")
            if t == "document":
                src = b.get("source") or {}
                k = doc_index.get(id(b))
                title = b.get("title") if isinstance(b.get("title"), str) else None
                if src.get("type") == "text":
                    sources.append(Source(src.get("data", ""), "text", k, title))
                elif src.get("type") == "content":
                    blocks = _content_doc_blocks(b)
                    sources.append(Source("\n".join(blocks), "content", k, title, tuple(blocks)))
                # pdf / url / file sources carry no text the sandbox can read
            elif t == "text":
                is_question = i == qi and j == qj
                if is_question and len(question) <= LONG_QUESTION_CHARS:
                    continue
                sources.append(Source(b.get("text", ""), "plain", None, None))
    if len(question) > LONG_QUESTION_CHARS:
        # material and question in one text: ask with its last line (or last sentence)
        lines = [ln.strip() for ln in question.splitlines() if ln.strip()]
        query = lines[-1] if lines else question
        if len(query) > LONG_QUESTION_CHARS:
            spans = retrieval.split_sentences(query)
            query = query[spans[-1][0] : spans[-1][1]] if spans else query
    return sources, query.strip()


def _units(sources: tuple[Source, ...]) -> tuple[list[Unit], list[tuple[str, ...]]]:
    """Quotable units of all sources and their search tokens (a document's title included)."""
    units: list[Unit] = []
    toks: list[tuple[str, ...]] = []
    for si, s in enumerate(sources):
        title = retrieval.terms(s.title) if s.title else ()
        if s.kind == "content":
            for bi, text in enumerate(s.blocks or []):
                if text.strip():
                    units.append(Unit(si, 0, len(text), bi))
                    toks.append(retrieval.terms(text) + title)
            continue
        an = _analyse(s.text)
        for (a, b), t, q in zip(an.spans, an.tokens, an.quotable):
            if q:
                units.append(Unit(si, a, b))
                toks.append(t + title)
    return units, toks


@lru_cache(maxsize=64)
def _index(sources: tuple[Source, ...]) -> tuple[list[Unit], retrieval.BM25Index, list[frozenset]]:
    """Units of the sources, their BM25 index and their term sets, cached by the sources' content."""
    units, toks = _units(sources)
    return units, retrieval.BM25Index(tokens=toks, b=BM25_B), [frozenset(t) for t in toks]


def coverage(sources: list[Source], query: str) -> float:
    """The largest share of the question's content nouns that one quotable sentence holds (1.0 without nouns)."""
    nouns = set(retrieval.content_nouns(query))
    if not nouns:
        return 1.0
    _, _, sets = _index(tuple(sources))
    return max((len(nouns & s) / len(nouns) for s in sets), default=0.0)


def _unit_text(sources: list[Source], u: Unit) -> str:
    s = sources[u.source]
    if u.block is not None:
        return (s.blocks or [""])[u.block]
    return s.text[u.start : u.end]


def _select(sources: list[Source], query: str) -> list[Unit]:
    units, index, _ = _index(tuple(sources))
    if not units:
        return []
    hits = index.search(query, k=30)
    if not hits:
        return []
    best = hits[0][1]
    chosen: list[Unit] = []
    seen: set[str] = set()
    fallback: list[Unit] = []
    for i, score in hits:
        if score < best * RELATIVE_SCORE_FLOOR:
            break
        u = units[i]
        text = _unit_text(sources, u).strip()
        if text in seen or text == query:
            continue
        seen.add(text)
        if len(text) < MIN_SENTENCE_CHARS:
            fallback.append(u)
            continue
        chosen.append(u)
        if len(chosen) >= MAX_SENTENCES:
            break
    return chosen or fallback[:1]


# ---------------------------------------------------------------- answer


def _label(s: Source) -> str:
    if s.title:
        return s.title
    if s.doc_index is not None:
        return f"文書 {s.doc_index + 1}"
    return "ユーザーのテキスト"


def _citation(sources: list[Source], u: Unit) -> dict | None:
    s = sources[u.source]
    if s.doc_index is None:
        return None
    if s.kind == "content":
        return {
            "type": "content_block_location",
            "cited_text": (s.blocks or [""])[u.block or 0],
            "document_index": s.doc_index,
            "document_title": s.title,
            "start_block_index": u.block,
            "end_block_index": (u.block or 0) + 1,
        }
    return {
        "type": "char_location",
        "cited_text": s.text[u.start : u.end],
        "document_index": s.doc_index,
        "document_title": s.title,
        "start_char_index": u.start,
        "end_char_index": u.end,
    }


def _schema_instance(schema: Any, root: dict, answer: str, quotes: list[str], name: str = "", depth: int = 0) -> Any:
    """A value that satisfies a (simple) JSON schema, filled from the extractive answer."""
    if not isinstance(schema, dict) or depth > 8:
        return answer
    if "$ref" in schema and isinstance(schema["$ref"], str) and schema["$ref"].startswith("#/"):
        node: Any = root
        for part in schema["$ref"][2:].split("/"):
            node = node.get(part, {}) if isinstance(node, dict) else {}
        return _schema_instance(node, root, answer, quotes, name, depth + 1)
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return _schema_instance(schema[key][0], root, answer, quotes, name, depth + 1)
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), "null")
    if t == "object" or (t is None and "properties" in schema):
        props = schema.get("properties") or {}
        return {k: _schema_instance(v, root, answer, quotes, k, depth + 1) for k, v in props.items()}
    if t == "array":
        items = schema.get("items") or {"type": "string"}
        if isinstance(items, dict) and items.get("type", "string") == "string" and "enum" not in items:
            values = quotes or [answer]
            n_min = schema.get("minItems", 0) or 0
            while len(values) < n_min:
                values = values + values[:1]
            if isinstance(schema.get("maxItems"), int):
                values = values[: schema["maxItems"]]
            return list(values)
        return [_schema_instance(items, root, answer, quotes, name, depth + 1)]
    if t == "integer":
        return int(schema.get("minimum", 0) or 0)
    if t == "number":
        return float(schema.get("minimum", 0) or 0)
    if t == "boolean":
        return False
    if t == "null":
        return None
    lowered = name.lower()
    if quotes and any(w in lowered for w in ("quote", "evidence", "source", "citation", "根拠", "引用")):
        return quotes[0]
    return answer


def _cut_blocks(blocks: list[dict], chars: int) -> list[dict]:
    """Keep the first ``chars`` characters of the concatenated texts (a cut block loses its citations)."""
    out = []
    left = chars
    for b in blocks:
        if left <= 0:
            break
        text = b["text"]
        if len(text) <= left:
            out.append(b)
            left -= len(text)
        else:
            out.append({"type": "text", "text": text[:left]})
            left = 0
    return [b for b in out if b["text"]]


def _tokens_of(blocks: list[dict]) -> int:
    return sum(estimate_text(b["text"]) for b in blocks)


def _limit(blocks: list[dict], max_tokens: int, stop_sequences: list[str]) -> tuple[list[dict], str, str | None]:
    full = "".join(b["text"] for b in blocks)
    # a stop sequence that is reached before max_tokens ends the answer there
    first = None
    for seq in stop_sequences:
        if isinstance(seq, str) and seq:
            p = full.find(seq)
            if p != -1 and (first is None or p < first[0]):
                first = (p, seq)
    if first is not None:
        cut = _cut_blocks(blocks, first[0])
        if _tokens_of(cut) <= max_tokens:
            return cut, "stop_sequence", first[1]
    if _tokens_of(blocks) <= max_tokens:
        return blocks, "end_turn", None
    lo, hi = 0, len(full)
    while lo < hi:  # the longest prefix within max_tokens
        mid = (lo + hi + 1) // 2
        if _tokens_of(_cut_blocks(blocks, mid)) <= max_tokens:
            lo = mid
        else:
            hi = mid - 1
    return _cut_blocks(blocks, lo), "max_tokens", None


def build_answer(body: dict, *, citations: bool, output_format: dict | None, max_tokens: int) -> Answer:
    """The sandbox's extractive answer to a validated Messages request."""
    messages = body["messages"]
    sources, query = _gather(messages)
    has_material = any(s.text.strip() for s in sources)
    chosen: list[Unit] = []
    if not has_material:
        intro = (
            f"{ANSWER_MARKER} このリクエストには引用できる文書がありません。"
            "document ブロックか user ターンのテキストとして資料を渡すと、該当する文を抜き出して答えます。"
        )
    elif not query:
        intro = f"{ANSWER_MARKER} 質問が見つかりませんでした。最後の user ターンに質問のテキストを入れてください。"
    elif coverage(sources, query) <= ABSTAIN_AT_OR_BELOW:
        intro = f"{ANSWER_MARKER} {NOT_COVERED_TEXT}（質問の名詞の過半を含む文がありませんでした）"
    else:
        chosen = _select(sources, query)
        if chosen:
            intro = f"{ANSWER_MARKER} 質問に関係する文を文書から抜き出しました（sandbox は要約も推論もしません）。\n"
        else:
            intro = f"{ANSWER_MARKER} 質問の語を含む文が文書に見つかりませんでした。"

    quotes = [_unit_text(sources, u).strip() for u in chosen]
    blocks: list[dict]
    if output_format is not None:
        # one line per quote naming its source, as in a plain answer (numbered titles "[2] ..." give [n] markers)
        if quotes:
            answer_line = "\n".join([ANSWER_MARKER] + [f"・{q}（{_label(sources[u.source])}）" for u, q in zip(chosen, quotes)])
        else:
            answer_line = f"{ANSWER_MARKER} " + intro[len(ANSWER_MARKER) :].strip()
        schema = output_format.get("schema") or {}
        value = _schema_instance(schema, schema, answer_line, quotes)
        blocks = [{"type": "text", "text": json.dumps(value, ensure_ascii=False)}]
    elif citations and chosen:
        blocks = [{"type": "text", "text": intro}]
        for n, u in enumerate(chosen):
            cit = _citation(sources, u)
            text = _unit_text(sources, u)
            block: dict = {"type": "text", "text": text}
            if cit is not None:
                block["citations"] = [cit]
            if n:
                blocks.append({"type": "text", "text": "\n"})
            blocks.append(block)
    else:
        lines = [intro.rstrip("\n")]
        for u, q in zip(chosen, quotes):
            lines.append(f"・{q}（{_label(sources[u.source])}）")
        blocks = [{"type": "text", "text": "\n".join(lines)}]

    stop_sequences = body.get("stop_sequences") or []
    blocks, stop_reason, stop_sequence = _limit(blocks, max_tokens, list(stop_sequences))
    out_tokens = max(1, _tokens_of(blocks))
    return Answer(blocks, stop_reason, stop_sequence, out_tokens, quotes)
