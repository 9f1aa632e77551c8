"""Lesson 07: citations of the Messages API: read them, print them, map them back, and a fallback.

With ``"citations": {"enabled": true}`` on every document block, an answer comes back as
several text blocks; a block that rests on the documents carries ``char_location``
citations (``document_index`` counted from 0 across the request, ``document_title``,
``start_char_index`` / ``end_char_index`` 0-based and end-exclusive, and ``cited_text``)::

    from ctxlab.labs import citations
    from ctxlab.api import messages
    resp = client.messages.create(**messages.question_request(docs, question, citations=True))
    print(citations.render(resp))          # the answer with [n] markers, then title, range, text
    for c in citations.collect(resp):      # the citation objects, in order
        ...

What else is here:

* :func:`bundle` joins files into one text and keeps the offsets table that a single
  document needs to map a cited range back to its file (:meth:`Bundle.locate`);
* :func:`numbered_docs`, :func:`numbered_instruction` and :func:`parse_numbered_refs`: the
  fallback when citations cannot be used (e.g. with structured outputs, which the API
  refuses together with citations): number the documents, ask for ``[n]`` markers, parse them;
* :func:`article_document`: a custom-content document with one block per article, so a
  citation (``content_block_location``) names the article it rests on, not a sentence;
* :func:`char_location` / :func:`cite` build citation objects (tests, exercises);
* :func:`plot_citation_map` draws where cited ranges fall in each file.

Functions accept the SDK's response and citation objects, or the same shapes as dicts.
Documents may be corpus ``Doc`` objects (``.file``, ``.label``, ``.text``), objects with
``.title``/``.text``, or ``(title, text)`` pairs.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from anthropic.types import CitationCharLocation

from ctxlab.api import online
from ctxlab.api.messages import cache_control, doc_name, doc_text, doc_title, field_of
from ctxlab.retrieval import article_spans

__all__ = [
    "collect", "collect_pairs", "render", "char_location", "cite",     "Bundle", "Part", "bundle", "numbered_docs", "numbered_instruction", "NumberedRef",
    "parse_numbered_refs", "ArticleDocument", "article_document",
]


@dataclass(frozen=True)
class ArticleDocument:
    """A custom-content document block with one text block per article, and each block's article label."""

    block: dict
    labels: tuple[str, ...]

    def article_of(self, citation: Any) -> str:
        """The article a ``content_block_location`` citation starts in (e.g. 「第11条（在宅勤務手当）」)."""
        i = field_of(citation, "start_block_index")
        if not isinstance(i, int) or not 0 <= i < len(self.labels):
            raise ValueError(f"start_block_index {i!r} is not a block of this document ({len(self.labels)} blocks)")
        return self.labels[i]


def article_document(doc: Any, *, citations: bool = True, cache_ttl: str | None = "5m") -> ArticleDocument:
    """``doc`` as ``{"type": "document", "source": {"type": "content", "content": [...]}}``, one block per article.

    The API cites a custom-content document by whole blocks (``start_block_index`` /
    ``end_block_index``), never by sentences inside a block: one block per article gives
    article-level citations. Text before the first article (title, chapter headings) and the
    supplementary provisions are blocks of their own, labelled as such.
    """
    text = doc_text(doc)
    pieces: list[tuple[str, str]] = []
    for sp in article_spans(text):
        body = text[sp["start"]:sp["end"]].strip()
        if not body:
            continue
        if sp["kind"] == "article":
            label = sp["article"] + (sp["caption"] or "")
        elif sp["kind"] == "supplementary":
            label = "附則"
        else:
            label = "見出し"
        pieces.append((label, body))
    if not pieces:
        raise ValueError("the document has no text to cite")
    block: dict = {"type": "document", "title": doc_title(doc),
                   "source": {"type": "content", "content": [{"type": "text", "text": b} for _, b in pieces]},
                   "citations": {"enabled": citations}}
    if cache_ttl is not None:
        block["cache_control"] = cache_control(cache_ttl)
    return ArticleDocument(block, tuple(label for label, _ in pieces))


