"""The SDK client of the offline sandbox: the real ``anthropic.Anthropic`` on an in-process transport.

The sandbox builds its own client, so nothing above it is needed to talk to it. Which
sandbox a client is bound to, and why it is offline, is kept in a registry beside the
client instead of attributes patched onto the SDK object.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

import anthropic
import httpx2

BASE_URL = "http://sandbox.local"


@dataclass(frozen=True)
class Binding:
    """What an offline client is bound to."""

    sandbox: Any
    reason: str


_BINDINGS: "weakref.WeakKeyDictionary[anthropic.Anthropic, Binding]" = weakref.WeakKeyDictionary()


def bind(sandbox, reason: str = "sandbox") -> anthropic.Anthropic:
    """A new SDK client that talks to ``sandbox`` (no network, no retries, no key)."""
    client = anthropic.Anthropic(
        api_key="sandbox",
        base_url=BASE_URL,
        max_retries=0,
        http_client=httpx2.Client(transport=sandbox.transport()),
    )
    _BINDINGS[client] = Binding(sandbox, reason)
    return client


def binding(client) -> Binding | None:
    """The sandbox binding of a client made by :func:`bind` (None for any other client)."""
    try:
        return _BINDINGS.get(client)
    except TypeError:  # not weak-referenceable: not a client of ours
        return None


def is_sandbox_url(client) -> bool:
    """True when a client's base URL is the sandbox's (e.g. a copy made with ``with_options``)."""
    return str(getattr(client, "base_url", "") or "").rstrip("/").startswith(BASE_URL)
