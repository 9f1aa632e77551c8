"""Japanese retrieval: tokenization, sentences, chunking, BM25 and recall@k.

Used by the offline sandbox (to pick the sentences of its extractive answers) and by the
RAG lessons.

Tokenization
    :func:`tokenize` runs a real morphological analyzer, MeCab through ``fugashi`` with the
    ``unidic-lite`` dictionary. Each word becomes its **lemma** (dictionary form, e.g.
    「繰り越せ」 -> 「繰り越す」, so a question and a rule written in another inflection
    still match), with UniDic's English gloss removed (「データ-data」 -> 「データ」); words
    without a lemma (unknown words such as product codes) keep their surface form.
    Punctuation and symbols (UniDic 補助記号) and whitespace (空白) are dropped; particles
    stay (BM25's IDF gives words found everywhere, such as 「の」, almost no weight).
    Input is NFKC-normalized first (full-width digits and Latin letters, half-width kana)
    and lower-cased. One tagger is created on first use and reused (MeCab writes only
    part of speech and lemma, and a regular expression reads them: about 0.3 s for
    200,000 characters). Repeated short texts (sentences, queries) are cached.

Token budget
    Chunk sizes are measured with :func:`ctxlab.estimate.estimate_text`, the course's
    offline estimate (1 Japanese character = 1 token), not with the tokenizer above: the
    tokenizer makes search terms, the estimate measures what a chunk costs in a prompt.

BM25
    :class:`BM25Index` builds a ``bm25s`` index from the token lists of this module
    (``bm25s``' own splitter does not split Japanese, so token ids and the vocabulary are
    passed to it directly).
"""
from __future__ import annotations

import hashlib
import os
import re
import tempfile
import threading
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from ctxlab import estimate
from ctxlab.estimate import estimate_text
from ctxlab import _text

__all__ = [
    "tokenize",
    "tokenize_many",
    "split_sentences",
    "Chunk",
    "chunk_by_articles",
    "chunk_by_size",
    "article_spans",
    "BM25Index",
    "recall_at_k",
    "mean_recall_at_k",
    "TOKENIZER_DESCRIPTION",
]

TOKENIZER_DESCRIPTION = (
    "fugashi (MeCab) + unidic-lite; lemma (dictionary form) of each word, "
    "punctuation/symbols and whitespace dropped, NFKC-normalized, lower-cased"
)

# ---------------------------------------------------------------- tokenizer

# UniDic part-of-speech (pos1) values that are not words for search purposes.
_DROP_POS = frozenset({"補助記号", "空白"})

# A MeCab output format with only what we need: "pos1<TAB>lemma" per word (UniDic
# feature 7), and the surface for unknown words, which have no lemma.
_RC_TEXT = (
    "node-format-ctxlab = %f[0]\\t%f[7]\\n\n"
    "unk-format-ctxlab = %f[0]\\t%m\\n\n"
    "eos-format-ctxlab = \\n\n"
    "bos-format-ctxlab = \n"
)

_NONWORD = re.compile(r"[\W_]+")

_tagger_lock = threading.Lock()
_tagger: Any = None
_tagger_kind: str = ""


def _make_tagger():
    """Create the tagger once: a fast formatted-output tagger, else fugashi's default."""
    global _tagger, _tagger_kind
    import fugashi
    import unidic_lite

    try:
        rc_path = os.path.join(
            tempfile.gettempdir(),
            "ctxlab-mecabrc-" + hashlib.sha1(_RC_TEXT.encode()).hexdigest()[:10],
        )
        if not os.path.exists(rc_path):
            tmp = f"{rc_path}.{os.getpid()}.tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(_RC_TEXT)
            os.replace(tmp, rc_path)
        tagger = fugashi.GenericTagger(f'-r "{rc_path}" -Octxlab -d "{unidic_lite.DICDIR}"')
        probe = tagger.parse("有給休暇を繰り越した")
        if not probe.startswith("名詞\t有給\n") or "動詞\t繰り越す\n" not in probe:
            # the custom format did not take effect
            raise RuntimeError("unexpected MeCab output format")
        _tagger, _tagger_kind = tagger, "formatted"
    except Exception:  # pragma: no cover - fallback when no temp dir is writable
        _tagger, _tagger_kind = fugashi.Tagger(), "nodes"
    return _tagger


def _clean_lemma(surface: str, lemma: str) -> str:
    if not lemma or lemma == "*":
        return surface
    dash = lemma.find("-")
    if dash > 0 and lemma[dash + 1 :].isascii():
        lemma = lemma[:dash]
    return lemma or surface


# rows of words to keep (not punctuation/symbols or whitespace): capture the lemma
_KEEP = re.compile(r"^(?!補助記号\t|空白\t)[^\t\n]*\t([^\t\n]+)$", re.M)
# UniDic glosses of loanwords: 「データ-data」 -> 「データ」
_GLOSS = re.compile(r"(?<=[^\x00-\x7f])-[ -~]+$", re.M)


