"""Japanese retrieval: tokenisation, sentences, chunking, BM25, rank fusion and recall@k.

Used by the offline sandbox (to pick the sentences of its extractive answers) and by the
RAG lessons. ``ctxlab.retrieval`` is the public surface; one idea per module:

* :mod:`ctxlab.retrieval.tokens`: search terms (fugashi + unidic-lite lemmas, character bigrams);
* :mod:`ctxlab.retrieval.sentences`: sentence spans;
* :mod:`ctxlab.retrieval.chunk`: :class:`Chunk`, article spans, chunks by articles and by size
  (sizes are :func:`ctxlab.estimate.estimate_text` tokens, not search terms);
* :mod:`ctxlab.retrieval.bm25`: :class:`BM25Index` over ``bm25s``;
* :mod:`ctxlab.retrieval.fusion`: reciprocal rank fusion;
* :mod:`ctxlab.retrieval.metrics`: recall@k, by ids or by key facts (one definition).

This layer sits below the sandbox, the API client and the lessons, and imports none of them.
"""
from ctxlab.retrieval.bm25 import BM25Index
from ctxlab.retrieval.chunk import Chunk, article_spans, chunk_by_articles, chunk_by_size
from ctxlab.retrieval.fusion import rrf
from ctxlab.retrieval.metrics import (
    fact_key, fact_recall, facts_held, hit_recall, mean_recall_at_k, recall_at_k, recall_curve,
)
from ctxlab.retrieval.sentences import split_sentences
from ctxlab.retrieval.tokens import (
    TOKENIZER_DESCRIPTION, bigram_tokens, content_nouns, content_terms, line_tokens, tagged, terms, tokenize, tokenize_many,
)

__all__ = [
    "BM25Index", "Chunk", "TOKENIZER_DESCRIPTION", "article_spans", "bigram_tokens", "chunk_by_articles",
    "chunk_by_size", "content_nouns", "content_terms", "fact_key", "fact_recall", "facts_held", "hit_recall", "line_tokens", "mean_recall_at_k",
    "recall_at_k", "recall_curve", "rrf", "split_sentences", "tagged", "terms", "tokenize", "tokenize_many",
]
