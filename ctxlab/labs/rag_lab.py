"""Lesson 10 (RAG lab): chunk sets, retrieval methods, fact recall@k, the table beside the published figures.

Recall, as measured here
    A chunk is **relevant** to a question when it comes from one of the question's gold
    files and the text that reaches the model (the chunk, with its context header when
    the method is contextual) holds at least one of the question's key facts (compared
    with :func:`ctxlab.retrieval.fact_key`: width, case, spaces and thousands separators do
    not matter). **recall@k** of a question is the share of its key facts held by relevant
    chunks among the top ``k`` results; a method's recall@k is the mean over the
    answerable questions (``unanswerable`` ones have no key facts and are left out).
    ``1 - recall@20`` is the failure rate of Anthropic's Contextual Retrieval article.
    The one implementation is :mod:`ctxlab.retrieval.metrics` (:func:`fact_recall`;
    :func:`hit_recall` is the looser any-hit definition, for comparison).

The lab
    :class:`Lab` builds the chunk sets once (tokens cached), ranks the questions by every
    method of :data:`METHODS` (BM25 over ``fugashi`` lemmas and character bigrams, fused with
    :func:`ctxlab.retrieval.rrf`) and reports recall@k, curves and the table beside the
    published figures (:func:`published_rows`, :func:`format_table`).
    :func:`embedding_backend` tells whether a local embedding model is importable (none is
    required by the course).

Re-exported for the lesson
    Contextual chunks (:func:`situate`, :func:`contextualize`, :func:`context_cost`, ...) live
    in :mod:`ctxlab.labs._contextual`, reranking (:func:`rerank`) in :mod:`ctxlab.labs._rerank`,
    the tokenisations, fusion and recall in :mod:`ctxlab.retrieval`.
"""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence

from ctxlab import _table, corpus
from ctxlab.labs._contextual import (
    CHUNK_PROMPT_TOKENS, CONTEXT_MODEL, CONTEXT_OUTPUT_TOKENS, DOC_WRAPPER_TOKENS, OFFLINE_CONTEXT_LABEL,
    ContextCost, Contextualized, context_cost, context_request, contextualize, corpus_context_cost,
    cost_per_million_document_tokens, cut_article, doc_fields, glossary_system, situate,
)
from ctxlab.labs._rerank import RERANK_SKIPPED, parse_rerank, rerank, rerank_request
from ctxlab.published import figures
from ctxlab.retrieval import (
    BM25Index, Chunk, article_spans, bigram_tokens, chunk_by_articles, chunk_by_size, content_terms, fact_key,
    fact_recall, facts_held, hit_recall, line_tokens, recall_curve, rrf, tokenize_many,
)
from ctxlab.retrieval.metrics import check_k, fact_coverage

__all__ = [
    # contextual chunks (ctxlab.labs._contextual)
    "OFFLINE_CONTEXT_LABEL", "CONTEXT_MODEL", "CONTEXT_OUTPUT_TOKENS", "DOC_WRAPPER_TOKENS", "CHUNK_PROMPT_TOKENS",
    "situate", "cut_article", "glossary_system", "context_request", "contextualize", "Contextualized",
    "ContextCost", "context_cost", "cost_per_million_document_tokens", "corpus_context_cost",
    # reranking (ctxlab.labs._rerank)
    "RERANK_SKIPPED", "rerank_request", "parse_rerank", "rerank",
    # tokens, recall and fusion (ctxlab.retrieval)
    "bigram_tokens", "line_tokens", "facts_held", "fact_recall", "hit_recall", "rrf",
    # the lab
    "EMBEDDING_MODEL", "ChunkSet", "Method", "METHODS", "BASELINE", "Lab", "published_rows", "recall_table", "format_table",
    "embedding_backend",
]

#: the embedding model a hybrid search would add (not installed by the course)
EMBEDDING_MODEL = {"name": "intfloat/multilingual-e5-small", "licence": "MIT",
                   "note": "multilingual (Japanese included), 384 dimensions; inputs start with 'query: ' / 'passage: '"}



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
        """Token lists (cached): ``kind`` "lemma" (fugashi + unidic-lite), "content" (lemmas without
        particles and auxiliaries, :func:`ctxlab.retrieval.content_terms`) or "bigram"."""
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
            elif kind == "content":
                self._tok[key] = [content_terms(t) for t in self.texts(contextual)]
            else:
                raise ValueError(f"kind must be 'lemma', 'content' or 'bigram', got {kind!r}")
        return self._tok[key]