def _tokenize_line(line: str) -> list[str]:
    """Tokens of one normalized, lower-cased line (no newline inside). Caller holds the lock."""
    tagger = _tagger if _tagger is not None else _make_tagger()
    if _tagger_kind == "formatted":
        out = tagger.parse(line)
        if "-" in out:
            out = _GLOSS.sub("", out)
        # a one-character token that is not a letter, digit or kana/kanji is a symbol
        return [t for t in _KEEP.findall(out) if len(t) > 1 or t.isalnum()]
    toks = []  # pragma: no cover - fallback path
    for node in tagger(line):  # pragma: no cover
        feat = node.feature
        if getattr(feat, "pos1", None) in _DROP_POS or not node.surface.strip():
            continue
        tok = _clean_lemma(node.surface, getattr(feat, "lemma", None) or "")
        if not _NONWORD.fullmatch(tok):
            toks.append(tok)
    return toks


_TOKEN_CACHE: dict[str, tuple[str, ...]] = {}
_TOKEN_CACHE_MAX = 50_000


def _tokens(text: str) -> tuple[str, ...]:
    """Cached tokenization (a tuple, shared between callers: do not mutate)."""
    cached = _TOKEN_CACHE.get(text)
    if cached is not None:
        return cached
    norm = unicodedata.normalize("NFKC", text).lower()
    result: list[str] = []
    with _tagger_lock:
        for line in norm.splitlines():
            if line and not line.isspace():
                result.extend(_tokenize_line(line))
    tup = tuple(result)
    if len(text) < 5_000:  # cache short texts (sentences, queries, chunks)
        if len(_TOKEN_CACHE) >= _TOKEN_CACHE_MAX:
            _TOKEN_CACHE.clear()
        _TOKEN_CACHE[text] = tup
    return tup


def tokenize(text: str) -> list[str]:
    """Split Japanese (and mixed) text into search terms with a morphological analyzer.

    >>> tokenize("有給休暇の繰越上限")
    ['有給', '休暇', 'の', '繰り越し', '上限']

    See the module docstring for the choices (lemmas, what is dropped).
    """
    if not isinstance(text, str):
        raise TypeError(f"tokenize() needs a str, got {type(text).__name__}")
    return list(_tokens(text))


def tokenize_many(texts: Iterable[str]) -> list[list[str]]:
    """Tokenize several texts (same rules as :func:`tokenize`)."""
    return [list(_tokens(t)) for t in texts]


# ---------------------------------------------------------------- sentences

