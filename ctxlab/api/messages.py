"""Building Messages API requests over documents: one document block per file.

The same helpers serve the long-context, filter and RAG paths and the citations lesson,
so every lesson sends requests of the same shape: documents first (stable, cacheable),
the cache breakpoint on the last document, then the question (what changes every call).
"""
from __future__ import annotations

from typing import Any, Iterable

from ctxlab.costs import pricing

SYSTEM_PROMPT = (
    "あなたは株式会社みなと計測の社内規程に基づいて社員の質問に答えるアシスタントです。"
    "渡された規程の内容だけを根拠に答え、規程に記載がないことは「規程に記載がありません」と答えてください。"
)


# ---------------------------------------------------------------- documents of any shape


def field_of(obj: Any, name: str, default: Any = None) -> Any:
    """``obj[name]`` for a dict, ``obj.name`` otherwise (SDK objects and plain dicts alike)."""
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def doc_text(doc: Any) -> str:
    """The text of a document: ``doc.text``, ``doc["text"]`` or the second item of a pair."""
    if isinstance(doc, tuple):
        return doc[1]
    if isinstance(doc, str):
        return doc
    text = field_of(doc, "text")
    if not isinstance(text, str):
        raise TypeError(f"a document needs a text (a .text attribute or a (title, text) pair), got {type(doc).__name__}")
    return text


def doc_title(doc: Any) -> str | None:
    """The title sent with a document (``label`` of a corpus Doc, else ``title``, else the pair's first item)."""
    if isinstance(doc, tuple):
        return doc[0]
    if isinstance(doc, str):
        return None
    return field_of(doc, "label") or field_of(doc, "title")


def doc_name(doc: Any) -> str:
    """A short name for a document: the file name when there is one, else the title."""
    if isinstance(doc, tuple):
        return doc[0]
    return field_of(doc, "file") or doc_title(doc) or "(無題)"


# ---------------------------------------------------------------- reading a response


def document_block(text: str, title: str | None = None, *, citations: bool = False,
                   context: str | None = None, cache_ttl: str | None = None) -> dict:
    """A plain-text document block (optionally citable, optionally a cache breakpoint)."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("a document block needs non-empty text")
    block: dict = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": text}}
    if title:
        block["title"] = title
    if context:
        block["context"] = context
    if citations:
        block["citations"] = {"enabled": True}
    if cache_ttl is not None:
        block["cache_control"] = cache_control(cache_ttl)
    return block


def cache_control(ttl: str = "5m") -> dict:
    if ttl not in ("5m", "1h"):
        raise ValueError(f"ttl must be '5m' or '1h', got {ttl!r}")
    return {"type": "ephemeral"} if ttl == "5m" else {"type": "ephemeral", "ttl": "1h"}


def doc_blocks(docs: Iterable, *, citations: bool = False, cache_ttl: str | None = "5m") -> list[dict]:
    """One block per corpus document (objects with ``.text`` and ``.label`` or ``.title``,
    or (title, text) pairs); the breakpoint goes on the last one."""
    blocks = [document_block(doc_text(d), doc_title(d), citations=citations) for d in docs]
    if not blocks:
        raise ValueError("no documents to send")
    if cache_ttl is not None:
        blocks[-1]["cache_control"] = cache_control(cache_ttl)
    return blocks


def question_request(docs: Iterable, question: str, *, model: str = pricing.DEFAULT_MODEL, max_tokens: int = 700,
                     citations: bool = False, cache_ttl: str | None = "5m",
                     system: str | None = SYSTEM_PROMPT) -> dict:
    """Keyword arguments for ``client.messages.create``: documents, breakpoint, then the question."""
    content = doc_blocks(docs, citations=citations, cache_ttl=cache_ttl)
    content.append({"type": "text", "text": question})
    req = {"model": model, "max_tokens": max_tokens, "messages": [{"role": "user", "content": content}]}
    if system:
        req["system"] = system
    return req


def answer_text(message) -> str:
    """The text of a response (all text blocks joined)."""
    return "".join(getattr(b, "text", "") for b in message.content if getattr(b, "type", "") == "text")
