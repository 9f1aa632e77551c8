"""The RAG lab (lesson 10): contextual chunks, fact recall@k, rank fusion, the method table.

Recall, as measured here
    A chunk is **relevant** to a question when it comes from one of the question's gold
    files and the text that reaches the model (the chunk, with its context header when
    the method is contextual) holds at least one of the question's key facts (compared
    after :func:`ctxlab.labs.measure.normalize`: width, spaces and thousands separators do not
    matter). **recall@k** of a question is the share of its key facts held by relevant
    chunks among the top ``k`` results; a method's recall@k is the mean over the
    answerable questions (``unanswerable`` ones have no key facts and are left out).
    ``1 - recall@20`` is the failure rate of Anthropic's Contextual Retrieval article.
    Counting facts rather than chunks makes fixed-size and article chunkings comparable
    (their chunks differ, the facts do not) and gives partial credit to questions whose
    facts sit in several files. :func:`hit_recall` is the looser any-hit definition
    (1 when any relevant chunk is in the top ``k``), for comparison.

Contextual chunks
    Offline, :func:`situate` writes a fixed header from the document's structure:
    regulation name > chapter > first article〜last article
    (:data:`OFFLINE_CONTEXT_LABEL`). Online, :func:`contextualize` asks Claude with
    :func:`context_request`, a Japanese version of the article's prompt, the whole document
    in a cached block and the chunk after the breakpoint, after
    :func:`ctxlab.api.budget.check` has seen the estimate. :func:`context_cost` prices it.

Fusion and the table
    :func:`rrf` is reciprocal rank fusion; :class:`Lab` builds the chunk sets once (tokens
    cached), ranks the questions by every method of :data:`METHODS` and reports recall@k,
    curves and the table beside the published figures (:func:`published_rows`).
    :func:`rerank` is an online step (Claude reorders the candidates); offline it is
    skipped with a message. :func:`embedding_backend` tells whether a local embedding
    model is importable (none is required by the course).
"""
from __future__ import annotations

import importlib.util
import json
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence

from ctxlab.costs import pricing
from ctxlab.labs.measure import normalize
from ctxlab.retrieval import BM25Index, Chunk, article_spans, chunk_by_articles, chunk_by_size, tokenize, tokenize_many
from ctxlab.estimate import estimate_text
from ctxlab.published import figures
from ctxlab import _text

__all__ = [
    "OFFLINE_CONTEXT_LABEL",
    "CONTEXT_MODEL",
    "EMBEDDING_MODEL",
    "situate",
    "cut_article",
    "context_request",
    "contextualize",
    "Contextualized",
    "ContextCost",
    "context_cost",
    "cost_per_million_document_tokens",
    "corpus_context_cost",
    "bigram_tokens",
    "line_tokens",
    "facts_held",
    "fact_recall",
    "hit_recall",
    "rrf",
    "Lab",
    "METHODS",
    "published_rows",
    "format_table",
    "rerank",
    "embedding_backend",
]

#: how the offline header is labelled wherever it is shown
OFFLINE_CONTEXT_LABEL = "決まった手順の文脈付与（オフライン）"
#: the model that writes contexts online (the cheapest of the course's price table)
CONTEXT_MODEL = "claude-haiku-4-5"
#: the answer length asked for; the article reports 50 to 100 tokens of context
CONTEXT_MAX_TOKENS = 150
#: output tokens assumed per context in cost estimates (the article's upper figure)
CONTEXT_OUTPUT_TOKENS = 100
#: the embedding model a hybrid search would add (not installed by the course)
EMBEDDING_MODEL = {"name": "intfloat/multilingual-e5-small", "licence": "MIT",
                   "note": "multilingual (Japanese included), 384 dimensions; inputs start with 'query: ' / 'passage: '"}


# ---------------------------------------------------------------- structure and headers


