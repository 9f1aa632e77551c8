"""Lesson 03: prompt caching read from what the API returns: usage fields, dollars, request layout.

Lesson 03 uses this module to look at caching from the outside, as a learner would on the
real API:

* :func:`explain` says in Japanese what one call did with the cache (read through
  :mod:`ctxlab.costs.usage`), with the dollars of the call and of the same tokens sent
  without a cache.
* :func:`calls_table` (:func:`format_calls` as text) shows a sequence of calls as a table with both dollar columns, so
  a comparison never stops at token counts.
* :func:`layout` lists the blocks of a request in the order the cache reads them
  (tools -> system -> messages) and marks the breakpoints, so one sees what sits before
  a breakpoint and must stay byte-identical.
* The cost article's relative cost model (units of "the whole text sent once at the base input
  price"): :func:`total_costs`, :func:`meeting_call`, :func:`per_call_table` and the two
  figures of the cost article. The formulas themselves live in
  :mod:`ctxlab.costs.pricing`.
* The three ways to cache (automatic, explicit, both) in single questions, conversations and
  an agent loop, on a manual clock: :mod:`ctxlab.labs._agent_loop`, re-exported here.
"""
from __future__ import annotations

import math
from typing import Any, Iterable, Mapping, Sequence

from ctxlab.costs import pricing
from ctxlab.costs._checks import nonneg
from ctxlab.costs import formulas
from ctxlab.costs.usage import call_kind, total_input, usage_dict
from ctxlab import _table
from ctxlab.labs._agent_loop import (CONVERSATION, PLACEMENT_LABELS, PLACEMENTS, SECOND, STRATEGIES, compare_placements, comparison_table,
                                     estimate_usd, format_comparison, manual_clock, month_usd, run_agent,
                                     run_conversation, run_single, run_usd, shape_costs, shapes_table, tool_reply)

#: the cost article's assumptions for its figures (relative units)
COST_ARTICLE = {"w": 1.25, "r": 0.1, "rho": 0.3, "s": 0.02, "E": 0.05}


def uncached_cost(usage: Any, model: str | pricing.ModelPrice = pricing.DEFAULT_MODEL) -> pricing.CallCost:
    """What the same tokens would cost sent without ``cache_control`` (every input token at base price)."""
    u = usage_dict(usage)
    return pricing.call_cost(model, input_tokens=total_input(u), output_tokens=u["output_tokens"])


def explain(usage: Any, model: str | pricing.ModelPrice = pricing.DEFAULT_MODEL) -> str:
    """One call's usage in words (Japanese): where its input tokens went, and what it cost.

    The cost is computed with :func:`ctxlab.costs.pricing.usage_cost` and compared with the same
    tokens sent without a cache (:func:`uncached_cost`).
    """
    u = usage_dict(usage)
    m = pricing.get_model(model)
    kind = call_kind(u)
    w = u["cache_creation"]
    cost = pricing.usage_cost(u, m)
    base = uncached_cost(u, m)
    lines = [
        f"入力 {total_input(u):,} tokens = 読み出し {u['cache_read_input_tokens']:,}"
        f" + 書き込み {u['cache_creation_input_tokens']:,}"
        f"（5m {w['ephemeral_5m_input_tokens']:,} / 1h {w['ephemeral_1h_input_tokens']:,}）"
        f" + キャッシュされない {u['input_tokens']:,}",
    ]
    ratio = cost.input / base.input if base.input else 1.0
    money = (f"入力の料金 ${cost.input:.5f}（キャッシュなしなら ${base.input:.5f}、{ratio:.2f} 倍）"
             f" / 出力込み ${cost.total:.5f}（{m.id}）")
    if kind == "none":
        lines.append("キャッシュの欄が 2 つとも 0: 区切り（cache_control）がないか、区切りまでの長さが"
                     f"このモデルの最小長 {_min_label(m)} に届いていない（エラーにはならない）。")
    elif kind == "write":
        lines.append("書き込みだけ: 区切りまでを新しく保存した。次の呼び出しで読めれば、損益分岐を超えて安くなる。"
                     "毎回これなら、区切りより前で何かが毎回変わっている。")
    elif kind == "read":
        lines.append("読み出し: 区切りまでが前の呼び出しとバイト単位で一致し、保存済みのエントリを読んだ。")
    else:
        lines.append("読み出し + 書き込み: 手前は保存済みのエントリを読み、その先の区切りまでを新しく保存した。")
    lines.append(money)
    return "\n".join(lines)


#: what one call did with the cache (:func:`ctxlab.costs.usage.call_kind`), in the learner's words
KIND_LABELS = {"write": "書き込み", "read": "読み出し", "read+write": "読み出し + 書き込み", "none": "キャッシュなし"}