def collect_pairs(response: Any) -> list[tuple[str, Any]]:
    """``(answer text, citation)`` for every citation of a response, in order.

    Walks ``response.content``: text blocks without citations are skipped, a block with
    several citations gives several pairs with the same text.
    """
    content = field_of(response, "content")
    if content is None:
        raise TypeError("collect() needs a Messages API response (an object with .content)")
    out = []
    for block in content:
        if field_of(block, "type") != "text":
            continue
        for c in field_of(block, "citations") or []:
            out.append((field_of(block, "text", ""), c))
    return out


def collect(response: Any) -> list[Any]:
    """The citation objects of a response, in the order they appear."""
    return [c for _, c in collect_pairs(response)]


def _range_label(c: Any) -> str:
    kind = field_of(c, "type")
    if kind == "char_location":
        return f"文字 {field_of(c, 'start_char_index')}–{field_of(c, 'end_char_index')}"
    if kind == "page_location":
        return f"ページ {field_of(c, 'start_page_number')}–{field_of(c, 'end_page_number')}"
    if kind == "content_block_location":
        return f"ブロック {field_of(c, 'start_block_index')}–{field_of(c, 'end_block_index')}"
    return str(kind)


def _one_line(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render(response: Any, *, width: int = 70) -> str:
    """The answer with ``[n]`` after each cited passage, then one line per citation:
    number, document title, character range and cited text; last, where the response came from
    (the real API or the sandbox) when it says so.

    The same citation (document and range) keeps its number when it is cited again.
    """
    content = field_of(response, "content")
    if content is None:
        raise TypeError("render() needs a Messages API response (an object with .content)")
    numbers: dict[tuple, int] = {}
    refs: list[str] = []
    parts: list[str] = []
    for block in content:
        if field_of(block, "type") != "text":
            continue
        text = field_of(block, "text", "")
        marks = []
        for c in field_of(block, "citations") or []:
            key = (field_of(c, "document_index"), field_of(c, "type"), _range_label(c))
            if key not in numbers:
                numbers[key] = len(numbers) + 1
                title = field_of(c, "document_title") or f"文書 {field_of(c, 'document_index')}"
                refs.append(f"[{numbers[key]}] {title}  {_range_label(c)}  (document_index={field_of(c, 'document_index')})\n"
                            f"    「{_one_line(field_of(c, 'cited_text', ''), width)}」")
            marks.append(f"[{numbers[key]}]")
        parts.append(text + "".join(marks))
    answer = "".join(parts).strip()
    source = online.response_source(response)  # the real API or the sandbox, when the response says
    tail = "" if source is None else "\n" + source
    if not refs:
        return answer + "\n\n（引用なし）" + tail
    return answer + "\n\n" + "\n".join(refs) + tail


# ---------------------------------------------------------------- building citations


def char_location(document_index: int, start: int, end: int, cited_text: str,
                  document_title: str | None = None) -> CitationCharLocation:
    """A ``char_location`` citation object as the SDK returns it (values are not checked)."""
    return CitationCharLocation(type="char_location", cited_text=cited_text, document_index=document_index,
                                document_title=document_title, start_char_index=start, end_char_index=end,
                                file_id=None)


def cite(docs: Sequence[Any], document_index: int, start: int, end: int) -> CitationCharLocation:
    """A correct citation of ``docs[document_index]`` over ``[start, end)`` (cited_text is the slice)."""
    doc = docs[document_index]
    text = doc_text(doc)
    if not 0 <= start <= end <= len(text):
        raise ValueError(f"range [{start}, {end}) is outside the document's {len(text)} characters")
    return char_location(document_index, start, end, text[start:end], doc_title(doc))


# ---------------------------------------------------------------- one document for all files


@dataclass(frozen=True)
class Part:
    """Where one file's text sits inside a bundle: ``bundle.text[start:end] == file text``."""

    name: str
    start: int
    end: int


@dataclass(frozen=True)
class Bundle:
    """Files joined into one text, with the offsets table needed to map ranges back."""

    text: str
    parts: tuple[Part, ...]
    title: str

    def locate(self, start: int, end: int) -> tuple[str, int, int]:
        """``(file name, start, end)`` inside that file for a range of the bundle.

        Raises ValueError when the range is not inside one file's text (a header, the
        separator, or across two files): a single document cannot say which file that is.
        """
        for p in self.parts:
            if p.start <= start and end <= p.end:
                return p.name, start - p.start, end - p.start
        raise ValueError(f"range [{start}, {end}) of the bundle is not inside one file's text")

    def as_document(self) -> tuple[str, str]:
        """``(title, text)``, ready for :func:`ctxlab.api.messages.doc_blocks`."""
        return self.title, self.text


def bundle(docs: Iterable[Any], title: str | None = None, *, header: str = "=== {name} ===\n",
           sep: str = "\n\n") -> Bundle:
    """Join documents into one text (``header`` before each, ``sep`` between) and keep the offsets."""
    pieces: list[str] = []
    parts: list[Part] = []
    pos = 0
    docs = list(docs)
    if not docs:
        raise ValueError("bundle() needs at least one document")
    for i, d in enumerate(docs):
        if i:
            pieces.append(sep)
            pos += len(sep)
        name = doc_name(d)
        head = header.format(name=name, title=doc_title(d) or name, n=i + 1)
        text = doc_text(d)
        pieces.append(head + text)
        parts.append(Part(name, pos + len(head), pos + len(head) + len(text)))
        pos += len(head) + len(text)
    return Bundle("".join(pieces), tuple(parts), title or f"規程集（{len(docs)} ファイルを連結）")


# ---------------------------------------------------------------- the fallback: numbered references


def numbered_docs(docs: Iterable[Any]) -> list[tuple[str, str]]:
    """``("[n] title", text)`` pairs, numbered from 1, for :func:`ctxlab.api.messages.question_request`."""
    return [(f"[{i}] {doc_title(d) or doc_name(d)}", doc_text(d)) for i, d in enumerate(docs, 1)]


def numbered_instruction(n_docs: int) -> str:
    """A system-prompt instruction that asks for ``[n]`` markers (Japanese)."""
    return (f"文書には [1] から [{n_docs}] の番号が付いています。答えの各文の直後に、根拠にした文書の番号を "
            "[2] のように角かっこで書いてください。根拠が複数なら [1][3] のように並べ、文書に根拠がない文には番号を付けないでください。")


_MARK = re.compile(r"[\[［【]\s*(\d+(?:\s*[,，、]\s*\d+)*)\s*[\]］】]")
_BULLETS = "・-*•　 \t"


@dataclass(frozen=True)
class NumberedRef:
    """A run of ``[n]`` markers in an answer: the numbers (as written, 1-based), the
    sentence they follow, and the position of the markers in the answer text."""

    numbers: tuple[int, ...]
    claim: str
    start: int
    end: int

    def valid(self, n_docs: int) -> bool:
        """True when every number names one of ``n_docs`` documents (1..n_docs)."""
        return bool(self.numbers) and all(1 <= n <= n_docs for n in self.numbers)


def _claim_before(segment: str) -> str:
    s = segment.rstrip(" 　\t（(「【")
    if not s.strip():
        return ""
    s = s.split("\n")[-1]
    cut = s.rfind("。", 0, len(s) - 1)  # a sentence end before the last character
    s = s[cut + 1:]
    return s.strip().lstrip(_BULLETS).strip()


def parse_numbered_refs(text: str) -> list[NumberedRef]:
    """The ``[n]`` markers of an answer, each with the sentence it follows.

    Understands ``[1]``, ``[1, 3]``, ``[1][3]`` (adjacent markers form one reference),
    full-width brackets and digits (``［２］``) and lenticular brackets (``【2】``).
    Numbers are returned as written; check them with :meth:`NumberedRef.valid`.
    """
    if not isinstance(text, str):
        raise TypeError(f"parse_numbered_refs() needs a str, got {type(text).__name__}")
    runs: list[list] = []  # [start, end, numbers]
    for m in _MARK.finditer(text):
        nums = [int(x) for x in re.split(r"\s*[,，、]\s*", m.group(1).strip())]
        if runs and not text[runs[-1][1]:m.start()].strip():
            runs[-1][1] = m.end()
            runs[-1][2].extend(nums)
        else:
            runs.append([m.start(), m.end(), nums])
    refs = []
    prev = 0
    for start, end, nums in runs:
        claim = _claim_before(text[prev:start])
        refs.append(NumberedRef(tuple(dict.fromkeys(nums)), claim, start, end))
        prev = end
    return refs


# ---------------------------------------------------------------- a picture