def _doc_fields(doc) -> tuple[str, str, str | None]:
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
        raise ValueError("the glossary is empty")
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
        raise ValueError("token counts must be >= 0")
    n = len(chunk_tokens)
    if n == 0:
        return ContextCost(0.0, 0.0, 0.0, 0.0, 0, document_tokens)
    d = document_tokens + DOC_WRAPPER_TOKENS
    tail = sum(chunk_tokens) + n * CHUNK_PROMPT_TOKENS
    p = m.input_per_token
    out = n * output_tokens * m.output_per_token
    if cache and d >= m.min_cacheable_tokens:
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
        raise ValueError("need document_tokens >= chunk_tokens >= 1")
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
        text, _title, file = _doc_fields(d)
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
    from ctxlab.api import budget
    from ctxlab.api.client import is_offline

    docs = list(docs)
    by_file = {}
    for d in docs:
        text, title, file = _doc_fields(d)
        by_file[file] = (text, title)
    missing = {c.doc_id for c in chunks} - set(by_file)
    if missing:
        raise ValueError(f"chunks refer to documents not given: {sorted(missing, key=str)[:5]}")

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
    from ctxlab.api.messages import answer_text

    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(chunks), desc="文脈付与", unit="chunk")
    headers, spent = [], 0.0
    try:
        for c in chunks:
            text, _title = by_file[c.doc_id]
            msg = client.messages.create(**context_request(text, c.text, model=model, glossary=glossary))
            spent += pricing.usage_cost(msg.usage, model).total
            headers.append(" ".join(answer_text(msg).split()))
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return Contextualized(headers, f"Claude による文脈付与（{model}）", spent)


# ---------------------------------------------------------------- tokens, recall, fusion

_NONWORD = re.compile(r"[\W_]+")


def bigram_tokens(text: str) -> list[str]:
    """Character bigrams of each run of letters/digits (a run of one character is kept as is).

    A second tokenization for Japanese that needs no dictionary: 「繰越上限」 ->
    ['繰越', '越上', '上限']. It matches parts of words that the morphological tokenizer
    keeps whole or lemmatizes differently (「支払日」 and 「支払う」 share 「支払」).
    """
    if not isinstance(text, str):
        raise TypeError(f"bigram_tokens() needs a str, got {type(text).__name__}")
    t = unicodedata.normalize("NFKC", text).lower()
    out: list[str] = []
    for run in _NONWORD.split(t):
        if len(run) == 1:
            out.append(run)
        else:
            out.extend(run[i:i + 2] for i in range(len(run) - 1))
    return out


def line_tokens(text: str) -> list[str]:
    """:func:`ctxlab.retrieval.tokenize` of ``text``, computed line by line.

    The tokenizer works line by line anyway, so the result is the same; each distinct
    line is tokenized once per process and cached, so two chunkings of the same corpus
    (whose chunks share most of their lines) cost little more than one.
    """
    return [t for line in text.splitlines() for t in tokenize(line)]


def facts_held(text: str, key_facts: Iterable[str]) -> set[str]:
    """The key facts that ``text`` holds (after normalization)."""
    t = normalize(text)
    return {f for f in key_facts if normalize(f) in t}


def _check_k(k) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive int, got {k!r}")


def fact_recall(ranking: Sequence[int], texts: Sequence[str], files: Sequence[str | None],
                key_facts: Sequence[str], gold_files: Iterable[str], k: int = 20) -> float:
    """Share of ``key_facts`` held by gold-file chunks among the first ``k`` of ``ranking``.

    ``ranking`` holds chunk indices (best first) into ``texts`` (what reaches the model)
    and ``files`` (the file each chunk comes from).
    """
    _check_k(k)
    facts = list(dict.fromkeys(key_facts))
    if not facts:
        raise ValueError("a question without key facts (unanswerable) has no recall: leave it out")
    gold = set(gold_files)
    found: set[str] = set()
    for i in list(ranking)[:k]:
        if files[i] in gold:
            found |= facts_held(texts[i], facts)
    return len(found) / len(facts)


def hit_recall(ranking: Sequence[int], texts: Sequence[str], files: Sequence[str | None],
               key_facts: Sequence[str], gold_files: Iterable[str], k: int = 20) -> float:
    """1.0 when any relevant chunk is among the first ``k``, else 0.0 (the any-hit definition)."""
    _check_k(k)
    gold = set(gold_files)
    return float(any(files[i] in gold and facts_held(texts[i], key_facts) for i in list(ranking)[:k]))


def rrf(rankings: Iterable[Sequence], k: int = 60) -> list:
    """Reciprocal rank fusion (Cormack et al., 2009): score(d) = sum over rankings of 1 / (k + rank).

    ``rank`` counts from 1. An item missing from a ranking gets nothing from it. Ties
    keep the order in which the items first appear (reading the rankings in turn).
    """
    if isinstance(k, bool) or not isinstance(k, (int, float)) or k < 0:
        raise ValueError(f"k must be a number >= 0, got {k!r}")
    score: dict = {}
    for ranking in rankings:
        seen = set()
        for rank, item in enumerate(ranking, start=1):
            if item in seen:
                continue
            seen.add(item)
            score[item] = score.get(item, 0.0) + 1.0 / (k + rank)
    order = {item: i for i, item in enumerate(score)}
    return sorted(score, key=lambda item: (-score[item], order[item]))


