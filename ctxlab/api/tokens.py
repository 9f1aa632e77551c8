"""Token counting: the API's count_tokens when online, a documented estimate offline.

No official offline tokenizer exists for current Claude models, so offline counts are
estimates and say so (``TokenCount.method``); the rule is in :mod:`ctxlab.estimate`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from ctxlab.api.client import is_offline
from ctxlab.costs import pricing
from ctxlab.costs._checks import nonneg
from ctxlab.estimate import estimate_request, estimate_text

METHOD_API = "API の count_tokens"
METHOD_SANDBOX = "sandbox の推定（オフライン: 日本語 1 文字 = 1 トークン、英数字は 4 文字 = 1 トークン）"
METHOD_ESTIMATE = "推定（日本語 1 文字 = 1 トークン、英数字は 4 文字 = 1 トークン）"


@dataclass(frozen=True)
class TokenCount:
    """A token count and how it was obtained."""

    tokens: int
    method: str
    model: str | None = None

    @property
    def is_estimate(self) -> bool:
        return self.method != METHOD_API

    def __int__(self) -> int:
        return self.tokens

    def __str__(self) -> str:
        return f"{self.tokens:,} tokens ({self.method})"


def count_request(
    request: Mapping[str, Any], client=None, model: str = pricing.DEFAULT_MODEL
) -> TokenCount:
    """Count a Messages request: with a client, through ``messages.count_tokens``; else estimate.

    ``request`` holds ``messages`` and optionally ``system`` and ``tools``.
    """
    if client is None:
        return TokenCount(estimate_request(request), METHOD_ESTIMATE, model)
    kwargs = {k: request[k] for k in ("messages", "system", "tools") if request.get(k)}
    n = client.messages.count_tokens(model=model, **kwargs).input_tokens
    return TokenCount(n, METHOD_SANDBOX if is_offline(client) else METHOD_API, model)


def count_text(text: str, client=None, model: str = pricing.DEFAULT_MODEL) -> TokenCount:
    """Count one text, sent as a single user message (as the usage article does)."""
    if client is None:
        return TokenCount(estimate_text(text), METHOD_ESTIMATE, model)
    return count_request({"messages": [{"role": "user", "content": text}]}, client, model)


def count_documents(texts: Iterable[str], client=None, model: str = pricing.DEFAULT_MODEL) -> TokenCount:
    """Count a set of documents as one request with one text block per document."""
    texts = list(texts)
    content = [{"type": "text", "text": t} for t in texts if t]
    if client is None:   # the same request the sandbox counts, so the CLI and the lessons give one number
        return TokenCount(estimate_request({"messages": [{"role": "user", "content": content}]}) if content else 0,
                          METHOD_ESTIMATE, model)
    if not content:
        return TokenCount(0, METHOD_SANDBOX if is_offline(client) else METHOD_API, model)
    return count_request({"messages": [{"role": "user", "content": content}]}, client, model)


def window_usage(tokens: int, model: str = pricing.DEFAULT_MODEL) -> float:
    """Share of the model's context window that ``tokens`` fill (0.2 = 20%)."""
    nonneg("tokens", tokens)
    return tokens / pricing.get_model(model).context_window
