"""Validate a Messages request and cut it into the blocks of its cache prefix.

The prefix is read in the API's order, tools -> system -> messages. Each block (a tool, a
system block, a message content block; a string system or string content is one block)
gets its estimated tokens (``ctxlab.api.tokens``, so the sum equals
``tokens.estimate_request``) and the hash of the whole prefix up to and including it.

The hash is taken over the blocks **as received**: each block is serialized with
``json.dumps`` in the key order it arrived in (only ``cache_control`` itself is left out,
so moving a breakpoint does not change the prefix). A learner who builds the same block
with its keys in another order therefore misses the cache, as a byte change would on the
real API. The model, the citations switch (for system and messages), and tool_choice,
thinking and images (for messages) are mixed into the hash too (the documented "what invalidates the cache" table). A top-level ``cache_control``
(automatic caching) becomes one more breakpoint, on the last cacheable block.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ctxlab.costs import pricing
from ctxlab import estimate as tok
from ctxlab.sandbox._api_2026_10_21 import check_request
from ctxlab.sandbox.errors import invalid, not_found

MAX_BREAKPOINTS = 4
TTLS = ("5m", "1h")
#: blocks automatic caching walks back over (docs: thinking blocks cannot carry cache_control; the
#: docs list no other ineligible type, so this list is the sandbox's choice)
AUTO_INELIGIBLE = ("thinking", "redacted_thinking")

CONTENT_TYPES = (
    "text", "image", "document", "search_result", "tool_use", "tool_result",
    "thinking", "redacted_thinking", "server_tool_use", "web_search_tool_result",
    "container_upload",
)
DOC_SOURCE_TYPES = ("text", "content", "base64", "url", "file")


@dataclass
class Block:
    """One block of the cache prefix."""

    section: str  # "tools" | "system" | "messages"
    where: str  # e.g. "tools[0]", "system[1]", "messages[2].content[0]"
    tokens: int
    end_tokens: int  # tokens of the prefix through this block
    digest: bytes  # hash of the prefix through this block
    ttl: str | None = None  # set when the block carries a cache breakpoint
    kind: str = "text"  # the block's type ("tool" for a tool definition)


@dataclass
class ParsedRequest:
    body: dict
    endpoint: str
    model: str
    model_info: pricing.ModelPrice
    max_tokens: int | None
    stream: bool
    blocks: list[Block]
    breakpoints: list[int]
    total_tokens: int
    citations: bool
    output_format: dict | None
    fingerprint: dict = field(default_factory=dict)


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _strip_cc(block: Any) -> Any:
    if isinstance(block, dict) and "cache_control" in block:
        return {k: v for k, v in block.items() if k != "cache_control"}
    return block


def _type_name(v: Any) -> str:
    return {dict: "object", list: "list", str: "string", bool: "boolean", int: "integer", float: "number"}.get(
        type(v), type(v).__name__
    )


def _check_cache_control(cc: Any, where: str) -> str:
    at = f"{where}.cache_control" if where else "cache_control"
    if not isinstance(cc, dict):
        raise invalid(f"{at}: Input should be a valid dictionary")
    if cc.get("type") != "ephemeral":
        raise invalid(f"{at}.type: Input should be 'ephemeral'")
    ttl = cc.get("ttl", "5m")
    if ttl not in TTLS:
        raise invalid(f"{at}.ttl: Input should be '5m' or '1h'")
    return ttl


def _automatic_breakpoint(blocks: list[Block], breakpoints: list[int], ttl: str) -> None:
    """Automatic caching (top-level ``cache_control``) by the docs' rules: the last cacheable block
    (walking back over ineligible ones; none: no caching); one of the 4 slots (none left: 400); on an
    explicit breakpoint a no-op with the same TTL, a 400 with another."""
    target = next((k for k in range(len(blocks) - 1, -1, -1) if blocks[k].kind not in AUTO_INELIGIBLE), None)
    if target is not None and blocks[target].ttl not in (None, ttl):
        raise invalid(f"cache_control: the automatic breakpoint (ttl='{ttl}') falls on {blocks[target].where}, which "
                      f"already has cache_control with ttl='{blocks[target].ttl}'. Use one TTL, or remove one of them.")
    if target is None or blocks[target].ttl == ttl:
        return
    if len(breakpoints) >= MAX_BREAKPOINTS:
        raise invalid(f"cache_control: automatic caching needs one of the {MAX_BREAKPOINTS} breakpoint slots and "
                      f"{len(breakpoints)} blocks already carry cache_control. Remove one, or the top-level cache_control.")
    blocks[target].ttl = ttl
    breakpoints.append(target)
    breakpoints.sort()


def _check_text_block(block: Any, where: str) -> None:
    if not isinstance(block, dict):
        raise invalid(f"{where}: Input should be a valid dictionary")
    if "type" not in block:
        raise invalid(f"{where}.type: Field required")
    if block["type"] != "text":
        raise invalid(f"{where}.type: Input should be 'text'")
    if "text" not in block:
        raise invalid(f"{where}.text: Field required")
    if not isinstance(block["text"], str):
        raise invalid(f"{where}.text: Input should be a valid string")
    if not block["text"]:
        raise invalid("messages: text content blocks must be non-empty" if where.startswith("messages")
                      else "system: text content blocks must be non-empty")


def _check_document(block: dict, where: str) -> None:
    src = block.get("source")
    if src is None:
        raise invalid(f"{where}.source: Field required")
    if not isinstance(src, dict):
        raise invalid(f"{where}.source: Input should be a valid dictionary")
    st = src.get("type")
    if st not in DOC_SOURCE_TYPES:
        raise invalid(
            f"{where}.source.type: Input should be " + ", ".join(f"'{t}'" for t in DOC_SOURCE_TYPES)
        )
    if st == "text":
        if not isinstance(src.get("data"), str):
            raise invalid(f"{where}.source.data: Field required (the document's text, a string)")
        if src.get("media_type", "text/plain") != "text/plain":
            raise invalid(f"{where}.source.media_type: Input should be 'text/plain'")
    elif st == "content":
        content = src.get("content")
        if isinstance(content, str):
            return
        if not isinstance(content, list) or not content:
            raise invalid(f"{where}.source.content: Input should be a string or a non-empty list of text blocks")
        for k, b in enumerate(content):
            _check_text_block(b, f"{where}.source.content.{k}")
    cit = block.get("citations")
    if cit is not None and (not isinstance(cit, dict) or not isinstance(cit.get("enabled", False), bool)):
        raise invalid(f"{where}.citations: Input should be an object like {{\"enabled\": true}}")


def _check_messages(messages: Any) -> None:
    if not isinstance(messages, list):
        raise invalid("messages: Input should be a valid list")
    if not messages:
        raise invalid("messages: at least one message is required")
    prev_role = None
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            raise invalid(f"messages.{i}: Input should be a valid dictionary")
        if "role" not in m:
            raise invalid(f"messages.{i}.role: Field required")
        role = m["role"]
        if role not in ("user", "assistant"):
            raise invalid(f"messages.{i}.role: Input should be 'user' or 'assistant'")
        if "content" not in m:
            raise invalid(f"messages.{i}.content: Field required")
        content = m["content"]
        if isinstance(content, str):
            if not content:
                raise invalid(f"messages.{i}: {role} messages must have non-empty content")
        elif isinstance(content, list):
            if not content:
                raise invalid(f"messages.{i}: {role} messages must have non-empty content")
            for j, b in enumerate(content):
                where = f"messages.{i}.content.{j}"
                if not isinstance(b, dict):
                    raise invalid(f"{where}: Input should be a valid dictionary (a content block), got {_type_name(b)}")
                t = b.get("type")
                if t is None:
                    raise invalid(f"{where}.type: Field required")
                if t not in CONTENT_TYPES:
                    raise invalid(
                        f"{where}.type: Input tag '{t}' found using 'type' does not match any of the expected tags: "
                        + ", ".join(f"'{x}'" for x in CONTENT_TYPES)
                    )
                if t == "text":
                    _check_text_block(b, where)
                elif t == "document":
                    _check_document(b, where)
        else:
            raise invalid(
                f"messages.{i}.content: Input should be a valid string or a list of content blocks, got {_type_name(content)}"
            )
        if i == 0 and role != "user":
            raise invalid('messages: first message must use the "user" role')
        if role == prev_role:
            raise invalid(
                f'messages: roles must alternate between "user" and "assistant", but found multiple "{role}" roles in a row'
            )
        prev_role = role


def _check_system(system: Any) -> None:
    if system is None or isinstance(system, str):
        return
    if not isinstance(system, list):
        raise invalid(f"system: Input should be a valid string or a list of text blocks, got {_type_name(system)}")
    for j, b in enumerate(system):
        _check_text_block(b, f"system.{j}")


def _check_tools(tools: Any) -> None:
    if tools is None:
        return
    if not isinstance(tools, list):
        raise invalid("tools: Input should be a valid list")
    for i, t in enumerate(tools):
        if not isinstance(t, dict):
            raise invalid(f"tools.{i}: Input should be a valid dictionary")
        if not isinstance(t.get("name"), str) or not t.get("name"):
            raise invalid(f"tools.{i}.name: Field required")


def documents_of(messages: list) -> list[tuple[int, int, dict]]:
    """All document blocks of a request as (message index, block index, block), in order."""
    out = []
    for i, m in enumerate(messages):
        content = m.get("content")
        if isinstance(content, list):
            for j, b in enumerate(content):
                if isinstance(b, dict) and b.get("type") == "document":
                    out.append((i, j, b))
    return out


def _citations_enabled(block: dict) -> bool:
    cit = block.get("citations")
    return bool(isinstance(cit, dict) and cit.get("enabled"))


def parse_request(body: Any, endpoint: str) -> ParsedRequest:
    """Validate ``body`` for ``endpoint`` ("messages" or "count_tokens") and build its prefix.

    Raises :class:`~ctxlab.sandbox.errors.ApiError` with the status, type and message the API would give.
    """
    if not isinstance(body, dict):
        raise invalid(f"The request body must be a JSON object, got {_type_name(body)}")
    required = ("model", "max_tokens", "messages") if endpoint == "messages" else ("model", "messages")
    for name in required:
        if name not in body or body[name] is None:
            raise invalid(f"{name}: Field required")
    model = body["model"]
    if not isinstance(model, str):
        raise invalid("model: Input should be a valid string")
    max_tokens = body.get("max_tokens") if endpoint == "messages" else None
    if endpoint == "messages":
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool):
            raise invalid("max_tokens: Input should be a valid integer")
        if max_tokens < 1:
            raise invalid("max_tokens: Input should be greater than or equal to 1")
    stream = body.get("stream", False)
    if stream is None:
        stream = False
    if not isinstance(stream, bool):
        raise invalid("stream: Input should be a valid boolean")
    if endpoint != "messages":
        stream = False
    messages = body["messages"]
    _check_messages(messages)
    check_request(body)   # what API version 2026-10-21 refuses
    system = body.get("system")
    _check_system(system)
    tools = body.get("tools")
    _check_tools(tools)

    table = pricing.models()
    if model not in table:
        raise not_found(
            f"model: {model} (the offline sandbox knows {', '.join(table)}: the models of data/pricing.json)"
        )
    info = table[model]

    # documents and their citation switches
    docs = documents_of(messages)
    enabled = [_citations_enabled(b) for _, _, b in docs]
    citations = any(enabled)
    if citations and not all(enabled):
        raise invalid(
            f"citations must be enabled on all documents or on none of them: {sum(enabled)} of {len(docs)} "
            'documents in this request have "citations": {"enabled": true}. Set it on every document block, or on none.'
        )
    output_config = body.get("output_config")
    output_format = None
    if output_config is not None:
        if not isinstance(output_config, dict):
            raise invalid("output_config: Input should be a valid dictionary")
        output_format = output_config.get("format")
        if output_format is not None:
            if not isinstance(output_format, dict) or output_format.get("type") != "json_schema":
                raise invalid("output_config.format.type: Input should be 'json_schema'")
            if not isinstance(output_format.get("schema"), dict):
                raise invalid("output_config.format.schema: Field required (a JSON schema object)")
    if citations and output_format is not None:
        raise invalid(
            "Citations cannot be used together with structured outputs (output_config.format). "
            "Remove output_config.format, or disable citations on the documents."
        )

    blocks, breakpoints, fingerprint = _flatten(body, model, citations)

    if len(breakpoints) > MAX_BREAKPOINTS:
        raise invalid(
            f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {len(breakpoints)}."
        )
    top_cc = body.get("cache_control")
    if top_cc is not None:
        _automatic_breakpoint(blocks, breakpoints, _check_cache_control(top_cc, ""))
    seen_5m = False
    for b in breakpoints:
        if blocks[b].ttl == "5m":
            seen_5m = True
        elif seen_5m:
            raise invalid(
                "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. "
                "Note that blocks are processed in the following order: `tools`, `system`, `messages`."
            )

    total = blocks[-1].end_tokens if blocks else tok.REQUEST_OVERHEAD
    if endpoint == "messages" and total > info.context_window:
        raise invalid(f"prompt is too long: {total} tokens > {info.context_window} maximum")

    return ParsedRequest(
        body=body,
        endpoint=endpoint,
        model=model,
        model_info=info,
        max_tokens=max_tokens,
        stream=stream,
        blocks=blocks,
        breakpoints=breakpoints,
        total_tokens=total,
        citations=citations,
        output_format=output_format,
        fingerprint=fingerprint,
    )


@lru_cache(maxsize=2048)
def _string_tokens(text: str) -> int:
    """Token estimate of a string block, remembered: re-sending the same documents (the usual
    pattern with prompt caching) does not re-scan them."""
    return tok.estimate_text(text)


@lru_cache(maxsize=2048)
def _block_tokens(raw: bytes) -> int:
    """Token estimate of a text or document block from its JSON bytes (without cache_control,
    which the estimate ignores), remembered like :func:`_string_tokens`."""
    return tok.estimate_blocks([json.loads(raw)])[0]


def _flatten(body: dict, model: str, citations: bool) -> tuple[list[Block], list[int], dict]:
    """Blocks of the prefix with tokens and cumulative hashes; breakpoint indices."""
    h = hashlib.blake2b(digest_size=16)
    h.update(b"ctxlab-sandbox-prefix-v1\0model\0" + model.encode() + b"\0")
    blocks: list[Block] = []
    breakpoints: list[int] = []
    running = tok.REQUEST_OVERHEAD
    pending_overhead = 0  # overhead tokens to attach to the next block
    section_hash = {"tools": hashlib.blake2b(digest_size=16), "system": hashlib.blake2b(digest_size=16)}

    def add(section: str, where: str, raw_block: Any, count, cc: Any) -> None:
        """Append a block; ``count(raw)`` gives its tokens."""
        nonlocal running, pending_overhead
        raw = _dumps(_strip_cc(raw_block))
        n = count(raw)
        h.update(b"\x1e" + len(raw).to_bytes(8, "little") + raw)
        if section in section_hash:
            section_hash[section].update(raw + b"\x1e")
        running += n + pending_overhead
        pending_overhead = 0
        ttl = _check_cache_control(cc, where) if cc is not None else None
        kind = raw_block.get("type", "text") if section == "messages" and isinstance(raw_block, dict) else "text"
        blocks.append(Block(section, where, n, running, h.copy().digest(), ttl, "tool" if section == "tools" else kind))
        if ttl is not None:
            breakpoints.append(len(blocks) - 1)

    def string_count(text: str):
        return lambda raw: _string_tokens(text)

    def block_count(block: Any):
        if isinstance(block, dict) and block.get("type") in ("text", "document"):
            return _block_tokens
        return lambda raw: tok.estimate_blocks([block])[0]

    for i, t in enumerate(body.get("tools") or []):
        n = tok.estimate_text(json.dumps(t, ensure_ascii=False, sort_keys=True))
        add("tools", f"tools[{i}]", t, lambda raw, n=n: n, t.get("cache_control"))

    h.update(b"\x1dcitations:" + (b"1" if citations else b"0"))
    system = body.get("system")
    if isinstance(system, str) and system:
        add("system", "system", {"type": "text", "text": system}, string_count(system), None)
    elif isinstance(system, list):
        for j, b in enumerate(system):
            add("system", f"system[{j}]", b, block_count(b), b.get("cache_control"))

    messages = body["messages"]
    has_images = any(
        isinstance(m.get("content"), list) and any(isinstance(b, dict) and b.get("type") == "image" for b in m["content"])
        for m in messages
    )
    h.update(
        b"\x1dmessages:"
        + _dumps([body.get("tool_choice"), body.get("thinking"), has_images])
    )
    message_digests: list[bytes] = []
    for i, m in enumerate(messages):
        h.update(b"\x1drole:" + m["role"].encode())
        pending_overhead += tok.PER_MESSAGE_OVERHEAD
        content = m["content"]
        if isinstance(content, str):
            add("messages", f"messages[{i}].content", {"type": "text", "text": content}, string_count(content), None)
        else:
            for j, b in enumerate(content):
                add("messages", f"messages[{i}].content[{j}]", b, block_count(b), b.get("cache_control"))
        message_digests.append(blocks[-1].digest)
    if pending_overhead and blocks:  # cannot happen (messages are non-empty), kept for safety
        blocks[-1].end_tokens += pending_overhead
    fingerprint = {
        "model": model,
        "tools": section_hash["tools"].digest(),
        "system": section_hash["system"].digest(),
        "citations": citations,
        "settings": _dumps([body.get("tool_choice"), body.get("thinking")]),
        "messages": message_digests,
    }
    return blocks, breakpoints, fingerprint