# ---------------------------------------------------------------- the lab


@dataclass
class ChunkSet:
    """One chunking of the corpus: the chunks, their files, headers and token caches."""

    name: str
    label: str
    chunks: list[Chunk]
    headers: list[str]
    context_label: str = OFFLINE_CONTEXT_LABEL
    _tok: dict = field(default_factory=dict, repr=False)

    @property
    def files(self) -> list[str | None]:
        return [c.doc_id for c in self.chunks]

    def texts(self, contextual: bool) -> list[str]:
        """What reaches the model: the chunk, or header + newline + chunk."""
        if contextual:
            return [h + "\n" + c.text for h, c in zip(self.headers, self.chunks)]
        return [c.text for c in self.chunks]

    def tokens(self, contextual: bool, kind: str) -> list[list[str]]:
        """Token lists (cached): ``kind`` "lemma" (fugashi + unidic-lite) or "bigram"."""
        key = (contextual, kind)
        if key not in self._tok:
            if kind == "lemma":
                body = self._tok.get(("body", "lemma"))
                if body is None:
                    body = self._tok[("body", "lemma")] = [line_tokens(c.text) for c in self.chunks]
                if contextual:
                    # tokenization works line by line, so header + "\n" + text == header tokens + text tokens
                    heads = tokenize_many(self.headers)
                    self._tok[key] = [h + b for h, b in zip(heads, body)]
                else:
                    self._tok[key] = body
            elif kind == "bigram":
                self._tok[key] = [bigram_tokens(t) for t in self.texts(contextual)]
            else:
                raise ValueError(f"kind must be 'lemma' or 'bigram', got {kind!r}")
        return self._tok[key]


@dataclass(frozen=True)
class Method:
    """A retrieval method of the table: a chunking, contextual or not, one or two tokenizations."""

    name: str
    label: str
    chunking: str  # "size" | "articles"
    contextual: bool
    parts: tuple[str, ...]  # "lemma", "bigram": several are fused with RRF
    short: str = ""  # a short label for figures and narrow tables


METHODS: dict[str, Method] = {m.name: m for m in (
    Method("bm25_size", "BM25・固定長チャンク", "size", False, ("lemma",), "固定長"),
    Method("bm25_articles", "BM25・条文チャンク", "articles", False, ("lemma",), "条文"),
    Method("ctx_bm25_articles", "文脈付き BM25・条文チャンク", "articles", True, ("lemma",), "文脈付き"),
    Method("ctx_hybrid_articles", "文脈付き・RRF（形態素 BM25 + 文字 bigram BM25）・条文チャンク", "articles", True,
           ("lemma", "bigram"), "文脈付き+RRF"),
)}

#: the method the exercise must beat
BASELINE = "bm25_articles"


