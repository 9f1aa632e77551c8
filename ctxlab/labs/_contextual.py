"""Contextual retrieval for lesson 10: a situating header for each chunk, offline or by Claude, and its cost.

Offline, :func:`situate` writes a fixed header from the document's structure:
regulation name > chapter > first article〜last article (:data:`OFFLINE_CONTEXT_LABEL`).
Online, :func:`contextualize` asks Claude with :func:`context_request`, a Japanese version
of the Contextual Retrieval article's prompt, the whole document in a cached block and the
chunk after the breakpoint, after :func:`ctxlab.api.budget.check` has seen the estimate.
:func:`context_cost` prices it (:func:`corpus_context_cost` for a whole chunk set).
:mod:`ctxlab.labs.rag_lab` is the lesson's surface and re-exports these names.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from ctxlab._progress import progress as progress_bar
from ctxlab.api import budget
from ctxlab.api.client import is_offline
from ctxlab.api.messages import answer_text
from ctxlab.costs import pricing
from ctxlab.estimate import estimate_text
from ctxlab.retrieval import Chunk, article_spans

__all__ = [
    "OFFLINE_CONTEXT_LABEL", "CONTEXT_MODEL", "CONTEXT_MAX_TOKENS", "CONTEXT_OUTPUT_TOKENS",
    "CONTEXT_DOCUMENT_TEMPLATE", "CONTEXT_CHUNK_TEMPLATE", "GLOSSARY_TEMPLATE",
    "DOC_WRAPPER_TOKENS", "CHUNK_PROMPT_TOKENS", "doc_fields", "situate", "cut_article", "glossary_system",
    "context_request", "ContextCost", "context_cost", "cost_per_million_document_tokens",
    "corpus_context_cost", "Contextualized", "contextualize",
]

#: how the offline header is labelled wherever it is shown
OFFLINE_CONTEXT_LABEL = "決まった手順の文脈付与（オフライン）"
#: the model that writes contexts online (the current lineup's small model; a document under 100,000
#: tokens pays its lower tier)
CONTEXT_MODEL = pricing.SMALL_MODEL
#: the answer length asked for; the article reports 50 to 100 tokens of context
CONTEXT_MAX_TOKENS = 150
#: output tokens assumed per context in cost estimates (the article's upper figure)
CONTEXT_OUTPUT_TOKENS = 100

# ---------------------------------------------------------------- structure and headers


def doc_fields(doc) -> tuple[str, str, str | None]:
    """(text, title, file) of a ctxlab.corpus.Doc, a (name, text) pair or a str."""
    if isinstance(doc, str):
        return doc, doc.split("\n", 1)[0].strip(), None
    if isinstance(doc, tuple) and len(doc) == 2:
        name, text = doc
        return text, text.split("\n", 1)[0].strip(), name
    return doc.text, doc.title, getattr(doc, "file", None)


def _heading(u: dict) -> str:
    return f"{u['article']}{u['caption'] or ''}"


def situate(chunk: Chunk, doc_text: str, title: str | None = None, spans: list[dict] | None = None) -> str:
    """A fixed context header for any chunk of a regulation, from the document's structure.

    「年次有給休暇取扱規程 > 第3章　有効期間及び繰越し > 第5条（有効期間）〜第6条（繰越し）」:
    the regulation's name, the chapter(s) and the first and last article the chunk
    overlaps (「〜」 joins a range). Works for fixed-size chunks too, which know nothing of
    the structure. ``spans`` (from :func:`ctxlab.retrieval.article_spans`) can be passed
    to avoid parsing the document again for every chunk.
    """
    if spans is None:
        spans = article_spans(doc_text)
    title = title if title is not None else (chunk.meta.get("title") or doc_text.split("\n", 1)[0].strip())
    hit = [u for u in spans if u["start"] < chunk.end and u["end"] > chunk.start]
    chapters: list[str] = []
    for u in hit:
        if u["chapter"] and u["chapter"] not in chapters:
            chapters.append(u["chapter"])
    articles = [u for u in hit if u["article"]]
    parts = [title] if title else []
    if chapters:
        parts.append(chapters[0] if len(chapters) == 1 else f"{chapters[0]}〜{chapters[-1]}")
    if articles:
        first, last = _heading(articles[0]), _heading(articles[-1])
        parts.append(first if first == last else f"{first}〜{last}")
    return " > ".join(parts)


def cut_article(chunk: Chunk, doc_text: str, spans: list[dict] | None = None) -> dict | None:
    """The article that ``chunk`` ends inside of (cut in two), or None when it ends at a boundary.

    The returned dict is the article's span (see :func:`ctxlab.retrieval.article_spans`)
    with ``inside`` and ``outside``: the part of the article in this chunk and the rest.
    """
    if spans is None:
        spans = article_spans(doc_text)
    for u in spans:
        if u["article"] and u["start"] < chunk.end < u["end"]:
            rest = doc_text[chunk.end:u["end"]]
            if not rest.strip():
                return None
            return {**u, "inside": doc_text[max(u["start"], chunk.start):chunk.end], "outside": rest}
    return None


# ---------------------------------------------------------------- the online contextualizer

#: the cached block: the whole document (the article's {{WHOLE_DOCUMENT}})
CONTEXT_DOCUMENT_TEMPLATE = "<document>\n{document}\n</document>"
#: after the breakpoint: the chunk and the instruction (our Japanese version of the article's prompt)
CONTEXT_CHUNK_TEMPLATE = (
    "上の文書全体のなかに位置づけたいチャンクは次のとおりです。\n"
    "<chunk>\n{chunk}\n</chunk>\n"
    "このチャンクを検索で見つけやすくするために、文書全体のどこにあり何について定めた部分かを、"
    "短く簡潔な文脈として書いてください。答えはその文脈だけにし、ほかには何も書かないでください。"
)


GLOSSARY_TEMPLATE = (
    "文脈を書くときは、社内で使われる次の言い換えも添えてください（検索する人はどちらの言い方も使います）。\n{pairs}"
)


def glossary_system(glossary: Mapping[str, str]) -> str:
    """A system prompt from a glossary {"給料": "給与", ...} (the article's domain-specific hint)."""
    if not glossary:
        raise ValueError("the glossary is empty: give at least one pair such as {'給料': '給与'}, or no glossary")
    return GLOSSARY_TEMPLATE.format(pairs="\n".join(f"・{a} = {b}" for a, b in glossary.items()))


def context_request(document: str, chunk: str, *, model: str = CONTEXT_MODEL,
                    max_tokens: int = CONTEXT_MAX_TOKENS, ttl: str = "5m",
                    glossary: Mapping[str, str] | None = None) -> dict:
    """The Messages request that asks for one chunk's context.

    The document goes first, in its own text block with ``cache_control`` (the
    breakpoint); the chunk and the instruction follow it, so every chunk of the same
    document reuses the cached prefix and only the part after the breakpoint is new.
    A ``glossary`` (the same for every call) becomes the system prompt, which comes
    before the document and is cached with it.
    """
    if ttl not in ("5m", "1h"):
        raise ValueError(f"ttl must be '5m' or '1h', got {ttl!r}")
    cache = {"type": "ephemeral"} if ttl == "5m" else {"type": "ephemeral", "ttl": "1h"}
    extra = {"system": glossary_system(glossary)} if glossary else {}
    return {
        **extra,
        "model": model,
        "max_tokens": max_tokens,
        "messages": [{
            "role": "user",
            "content": [
                {"type": "text", "text": CONTEXT_DOCUMENT_TEMPLATE.format(document=document), "cache_control": cache},
                {"type": "text", "text": CONTEXT_CHUNK_TEMPLATE.format(chunk=chunk)},
            ],
        }],
    }


@dataclass(frozen=True)
class ContextCost:
    """Dollars of contextualizing documents, split like the API's usage fields."""

    cache_write: float
    cache_read: float
    uncached_input: float
    output: float
    calls: int
    document_tokens: int

    @property
    def total(self) -> float:
        return self.cache_write + self.cache_read + self.uncached_input + self.output

    @property
    def per_million_document_tokens(self) -> float:
        return self.total * pricing.MTOK / self.document_tokens if self.document_tokens else 0.0

    def __add__(self, other: "ContextCost") -> "ContextCost":
        return ContextCost(self.cache_write + other.cache_write, self.cache_read + other.cache_read,
                           self.uncached_input + other.uncached_input, self.output + other.output,
                           self.calls + other.calls, self.document_tokens + other.document_tokens)


#: prompt tokens around the document and around each chunk (the templates without their fillings)
DOC_WRAPPER_TOKENS = estimate_text(CONTEXT_DOCUMENT_TEMPLATE.format(document=""))
CHUNK_PROMPT_TOKENS = estimate_text(CONTEXT_CHUNK_TEMPLATE.format(chunk=""))


def context_cost(document_tokens: int, chunk_tokens: Sequence[int], *, model: str = CONTEXT_MODEL,
                 output_tokens: int = CONTEXT_OUTPUT_TOKENS, cache: bool = True) -> ContextCost:
    """Cost of writing a context for each chunk of one document, calls made one after another.

    With ``D`` the document block (document + wrapper), ``n`` chunks, ``c_i`` the chunk
    tokens, ``p`` the instruction tokens, ``o`` the output tokens and the model's input
    price ``P_in``, output price ``P_out``, write and read multipliers ``w`` and ``r``::

        cost = P_in * (w*D + (n-1)*r*D + sum(c_i + p)) + P_out * n*o

    The first call writes the cache, the others read it. Without ``cache`` (or when ``D``
    is below the model's minimum cacheable length, where nothing is cached and no error
    is raised) every call pays ``D`` at the base price: ``P_in * (n*D + sum(c_i + p))``.
    """
    m = pricing.get_model(model)
    if document_tokens < 0 or any(c < 0 for c in chunk_tokens) or output_tokens < 0:
        raise ValueError(f"token counts must be >= 0, got document_tokens={document_tokens}, "
                         f"output_tokens={output_tokens} and {sum(c < 0 for c in chunk_tokens)} negative chunk sizes")
    n = len(chunk_tokens)
    if n == 0:
        return ContextCost(0.0, 0.0, 0.0, 0.0, 0, document_tokens)
    d = document_tokens + DOC_WRAPPER_TOKENS
    tail = sum(chunk_tokens) + n * CHUNK_PROMPT_TOKENS
    p = m.input_per_token
    out = n * output_tokens * m.output_per_token
    if cache and d >= pricing.min_cacheable_tokens(m)[0]:
        return ContextCost(d * m.cache_write_5m_multiplier * p, (n - 1) * d * m.cache_read_multiplier * p,
                           tail * p, out, n, document_tokens)
    return ContextCost(0.0, 0.0, (n * d + tail) * p, out, n, document_tokens)


def cost_per_million_document_tokens(document_tokens: int = 8000, chunk_tokens: int = 800, *,
                                     model: str = CONTEXT_MODEL, output_tokens: int = CONTEXT_OUTPUT_TOKENS,
                                     cache: bool = True) -> ContextCost:
    """The article's yardstick: documents of ``document_tokens`` cut into ``chunk_tokens`` chunks.

    Returns the cost of one such document; its ``per_million_document_tokens`` is the
    figure the article gives ($1.02 with its 8k-token documents and 800-token chunks).
    """
    if chunk_tokens < 1 or document_tokens < chunk_tokens:
        raise ValueError(f"need document_tokens >= chunk_tokens >= 1, got {document_tokens} and {chunk_tokens}")
    n, rest = divmod(document_tokens, chunk_tokens)
    chunks = [chunk_tokens] * n + ([rest] if rest else [])
    return context_cost(document_tokens, chunks, model=model, output_tokens=output_tokens, cache=cache)


def corpus_context_cost(docs: Iterable, chunks: Sequence[Chunk], *, model: str = CONTEXT_MODEL,
                        output_tokens: int = CONTEXT_OUTPUT_TOKENS, cache: bool = True) -> ContextCost:
    """Cost of contextualizing every chunk of ``chunks`` (grouped by ``doc_id``) in ``docs``."""
    by_doc: dict[str | None, list[int]] = {}
    for c in chunks:
        by_doc.setdefault(c.doc_id, []).append(estimate_text(c.text))
    total = ContextCost(0.0, 0.0, 0.0, 0.0, 0, 0)
    for d in docs:
        text, _title, file = doc_fields(d)
        if file in by_doc:
            total = total + context_cost(estimate_text(text), by_doc[file], model=model,
                                         output_tokens=output_tokens, cache=cache)
    return total


@dataclass(frozen=True)
class Contextualized:
    """Context headers of a chunk list and how they were made."""

    headers: list[str]
    method: str
    cost_usd: float = 0.0


def contextualize(chunks: Sequence[Chunk], docs: Iterable, client=None, *, model: str = CONTEXT_MODEL,
                  glossary: Mapping[str, str] | None = None, progress: bool = True) -> Contextualized:
    """Context headers for ``chunks``: Claude online (within the budget), :func:`situate` offline.

    Online, the estimate (:func:`corpus_context_cost`) goes through
    :func:`ctxlab.api.budget.check` first; over the budget, the offline headers are used and
    the reason is printed. Calls for one document are made one after another, so that
    the first one's cache write is there for the rest (parallel first calls all miss).
    ``glossary`` adds in-house synonyms to every call (see :func:`context_request`); the
    offline headers ignore it.
    """
    docs = list(docs)
    by_file = {}
    for d in docs:
        text, title, file = doc_fields(d)
        by_file[file] = (text, title)
    missing = {c.doc_id for c in chunks} - set(by_file)
    if missing:
        raise ValueError(f"chunks refer to documents not given: {sorted(missing, key=str)[:5]}; "
                         "pass every document the chunks were cut from")

    def offline() -> Contextualized:
        spans = {f: article_spans(t) for f, (t, _) in by_file.items()}
        return Contextualized([situate(c, by_file[c.doc_id][0], by_file[c.doc_id][1], spans[c.doc_id])
                               for c in chunks], OFFLINE_CONTEXT_LABEL)

    if client is None or is_offline(client):
        return offline()
    estimate = corpus_context_cost(docs, chunks, model=model).total
    try:
        budget.check(estimate, client, f"{len(chunks)} チャンクの文脈付与（{model}）")
    except budget.BudgetExceeded as exc:
        print(f"{exc}\n→ 代わりに{OFFLINE_CONTEXT_LABEL}を使います。")
        return offline()
    headers, spent = [], 0.0
    with progress_bar(total=len(chunks), desc="文脈付与", unit="chunk", enabled=progress) as bar:
        for c in chunks:
            text, _title = by_file[c.doc_id]
            msg = client.messages.create(**context_request(text, c.text, model=model, glossary=glossary))
            spent += pricing.usage_cost(msg.usage, model).total
            headers.append(" ".join(answer_text(msg).split()))
            bar.update(1)
    return Contextualized(headers, f"Claude による文脈付与（{model}）", spent)
