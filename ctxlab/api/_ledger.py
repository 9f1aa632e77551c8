"""The kernel's spend ledger: one budget and one running total for every online client.

A process (a notebook kernel) has one :data:`LEDGER`. Every online client made by
``make_client()`` reserves a request's estimated worst-case cost here before sending it and
settles the reservation with the actual cost from the response's ``usage`` afterwards
(:mod:`ctxlab.api._metered`). All of it happens under one lock, so clients used from several
threads share the budget without overspending it.

The first request that would take spent + in-flight reservations past the budget is refused
and the ledger *stops*: every later billable request of the kernel is refused too, whatever
its size, until the budget is raised with :meth:`Ledger.set_budget`. A learner who runs the
next cell by hand spends nothing more.

The budget is ``CTXLAB_BUDGET_USD`` (dollars, read when needed; default $0.05) unless
:meth:`Ledger.set_budget` set one for this process.
"""
from __future__ import annotations

import math
import os
import threading
from dataclasses import dataclass

from ctxlab.errors import BudgetExceeded

DEFAULT_BUDGET_USD = 0.05
ENV = "CTXLAB_BUDGET_USD"
HOW_TO_RAISE = (
    "予算を上げるには、最初のセルで `from ctxlab.api import budget; budget.set_budget(1.00)` のように設定するか、"
    f"環境変数 {ENV}=1.00 を設定してからカーネルを起動し直してください。使った額は budget.report() で表示できます。"
)


def usd(value: float) -> str:
    """Dollars as the ledger prints them: four decimals below $1, two above."""
    return f"${value:,.4f}" if abs(value) < 1 else f"${value:,.2f}"


def parse_budget(raw: str) -> float:
    """A budget in dollars from text such as ``"1.50"``; BudgetExceeded saying what is allowed."""
    try:
        value = float(raw)
    except ValueError:
        raise BudgetExceeded(f"{ENV} はドルの金額（例: 1.50）にしてください。いまの値: {raw!r}") from None
    return _valid(value, ENV)


def _valid(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise BudgetExceeded(f"{name} は 0 以上のドルの金額（例: 1.50）にしてください。いまの値: {value!r}")
    return float(value)


@dataclass(frozen=True)
class Spend:
    """The ledger at one moment."""

    budget_usd: float
    spent_usd: float      #: actual cost of the responses received
    reserved_usd: float   #: worst-case estimates of the requests in flight
    requests: int         #: billable requests let through to the API
    refused: int          #: billable requests refused (nothing sent)
    stopped: bool         #: True once a request was refused, until the budget is raised

    @property
    def remaining_usd(self) -> float:
        return max(0.0, self.budget_usd - self.spent_usd - self.reserved_usd)


class Ticket:
    """One request's reservation; settle it with the actual cost, or release it (nothing billed)."""

    def __init__(self, ledger: "Ledger", estimate_usd: float):
        self.estimate_usd = estimate_usd
        self._ledger = ledger
        self._open = True
        self._lock = threading.Lock()

    def settle(self, actual_usd: float) -> None:
        """Replace the reservation by what the response cost (only the first call counts)."""
        with self._lock:
            if not self._open:
                return
            self._open = False
        self._ledger._settle(self.estimate_usd, max(0.0, float(actual_usd)))

    def release(self) -> None:
        """Drop the reservation: the request failed and the API bills nothing for it."""
        self.settle(0.0)


class Ledger:
    """A budget, the spend so far and the reservations in flight, behind one lock."""

    def __init__(self):
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        """Forget the spend and any budget set here (what a new kernel starts with)."""
        with self._lock:
            self._budget: float | None = None
            self._spent = 0.0
            self._reserved = 0.0
            self._requests = 0
            self._refused = 0
            self._stopped = False

    def budget(self) -> float:
        if self._budget is not None:
            return self._budget
        raw = os.environ.get(ENV, "").strip()
        return parse_budget(raw) if raw else DEFAULT_BUDGET_USD

    def set_budget(self, usd_: float) -> None:
        """Set this kernel's budget in dollars; a refused kernel may send again if it now fits."""
        value = _valid(usd_, "budget")
        with self._lock:
            self._budget = value
            self._stopped = False

    def state(self) -> Spend:
        with self._lock:
            return Spend(self.budget(), self._spent, self._reserved, self._requests, self._refused, self._stopped)

    def fits(self, estimate_usd: float, what: str) -> Spend:
        """Raise BudgetExceeded when ``estimate_usd`` does not fit what is left; reserve nothing."""
        with self._lock:
            budget = self.budget()
            if self._stopped:
                raise BudgetExceeded(f"{what}: {self._stopped_text(budget)}")
            left = budget - self._spent - self._reserved
            if estimate_usd > left:
                raise BudgetExceeded(
                    f"{what}: 見積もり {usd(estimate_usd)} が残りの予算 {usd(max(left, 0))}"
                    f"（予算 {usd(budget)}、使用済み {usd(self._spent)}）を超えるので実行しません。{HOW_TO_RAISE}"
                )
            return Spend(budget, self._spent, self._reserved, self._requests, self._refused, self._stopped)

    def reserve(self, estimate_usd: float, what: str) -> Ticket:
        """Reserve a request's worst-case cost, or refuse it (BudgetExceeded) and stop the ledger."""
        with self._lock:
            budget = self.budget()
            if self._stopped:
                self._refused += 1
                raise BudgetExceeded(f"{what}を送りませんでした。{self._stopped_text(budget)}")
            committed = self._spent + self._reserved
            if committed + estimate_usd > budget:
                self._stopped = True
                self._refused += 1
                raise BudgetExceeded(
                    f"{what}を送りませんでした: 見積もり {usd(estimate_usd)}（出力は max_tokens いっぱいで計算）を足すと、"
                    f"使用済み {usd(self._spent)}"
                    + (f" と送信中 {usd(self._reserved)}" if self._reserved > 0 else "")
                    + f" が予算 {usd(budget)} を超えます。このカーネルでは、予算を上げるまで API にリクエストを送りません。"
                    + HOW_TO_RAISE
                )
            self._reserved += estimate_usd
            self._requests += 1
            return Ticket(self, estimate_usd)

    def _settle(self, estimate_usd: float, actual_usd: float) -> None:
        with self._lock:
            self._reserved = max(0.0, self._reserved - estimate_usd)
            self._spent += actual_usd

    def _stopped_text(self, budget: float) -> str:
        return (f"このカーネルでは予算 {usd(budget)} を超えるリクエストを一度止めたので（使用済み {usd(self._spent)}）、"
                f"予算を上げるまで API にリクエストを送りません。{HOW_TO_RAISE}")


#: the ledger of this process, shared by every online client and by ctxlab.api.budget
LEDGER = Ledger()
