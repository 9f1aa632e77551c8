"""Metering online requests in the SDK's HTTP layer, against the kernel's :data:`~ctxlab.api._ledger.LEDGER`.

:class:`MeteredHttpClient` is the SDK's own ``anthropic.DefaultHttpxClient`` (same timeouts,
connection limits, keep-alive and proxy settings) whose ``send`` meters every billable
request, ``POST /v1/messages`` (also ``?beta=true``):

* before sending, it reserves the request's worst-case cost (:func:`request_estimate`) and
  refuses the request with :class:`~ctxlab.errors.BudgetExceeded` when it does not fit;
  nothing is sent then;
* after a 2xx response, it records the actual cost of the response's ``usage`` (priced with
  :func:`ctxlab.costs.pricing.usage_cost`). For a stream (``stream=True``) the usage is read
  from the ``message_start`` / ``message_delta`` events as the SDK reads them, bytes unchanged;
* an error response (429, 529, 4xx) or a failed connection costs nothing: a request the SDK
  retries is charged once, for the response that came back.

Other endpoints pass through unmetered: ``count_tokens`` and ``models`` are free; the Message
Batches API (``/v1/messages/batches``, billed later and not used by the course) is not metered.

The SDK reports anything its HTTP client raises as ``APIConnectionError`` (and retries it);
the middleware :func:`surface_refusal` raises the BudgetExceeded itself instead, which the SDK
neither wraps nor retries.

:class:`OnlineAnthropic` is the SDK's client whose status errors, once its retries have run out
(429 rate limit, 529 overloaded, other 5xx), start with a Japanese sentence that says what
happened, that the failed request cost nothing, and what to do; the error keeps its SDK class
(``anthropic.RateLimitError``, ``anthropic.OverloadedError``, ...) and the API's own message.
"""
from __future__ import annotations

import json
from typing import Any, Iterator, Mapping

import anthropic
import httpx2

from ctxlab.api._ledger import LEDGER, Ledger
from ctxlab.costs import pricing
from ctxlab.costs.pricing import ModelPrice
from ctxlab.errors import BudgetExceeded
from ctxlab.estimate import estimate_request

MESSAGES_PATH = "/v1/messages"
#: the offline estimate can be off by half (see ctxlab.estimate): the guard counts input at 1.5x
INPUT_MARGIN = 1.5


def price_of(model: Any) -> ModelPrice:
    """The price-table row of ``model``; for a model the table does not know, its most expensive row."""
    try:
        return pricing.get_model(str(model))
    except ValueError:
        return max(pricing.models().values(), key=lambda m: (m.output_usd_per_mtok, m.input_usd_per_mtok))


def _cache_ttls(obj: Any) -> Iterator[str]:
    """The TTL of every ``cache_control`` in a request body ("5m" when it names none)."""
    if isinstance(obj, Mapping):
        for key, value in obj.items():
            if key == "cache_control" and isinstance(value, Mapping):
                yield str(value.get("ttl") or "5m")
            else:
                yield from _cache_ttls(value)
    elif isinstance(obj, list):
        for value in obj:
            yield from _cache_ttls(value)


def request_estimate(body: Mapping[str, Any], raw_size: int = 0) -> float:
    """A Messages request's worst-case cost in dollars, before it is sent.

    Input: :func:`ctxlab.estimate.estimate_request` x :data:`INPUT_MARGIN`, all of it at the
    cache-write price when the request has a ``cache_control`` (at the 1-hour price when one
    asks for ``ttl: 1h``), else at the input price. Output: ``max_tokens``, all of it. When the
    body cannot be estimated, ``raw_size`` (its length in bytes) stands for its input tokens.
    """
    model = price_of(body.get("model"))
    try:
        n_input = estimate_request(body) * INPUT_MARGIN
    except (ValueError, TypeError, AttributeError):
        n_input = float(raw_size)
    ttls = set(_cache_ttls(body))
    multiplier = 1.0
    if ttls:
        multiplier = max(model.write_multiplier("1h" if "1h" in ttls else "5m"), 1.0)
    max_tokens = body.get("max_tokens")
    n_output = max_tokens if isinstance(max_tokens, int) and max_tokens > 0 else model.context_window
    return n_input * multiplier * model.input_per_token + n_output * model.output_per_token


def _read_body(request: httpx2.Request) -> tuple[dict, int]:
    raw = request.read()
    try:
        body = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        body = {}
    return (body if isinstance(body, dict) else {}), len(raw)


def _merge(into: dict, usage: Any) -> None:
    if isinstance(usage, Mapping):
        into.update({k: v for k, v in usage.items() if v is not None})