_SENT_END = "。！？!?"
_OPENERS = "（「『【〔［〈《(["
_CLOSERS = "）」』】〕］〉》)]"
_SENT_MARKS = re.compile("[\n" + re.escape(_SENT_END + _OPENERS + _CLOSERS) + "]")
_WS = " \t\r\f\v\u3000"


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Sentence spans ``(start, end)`` of ``text``: ``text[start:end]`` is the sentence.

    Splits after 。！？ (and ASCII ! ?) and at newlines. A terminator inside brackets does
    not end the sentence (「以下「会社」という。）」 stays in its sentence, 「はい。」と言った。
    is one sentence). Leading and trailing whitespace (including the full-width space) is
    left out of the spans; empty sentences are skipped.
    """
    if not isinstance(text, str):
        raise TypeError(f"split_sentences() needs a str, got {type(text).__name__}")
    cuts: list[tuple[int, int]] = []  # raw (start, end) pieces
    start = 0
    depth = 0
    for m in _SENT_MARKS.finditer(text):
        ch = m.group()
        i = m.start()
        if ch == "\n":
            cuts.append((start, i))
            start, depth = i + 1, 0
        elif ch in _OPENERS:
            depth += 1
        elif ch in _CLOSERS:
            depth = max(0, depth - 1)
        elif depth == 0 and i >= start:
            # a run of terminators (「？！」) ends the sentence at its last character
            j = i + 1
            while j < len(text) and text[j] in _SENT_END:
                j += 1
            if j > i + 1:
                continue  # the last terminator of the run will cut
            cuts.append((start, j))
            start = j
    cuts.append((start, len(text)))
    spans: list[tuple[int, int]] = []
    for s, e in cuts:
        while s < e and text[s] in _WS:
            s += 1
        while e > s and text[e - 1] in _WS:
            e -= 1
        if e > s:
            spans.append((s, e))
    return spans


# ---------------------------------------------------------------- chunks


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


# ---------------------------------------------------------------- BM25


class BM25Index:
    """BM25 over Japanese texts, built with ``bm25s`` on this module's tokens.

    >>> idx = BM25Index(["年次有給休暇は20日まで繰り越せる。", "出張旅費は実費を支給する。"])
    >>> idx.search("有給休暇の繰越", k=1)[0][0]
    0

    ``texts`` are tokenized with :func:`tokenize`; pass ``tokens`` (a list of token lists)
    instead to index your own tokenization. :meth:`search` returns ``(index, score)`` pairs,
    best first, only documents that share at least one term with the query (score > 0),
    ties broken by index.
    """

    def __init__(
        self,
        texts: Sequence[str] | None = None,
        *,
        tokens: Sequence[Sequence[str]] | None = None,
        k1: float = 1.5,
        b: float = 0.75,
        method: str = "lucene",
    ):
        import bm25s
        import numpy as np

        if (texts is None) == (tokens is None):
            raise ValueError("give either texts (strings to tokenize) or tokens (lists of tokens), not both")
        if tokens is None:
            if isinstance(texts, str):
                raise TypeError("texts must be a list of strings, not one string")
            tokens = [_tokens(t) for t in texts]
        self._np = np
        vocab: dict[str, int] = {}
        ids: list[list[int]] = []
        for toks in tokens:
            row = []
            for t in toks:
                i = vocab.get(t)
                if i is None:
                    i = vocab[t] = len(vocab)
                row.append(i)
            ids.append(row)
        self.n_docs = len(ids)
        self.vocab = vocab
        self._retriever = None
        if self.n_docs:
            if not vocab:  # every document empty: bm25s needs one token
                vocab[""] = 0
            retriever = bm25s.BM25(k1=k1, b=b, method=method)
            retriever.index(bm25s.tokenization.Tokenized(ids=ids, vocab=vocab), show_progress=False)
            self._retriever = retriever

    def __len__(self) -> int:
        return self.n_docs

    @classmethod
    def from_chunks(cls, chunks: Sequence[Chunk], *, contextual: bool = False, **kwargs) -> "BM25Index":
        """Index chunks; with ``contextual=True`` each chunk's :meth:`Chunk.context_header` is prepended."""
        texts = [(c.context_header() + "\n" + c.text) if contextual else c.text for c in chunks]
        return cls(texts, **kwargs)

    def scores(self, query: str | Sequence[str]) -> Any:
        """BM25 score of every document for ``query`` (a string or a token list), as a numpy array."""
        np = self._np
        toks = _tokens(query) if isinstance(query, str) else list(query)
        if self._retriever is None:
            return np.zeros(0, dtype="float32")
        ids = [self.vocab[t] for t in toks if t in self.vocab]
        if not ids:
            return np.zeros(self.n_docs, dtype="float32")
        return self._retriever.get_scores_from_ids(ids)

    def search(self, query: str | Sequence[str], k: int = 10) -> list[tuple[int, float]]:
        """Top ``k`` documents for ``query`` as ``(index, score)``, best first (score > 0 only)."""
        if not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be a positive int, got {k!r}")
        np = self._np
        scores = self.scores(query)
        if scores.size == 0:
            return []
        positive = np.flatnonzero(scores > 0)
        if positive.size == 0:
            return []
        if positive.size > k:
            part = positive[np.argpartition(-scores[positive], k - 1)[:k]]
            # include every document tied with the k-th score, then sort and cut (stable ties)
            kth = scores[part].min()
            part = positive[scores[positive] >= kth]
        else:
            part = positive
        order = sorted(part.tolist(), key=lambda i: (-float(scores[i]), i))[:k]
        return [(int(i), float(scores[i])) for i in order]


# ---------------------------------------------------------------- evaluation


def _ids(results: Iterable[Any]) -> list[Any]:
    out = []
    for r in results:
        if isinstance(r, tuple) and len(r) == 2 and isinstance(r[1], (int, float)):
            out.append(r[0])
        else:
            out.append(r)
    return out


def recall_at_k(retrieved: Iterable[Any], relevant: Any, k: int = 20) -> float:
    """Share of the relevant items found in the first ``k`` retrieved ones.

    ``retrieved`` is a ranked list of ids or of ``(id, score)`` pairs (what
    :meth:`BM25Index.search` returns); ``relevant`` is one id or a collection of ids.
    recall@20 = 0.95 means 5% of the relevant chunks were missed (1 - recall@20 is the
    failure rate Anthropic's Contextual Retrieval article reports).
    """
    if not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive int, got {k!r}")
    if isinstance(relevant, (str, int)) or not isinstance(relevant, Iterable):
        relevant = {relevant}
    relevant = set(relevant)
    if not relevant:
        raise ValueError("relevant is empty: recall needs at least one relevant item")
    top = set(_ids(retrieved)[:k])
    return len(top & relevant) / len(relevant)


def mean_recall_at_k(runs: Iterable[tuple[Iterable[Any], Any]], k: int = 20) -> float:
    """Mean recall@k over ``(retrieved, relevant)`` pairs, one per question."""
    values = [recall_at_k(r, rel, k) for r, rel in runs]
    if not values:
        raise ValueError("no questions given")
    return sum(values) / len(values)