def calls_table(usages: Iterable[Any], model: str | pricing.ModelPrice = pricing.DEFAULT_MODEL,
                labels: Sequence[str] | None = None, source: str | None = None) -> _table.Table:
    """A table of calls: the usage fields (tokens), the call's dollars and the same tokens without a cache.

    The last row sums both dollar columns, so a cached/uncached comparison shows money,
    not only token counts. ``source`` (where the usage came from) opens the caption.
    """
    rows = [usage_dict(u) for u in usages]
    if labels is not None and len(labels) != len(rows):
        raise ValueError(f"{len(labels)} labels for {len(rows)} calls")
    m = pricing.get_model(model)
    labels = list(labels) if labels is not None else [str(i + 1) for i in range(len(rows))]
    cells = []
    total = total_base = 0.0
    for label, u in zip(labels, rows):
        cost = pricing.usage_cost(u, m).total
        base = uncached_cost(u, m).total
        total += cost
        total_base += base
        w = u["cache_creation"]
        cells.append([label, f"{u['input_tokens']:,}", f"{w['ephemeral_5m_input_tokens']:,}",
                      f"{w['ephemeral_1h_input_tokens']:,}", f"{u['cache_read_input_tokens']:,}",
                      KIND_LABELS[call_kind(u)], f"{cost:.5f}", f"{base:.5f}"])
    cells.append(["合計", "", "", "", "", "", f"{total:.5f}", f"{total_base:.5f}"])
    where = f"{source}。" if source else ""
    return _table.Table(["呼び出し", "キャッシュされない入力", "書き込み 5m", "書き込み 1h", "読み出し", "種類",
                         "料金 $", "キャッシュなしなら $"], cells,
                        caption=f"{where}トークン数は usage の欄。{m.id} の単価で計算（料金は出力込み・価格表から）",
                        align=["l", "r", "r", "r", "r", "l", "r", "r"])


def format_calls(usages: Iterable[Any], model: str | pricing.ModelPrice = pricing.DEFAULT_MODEL,
                 labels: Sequence[str] | None = None) -> str:
    """:func:`calls_table` as text (the caption, with the model, last)."""
    return str(calls_table(usages, model, labels))


# ---------------------------------------------------------------- request layout

def _describe(block: Any) -> tuple[str, int]:
    if isinstance(block, str):
        return "text", len(block)
    kind = block.get("type", "?")
    if kind == "document":
        src = block.get("source") or {}
        data = src.get("data") if isinstance(src.get("data"), str) else ""
        return f"document「{block.get('title') or '(無題)'}」", len(data)
    if kind == "text":
        text = str(block.get("text", ""))
        head = text.replace("\n", " ")[:18]
        return f"text「{head}{'…' if len(text) > 18 else ''}」", len(text)
    return kind, 0


def layout(request: Mapping[str, Any]) -> str:
    """The blocks of a request in cache order (tools -> system -> messages), breakpoints marked.

    Everything up to a breakpoint is the cached prefix and must be byte-identical from call
    to call; the blocks after the last breakpoint are paid at the base price every time.
    """
    items: list[tuple[str, str, int, Any]] = []
    for i, tool in enumerate(request.get("tools") or []):
        items.append((f"tools[{i}]", f"tool「{tool.get('name', '?')}」", 0, tool.get("cache_control")))
    system = request.get("system")
    if isinstance(system, str) and system:
        items.append(("system", *_describe(system), None))
    elif isinstance(system, list):
        for j, b in enumerate(system):
            items.append((f"system[{j}]", *_describe(b), b.get("cache_control")))
    for i, msg in enumerate(request.get("messages") or []):
        content = msg.get("content")
        if isinstance(content, str):
            items.append((f"messages[{i}]", *_describe(content), None))
        else:
            for j, b in enumerate(content or []):
                items.append((f"messages[{i}].content[{j}]", *_describe(b), b.get("cache_control")))
    if request.get("cache_control") and items:  # automatic caching marks the last block
        where, what, n, cc = items[-1]
        items[-1] = (where, what, n, cc or request["cache_control"])
    last = max((k for k, it in enumerate(items) if it[3]), default=-1)
    width = max([0] + [len(it[0]) for it in items])
    lines = []
    for k, (where, what, n, cc) in enumerate(items):
        size = f"{n:,} 字" if n else ""
        mark = ""
        if cc:
            mark = f"  ◆ cache_control（{cc.get('ttl', '5m')}）ここまでがキャッシュの対象"
        elif k > last:
            mark = "  （区切りの後ろ: 毎回通常単価）"
        lines.append(f"{where:<{width}}  {what} {size}{mark}".rstrip())
    if last < 0:
        lines.append("区切り（cache_control）がありません: 何もキャッシュされません。")
    return "\n".join(lines)


# ---------------------------------------------------------------- the cost article's model

