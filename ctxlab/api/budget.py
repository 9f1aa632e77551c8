"""A spending guard for cells that call the real API.

Online, a cell that would spend more than a few cents calls :func:`check` with its
estimated cost first: the estimate is printed, and the cell runs only when the estimate fits
the budget the learner set in ``CTXLAB_BUDGET_USD`` (default $0.05 per process). Offline the
sandbox costs nothing, and :func:`check` prints what the same work would cost online.
"""
from __future__ import annotations

import os
import threading

from ctxlab.api.client import is_offline
from ctxlab.errors import BudgetExceeded

DEFAULT_BUDGET_USD = 0.05
_lock = threading.Lock()
_spent = 0.0




def budget_usd() -> float:
    raw = os.environ.get("CTXLAB_BUDGET_USD", "").strip()
    if not raw:
        return DEFAULT_BUDGET_USD
    try:
        value = float(raw)
    except ValueError:
        raise BudgetExceeded(f"CTXLAB_BUDGET_USD must be a number of dollars (e.g. 1.50), got {raw!r}") from None
    if value < 0:
        raise BudgetExceeded("CTXLAB_BUDGET_USD must be >= 0")
    return value


def spent_usd() -> float:
    return _spent


def check(estimated_usd: float, client, what: str) -> None:
    """Print the estimate; online, refuse (BudgetExceeded) when it does not fit the remaining budget."""
    global _spent
    if estimated_usd < 0:
        raise ValueError("estimated_usd must be >= 0")
    if is_offline(client):
        print(f"[sandbox] {what}: 実 API なら約 ${estimated_usd:,.3f} かかる処理です（オフラインなので料金は発生しません）")
        return
    with _lock:
        remaining = budget_usd() - _spent
        if estimated_usd > remaining:
            raise BudgetExceeded(
                f"{what}: 見積もり ${estimated_usd:,.3f} が残りの予算 ${remaining:,.3f} を超えるので実行しません。"
                f"実行するなら CTXLAB_BUDGET_USD を増やしてカーネルを再起動してください（例: CTXLAB_BUDGET_USD=1.00）。"
            )
        _spent += estimated_usd
    print(f"{what}: 見積もり ${estimated_usd:,.3f}（予算 ${budget_usd():,.2f}、使用済み ${_spent:,.3f}）")
