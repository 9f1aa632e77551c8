"""The sandbox's request log: one entry per request served or refused, with usage and cost."""
from __future__ import annotations

from dataclasses import asdict, dataclass

from ctxlab.costs import pricing


@dataclass
class LogEntry:
    """One request the sandbox served (or refused)."""

    request_id: str
    endpoint: str
    time_s: float
    status: int
    model: str | None = None
    message_id: str | None = None
    stream: bool = False
    usage: dict | None = None
    simulated_ttft_s: float | None = None
    simulated_total_s: float | None = None
    cost: pricing.CallCost | None = None
    error: str | None = None

    @property
    def cost_usd(self) -> float:
        return self.cost.total if self.cost is not None else 0.0

    def as_dict(self) -> dict:
        d = asdict(self)
        d["cost_usd"] = self.cost_usd
        d["cost"] = None if self.cost is None else asdict(self.cost)
        return d
