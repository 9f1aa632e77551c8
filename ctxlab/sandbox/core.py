"""The offline Messages API: :class:`Sandbox` and its httpx2 transport."""
from __future__ import annotations

import contextlib
import json
import math
import os
import secrets
import threading
import time
import warnings
from typing import Any, Callable, Iterator

import httpx2

from ctxlab.costs import pricing
from ctxlab.costs.usage import FIELDS, summed, total_input
from ctxlab.sandbox._client import BASE_URL, bind
from ctxlab.sandbox._stream import sse
from ctxlab.sandbox.answer import build_answer
from ctxlab.sandbox.cache import TTL_SECONDS, PromptCache
from ctxlab.sandbox.clock import Clock
from ctxlab.sandbox.errors import ApiError, invalid, not_found
from ctxlab.sandbox.log import LogEntry
from ctxlab.sandbox.request import ParsedRequest, parse_request

#: time scale of the simulated waits when nothing else is set (a notebook stays quick)
DEFAULT_TIME_SCALE = 0.1
NOTE = (
    "offline sandbox: an extractive answer (sentences chosen by BM25 from this request's "
    "documents), token counts estimated with ctxlab.estimate, times simulated from the latency "
    "model of data/pricing.json (not measured); cost_usd is what this usage would cost online."
)
_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def _new_id(prefix: str) -> str:
    return prefix + "01" + "".join(secrets.choice(_B58) for _ in range(22))


def _usage(plan, output_tokens: int) -> dict:
    return {
        "input_tokens": plan.input_tokens,
        "cache_creation_input_tokens": plan.creation,
        "cache_read_input_tokens": plan.read_tokens,
        "cache_creation": {
            "ephemeral_5m_input_tokens": plan.creation_5m,
            "ephemeral_1h_input_tokens": plan.creation_1h,
        },
        "output_tokens": output_tokens,
        "service_tier": "standard",
    }


