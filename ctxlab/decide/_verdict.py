"""Lesson 11 (ctxlab decide): the four numbers against their thresholds, and the verdict (lesson 00's procedure).

Lesson 00's order: the premise first (documents within half the window), then the reasons to
move to RAG (cost, latency, accuracy); freshness points the other way and keeps long context
when a reason to move exists but RAG's re-index would lag behind the updates. A threshold met
exactly (50%, 3 s) stays on long context's side.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ctxlab.costs import crossover
from ctxlab.errors import InputError

_UNITS = {"m": 60, "min": 60, "h": 3600, "d": 86400, "w": 7 * 86400, "分": 60, "時間": 3600, "日": 86400, "週": 7 * 86400}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(min|m|h|d|w|分|時間|日|週)\s*$")


def parse_duration(text: str) -> float:
    """``"30m"``, ``"12h"``, ``"1d"``, ``"2w"`` (also 分・時間・日・週) -> seconds; InputError otherwise."""
    m = _DURATION.match(str(text))
    if not m or float(m.group(1)) <= 0:
        raise InputError(f"期間 {text!r} が読めません。30m・12h・1d・2w のように、正の数と単位（m, h, d, w）で書いてください。")
    return float(m.group(1)) * _UNITS[m.group(2)]


def duration_ja(seconds: float) -> str:
    for unit, s in (("週", 7 * 86400), ("日", 86400), ("時間", 3600), ("分", 60)):
        if seconds >= s and abs(seconds / s - round(seconds / s)) < 1e-9:
            return f"{seconds / s:g} {unit}"
    return f"{seconds / 3600:.2g} 時間"


@dataclass(frozen=True)
class Number:
    """One of the four numbers: its value in words, the threshold, which side it points to, and how it was obtained."""

    key: str               # cost, latency, accuracy, freshness
    label: str
    value: str
    threshold: str
    side: str              # "long_context", "rag" or "unknown"
    how: str               # 実測 / 推定 / シミュレーション / 未測定 / 指定


@dataclass
class Verdict:
    path: str              # long_context, filter_or_rag, rag
    reason: str            # premise, cost, latency, accuracy, freshness, all_clear
    text: str
    changes: list[str] = field(default_factory=list)


PATH_JA = {"long_context": "ロングコンテキスト", "filter_or_rag": "メタデータで絞るか RAG", "rag": "RAG"}
REASON_JA = {"premise": "50% の前提", "cost": "料金", "latency": "待ち時間", "accuracy": "正答率",
             "freshness": "更新頻度", "all_clear": "RAG に移る理由がない"}


def cost_number(lc: float | None, rag: float, rag_budget: float, how: str) -> Number:
    if lc is None:
        return Number("cost", "料金（月額）", f"ロングコンテキストはウィンドウに入らない・RAG ${rag:,.0f}", "—", "rag", how)
    diff = lc - rag
    side = "rag" if diff > rag_budget else "long_context"
    return Number("cost", "料金（月額）", f"ロングコンテキスト ${lc:,.0f} − RAG ${rag:,.0f} = {'−' if diff < 0 else ''}${abs(diff):,.0f}",
                  f"差が RAG にかけてよい月 ${rag_budget:,.0f} を上回れば RAG", side, how)


def latency_number(ttft_cached_s: float | None, how: str) -> Number:
    limit = crossover.TTFT_LIMIT_S
    if ttft_cached_s is None:
        return Number("latency", "待ち時間（キャッシュ時の最初のトークン）", "ウィンドウに入らない", f"{limit:g} 秒以内", "rag", how)
    side = "rag" if ttft_cached_s > limit else "long_context"
    return Number("latency", "待ち時間（キャッシュ時の最初のトークン）", f"{ttft_cached_s:.2f} 秒",
                  f"{limit:g} 秒以内ならロングコンテキストのまま", side, how)


def accuracy_number(lc: float | None, rag: float | None, n: int, how: str) -> Number:
    if lc is None or rag is None:
        need = "API キーが要る（測定の計画と料金はメモに）" if n else "API キーと --questions が要る"
        return Number("accuracy", "正答率", f"未測定（{need}）",
                      "ロングコンテキストが RAG を下回れば RAG", "unknown", how)
    side = "rag" if lc < rag else "long_context"
    return Number("accuracy", "正答率", f"ロングコンテキスト {lc:.0%} / RAG {rag:.0%}（{n} 問）",
                  "ロングコンテキストが RAG を下回れば RAG", side, how)


def freshness_number(update_s: float | None, reindex_s: float | None) -> Number:
    if update_s is None or reindex_s is None:
        return Number("freshness", "更新頻度", "未指定（--update-every と --reindex-every）",
                      "再インデックスの周期が更新の間隔を超えればロングコンテキストが有利", "unknown", "未指定")
    stale = reindex_s > update_s
    value = (f"更新 {duration_ja(update_s)}ごと・再インデックス {duration_ja(reindex_s)}ごと: RAG は最大 "
             f"{duration_ja(reindex_s)}古い内容を返す" + ("（次の更新までに追いつかない）" if stale else "（次の更新までに追いつく）"))
    return Number("freshness", "更新頻度", value,
                  "再インデックスの周期が更新の間隔を超えればロングコンテキストが有利",
                  "long_context" if stale else "rag", "指定")


def decide(window_usage: float, numbers: list[Number]) -> tuple[str, str]:
    """Lesson 00's procedure on the four numbers: (path, reason)."""
    if window_usage > crossover.HALF_WINDOW:
        return "filter_or_rag", "premise"
    by = {n.key: n for n in numbers}
    reasons = [k for k in ("cost", "latency", "accuracy") if by[k].side == "rag"]
    if not reasons:
        return "long_context", "all_clear"
    if by["freshness"].side == "long_context":
        return "long_context", "freshness"
    return "rag", reasons[0]


def verdict_text(path: str, reason: str, model_name: str, window_usage: float) -> str:
    if reason == "premise":
        return (f"{model_name} のウィンドウの {window_usage:.0%} を使うので 50% の前提を満たしません: "
                "メタデータで絞るか RAG にします。")
    if reason == "all_clear":
        return f"{model_name} で、RAG に移る理由がありません: ロングコンテキスト（表のキャッシュの設定で）のままにします。"
    if reason == "freshness":
        return "RAG に移る理由はありますが、再インデックスが更新に追いつかないので、ロングコンテキストのままにします。"
    return f"{REASON_JA[reason]}が RAG に移る側に出ました: RAG にします。"