def total_costs(n: float, *, w: float = COST_ARTICLE["w"], r: float = COST_ARTICLE["r"], rho: float = COST_ARTICLE["rho"],
                s: float = COST_ARTICLE["s"], E: float = COST_ARTICLE["E"]) -> dict[str, float]:
    """The cost article's totals after ``n`` calls, in units of the whole text sent once.

    ``full``: the whole text every time (n); ``cache``: one write and n - 1 reads
    (w + (n - 1) r); ``retrieval``: the index once and rho + s per call (E + (rho + s) n).
    """
    if isinstance(n, bool) or not isinstance(n, (int, float)) or n != n or n < 1:
        raise ValueError(f"n (number of calls) must be >= 1, got {n!r}")
    nonneg("E (one-off index cost)", E)
    return {
        "full": float(n),
        "cache": n * formulas.cached_cost_per_call(n, w, r),
        "retrieval": E + n * formulas.relative_cost(0.0, 1, rho, s, w, r),
    }


def meeting_call(*, w: float = COST_ARTICLE["w"], r: float = COST_ARTICLE["r"], rho: float = COST_ARTICLE["rho"],
                 s: float = COST_ARTICLE["s"], E: float = COST_ARTICLE["E"]) -> float:
    """The number of calls at which the cache's total equals retrieval's: (w - r - E) / (rho + s - r).

    From there on the cache is cheaper in total. ``math.inf`` when retrieval's slope
    rho + s is not above the read price r (the cache never catches up); a value below 1
    means the cache is cheaper from the first call.
    """
    formulas.relative_cost(0.0, 1, rho, s, w, r)  # checks the arguments
    nonneg("E (one-off index cost)", E)
    slope = rho + s - r
    if slope <= 0:
        return math.inf
    return (w - r - E) / slope


def per_call_table(ks: Iterable[int] = (1, 2, 3, 5, 10, 20), ws: Iterable[float] = (1.25, 2.0),
                   r: float = COST_ARTICLE["r"]) -> list[dict]:
    """Per-call cost of caching the whole text, (w + (k - 1) r) / k, for each k and write multiplier."""
    ws = list(ws)
    return [{"k": k, **{w: formulas.cached_cost_per_call(k, w, r) for w in ws}} for k in ks]


def per_call_view(rows: Sequence[Mapping], r: float, model_name: str) -> _table.Table:
    """:func:`per_call_table`'s rows as a table a learner reads: Japanese labels, the source as caption."""
    ws = [w for w in rows[0] if w != "k"] if rows else []
    ttl = {1.25: "5 分 TTL", 2.0: "1 時間 TTL"}
    cols = ["k（使い回し回数）"] + [f"w = {w:g}（{ttl[w]}）" if w in ttl else f"w = {w:g}" for w in ws]
    return _table.Table(cols, [[row["k"]] + [f"{row[w]:.3f}" for w in ws] for row in rows],
                        caption=f"式 (w + (k − 1) r) / k から計算（r = {r:g} は {model_name} の読み出しの倍率）。"
                                "sandbox でも実 API でもなく、式の値。1 回あたりの入力コスト（全文を通常単価で 1 回送る代金 = 1）",
                        align=["r"] * len(cols))

def multipliers_table() -> _table.Table:
    """Every model's cache multipliers from the price table (write 5m / 1h, read), with its generation."""
    status = {"latest": "最新", "superseded": "旧版", "legacy": "旧世代"}
    return _table.Table(["モデル", "世代", "書き込み 5m（倍）", "書き込み 1h（倍）", "読み出し（倍）"],
                        [[m.display_name, status.get(m.status, m.status), f"{m.cache_write_5m_multiplier:g}",
                          f"{m.cache_write_1h_multiplier:g}", f"{m.cache_read_multiplier:g}"]
                         for m in pricing.models().values()],
                        caption=f"出典: 価格表 data/pricing.json（{pricing.price_table_date()} 時点）。通常の入力単価に対する倍率")


def month_table(runs: Mapping[str, Sequence[Any]], model: str, *, sessions_per_day: float, days: float,
                source: str) -> _table.Table:
    """Dollars of one session of each run and of a month of them (:func:`month_usd`)."""
    rows = [[name, f"{run_usd(calls, model):.5f}",
             f"{month_usd(calls, model, sessions_per_day=sessions_per_day, days=days):,.2f}"]
            for name, calls in runs.items()]
    return _table.Table(["置き方", "1 セッション（$）", "月（$）"], rows,
                        caption=f"{source}。1 日 {sessions_per_day:g} セッション × {days:g} 日と仮定（{model} の単価）")


__all__ = [
    "COST_ARTICLE", "multipliers_table", "month_table", "uncached_cost", "explain",
    "calls_table", "format_calls", "layout", "total_costs", "meeting_call", "per_call_table", "per_call_view",
    "KIND_LABELS", "PLACEMENT_LABELS", "shape_costs", "shapes_table", "CONVERSATION", "SECOND",
    "PLACEMENTS", "STRATEGIES", "manual_clock", "run_single", "run_conversation", "run_agent", "run_usd",
    "compare_placements", "comparison_table", "format_comparison", "month_usd", "estimate_usd", "tool_reply",
]


def _min_label(m) -> str:
    n, confirmed = pricing.min_cacheable_tokens(m)
    return f"{n:,} tokens" if confirmed else f"{n:,} tokens（公式の値は未確認: サンドボックスの仮定）"
