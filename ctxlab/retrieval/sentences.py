"""Sentence spans of Japanese text: where 。！？ and newlines end a sentence, brackets respected.

Chunkers cut at these spans, and the offline sandbox picks its extractive answers from them.
"""
from __future__ import annotations

import re

__all__ = ["split_sentences", "BLANKS"]

_SENT_END = "。！？!?"
_OPENERS = "（「『【〔［〈《(["
_CLOSERS = "）」』】〕］〉》)]"
_SENT_MARKS = re.compile("[\n" + re.escape(_SENT_END + _OPENERS + _CLOSERS) + "]")
#: what is trimmed from the ends of a sentence (the full-width space included)
BLANKS = " \t\r\f\v\u3000"


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
        while s < e and text[s] in BLANKS:
            s += 1
        while e > s and text[e - 1] in BLANKS:
            e -= 1
        if e > s:
            spans.append((s, e))
    return spans
