"""The one request-log replay: requests sent at their times through the SDK to a sandbox on a manual clock.

Lesson 04 replays a day of requests that all carry the same documents; lesson 06 replays the
field questions at a fixed interval with the files a filter picks. Both build a list of
:class:`Entry` (when, and what to send) and call :func:`replay`, which moves the sandbox's clock
to each time, sends the request through the real ``anthropic`` SDK and collects the usage the
API returned (:func:`ctxlab.costs.usage.usage_dict`) and what it cost (a :class:`Replay`).

Requests at the same time are sent as parallel requests (``Sandbox.concurrent``), so none of
them can read what another writes. The replay needs the sandbox's controllable clock (the real
API cannot fast-forward a day), so it always runs offline.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from ctxlab import _progress
from ctxlab.api.client import make_client
from ctxlab.costs import pricing
from ctxlab.costs.usage import total_input, usage_dict
from ctxlab.sandbox import Sandbox


@dataclass(frozen=True)
class Entry:
    """One request of a log: when it is sent (seconds from the start of the log) and what it is.

    ``request`` holds the keyword arguments of ``client.messages.create``; ``id``, ``files``
    and ``round`` only label the request (a question id, the files it carries, which pass).
    """

    t: float
    request: dict
    id: str = ""
    files: tuple[str, ...] = ()
    round: int = 1


@dataclass(frozen=True)
class Sent:
    """One replayed request: when it was sent, its labels, the usage the API returned and its cost."""

    t: float
    usage: dict
    cost: pricing.CallCost
    id: str = ""
    files: tuple[str, ...] = ()
    round: int = 1

    @property
    def hit(self) -> bool:
        return self.usage["cache_read_input_tokens"] > 0

    @property
    def wrote(self) -> bool:
        return self.usage["cache_creation_input_tokens"] > 0

    @property
    def cache_read_tokens(self) -> int:
        return self.usage["cache_read_input_tokens"]

    @property
    def cache_write_tokens(self) -> int:
        return self.usage["cache_creation_input_tokens"]

    @property
    def cost_usd(self) -> float:
        return self.cost.total


@dataclass
class Replay:
    """What a log of requests cost through the API, request by request (in the order sent)."""

    ttl: str | None
    model: str
    requests: list[Sent] = field(default_factory=list)

    @property
    def times(self) -> list[float]:
        return [r.t for r in self.requests]

    @property
    def hits(self) -> list[bool]:
        return [r.hit for r in self.requests]

    @property
    def hit_rate(self) -> float:
        return sum(self.hits) / len(self.requests) if self.requests else 0.0

    @property
    def cost_usd(self) -> float:
        return sum(r.cost.total for r in self.requests)

    @property
    def input_cost_usd(self) -> float:
        """Input side only (uncached input, writes and reads): the part caching changes."""
        return sum(r.cost.input for r in self.requests)

    @property
    def input_tokens_total(self) -> int:
        """All input tokens sent (uncached + written + read)."""
        return sum(total_input(r.usage) for r in self.requests)

    @property
    def input_cost_without_cache_usd(self) -> float:
        """The same input tokens, all at the base price (what the log costs without caching)."""
        return self.input_tokens_total * pricing.get_model(self.model).input_per_token

    @property
    def cache_read_tokens(self) -> int:
        return sum(r.cache_read_tokens for r in self.requests)

    @property
    def cache_write_tokens(self) -> int:
        return sum(r.cache_write_tokens for r in self.requests)

    @property
    def distinct_sets(self) -> int:
        """How many different (ordered) file lists were sent: each is its own cache entry."""
        return len({r.files for r in self.requests})

    def cumulative_cost(self) -> list[float]:
        """Dollars spent after each request."""
        out, s = [], 0.0
        for r in self.requests:
            s += r.cost.total
            out.append(s)
        return out

    def __repr__(self) -> str:
        return (f"Replay(ttl={self.ttl!r}, requests={len(self.requests)}, hit_rate={self.hit_rate:.2f}, "
                f"input_cost_usd={self.input_cost_usd:.2f})")


def manual_sandbox(sandbox: Sandbox | None) -> Sandbox:
    """``sandbox`` checked to have a manual clock, or a fresh one (empty cache, no simulated waiting)."""
    if sandbox is None:
        return Sandbox(realtime=False, time_scale=0)
    if not isinstance(sandbox, Sandbox):
        raise TypeError(f"sandbox must be a ctxlab.Sandbox, got {type(sandbox).__name__}")
    if sandbox.clock.realtime:
        raise ValueError("a replay needs a sandbox with a manual clock: pass ctxlab.Sandbox(realtime=False)")
    return sandbox


def replay(entries: Iterable[Entry], *, ttl: str | None, model: str, sandbox: Sandbox | None = None,
           progress: bool = False, desc: str = "replay") -> Replay:
    """Send every entry at its time through the SDK to ``sandbox`` (see the module doc).

    The first entry is sent at the sandbox's current time and the clock follows the entries'
    times from there. ``sandbox`` must have a manual clock (:func:`manual_sandbox`); by default
    a fresh one is made. ``ttl`` and ``model`` label the result (and price it without cache).
    """
    todo = sorted(entries, key=lambda e: e.t)  # stable: entries at the same time keep their order
    sandbox = manual_sandbox(sandbox)
    client = make_client(offline=True, sandbox=sandbox)
    result = Replay(ttl=ttl, model=model)
    t0 = sandbox.now() - (todo[0].t if todo else 0.0)
    groups: list[list[Entry]] = []
    for e in todo:
        if groups and groups[-1][0].t == e.t:
            groups[-1].append(e)
        else:
            groups.append([e])
    bar = _progress.progress(total=len(todo), desc=desc, unit="件", enabled=progress, leave=False)

    def send(e: Entry) -> None:
        msg = client.messages.create(**e.request)
        usage = usage_dict(msg.usage)
        cost = pricing.usage_cost(usage, e.request.get("model", model))
        result.requests.append(Sent(e.t, usage, cost, e.id, e.files, e.round))
        bar.update(1)

    try:
        for group in groups:
            wait = t0 + group[0].t - sandbox.now()
            if wait > 0:
                sandbox.advance(wait)
            if len(group) == 1:
                send(group[0])
            else:
                with sandbox.concurrent():
                    for e in group:
                        send(e)
    finally:
        bar.close()
    return result


__all__ = ["Entry", "Sent", "Replay", "manual_sandbox", "replay"]
