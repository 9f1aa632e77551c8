"""Offline sandbox: the Messages API behind the real ``anthropic`` SDK, with no network.

The SDK talks to :meth:`Sandbox.handle` through an ``httpx2.MockTransport``, so notebook
code is exactly the code one would write against the real API::

    from ctxlab.api.client import make_client
    from ctxlab.sandbox import Sandbox

    sb = Sandbox()
    client = make_client(offline=True, sandbox=sb)
    msg = client.messages.create(model="claude-opus-5-5", max_tokens=300, messages=[...])
    msg.usage            # input_tokens, cache_creation_input_tokens, cache_read_input_tokens, ...
    msg.sandbox          # simulated_ttft_s, simulated_total_s, cost_usd, note (an extra field)
    sb.advance(6 * 60)   # move the clock: a 5-minute cache entry expires
    sb.log               # every request: time, usage, simulated TTFT, cost

What it models: token counts (``ctxlab.api.tokens`` estimates), prompt caching (prefix in the
order tools -> system -> messages, up to 4 breakpoints (automatic caching's top-level
``cache_control`` takes one), a lookback of 20 positions per breakpoint, 5m/1h TTL
refreshed on read, minimum cacheable length per model, per-model caches, exact usage
fields), time to first token (``ctxlab.costs.pricing.ttft_seconds``), streaming (SSE, with
``citations_delta``), citations, structured output, ``count_tokens``, and the API's errors.
Answers are extractive (BM25 over the request's sentences, see ``ctxlab.retrieval``) and
start with ``ANSWER_MARKER``; the sandbox never reads the course's gold answers.

Extras the real API does not have are kept apart: the ``sandbox`` field of a response,
:meth:`Sandbox.advance`, :meth:`Sandbox.concurrent`, :attr:`Sandbox.log`.
"""
from __future__ import annotations

from ctxlab.sandbox.answer import ANSWER_MARKER
from ctxlab.sandbox.cache import LOOKBACK_BLOCKS, TTL_SECONDS
from ctxlab.sandbox.core import BASE_URL, DEFAULT_TIME_SCALE, Clock, LogEntry, Sandbox
from ctxlab.sandbox.errors import ApiError
from ctxlab.sandbox.request import MAX_BREAKPOINTS

__all__ = [
    "Sandbox",
    "Clock",
    "LogEntry",
    "ApiError",
    "ANSWER_MARKER",
    "BASE_URL",
    "DEFAULT_TIME_SCALE",
    "LOOKBACK_BLOCKS",
    "MAX_BREAKPOINTS",
    "TTL_SECONDS",
]