class _UsageTap:
    """Reads the ``usage`` of a response body as it passes: a JSON message or server-sent events."""

    def __init__(self, event_stream: bool):
        self.event_stream = event_stream
        self.usage: dict | None = None  # None until the final usage was seen
        self._broken = False
        self._pending = b""
        self._data: list[bytes] = []
        self._body: list[bytes] = []
        self._start: dict = {}

    def feed(self, chunk: bytes) -> None:
        if self._broken:
            return
        try:
            if not self.event_stream:
                self._body.append(chunk)
                return
            lines = (self._pending + chunk).split(b"\n")
            self._pending = lines.pop()
            for line in lines:
                self._line(line.rstrip(b"\r"))
        except Exception:  # metering must never break the SDK's stream: charge the estimate instead
            self._broken, self.usage = True, None

    def _line(self, line: bytes) -> None:
        if line.startswith(b"data:"):
            self._data.append(line[5:].lstrip(b" "))
        elif not line and self._data:
            event = json.loads(b"\n".join(self._data))
            self._data = []
            kind = event.get("type") if isinstance(event, dict) else None
            if kind == "message_start":
                _merge(self._start, (event.get("message") or {}).get("usage"))
            elif kind == "message_delta":
                merged = dict(self._start)
                _merge(merged, event.get("usage"))
                self._start, self.usage = merged, merged

    def finish(self) -> dict | None:
        """The response's usage, or None when it could not be read (a cut stream, a body without one)."""
        if self._broken:
            return None
        if not self.event_stream:
            try:
                usage = json.loads(b"".join(self._body)).get("usage")
            except (ValueError, AttributeError):
                return None
            return usage if isinstance(usage, Mapping) else None
        return self.usage


class _MeteredStream(httpx2.SyncByteStream):
    """A response body that settles its ticket with the actual cost when it is closed."""

    def __init__(self, inner: httpx2.SyncByteStream, ticket, model: ModelPrice, event_stream: bool):
        self._inner, self._ticket, self._model = inner, ticket, model
        self._tap = _UsageTap(event_stream)

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._inner:
            self._tap.feed(chunk)
            yield chunk

    def close(self) -> None:
        try:
            self._inner.close()
        finally:
            self.settle()

    def settle(self, body: bytes | None = None) -> None:
        """Record the actual cost (of ``body`` when the response was read before metering saw it)."""
        if body is not None:
            self._tap.feed(body)
        usage = self._tap.finish()
        cost = self._ticket.estimate_usd  # what could not be read counts as the worst case
        if usage is not None:
            try:
                cost = pricing.usage_cost(usage, self._model).total
            except ValueError:
                pass
        self._ticket.settle(cost)


def is_billable(request: httpx2.Request) -> bool:
    return request.method.upper() == "POST" and request.url.path.rstrip("/") == MESSAGES_PATH


class MeteredHttpClient(anthropic.DefaultHttpxClient):
    """The SDK's default HTTP client, metering ``POST /v1/messages`` against a :class:`Ledger`."""

    def __init__(self, *, ledger: Ledger = LEDGER, **kwargs: Any):
        super().__init__(**kwargs)
        self.ledger = ledger

    def send(self, request: httpx2.Request, *, stream: bool = False, **kwargs: Any) -> httpx2.Response:
        if not is_billable(request):
            return super().send(request, stream=stream, **kwargs)
        body, size = _read_body(request)
        model = price_of(body.get("model"))
        what = f"{body.get('model') or 'モデル未指定'} へのリクエスト（max_tokens={body.get('max_tokens')}）"
        ticket = self.ledger.reserve(request_estimate(body, size), what)
        try:
            response = super().send(request, stream=True, **kwargs)
        except BaseException:
            ticket.release()
            raise
        if response.is_success:
            event_stream = response.headers.get("content-type", "").startswith("text/event-stream")
            metered = _MeteredStream(response.stream, ticket, model, event_stream)
            if response.is_closed:  # built from bytes (e.g. a MockTransport): already read
                metered.settle(response.content)
            else:
                response.stream = metered
        else:
            ticket.release()  # the API bills no error response; a retry reserves again
        if not stream:
            try:
                response.read()
            except BaseException:
                response.close()
                raise
        return response


def surface_refusal(request, call_next):
    """SDK middleware: a refused request raises BudgetExceeded, not a retried APIConnectionError."""
    try:
        return call_next(request)
    except anthropic.APIConnectionError as err:
        if isinstance(err.__cause__, BudgetExceeded):
            raise err.__cause__ from None
        raise


_WHAT = {429: "レート制限（429）", 529: "混雑による受付停止（529 overloaded）"}


def explain_status(status: int, max_retries: int) -> str | None:
    """The Japanese sentence for an API error the SDK gave up retrying; None for other statuses."""
    if status != 429 and status < 500:
        return None
    what = _WHAT.get(status, f"サーバー側のエラー（{status}）")
    wait = "1 分ほど" if status == 429 else "数分"
    return (f"実 API が{what}を返し、SDK の自動再試行（最大 {max_retries} 回）でも解消しませんでした。"
            f"失敗したリクエストに料金はかかっていません（予算の記録も増えていません）。{wait}待ってからこのセルを実行し直してください。"
            "何度も続くときは `client = client.with_options(max_retries=5)` で再試行を増やすか、"
            "API のステータスページと組織のレート制限を確かめてください。")


class OnlineAnthropic(anthropic.Anthropic):
    """``anthropic.Anthropic`` whose give-up errors (429, 5xx) say in Japanese what happened and what to do."""

    def _make_status_error_from_response(self, response: httpx2.Response) -> anthropic.APIStatusError:
        err = super()._make_status_error_from_response(response)
        text = explain_status(response.status_code, self.max_retries)
        if text is not None:
            err.message = f"{text}\n（API の応答: {err.message}）"
            err.args = (err.message,)
        return err

