"""The spending guard of a kernel that calls the real API: one budget, enforced on every request.

Every online client made by :func:`ctxlab.api.client.make_client` meters its own requests
(:mod:`ctxlab.api._metered`): before a ``messages`` request is sent, its worst-case cost
(input estimated, output at ``max_tokens``) must fit what is left of the budget, or it is
refused with :class:`BudgetExceeded` and *nothing more is sent from this kernel* until the
budget is raised; after the response, the actual cost of its ``usage`` is recorded (streams
too). ``count_tokens`` is free and never refused. Offline (sandbox) clients are never metered.

The budget is per kernel (process), shared by all online clients and threads:

* before the kernel starts: ``CTXLAB_BUDGET_USD=1.00`` (dollars; default $0.05);
* in the first cell: ``budget.set_budget(1.00)``;
* at any time: ``budget.report()`` prints the spend so far, ``budget.spent_usd()`` returns it.

:func:`check` is the up-front estimate a lesson shows before a cell that sends many requests:
it prints the estimate and refuses the cell (BudgetExceeded) when the estimate is more than
what is left. It records nothing and does not stop the kernel: the requests that follow are
charged by the meter, at their actual cost, so nothing is counted twice. Offline it prints
what the same work would cost online.
"""
from __future__ import annotations

from ctxlab.api._ledger import DEFAULT_BUDGET_USD, ENV, LEDGER, Spend, usd
from ctxlab.api.client import is_offline
from ctxlab.errors import BudgetExceeded

__all__ = ["BudgetExceeded", "DEFAULT_BUDGET_USD", "ENV", "Spend", "budget_usd", "set_budget",
           "spent_usd", "state", "report", "check"]


def budget_usd() -> float:
    """This kernel's budget in dollars: set_budget's value, else CTXLAB_BUDGET_USD, else $0.05."""
    return LEDGER.budget()


def set_budget(usd_amount: float) -> None:
    """Set this kernel's budget in dollars (run it in the first cell); prints the new state."""
    LEDGER.set_budget(usd_amount)
    report()


def spent_usd() -> float:
    """What this kernel's online requests have cost so far (actual usage, in dollars)."""
    return LEDGER.state().spent_usd


def state() -> Spend:
    """The ledger now: budget, spent, reserved, requests let through and refused, stopped or not."""
    return LEDGER.state()


def report() -> None:
    """Print one Japanese line with the budget and the spend so far."""
    s = LEDGER.state()
    line = (f"予算 {usd(s.budget_usd)}: 使用済み {usd(s.spent_usd)}、残り {usd(s.remaining_usd)}"
            f"（送ったリクエスト {s.requests} 件、止めたリクエスト {s.refused} 件）")
    if s.stopped:
        line += " ― 予算を超えるリクエストを止めたので、予算を上げるまで何も送りません（budget.set_budget(...)）"
    print(line)


def check(estimated_usd: float, client, what: str) -> None:
    """Print the estimate; online, refuse (BudgetExceeded) when it is more than what is left.

    ``estimated_usd`` is a ceiling (every call writing, every answer at max_tokens): it guards the
    budget, and the lesson's banner (``show_cost``) says what the lesson is expected to cost.
    Records nothing: the requests that follow are charged by the meter as they are sent.
    """
    if estimated_usd < 0:
        raise ValueError("estimated_usd must be >= 0")
    if is_offline(client):
        print(f"[sandbox] {what}: 実 API なら多くて ${estimated_usd:,.3f}（予算を確かめるための上限の見積もり。"
              "見込みの額は冒頭の表示）。オフラインなので料金は発生しません")
        return
    s = LEDGER.fits(estimated_usd, what)
    print(f"{what}: 上限の見積もり {usd(estimated_usd)}（予算 {usd(s.budget_usd)}、使用済み {usd(s.spent_usd)}、"
          f"残り {usd(s.remaining_usd)}。リクエストごとに実際の料金を記録し、予算を超えるリクエストは送りません）")
