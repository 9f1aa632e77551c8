"""The offline token estimate: what the course counts when no API is asked.

No official offline tokenizer exists for current Claude models, so this is an estimate and
says so. The rule follows the course's source article: one token per Japanese character
(kana, kanji, full-width symbols), and about four characters per token for runs of ASCII
(English words, numbers, code). Real tokenizers count Japanese at roughly 1 to 1.5 tokens
per character, and newer ones count more for the same text: an estimate from characters
can be off by half. Count with the API before you decide on a number near a threshold.

The offline sandbox answers ``count_tokens`` and bills ``usage`` with this same estimate, so
offline figures agree with each other; chunkers use it to size chunks.
"""
from __future__ import annotations

import json
import math
import re
from typing import Any, Iterable, Mapping

#: tokens per non-ASCII (Japanese) character; the usage article uses 1 character = 1 token.
JA_TOKENS_PER_CHAR = 1.0
#: characters of ASCII per token.
ASCII_CHARS_PER_TOKEN = 4.0
#: fixed overheads of a Messages request (role markers, block framing), an assumption.
REQUEST_OVERHEAD = 3
PER_MESSAGE_OVERHEAD = 3
PER_BLOCK_OVERHEAD = 2

_ASCII_RUN = re.compile(r"[\x00-\x7f]+")
_ASCII_WORD = re.compile(r"[^\s]+")


def estimate_text(text: str, ja_ratio: float = JA_TOKENS_PER_CHAR) -> int:
    """Estimate the tokens of a text offline (see the module docstring for the rule)."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")
    if ja_ratio <= 0:
        raise ValueError(f"ja_ratio must be > 0, got {ja_ratio!r}")
    ascii_chars = 0
    ascii_tokens = 0
    for run in _ASCII_RUN.findall(text):
        ascii_chars += len(run)
        for word in _ASCII_WORD.findall(run):
            ascii_tokens += math.ceil(len(word) / ASCII_CHARS_PER_TOKEN)
    other = len(text) - ascii_chars
    return int(round(other * ja_ratio)) + ascii_tokens


def _block_text(block: Any) -> int:
    """Estimated tokens of one content block of a request."""
    if isinstance(block, str):
        return estimate_text(block)
    if not isinstance(block, Mapping):
        raise ValueError(f"a content block must be a string or an object, got {type(block).__name__}")
    kind = block.get("type")
    n = PER_BLOCK_OVERHEAD
    if kind == "text":
        n += estimate_text(str(block.get("text", "")))
    elif kind == "document":
        src = block.get("source") or {}
        if src.get("type") == "text":
            n += estimate_text(str(src.get("data", "")))
        elif src.get("type") == "content":
            for b in src.get("content") or []:
                n += _block_text(b)
        for key in ("title", "context"):
            if block.get(key):
                n += estimate_text(str(block[key]))
    elif kind == "tool_result":
        content = block.get("content")
        if isinstance(content, list):
            n += sum(_block_text(b) for b in content)
        elif content is not None:
            n += estimate_text(str(content))
    elif kind == "tool_use":
        n += estimate_text(json.dumps(block.get("input", {}), ensure_ascii=False))
    else:
        n += estimate_text(json.dumps(block, ensure_ascii=False))
    return n


def estimate_blocks(blocks: Iterable[Any]) -> list[int]:
    return [_block_text(b) for b in blocks]


def estimate_request(request: Mapping[str, Any]) -> int:
    """Estimate the input tokens of a Messages request (tools, system, messages)."""
    total = REQUEST_OVERHEAD
    for tool in request.get("tools") or []:
        total += estimate_text(json.dumps(tool, ensure_ascii=False, sort_keys=True))
    system = request.get("system")
    if isinstance(system, str):
        total += estimate_text(system)
    elif system:
        total += sum(estimate_blocks(system))
    for message in request.get("messages") or []:
        total += PER_MESSAGE_OVERHEAD
        content = message.get("content") if isinstance(message, Mapping) else None
        if isinstance(content, str):
            total += estimate_text(content)
        elif content:
            total += sum(estimate_blocks(content))
    return total
