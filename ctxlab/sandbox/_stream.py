"""A sandbox response as server-sent events, in the order and shapes the SDK's stream expects.

message_start, ping, then per text block content_block_start, text_delta pieces, one
citations_delta per citation, content_block_stop; then message_delta (stop reason and
cumulative usage) and message_stop. A failure mid-stream becomes an ``error`` event.
"""
from __future__ import annotations

import json
from typing import Callable, Iterator

from ctxlab.estimate import estimate_text


def sse(message: dict, ttft_wait: float, per_token_wait: float, sleep: Callable[[float], None]) -> Iterator[bytes]:
    """The response as server-sent events; a failure mid-stream becomes an ``error`` event."""
    try:
        yield from _events(message, ttft_wait, per_token_wait, sleep)
    except Exception as e:  # the SDK raises an APIStatusError for an error event
        body = {"type": "error", "error": {"type": "api_error",
                                           "message": f"Internal error in the offline sandbox while streaming "
                                                      f"({type(e).__name__}: {e})"}}
        yield f"event: error\ndata: {json.dumps(body)}\n\n".encode()

def _events(message: dict, ttft_wait: float, per_token_wait: float, sleep: Callable[[float], None]) -> Iterator[bytes]:
    def ev(name: str, data: dict) -> bytes:
        return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()

    usage = message["usage"]
    start = dict(message, content=[], stop_reason=None, stop_sequence=None,
                 usage=dict(usage, output_tokens=1))
    yield ev("message_start", {"type": "message_start", "message": start})
    yield ev("ping", {"type": "ping"})
    waited_first = False
    for i, block in enumerate(message["content"]):
        head = {"type": "text", "text": ""}
        if "citations" in block:
            head["citations"] = []
        yield ev("content_block_start", {"type": "content_block_start", "index": i, "content_block": head})
        text = block["text"]
        step = 12
        for k in range(0, len(text), step):
            piece = text[k : k + step]
            if not waited_first:
                waited_first = True
                if ttft_wait > 0:
                    sleep(ttft_wait)
            yield ev("content_block_delta", {"type": "content_block_delta", "index": i,
                                             "delta": {"type": "text_delta", "text": piece}})
            if per_token_wait > 0:
                sleep(estimate_text(piece) * per_token_wait)
        for c in block.get("citations") or []:
            yield ev("content_block_delta", {"type": "content_block_delta", "index": i,
                                             "delta": {"type": "citations_delta", "citation": c}})
        yield ev("content_block_stop", {"type": "content_block_stop", "index": i})
    yield ev(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": message["stop_sequence"]},
            "usage": {
                "input_tokens": usage["input_tokens"],
                "cache_creation_input_tokens": usage["cache_creation_input_tokens"],
                "cache_read_input_tokens": usage["cache_read_input_tokens"],
                "output_tokens": usage["output_tokens"],
            },
        },
    )
    yield ev("message_stop", {"type": "message_stop"})