class Lab:
    """Chunk the corpus two ways, rank the answerable questions by each method, measure recall.

    >>> lab = Lab()                                  # doctest: +SKIP
    >>> lab.recall("bm25_size", 20)                  # doctest: +SKIP

    Chunks are about ``chunk_tokens`` estimated tokens with ``overlap_tokens`` of overlap
    (fixed size: :func:`ctxlab.retrieval.chunk_by_size`; articles:
    :func:`ctxlab.retrieval.chunk_by_articles` with inline captions recognised). Headers
    are :func:`situate`'s until :meth:`use_context` replaces them. Tokens, indexes and
    rankings are cached for the life of the object, so asking again is free.
    """

    DEPTH = 200  # how far each ranking goes (recall@k for k up to this)

    def __init__(self, docs: Iterable | None = None, questions: Iterable | None = None, *,
                 chunk_tokens: int = 800, overlap_tokens: int = 100):
        from ctxlab import corpus

        self.docs = list(corpus.load() if docs is None else docs)
        qs = list(corpus.questions() if questions is None else questions)
        self.questions = [q for q in qs if q.key_facts]
        self.left_out = [q for q in qs if not q.key_facts]
        self.chunk_tokens, self.overlap_tokens = chunk_tokens, overlap_tokens
        self.spans = {}
        size, arts = [], []
        for d in self.docs:
            text, title, file = _doc_fields(d)
            self.spans[file] = article_spans(text)
            size += chunk_by_size(text, chunk_tokens, overlap_tokens, doc_id=file, title=title)
            arts += chunk_by_articles(text, chunk_tokens, overlap_tokens, doc_id=file, title=title,
                                      inline_captions=True)
        self._text = {(_doc_fields(d)[2]): _doc_fields(d)[0] for d in self.docs}
        self.sets = {
            "size": ChunkSet("size", f"固定長（{chunk_tokens} トークン・重なり {overlap_tokens}）", size,
                             self._situate_all(size)),
            "articles": ChunkSet("articles", f"条文（最大 {chunk_tokens} トークン・重なり {overlap_tokens}）", arts,
                                 self._situate_all(arts)),
        }
        self._index: dict = {}
        self._rank: dict = {}
        self._norm: dict = {}

    def _situate_all(self, chunks: list[Chunk]) -> list[str]:
        return [situate(c, self._text[c.doc_id], c.meta.get("title"), self.spans[c.doc_id]) for c in chunks]

    # -- data ---------------------------------------------------------------
    def chunks(self, chunking: str) -> list[Chunk]:
        return self.sets[chunking].chunks

    def doc_text(self, file: str) -> str:
        """The text of one document of the lab."""
        return self._text[file]

    def question(self, qid: str):
        """An answerable question by id (e.g. "q20")."""
        for q in self.questions:
            if q.id == qid:
                return q
        raise ValueError(f"no answerable question {qid!r} (unanswerable ones are left out)")

    def use_context(self, chunking: str, ctx: Contextualized) -> None:
        """Replace the headers of a chunk set (e.g. with Claude's contexts) and forget cached results."""
        s = self.sets[chunking]
        if len(ctx.headers) != len(s.chunks):
            raise ValueError(f"{len(ctx.headers)} headers for {len(s.chunks)} chunks")
        s.headers = list(ctx.headers)
        s.context_label = ctx.method
        s._tok = {k: v for k, v in s._tok.items() if k == ("body", "lemma")}
        self._index = {k: v for k, v in self._index.items() if not (k[0] == chunking and k[1])}
        self._rank.clear()
        self._norm = {k: v for k, v in self._norm.items() if not (k[0] == chunking and k[1])}

    def method(self, name: str | Method) -> Method:
        if isinstance(name, Method):
            return name
        if name not in METHODS:
            raise ValueError(f"unknown method {name!r}: choose from {', '.join(METHODS)}")
        return METHODS[name]

    def texts(self, name: str | Method) -> list[str]:
        m = self.method(name)
        return self.sets[m.chunking].texts(m.contextual)

    def files(self, name: str | Method) -> list[str | None]:
        return self.sets[self.method(name).chunking].files

    # -- ranking ------------------------------------------------------------
    def index(self, chunking: str, contextual: bool, kind: str) -> BM25Index:
        key = (chunking, contextual, kind)
        if key not in self._index:
            self._index[key] = BM25Index(tokens=self.sets[chunking].tokens(contextual, kind))
        return self._index[key]

    def part_rankings(self, chunking: str, contextual: bool, kind: str) -> list[list[int]]:
        """One ranking (chunk indices, best first) per question from one BM25 index."""
        key = (chunking, contextual, kind)
        if key not in self._rank:
            idx = self.index(chunking, contextual, kind)
            depth = min(self.DEPTH, len(idx)) or 1
            out = []
            for q in self.questions:
                query = q.question if kind == "lemma" else bigram_tokens(q.question)
                out.append([i for i, _ in idx.search(query, k=depth)])
            self._rank[key] = out
        return self._rank[key]

    def rankings(self, name: str | Method, fuse: Callable = rrf) -> list[list[int]]:
        """The method's ranking of every question; several parts are fused with ``fuse``."""
        m = self.method(name)
        parts = [self.part_rankings(m.chunking, m.contextual, p) for p in m.parts]
        if len(parts) == 1:
            return parts[0]
        return [list(fuse([p[i] for p in parts])) for i in range(len(self.questions))]

    # -- recall -------------------------------------------------------------
    def _normalized(self, m: Method, judge: str) -> list[str]:
        if judge not in ("passed", "raw"):
            raise ValueError(f"judge must be 'passed' or 'raw', got {judge!r}")
        contextual = m.contextual and judge == "passed"
        key = (m.chunking, contextual)
        if key not in self._norm:
            self._norm[key] = [normalize(t) for t in self.sets[m.chunking].texts(contextual)]
        return self._norm[key]

    def _found_by_rank(self, m: Method, rankings, judge: str, any_hit: bool, depth: int) -> list[list[float]]:
        """For each question, recall@1..depth (cumulative over the ranking)."""
        norm = self._normalized(m, judge)
        files = self.files(m)
        out = []
        for r, q in zip(rankings, self.questions):
            facts = [normalize(f) for f in dict.fromkeys(q.key_facts)]
            gold = set(q.gold_files)
            found: set[str] = set()
            hit = False
            row = []
            for pos in range(depth):
                if pos < len(r) and files[r[pos]] in gold:
                    held = {f for f in facts if f in norm[r[pos]]}
                    found |= held
                    hit = hit or bool(held)
                row.append(float(hit) if any_hit else len(found) / len(facts))
            out.append(row)
        return out

    def per_question(self, name: str | Method, k: int = 20, *, rankings=None, judge: str = "passed",
                     any_hit: bool = False) -> list[float]:
        """recall@k of each question (see the module docstring).

        ``judge="raw"`` looks for the facts in the chunk text only, without the header;
        ``any_hit=True`` uses the any-hit definition; ``rankings`` replaces the method's own.
        """
        _check_k(k)
        m = self.method(name)
        rankings = self.rankings(m) if rankings is None else rankings
        return [row[k - 1] for row in self._found_by_rank(m, rankings, judge, any_hit, k)]

    def recall(self, name: str | Method, k: int = 20, **kwargs) -> float:
        """Mean recall@k over the answerable questions."""
        values = self.per_question(name, k, **kwargs)
        return sum(values) / len(values)

    def curve(self, name: str | Method, ks: Iterable[int] = range(1, 51), *, judge: str = "passed",
              any_hit: bool = False) -> list[float]:
        """Mean recall@k for each k of ``ks`` (one pass over the rankings)."""
        ks = list(ks)
        for k in ks:
            _check_k(k)
        m = self.method(name)
        rows = self._found_by_rank(m, self.rankings(m), judge, any_hit, max(ks))
        return [sum(row[k - 1] for row in rows) / len(rows) for k in ks]

    def recall_with(self, fuse: Callable, k: int = 20, method: str = "ctx_hybrid_articles") -> float:
        """recall@k of ``method`` with its parts fused by ``fuse`` (the exercise's measure)."""
        return self.recall(method, k, rankings=self.rankings(method, fuse=fuse))

    def first_relevant(self, name: str | Method, question, *, judge: str = "raw") -> int | None:
        """Rank (from 1) of the first relevant chunk for ``question``, or None within the ranking depth.

        Judged on the chunk text alone by default, so that methods with and without headers
        are compared on where they put the same evidence.
        """
        m = self.method(name)
        r = self.rankings(m)[self.questions.index(question)]
        norm, files = self._normalized(m, judge), self.files(m)
        facts = [normalize(f) for f in question.key_facts]
        for rank, i in enumerate(r, start=1):
            if files[i] in question.gold_files and any(f in norm[i] for f in facts):
                return rank
        return None

    def needed_k(self, name: str | Method, question) -> int | None:
        """Smallest k at which the question's recall reaches 1 (None if not within the ranking depth)."""
        m = self.method(name)
        i = self.questions.index(question)
        r = self.rankings(m)[i]
        saved = self.questions
        try:
            self.questions = [question]
            row = self._found_by_rank(m, [r], "passed", False, max(1, len(r)))[0]
        finally:
            self.questions = saved
        return next((k for k, v in enumerate(row, start=1) if v == 1.0), None)

    def table(self, k: int = 20, methods: Iterable[str] | None = None) -> list[dict]:
        """Rows {"method", "label", "one_minus_recall", "recall", "questions"} of the measured table."""
        rows = []
        for name in (methods or METHODS):
            m = self.method(name)
            r = self.recall(m, k)
            rows.append({"method": m.name, "label": m.label, "recall": r, "one_minus_recall": 1 - r,
                         "questions": len(self.questions)})
        return rows


