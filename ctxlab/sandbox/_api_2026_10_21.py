"""What API version 2026-10-21 (the SDK 2.x default) refuses, as the sandbox answers it: a 400 in the API's shape.

A user text block with a non-empty ``citations`` array (directly or inside a ``search_result``) and the
sampling parameters ``temperature``, ``top_p`` and ``top_k`` are refused.
"""
from __future__ import annotations

from typing import Any

from ctxlab.sandbox.errors import invalid

#: sampling parameters API version 2026-10-21 (the SDK 2.x default) no longer accepts
REMOVED_PARAMS = ("temperature", "top_p", "top_k")


def check_no_user_citations(block: dict, where: str) -> None:
    """API 2026-10-21: a user text block (directly or inside a search_result) may not carry citations."""
    inner = [(block, where)] if block.get("type") == "text" else []
    if block.get("type") == "search_result" and isinstance(block.get("content"), list):
        inner = [(b, f"{where}.content.{k}") for k, b in enumerate(block["content"]) if isinstance(b, dict)]
    for b, w in inner:
        if b.get("type") == "text" and b.get("citations"):
            raise invalid(
                f"{w}.citations: a user text block cannot carry citations (API version 2026-10-21). "
                "Send the source as a document block with citations enabled, or drop the citations array."
            )


def check_removed_params(body: dict[str, Any]) -> None:
    """A 400 for each sampling parameter the API version removed."""
    for name in REMOVED_PARAMS:
        if name in body:
            raise invalid(f"{name}: Extra inputs are not permitted (removed in API version 2026-10-21; "
                          "the model's own sampling is used: delete the parameter)")


def check_request(body: dict[str, Any]) -> None:
    """Both checks on a request body whose messages were already validated."""
    check_removed_params(body)
    for i, m in enumerate(body.get("messages") or []):
        if m.get("role") == "user" and isinstance(m.get("content"), list):
            for j, b in enumerate(m["content"]):
                check_no_user_citations(b, f"messages.{i}.content.{j}")
