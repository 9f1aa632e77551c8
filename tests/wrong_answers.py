"""Plausible wrong answers to the exercises, and what the visible tests must say about each.

Each entry replaces the learner's function with a wrong version that a learner could plausibly
write (an edge case the task states but the code misses, an off-by-one, a call to the library's
twin of the exercise). ``tests/test_visible_tests.py`` runs the lesson, then each wrong version
against the exercise's *visible* test cell, and checks the verdict recorded here: a wrong answer
is caught by the visible test with a message, unless ``passes`` says why the visible test
deliberately lets it through (the hidden tests still catch it at grading).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Wrong:
    label: str
    source: str
    passes: str = ""   # non-empty: the visible test lets this one through on purpose, and why


WRONG: dict[str, dict[str, list[Wrong]]] = {
    "03_prompt_caching": {
        "diagnose-tests": [
            Wrong("no ValueError for fewer than two calls", '''
def diagnose(usages):
    records = [usage_dict(u) for u in usages]
    reads = [u["cache_read_input_tokens"] > 0 for u in records]
    writes = [u["cache_creation_input_tokens"] > 0 for u in records]
    if not any(reads) and not any(writes):
        return "nothing_cached"
    if not any(reads):
        return "never_hits"
    if all(reads):
        return "hit"
    return "write_then_hit"
'''),
            Wrong("any read counts as a hit", '''
def diagnose(usages):
    records = [usage_dict(u) for u in usages]
    if len(records) < 2:
        raise ValueError("need two calls")
    if any(u["cache_read_input_tokens"] > 0 for u in records):
        return "hit"
    if any(u["cache_creation_input_tokens"] > 0 for u in records):
        return "never_hits"
    return "nothing_cached"
'''),
            Wrong("reads dict keys directly (SDK objects, missing or None fields break it)", '''
def diagnose(usages):
    if len(usages) < 2:
        raise ValueError("need two calls")
    reads = [u["cache_read_input_tokens"] > 0 for u in usages]
    writes = [u["cache_creation_input_tokens"] > 0 for u in usages]
    if not any(reads) and not any(writes):
        return "nothing_cached"
    if not any(reads):
        return "never_hits"
    return "hit" if all(reads) else "write_then_hit"
'''),
        ],
        "first_paying_call-tests": [
            Wrong("math.ceil of the break-even (a tie counted as cheaper)", '''
import math
def first_paying_call(w, r):
    if w < 0 or r < 0 or r >= 1:
        raise ValueError("bad multipliers")
    return max(1, math.ceil((w - r) / (1 - r)))
'''),
            Wrong("no ValueError when r >= 1 (loops forever or returns nonsense)", '''
def first_paying_call(w, r):
    k = 1
    while not w + (k - 1) * r < k and k < 1000:
        k += 1
    return k
'''),
            Wrong("calls the library's twin", '''
def first_paying_call(w, r):
    return formulas.first_paying_call(w, r)
'''),
        ],
    },
}