# ---------------------------------------------------------------- published figures and the table


def published_rows() -> list[dict]:
    """The Contextual Retrieval article's 1 - recall@20 (data/published.json; published, not measured)."""
    data = figures()["contextual_retrieval"]
    return [{"label": label, "one_minus_recall": v, "source": data["citation"]}
            for label, v in data["one_minus_recall_at_20"].items()]


def format_table(measured: Sequence[Mapping], published: Sequence[Mapping] | None = None, k: int = 20,
                 extra: Sequence[tuple[str, str]] = ()) -> str:
    """The measured rows beside the published ones, as text.

    ``extra`` adds rows that were not measured, as (label, reason) pairs (e.g. reranking offline).
    """
    labels = [r["label"] for r in measured] + [e[0] for e in extra] + [r["label"] for r in (published or [])]
    w = max(_text.width(s) for s in labels) + 2
    lines = [f"このコースの測定（{measured[0]['questions'] if measured else 0} 問・1 − recall@{k}）"]
    for r in measured:
        lines.append(f"  {_text.pad(r['label'], w)}{r['one_minus_recall']:6.1%}")
    for label, reason in extra:
        lines.append(f"  {_text.pad(label, w)}{'—':>6}  {reason}")
    if published:
        lines.append("公表値（Anthropic, Introducing Contextual Retrieval, 2024。本コースの測定ではない）")
        for r in published:
            lines.append(f"  {_text.pad(r['label'], w)}{r['one_minus_recall']:6.1%}")
    return "\n".join(lines)


