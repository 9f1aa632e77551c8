"""Published figures the course cites (``data/published.json``), each with its source.

These are figures from papers and articles (Lost in the Middle, RULER, Contextual
Retrieval), shown as published figures, never as the course's own measurements.
"""
from __future__ import annotations

import json
from functools import lru_cache

from ctxlab._paths import DATA_DIR

PUBLISHED = DATA_DIR / "published.json"


@lru_cache(maxsize=1)
def figures() -> dict:
    """Every published figure, keyed by source (``lost_in_the_middle``, ``ruler``, ...)."""
    with open(PUBLISHED, encoding="utf-8") as f:
        return json.load(f)


#: Definitional figures the lessons' prose may state without printing them (tools/prose_numbers.py, rule a):
#: each phrase, as the prose writes it, with where it is defined. Everything else a lesson's prose states is
#: printed by its section, or quoted with its source named.
DEFINITIONS = {
    "50%": "the course's rule: the documents at most half the context window (seed 000; glossary 「50% の前提」)",
    "100 万トークン": "the unit of the price table: US$ per million tokens (MTok; data/pricing.json)",
    "1M": "a million tokens: the price table's unit (US$ per MTok; data/pricing.json)",
    "× 1.25（1 時間なら 2）": "the cache write multipliers w, 5 minutes and 1 hour: the same for every model "
                              "(Anthropic's pricing; data/pricing.json, tests/test_prose_numbers.py checks each model)",
    "5 分 TTL は 1.25 倍、1 時間は 2 倍": "the same cache write multipliers w as lesson 03's table of the usage fields "
                                      "writes them (data/pricing.json; tests/test_prose_numbers.py checks each model)",
    "30 問": "the course's question set (data/eval: 30 questions; tests/test_corpus.py checks the count)",
    "3 秒": "the course's latency threshold (lesson 00's table of the four numbers: the first token within 3 s)",
    "20 ブロック": "the API's lookback from a cache breakpoint (Anthropic's prompt caching docs: 20 blocks)",
    "上位 20 件": "recall@20's k (glossary: recall@20; Contextual Retrieval's metric)",
    "k = 20": "recall@20's k (glossary: recall@20), as lesson 10 writes it",
    "慣例で 60": "RRF's constant k = 60 (Cormack et al., 2009; the usual default)",
    "95% 区間": "the confidence level of the course's intervals (ctxlab.evaluation)",
}
