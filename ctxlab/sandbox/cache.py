"""The sandbox's prompt cache: entries keyed by the hash of a prefix, with a TTL.

How a request is billed (the documented rules, see FACTS.md):

1. For each breakpoint, the cache is checked at ``LOOKBACK_BLOCKS`` (20) positions, counting
   the breakpoint's own as the first; a run of consecutive ``tool_use`` blocks is one position,
   and so is a run of consecutive ``tool_result`` blocks (the docs' rule for the Claude API).
   The longest live prefix found is read (``cache_read_input_tokens``) and its TTL is refreshed
   at no cost. Only breakpoints write entries, so the lookback finds earlier writes, never
   stable content that no request marked.
2. Every breakpoint after that point whose prefix reaches the model's minimum cacheable
   length writes an entry; the tokens from the previous cached point up to it are billed as
   a write at that breakpoint's TTL (``cache_creation.ephemeral_5m/1h_input_tokens``).
   Below the minimum nothing is cached and nothing fails.
3. The rest (after the last cached point) is ``input_tokens``.

An entry becomes usable when the response that wrote it starts (after the simulated time
to first token, scaled like the sandbox's waits), so requests sent at the same moment all
miss. Entries are per model: the model is part of the prefix hash.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ctxlab.sandbox.request import Block

LOOKBACK_BLOCKS = 20
#: block types whose consecutive runs count as one lookback position
RUN_KINDS = ("tool_use", "tool_result")
TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}


def positions(blocks: list[Block]) -> list[int]:
    """The lookback position of each block: one per block, except that a run of consecutive
    ``tool_use`` (or ``tool_result``) blocks shares one position."""
    out: list[int] = []
    for k, b in enumerate(blocks):
        same_run = k > 0 and b.kind in RUN_KINDS and blocks[k - 1].kind == b.kind
        out.append(out[-1] if same_run else (out[-1] + 1 if out else 0))
    return out


@dataclass
class CacheEntry:
    digest: bytes
    model: str
    where: str
    tokens: int
    ttl: str
    created_at: float
    expires_at: float
    available_at: float
    reads: int = 0

    def live(self, now: float) -> bool:
        return self.available_at <= now < self.expires_at


@dataclass
class CachePlan:
    """What a request reads and writes; applied by :meth:`PromptCache.commit`."""

    read_pos: int = -1
    read_tokens: int = 0
    writes: list[tuple[int, str, int]] = field(default_factory=list)  # (block index, ttl, tokens written)
    refresh: list[tuple[bytes, str | None]] = field(default_factory=list)  # (digest, ttl of this request's breakpoint)
    creation_5m: int = 0
    creation_1h: int = 0
    input_tokens: int = 0
    below_minimum: bool = False

    @property
    def creation(self) -> int:
        return self.creation_5m + self.creation_1h

    @property
    def cached_until(self) -> int:
        """Block index of the last cached point (read or written), -1 if none."""
        if self.writes:
            return self.writes[-1][0]
        return self.read_pos


class PromptCache:
    """Entries of one workspace (one :class:`~ctxlab.sandbox.Sandbox`)."""

    def __init__(self) -> None:
        self.entries: dict[bytes, CacheEntry] = {}

    def __len__(self) -> int:
        return len(self.entries)

    def purge(self, now: float) -> None:
        dead = [d for d, e in self.entries.items() if e.expires_at <= now]
        for d in dead:
            del self.entries[d]

    def plan(self, blocks: list[Block], breakpoints: list[int], now: float, min_tokens: int) -> CachePlan:
        """Work out reads and writes for a request at time ``now`` (changes nothing)."""
        p = CachePlan()
        total = blocks[-1].end_tokens if blocks else 0
        entries = self.entries
        pos = positions(blocks)
        for b in breakpoints:
            for j in range(b, -1, -1):
                if pos[b] - pos[j] >= LOOKBACK_BLOCKS:
                    break
                e = entries.get(blocks[j].digest)
                if e is not None and e.live(now):
                    if j > p.read_pos:
                        p.read_pos = j
                    break
        if p.read_pos >= 0:
            p.read_tokens = blocks[p.read_pos].end_tokens
        ttl_at = {b: blocks[b].ttl for b in breakpoints}
        for b in breakpoints:
            if b <= p.read_pos:
                e = entries.get(blocks[b].digest)
                if e is not None and e.live(now):
                    p.refresh.append((blocks[b].digest, ttl_at[b]))
        if p.read_pos >= 0 and p.read_pos not in ttl_at:
            p.refresh.append((blocks[p.read_pos].digest, None))
        done = p.read_tokens
        for b in breakpoints:
            if b <= p.read_pos:
                continue
            end = blocks[b].end_tokens
            if end < min_tokens:
                p.below_minimum = True
                continue
            n = end - done
            ttl = ttl_at[b] or "5m"
            p.writes.append((b, ttl, n))
            if ttl == "1h":
                p.creation_1h += n
            else:
                p.creation_5m += n
            done = end
        p.input_tokens = total - done
        return p

    def commit(self, plan: CachePlan, blocks: list[Block], model: str, now: float, available_at: float) -> None:
        """Apply a plan: refresh what was read, store what was written."""
        for digest, ttl in plan.refresh:
            e = self.entries.get(digest)
            if e is None:
                continue
            if ttl is not None and TTL_SECONDS[ttl] > TTL_SECONDS[e.ttl]:
                e.ttl = ttl
            e.expires_at = max(e.expires_at, now + TTL_SECONDS[e.ttl])
            e.reads += 1
        for b, ttl, _n in plan.writes:
            blk = blocks[b]
            old = self.entries.get(blk.digest)
            if old is not None and old.expires_at > now and old.available_at <= available_at:
                # a concurrent request wrote it first: keep the earlier entry, extend its life
                old.expires_at = max(old.expires_at, now + TTL_SECONDS[ttl])
                continue
            self.entries[blk.digest] = CacheEntry(
                digest=blk.digest,
                model=model,
                where=blk.where,
                tokens=blk.end_tokens,
                ttl=ttl,
                created_at=now,
                expires_at=now + TTL_SECONDS[ttl],
                available_at=available_at,
            )