@dataclass(frozen=True)
class Method:
    """A retrieval method of the table: a chunking, contextual or not, one or two tokenizations."""

    name: str
    label: str
    chunking: str  # "size" | "articles"
    contextual: bool
    parts: tuple[str, ...]  # "lemma", "content", "bigram": several are fused with RRF
    short: str = ""  # a short label for figures and narrow tables


METHODS: dict[str, Method] = {m.name: m for m in (
    Method("bm25_size", "BM25・固定長チャンク", "size", False, ("lemma",), "固定長"),
    Method("bm25_articles", "BM25・条文チャンク", "articles", False, ("lemma",), "条文"),
    Method("bm25_articles_content", "BM25・条文チャンク・助詞と助動詞を除く", "articles", False, ("content",), "条文・助詞除く"),
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
        self.docs = list(corpus.load() if docs is None else docs)
        qs = list(corpus.questions() if questions is None else questions)
        self.questions = [q for q in qs if q.key_facts]
        self.left_out = [q for q in qs if not q.key_facts]
        self.chunk_tokens, self.overlap_tokens = chunk_tokens, overlap_tokens
        self.spans = {}
        size, arts = [], []
        for d in self.docs:
            text, title, file = doc_fields(d)
            self.spans[file] = article_spans(text)
            size += chunk_by_size(text, chunk_tokens, overlap_tokens, doc_id=file, title=title)
            arts += chunk_by_articles(text, chunk_tokens, overlap_tokens, doc_id=file, title=title,
                                      inline_captions=True)
        self._text = {doc_fields(d)[2]: doc_fields(d)[0] for d in self.docs}
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
                query = {"lemma": q.question, "content": content_terms(q.question),
                         "bigram": bigram_tokens(q.question)}[kind]
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

    # -- recall (one definition: ctxlab.retrieval.metrics) ----------------------
    def _keyed(self, m: Method, judge: str) -> list[str]:
        """The texts the facts are looked for in, through fact_key (cached)."""
        if judge not in ("passed", "raw"):
            raise ValueError(f"judge must be 'passed' (the text with its header) or 'raw' (the chunk only), got {judge!r}")
        contextual = m.contextual and judge == "passed"
        key = (m.chunking, contextual)
        if key not in self._norm:
            self._norm[key] = [fact_key(t) for t in self.sets[m.chunking].texts(contextual)]
        return self._norm[key]

    def _curve(self, m: Method, ranking: Sequence[int], question, judge: str, any_hit: bool,
               depth: int) -> list[float]:
        """recall@1..depth of one question's ranking."""
        covered = fact_coverage(ranking, self._keyed(m, judge), self.files(m), question.key_facts,
                                question.gold_files, keyed=True)
        return recall_curve(covered, question.key_facts, depth, any_hit=any_hit)

    def _found_by_rank(self, m: Method, rankings, judge: str, any_hit: bool, depth: int) -> list[list[float]]:
        """For each question, recall@1..depth (cumulative over the ranking)."""
        return [self._curve(m, r, q, judge, any_hit, depth) for r, q in zip(rankings, self.questions)]

    def per_question(self, name: str | Method, k: int = 20, *, rankings=None, judge: str = "passed",
                     any_hit: bool = False) -> list[float]:
        """recall@k of each question (see the module docstring).

        ``judge="raw"`` looks for the facts in the chunk text only, without the header;
        ``any_hit=True`` uses the any-hit definition; ``rankings`` replaces the method's own.
        """
        check_k(k)
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
        if not ks:
            raise ValueError("ks is empty: give the k values of the curve, e.g. range(1, 51)")
        for k in ks:
            check_k(k)
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
        row = self._curve(m, r, question, judge, True, max(1, len(r)))
        return next((k for k, v in enumerate(row, start=1) if v), None)

    def needed_k(self, name: str | Method, question) -> int | None:
        """Smallest k at which the question's recall reaches 1 (None if not within the ranking depth)."""
        m = self.method(name)
        r = self.rankings(m)[self.questions.index(question)]
        row = self._curve(m, r, question, "passed", False, max(1, len(r)))
        return next((k for k, v in enumerate(row, start=1) if v == 1.0), None)

    def label(self, name: str | Method) -> str:
        """The method's label; a contextual one says how its context was written (e.g. offline headings)."""
        m = self.method(name)
        return f"{m.label}［{self.sets[m.chunking].context_label}］" if m.contextual else m.label

    def spread_table(self, questions: Iterable, best: str, k: int, doc_tokens: int) -> _table.Table:
        """recall@k of each question (rows) by each method (columns) with its number of gold files, and how
        many of ``best``'s top chunks hold all its facts, as a share of the rules' ``doc_tokens``."""
        chunks = self.chunks(self.method(best).chunking)
        per_chunk = sum(c.meta["tokens"] for c in chunks) / len(chunks)
        rows = []
        for q in questions:
            i = self.questions.index(q)
            need = self.needed_k(best, q)
            need_txt = f"{need} 件（規程集の約 {need * per_chunk / doc_tokens:.0%}）" if need else "圏外"
            rows.append([q.id, len(q.gold_files), *(f"{self.per_question(n, k)[i]:.2f}" for n in METHODS), need_txt])
        return _table.Table(["質問", "正解ファイル数", *(m.short for m in METHODS.values()),
                             f"全部そろう k（{METHODS[best].short}）"], rows,
                            align=["l", "r", *["r"] * len(METHODS), "r"], intro=[f"recall@{k}（質問ごと）"])

    def table(self, k: int = 20, methods: Iterable[str] | None = None) -> list[dict]:
        """Rows {"method", "label", "one_minus_recall", "recall", "questions"} of the measured table."""
        rows = []
        for name in (methods or METHODS):
            m = self.method(name)
            r = self.recall(m, k)
            rows.append({"method": m.name, "label": self.label(m), "recall": r, "one_minus_recall": 1 - r,
                         "questions": len(self.questions)})
        return rows


# ---------------------------------------------------------------- published figures and the table


def published_rows() -> list[dict]:
    """The Contextual Retrieval article's 1 - recall@20 (data/published.json; published, not measured)."""
    data = figures()["contextual_retrieval"]
    return [{"label": label, "one_minus_recall": v, "source": data["citation"]}
            for label, v in data["one_minus_recall_at_20"].items()]


def recall_table(measured: Sequence[Mapping], published: Sequence[Mapping] | None = None, k: int = 20,
                 extra: Sequence[tuple[str, str]] = ()) -> _table.Table:
    """The measured rows beside the published ones, as a table (each row says where its number comes from).

    ``extra`` adds rows that were not measured, as (label, reason) pairs (e.g. reranking offline).
    """
    n = measured[0]["questions"] if measured else 0
    here = f"このコースの測定（{n} 問）"
    rows = [[r["label"], f"{r['one_minus_recall']:.1%}", here] for r in measured]
    rows += [[label, "—", reason] for label, reason in extra]
    rows += [[r["label"], f"{r['one_minus_recall']:.1%}", "公表値（本コースの測定ではない）"] for r in (published or [])]
    caption = f"出典: このコースの測定（{n} 問）"
    if published:
        caption += f"と、{published[0].get('source') or '公表された記事'} の公表値"
    return _table.Table(["方式", f"1 − recall@{k}", "数字の出どころ"], rows, caption=caption, align=["l", "r", "l"])


def format_table(measured: Sequence[Mapping], published: Sequence[Mapping] | None = None, k: int = 20,
                 extra: Sequence[tuple[str, str]] = ()) -> str:
    """:func:`recall_table` as text."""
    return str(recall_table(measured, published, k, extra))


def embedding_backend() -> str | None:
    """The name of an importable local embedding library, or None (the course installs none)."""
    for name in ("sentence_transformers", "fastembed"):
        if importlib.util.find_spec(name) is not None:
            return name
    return None