# ---------------------------------------------------------------- online steps

RERANK_INSTRUCTION = (
    "次の質問に答えるのに役立つ順に、上の候補の番号を並べてください。"
    "役立つものを最大 {top_n} 件、JSON の整数の配列だけで答えてください（例: [3, 0, 7]）。\n質問: {question}"
)
RERANK_SKIPPED = "リランキングはオンライン（実 API）の手順です。オフラインでは実行せず、表には載せません。"


def rerank_request(question: str, candidates: Sequence[str], *, top_n: int = 20, model: str = CONTEXT_MODEL,
                   max_tokens: int = 300) -> dict:
    """A request that asks Claude to order ``candidates`` (chunk texts) for ``question``."""
    listing = "\n\n".join(f"<candidate id=\"{i}\">\n{t}\n</candidate>" for i, t in enumerate(candidates))
    return {"model": model, "max_tokens": max_tokens, "messages": [{"role": "user", "content": [
        {"type": "text", "text": listing},
        {"type": "text", "text": RERANK_INSTRUCTION.format(top_n=top_n, question=question)},
    ]}]}


def parse_rerank(text: str, n_candidates: int) -> list[int]:
    """The candidate numbers of a reranking answer, valid and without repeats, in order."""
    m = re.search(r"\[[\d,\s]*\]", text)
    if not m:
        return []
    try:
        numbers = json.loads(m.group())
    except json.JSONDecodeError:
        return []
    out: list[int] = []
    for i in numbers:
        if isinstance(i, int) and 0 <= i < n_candidates and i not in out:
            out.append(i)
    return out


def rerank(lab: Lab, client, method: str = "ctx_hybrid_articles", *, candidates: int = 50, top_n: int = 20,
           model: str = CONTEXT_MODEL) -> list[list[int]] | None:
    """Rerank each question's first ``candidates`` chunks with Claude (online only).

    Offline this prints :data:`RERANK_SKIPPED` and returns None (the sandbox's extractive
    answers cannot order passages). Online the estimate goes through
    :func:`ctxlab.api.budget.check` first; over the budget it returns None with the reason.
    The reordered top ``top_n`` is followed by the rest of the original ranking.
    """
    from ctxlab.api import budget
    from ctxlab.api.client import is_offline
    from ctxlab.api.messages import answer_text

    if is_offline(client):
        print(RERANK_SKIPPED)
        return None
    m = lab.method(method)
    texts = lab.texts(m)
    rankings = lab.rankings(m)
    reqs = [rerank_request(q.question, [texts[i] for i in r[:candidates]], top_n=top_n, model=model)
            for q, r in zip(lab.questions, rankings)]
    from ctxlab.estimate import estimate_request

    est = sum(pricing.call_cost(model, input_tokens=estimate_request(req), output_tokens=top_n * 4).total
              for req in reqs)
    try:
        budget.check(est, client, f"リランキング（{len(reqs)} 問 × 候補 {candidates} 件、{model}）")
    except budget.BudgetExceeded as exc:
        print(exc)
        return None
    from tqdm.auto import tqdm

    out = []
    for r, req in tqdm(list(zip(rankings, reqs)), desc="リランキング", unit="問"):
        order = parse_rerank(answer_text(client.messages.create(**req)), min(candidates, len(r)))
        head = [r[i] for i in order]
        out.append(head + [i for i in r if i not in head])
    return out


def embedding_backend() -> str | None:
    """The name of an importable local embedding library, or None (the course installs none)."""
    for name in ("sentence_transformers", "fastembed"):
        if importlib.util.find_spec(name) is not None:
            return name
    return None