class Sandbox:
    """An offline Messages API with its own prompt cache, clock and request log.

    ``sb = Sandbox()`` then ``client = ctxlab.api.client.make_client(offline=True, sandbox=sb)``
    (or ``sb.client()``). ``sb.advance(seconds)`` moves the clock (TTL), ``sb.log`` lists
    the requests with usage, simulated time to first token and cost,
    ``sb.cache_entries()`` shows what is cached.

    ``time_scale`` scales the simulated waits (1.0 = as long as the real API would take,
    0 = no waiting); by default it comes from ``CTXLAB_TIME_SCALE`` (else 0.1; 0 under
    pytest) and is always 0 while ``NBGRADER_EXECUTION`` is set. The waits never move the
    clock: TTLs follow real time plus :meth:`advance`.
    """

    def __init__(self, *, time_scale: float | None = None, realtime: bool = True, start: float = 0.0):
        if time_scale is not None:
            self._check_scale(time_scale)
        self._time_scale = time_scale
        self.clock = Clock(realtime=realtime, start=start)
        self.cache = PromptCache()
        self.log: list[LogEntry] = []
        self._lock = threading.RLock()
        self._records: dict[str, dict] = {}
        self._concurrent: list[list] | None = None
        self.sleep: Callable[[float], None] = time.sleep

    # ------------------------------------------------------------ clock and settings

    @staticmethod
    def _check_scale(v: float) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or v < 0 or math.isinf(v):
            raise ValueError(f"time_scale must be a number >= 0 (0 = no waiting, 1 = real time), got {v!r}")
        return float(v)

    @property
    def time_scale(self) -> float:
        if os.environ.get("NBGRADER_EXECUTION"):
            return 0.0
        if self._time_scale is not None:
            return self._time_scale
        env = os.environ.get("CTXLAB_TIME_SCALE", "").strip()
        if env:
            try:
                return self._check_scale(float(env))
            except ValueError:
                warnings.warn(
                    f"CTXLAB_TIME_SCALE={env!r} is not a number >= 0; using {DEFAULT_TIME_SCALE}",
                    stacklevel=2,
                )
        if os.environ.get("PYTEST_CURRENT_TEST"):
            return 0.0
        return DEFAULT_TIME_SCALE

    @time_scale.setter
    def time_scale(self, value: float | None) -> None:
        self._time_scale = None if value is None else self._check_scale(value)

    def now(self) -> float:
        """The sandbox clock in seconds."""
        return self.clock.now()

    def advance(self, seconds: float) -> float:
        """Move the clock forward (e.g. ``sb.advance(6 * 60)`` lets a 5-minute entry expire)."""
        with self._lock:
            return self.clock.advance(seconds)

    # ------------------------------------------------------------ inspection

    def cache_entries(self) -> list[dict]:
        """Live cache entries: where the breakpoint was, model, tokens, TTL, seconds left."""
        with self._lock:
            now = self.clock.now()
            self.cache.purge(now)
            return [
                {
                    "where": e.where,
                    "model": e.model,
                    "tokens": e.tokens,
                    "ttl": e.ttl,
                    "expires_in_s": round(e.expires_at - now, 3),
                    "usable": e.available_at <= now,
                    "reads": e.reads,
                }
                for e in self.cache.entries.values()
            ]

    def clear_cache(self) -> None:
        with self._lock:
            self.cache = PromptCache()

    def reset(self) -> None:
        """Empty the cache and the log (the clock keeps running)."""
        with self._lock:
            self.cache = PromptCache()
            self.log.clear()
            self._records.clear()

    def log_records(self) -> list[dict]:
        """The log as plain dicts (e.g. for ``pandas.DataFrame``)."""
        with self._lock:
            return [e.as_dict() for e in self.log]

    def total_cost(self) -> float:
        """Dollars the logged requests would have cost online."""
        with self._lock:
            return sum(e.cost_usd for e in self.log)

    def summary(self) -> dict:
        """Totals over the log: requests, tokens by kind, cost with and without the cache."""
        with self._lock:
            ok = [e for e in self.log if e.endpoint == "messages" and e.status == 200 and e.usage]
            total = summed(e.usage for e in ok)
            s = {"requests": len(ok), **{name: total[name] for name in FIELDS},
                 "cost_usd": sum(e.cost_usd for e in ok)}
            s["cost_usd_without_cache"] = sum(
                pricing.call_cost(e.model, input_tokens=total_input(e.usage),
                                  output_tokens=e.usage["output_tokens"]).total
                for e in ok
            )
            reads = [e for e in ok if e.usage["cache_read_input_tokens"] > 0]
            s["cache_hit_rate"] = len(reads) / len(ok) if ok else 0.0
            return s

    def __repr__(self) -> str:
        return (
            f"Sandbox(clock={self.now():.1f}s, cache_entries={len(self.cache)}, "
            f"requests={len(self.log)}, time_scale={self.time_scale})"
        )

    @contextlib.contextmanager
    def concurrent(self) -> Iterator["Sandbox"]:
        """Treat the requests inside the block as sent at the same moment.

        None of them can read an entry another one writes (an entry is usable only after
        the response that wrote it starts), which is why parallel first requests all miss.
        The entries become usable when the block ends.
        """
        with self._lock:
            if self._concurrent is not None:
                raise RuntimeError("sandbox.concurrent() blocks cannot be nested")
            self._concurrent = []
        try:
            yield self
        finally:
            with self._lock:
                now = self.clock.now()
                for digest in self._concurrent or []:
                    e = self.cache.entries.get(digest)
                    if e is not None and math.isinf(e.available_at):
                        e.available_at = now
                self._concurrent = None

    # ------------------------------------------------------------ SDK plumbing

    def transport(self) -> httpx2.MockTransport:
        """An httpx2 transport that serves this sandbox (pass it to ``httpx2.Client``)."""
        return httpx2.MockTransport(self.handle)

    def client(self, reason: str = "sandbox"):
        """An ``anthropic.Anthropic`` client bound to this sandbox."""
        return bind(self, reason)

    # ------------------------------------------------------------ HTTP

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        """Serve one HTTP request of the SDK. Never raises: failures become error responses."""
        rid = _new_id("req_")
        path = request.url.path.rstrip("/")
        method = request.method.upper()
        endpoint = {"/v1/messages": "messages", "/v1/messages/count_tokens": "count_tokens"}.get(path)
        try:
            if endpoint is not None:
                if method != "POST":
                    raise ApiError(405, "invalid_request_error", f"Method {method} not allowed on {path}: use POST")
                body = self._json(request)
                if endpoint == "messages":
                    return self._messages(body, rid)
                return self._count_tokens(body, rid)
            if method == "GET" and (path == "/v1/models" or path.startswith("/v1/models/")):
                return self._models(path, rid)
            raise not_found(
                f"Not Found: {method} {path} (the offline sandbox serves POST /v1/messages, "
                "POST /v1/messages/count_tokens and GET /v1/models)"
            )
        except ApiError as e:
            self._log_error(rid, endpoint or path, e.status, e.message, request)
            return self._error_response(e, rid)
        except Exception as e:  # an internal bug must not take the sandbox (or its cache) down
            msg = (
                f"Internal error in the offline sandbox ({type(e).__name__}: {e}). "
                "The request was not processed and the cache is unchanged; please report this."
            )
            self._log_error(rid, endpoint or path, 500, msg, request)
            return self._error_response(ApiError(500, "api_error", msg), rid)

    @staticmethod
    def _json(request: httpx2.Request) -> Any:
        raw = request.content
        try:
            return json.loads(raw.decode("utf-8") if raw else "")
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise invalid(f"The request body is not valid JSON ({e}). Send a JSON object, as the SDK does.") from None

    @staticmethod
    def _headers(rid: str, content_type: str = "application/json") -> dict:
        return {"content-type": content_type, "request-id": rid, "x-ctxlab-sandbox": "1"}

    def _error_response(self, e: ApiError, rid: str) -> httpx2.Response:
        return httpx2.Response(e.status, headers=self._headers(rid), content=json.dumps(e.body(rid)).encode())

    def _log_error(self, rid: str, endpoint: str, status: int, message: str, request: httpx2.Request) -> None:
        model = None
        try:
            body = json.loads(request.content or b"{}")
            model = body.get("model") if isinstance(body, dict) and isinstance(body.get("model"), str) else None
        except Exception:
            pass
        with self._lock:
            self.log.append(LogEntry(rid, endpoint, self.clock.now(), status, model=model, error=message))

    def _models(self, path: str, rid: str) -> httpx2.Response:
        def obj(m: pricing.ModelPrice) -> dict:
            return {"type": "model", "id": m.id, "display_name": m.display_name,
                    "created_at": "2026-01-01T00:00:00Z", "max_input_tokens": m.context_window}

        table = pricing.models()
        if path == "/v1/models":
            data = [obj(m) for m in table.values()]
            body = {"data": data, "has_more": False, "first_id": data[0]["id"] if data else None,
                    "last_id": data[-1]["id"] if data else None}
        else:
            mid = path.split("/v1/models/", 1)[1]
            if mid not in table:
                raise not_found(f"model: {mid}")
            body = obj(table[mid])
        return httpx2.Response(200, headers=self._headers(rid), content=json.dumps(body).encode())

    def _count_tokens(self, body: Any, rid: str) -> httpx2.Response:
        parsed = parse_request(body, "count_tokens")
        with self._lock:
            self.log.append(LogEntry(rid, "count_tokens", self.clock.now(), 200, model=parsed.model,
                                     usage={"input_tokens": parsed.total_tokens}))
        return httpx2.Response(
            200, headers=self._headers(rid), content=json.dumps({"input_tokens": parsed.total_tokens}).encode()
        )

    # ------------------------------------------------------------ messages

    def _diagnose(self, parsed: ParsedRequest, plan) -> tuple[bool, dict | None]:
        d = parsed.body.get("diagnostics")
        if not isinstance(d, dict):
            return False, None
        prev_id = d.get("previous_message_id")
        if prev_id is None:
            return True, None
        prev = self._records.get(prev_id)
        if prev is None:
            return True, {"cache_miss_reason": {"type": "previous_message_not_found"}}
        missed = max(0, prev["cached_tokens"] - plan.read_tokens)
        if missed == 0:
            return True, None
        fp, pfp = parsed.fingerprint, prev["fingerprint"]
        if fp["model"] != pfp["model"]:
            kind = "model_changed"
        elif fp["tools"] != pfp["tools"]:
            kind = "tools_changed"
        elif fp["system"] != pfp["system"] or fp["citations"] != pfp["citations"]:
            kind = "system_changed"
        elif fp["settings"] != pfp["settings"]:
            kind = "unavailable"
        elif fp["messages"][: len(pfp["messages"])] != pfp["messages"]:
            kind = "messages_changed"
        else:
            kind = "unavailable"  # same prefix: the entry expired or was never written
        reason: dict = {"type": kind}
        if kind.endswith("_changed"):
            reason["cache_missed_input_tokens"] = missed
        return True, {"cache_miss_reason": reason}

    def _messages(self, body: Any, rid: str) -> httpx2.Response:
        parsed = parse_request(body, "messages")
        with self._lock:
            now = self.clock.now()
            self.cache.purge(now)
            plan = self.cache.plan(
                parsed.blocks, parsed.breakpoints, now, pricing.min_cacheable_tokens(parsed.model_info)[0]
            )
        answer = build_answer(
            body, citations=parsed.citations, output_format=parsed.output_format, max_tokens=parsed.max_tokens
        )
        usage = _usage(plan, answer.output_tokens)
        lm = pricing.latency_model()
        ttft = pricing.ttft_seconds(plan.input_tokens + plan.creation, plan.read_tokens)
        out_s = answer.output_tokens / lm["output_tokens_per_s"]
        total = ttft + out_s
        scale = self.time_scale
        cost = pricing.usage_cost(usage, parsed.model)
        msg_id = _new_id("msg_")
        with self._lock:
            has_diag, diagnostics = self._diagnose(parsed, plan)
            concurrent = self._concurrent
            available_at = math.inf if concurrent is not None else now + ttft * scale
            self.cache.commit(plan, parsed.blocks, parsed.model, now, available_at)
            if concurrent is not None:
                concurrent.extend(parsed.blocks[b].digest for b, _, _ in plan.writes)
            cached_until = plan.cached_until
            self._records[msg_id] = {
                "fingerprint": parsed.fingerprint,
                "cached_tokens": parsed.blocks[cached_until].end_tokens if cached_until >= 0 else 0,
            }
            if len(self._records) > 10_000:
                self._records.pop(next(iter(self._records)))
            self.log.append(
                LogEntry(rid, "messages", now, 200, model=parsed.model, message_id=msg_id, stream=parsed.stream,
                         usage=usage, simulated_ttft_s=round(ttft, 4), simulated_total_s=round(total, 4), cost=cost)
            )
        extra = {
            "simulated_ttft_s": round(ttft, 4),
            "simulated_output_s": round(out_s, 4),
            "simulated_total_s": round(total, 4),
            "time_scale": scale,
            "clock_s": round(now, 3),
            "cost_usd": round(cost.total, 6),
            "note": NOTE,
        }
        message = {
            "id": msg_id,
            "type": "message",
            "role": "assistant",
            "model": parsed.model,
            "content": answer.content,
            "stop_reason": answer.stop_reason,
            "stop_sequence": answer.stop_sequence,
            "usage": usage,
        }
        if has_diag:
            message["diagnostics"] = diagnostics
        message["sandbox"] = extra
        if parsed.stream:
            gen = sse(message, ttft * scale, (1.0 / lm["output_tokens_per_s"]) * scale, self.sleep)
            return httpx2.Response(200, headers=self._headers(rid, "text/event-stream"), content=gen)
        if scale > 0:
            self.sleep(total * scale)
        return httpx2.Response(200, headers=self._headers(rid), content=json.dumps(message, ensure_ascii=False).encode())


__all__ = ["Sandbox", "Clock", "LogEntry", "DEFAULT_TIME_SCALE", "BASE_URL", "TTL_SECONDS"]
