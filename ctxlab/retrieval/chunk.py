"""Chunking of Japanese regulations: article spans, chunks along articles, fixed-size chunks.

Chunk sizes are measured with :func:`ctxlab.estimate.estimate_text`, the course's offline
estimate (1 Japanese character = 1 token), not with the search tokenizer
(:mod:`ctxlab.retrieval.tokens`): the tokenizer makes search terms, the estimate measures
what a chunk costs in a prompt. Article, chapter and caption lines are recognised with the
heading patterns of :mod:`ctxlab._text`, the ones the sandbox and the corpus generator use.
Offsets are exact: ``chunk.text == document[chunk.start:chunk.end]``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ctxlab import _text
from ctxlab.estimate import estimate_text
from ctxlab.retrieval.sentences import BLANKS as _WS, split_sentences

__all__ = ["Chunk", "chunk_by_articles", "chunk_by_size", "article_spans"]


@dataclass
class Chunk:
    """A piece of a document: ``text == document[start:end]``.

    ``meta`` holds what the chunker knows, e.g. ``chapter``, ``articles`` and
    ``headings`` for :func:`chunk_by_articles`, and ``tokens`` (estimated) for both chunkers.
    """

    doc_id: str | None
    text: str
    start: int
    end: int
    meta: dict = field(default_factory=dict)

    @property
    def tokens(self) -> int:
        """Estimated prompt tokens of the chunk (ctxlab.estimate.estimate_text)."""
        return estimate_text(self.text)

    def context_header(self) -> str:
        """A one-line situating header, e.g. 「文書管理規程 > 第2章　管理体制 > 第5条（…）」.

        Prepending it to the chunk is the simplest form of contextual retrieval.
        """
        parts = [p for p in (self.meta.get("title"), self.meta.get("chapter"), self.meta.get("section")) if p]
        heads = self.meta.get("headings") or []
        if heads:
            parts.append(heads[0] if len(heads) == 1 else f"{heads[0]}〜{heads[-1]}")
        return " > ".join(parts)


def _lines(text: str) -> list[tuple[int, int]]:
    """(start, end) of each line, end without the newline."""
    out = []
    pos = 0
    for line in text.split("\n"):
        out.append((pos, pos + len(line)))
        pos += len(line) + 1
    return out


def _trim(text: str, s: int, e: int) -> tuple[int, int]:
    while s < e and text[s] in _WS + "\n":
        s += 1
    while e > s and text[e - 1] in _WS + "\n":
        e -= 1
    return s, e


def _prefix_for_tokens(text: str, s: int, e: int, budget: int) -> int:
    """Largest end ``m`` in (s, e] with estimate_text(text[s:m]) <= budget (at least s + 1)."""
    lo, hi = s + 1, e
    if estimate_text(text[s:e]) <= budget:
        return e
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if estimate_text(text[s:mid]) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return max(lo, s + 1)


def _suffix_for_tokens(text: str, s: int, e: int, budget: int) -> int:
    """Smallest start ``m`` in [s, e) with estimate_text(text[m:e]) <= budget."""
    lo, hi = s, e
    while lo < hi:
        mid = (lo + hi) // 2
        if estimate_text(text[mid:e]) <= budget:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _size_spans(text: str, s0: int, e0: int, size: int, overlap: int) -> list[tuple[int, int]]:
    """Split text[s0:e0] into spans of at most ``size`` tokens at sentence boundaries.

    Consecutive spans share about ``overlap`` tokens (whole sentences where possible).
    A sentence longer than ``size`` is cut by characters.
    """
    units: list[tuple[int, int]] = []
    for s, e in split_sentences(text[s0:e0]):
        s, e = s + s0, e + s0
        if estimate_text(text[s:e]) <= size:
            units.append((s, e))
            continue
        # hard cut of a long sentence, with a character overlap
        pos = s
        while pos < e:
            cut = _prefix_for_tokens(text, pos, e, size)
            units.append((pos, cut))
            if cut >= e:
                break
            nxt = _suffix_for_tokens(text, pos, cut, overlap) if overlap else cut
            pos = nxt if pos < nxt < cut else cut
    if not units:
        return []
    toks = [estimate_text(text[s:e]) for s, e in units]
    spans: list[tuple[int, int]] = []
    i = 0
    n = len(units)
    while i < n:
        j = i
        total = toks[i]
        while j + 1 < n and total + toks[j + 1] <= size:
            j += 1
            total += toks[j]
        spans.append((units[i][0], units[j][1]))
        if j + 1 >= n:
            break
        # next start: walk back from j while the overlap stays within budget
        k = j + 1
        back = 0
        while overlap and k - 1 > i and back + toks[k - 1] <= overlap:
            k -= 1
            back += toks[k]
        i = k
    return spans


def chunk_by_size(
    text: str,
    size_tokens: int = 800,
    overlap_tokens: int = 100,
    *,
    doc_id: str | None = None,
    title: str | None = None,
) -> list[Chunk]:
    """Fixed-size chunks of about ``size_tokens`` estimated tokens, cut at sentence ends.

    Consecutive chunks overlap by up to ``overlap_tokens`` (whole sentences). Offsets are
    exact: ``chunk.text == text[chunk.start:chunk.end]``.
    """
    if not isinstance(size_tokens, int) or size_tokens < 1:
        raise ValueError(f"size_tokens must be a positive int, got {size_tokens!r}")
    if not isinstance(overlap_tokens, int) or not 0 <= overlap_tokens < size_tokens:
        raise ValueError(
            f"overlap_tokens must be an int between 0 and size_tokens - 1 ({size_tokens - 1}), got {overlap_tokens!r}"
        )
    chunks = []
    for i, (s, e) in enumerate(_size_spans(text, 0, len(text), size_tokens, overlap_tokens)):
        meta = {"index": i, "tokens": estimate_text(text[s:e]), "method": "size"}
        if title:
            meta["title"] = title
        chunks.append(Chunk(doc_id, text[s:e], s, e, meta))
    return chunks


@dataclass
class _Unit:
    start: int
    end: int
    kind: str  # "preamble" | "heading" | "article" | "supplementary"
    chapter: str | None
    section: str | None
    article: str | None = None
    caption: str | None = None


def _article_units(text: str, inline_captions: bool = True) -> list[_Unit]:
    lines = _lines(text)
    boundaries: list[tuple[int, str, str | None, str | None]] = []  # (line idx, kind, label, caption)
    for i, (s, e) in enumerate(lines):
        line = text[s:e].lstrip(_WS)
        if _text.CHAPTER.match(line):
            boundaries.append((i, "chapter", line.strip(_WS), None))
        elif _text.SECTION.match(line):
            boundaries.append((i, "section", line.strip(_WS), None))
        elif _text.SUPPLEMENTARY.match(line):
            boundaries.append((i, "supplementary", line.strip(_WS), None))
        else:
            m = _text.ARTICLE.match(line)
            if m is None and inline_captions:
                mi = _text.ARTICLE_INLINE.match(line)
                if mi:
                    boundaries.append((i, "article", mi.group(1), mi.group(2)))
                    continue
            if m:
                start_line, caption = i, None
                j = i - 1
                while j >= 0 and not text[lines[j][0] : lines[j][1]].strip(_WS):
                    j -= 1
                if j >= 0:
                    prev = text[lines[j][0] : lines[j][1]].strip(_WS)
                    if _text.CAPTION.match(prev):
                        start_line, caption = j, prev
                boundaries.append((start_line, "article", m.group(1), caption))
    units: list[_Unit] = []
    chapter = section = None
    first = boundaries[0][0] if boundaries else len(lines)
    if first > 0:
        s, e = _trim(text, 0, lines[first - 1][1])
        if e > s:
            units.append(_Unit(s, e, "preamble", None, None))
    for b, (li, kind, label, caption) in enumerate(boundaries):
        start = lines[li][0]
        end = lines[boundaries[b + 1][0] - 1][1] if b + 1 < len(boundaries) else len(text)
        if kind == "chapter":
            chapter, section = label, None
            ukind = "heading"
        elif kind == "section":
            section = label
            ukind = "heading"
        elif kind == "supplementary":
            chapter, section = label, None
            ukind = "supplementary"
        else:
            ukind = "article"
        s, e = _trim(text, start, end)
        if e <= s:
            continue
        units.append(_Unit(s, e, ukind, chapter, section, label if kind == "article" else None, caption))
    return units


def article_spans(text: str, *, inline_captions: bool = True) -> list[dict]:
    """The structural units of a regulation, in order, as dicts.

    Each dict has ``start``, ``end`` (``text[start:end]`` is the unit), ``kind``
    ("preamble", "heading", "article" or "supplementary"), ``chapter``, ``section``,
    ``article`` (e.g. "第6条", else None) and ``caption`` (e.g. "（繰越し）", else None).
    These are the boundaries :func:`chunk_by_articles` cuts at; use them to tell which
    chapter and article any span of the text (a fixed-size chunk, say) falls in.
    ``inline_captions`` (default True here) also recognises articles written as
    「第6条（繰越し）」 on one line (see :func:`chunk_by_articles`).
    """
    if not isinstance(text, str):
        raise TypeError(f"article_spans() needs a str, got {type(text).__name__}")
    return [
        {"start": u.start, "end": u.end, "kind": u.kind, "chapter": u.chapter, "section": u.section,
         "article": u.article, "caption": u.caption}
        for u in _article_units(text, inline_captions)
    ]


def chunk_by_articles(
    text: str,
    max_tokens: int = 800,
    overlap: int = 0,
    *,
    doc_id: str | None = None,
    title: str | None = None,
    inline_captions: bool = True,
) -> list[Chunk]:
    """Chunks of a Japanese regulation along its structure.

    Boundaries are lines that start with 第N章 (chapter), 第N節 (section), 第N条 (article,
    together with its caption line such as 「（目的）」 just above it) and 附則. Headings and
    the title join the article that follows them; consecutive small articles of the same
    chapter are merged while the chunk stays within ``max_tokens`` (estimated tokens);
    an article longer than that is cut at sentence ends. Chunks never span two chapters.

    ``overlap`` (tokens, default 0) extends each chunk's start back into the previous chunk
    of the same chapter by up to that many tokens, at a sentence start (so such a chunk
    can exceed ``max_tokens`` by up to ``overlap``).

    Each chunk's ``meta`` holds ``chapter``, ``section``, ``articles`` (e.g. ["第5条", "第6条"]),
    ``headings`` (e.g. ["第5条（文書管理責任者等）"]), ``kind`` and ``tokens``; offsets are
    exact (``chunk.text == text[chunk.start:chunk.end]``).

    Both ways Japanese regulations write an article are boundaries: 「第6条　…」 with an
    optional caption line above it, and 「第6条（繰越し）…」 with the caption right after the
    number (the style of about 20 of the course's regulations). ``inline_captions=False``
    recognises only the first form; it is kept to show what a chunker that knows one
    style does to the other (no article boundaries: the headings fall into the last unit).
    """
    if not isinstance(max_tokens, int) or max_tokens < 1:
        raise ValueError(f"max_tokens must be a positive int, got {max_tokens!r}")
    if not isinstance(overlap, int) or not 0 <= overlap < max_tokens:
        raise ValueError(f"overlap must be an int between 0 and max_tokens - 1, got {overlap!r}")
    units = _article_units(text, inline_captions)
    # 1. headings / preamble join the next unit of the same (or a new) chapter
    merged: list[_Unit] = []
    pending: _Unit | None = None
    for u in units:
        if pending is not None:
            u = _Unit(pending.start, u.end, u.kind, u.chapter, u.section, u.article, u.caption)
            pending = None
        if u.kind in ("heading", "preamble"):
            pending = u
            continue
        merged.append(u)
    if pending is not None:
        merged.append(pending)

    # 2. group consecutive units of one chapter up to max_tokens
    groups: list[list[_Unit]] = []
    for u in merged:
        if (
            groups
            and groups[-1][0].chapter == u.chapter
            and groups[-1][0].kind != "preamble"
            and u.kind != "preamble"
            and estimate_text(text[groups[-1][0].start : u.end]) <= max_tokens
        ):
            groups[-1].append(u)
        else:
            groups.append([u])

    chunks: list[Chunk] = []
    for g in groups:
        s, e = g[0].start, g[-1].end
        articles = [u.article for u in g if u.article]
        headings = [f"{u.article}{u.caption or ''}" for u in g if u.article]
        base = {
            "chapter": g[0].chapter,
            "section": g[0].section,
            "articles": articles,
            "headings": headings,
            "kind": g[0].kind if len(g) == 1 else "articles",
            "method": "articles",
        }
        if title:
            base["title"] = title
        pieces = [(s, e)] if estimate_text(text[s:e]) <= max_tokens else _size_spans(text, s, e, max_tokens, overlap)
        for pi, (ps, pe) in enumerate(pieces):
            meta = dict(base)
            if len(pieces) > 1:
                meta["part"] = (pi + 1, len(pieces))
            chunks.append(Chunk(doc_id, "", ps, pe, meta))
    # 3. optional overlap between chunks of the same chapter (a split article already has it)
    if overlap:
        for i in range(1, len(chunks)):
            a, b = chunks[i - 1], chunks[i]
            if a.meta.get("chapter") != b.meta.get("chapter") or "part" in b.meta:
                continue
            # the earliest sentence start of the previous chunk within the overlap budget,
            # so an overlap never begins mid-sentence
            ns = b.start
            for s, _e in split_sentences(text[a.start : a.end]):
                s += a.start
                if s > a.start and estimate_text(text[s : a.end]) <= overlap:
                    ns = s
                    break
            if a.start < ns < b.start:
                b.start = ns
    for c in chunks:
        c.text = text[c.start : c.end]
        c.meta["tokens"] = estimate_text(c.text)
    for i, c in enumerate(chunks):
        c.meta["index"] = i
    return chunks
