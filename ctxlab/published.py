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
