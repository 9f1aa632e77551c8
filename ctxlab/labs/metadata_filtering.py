"""Lesson 06 (metadata filtering): narrow the regulations by metadata, then pass the few files whole.

The recipe of the course's article on choosing (使い分けの記事), made concrete for 株式会社みなと計測:

1. **Key from the question.** :data:`KEYWORDS` maps words an employee uses (有給, 給料,
   出張, パスワード, 社宅, ...) to a named bundle, and through it to a department.
   :func:`match` scores every bundle by its words found in the question (longer words
   count more; a word inside a longer match does not count twice).
2. **MAX_DOCS and fixed bundles.** A department whose current files fit in
   :data:`MAX_DOCS` is passed whole; a larger one (人事 has 15 files) is passed as one
   of its fixed :data:`BUNDLES`, named sets of current files in catalog order, never more
   than ``MAX_DOCS``. Fixed sets keep the prompt cache warm: the same bundle is the same
   prefix every time.
3. **Model as a fallback.** Only when the dictionary finds nothing and the client talks to
   the real API, :func:`classify` asks a small model for one word (the department), one
   extra call of about 0.2 s (使い分けの記事). Offline :func:`select` passes the fallback bundle
   and says so in :attr:`Selection.note`.

:func:`filter_recall` measures a filter on the 30 field questions (share of answerable
questions whose gold files all survive; 使い分けの記事 puts the line at 90%) and says why each
failure failed. :func:`per_question_files` is the counter-example for caching (the most
relevant files of the department, chosen anew for every question), and :func:`replay`
sends the questions through a sandbox on a manual clock to compare cache reads and dollars.

The tables live in :mod:`ctxlab.labs._bundles`, filter recall in :mod:`ctxlab.labs._recall`
and the replay in :mod:`ctxlab.labs._replay` (shared with lesson 04); this module is the
lesson's one import.
"""
from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterable, Sequence

from ctxlab import _table, corpus
from ctxlab.api.client import is_offline
from ctxlab.api.messages import question_request
from ctxlab.costs import pricing
from ctxlab.labs import _replay
from ctxlab.labs._bundles import (BUNDLES, FALLBACK_BUNDLE, KEYWORDS, MAX_DOCS, Bundle, Match, current_files,
                                  default_bundle, match, normalize)
from ctxlab.labs._recall import CATEGORY_JA, VIABLE_RECALL, QuestionResult, RecallReport, filter_recall
from ctxlab.labs._replay import Replay, Sent
from ctxlab.sandbox import Sandbox

__all__ = [
    "MAX_DOCS",
    "VIABLE_RECALL",
    "FALLBACK_BUNDLE",
    "CLASSIFY_MODEL",
    "CLASSIFY_LATENCY_S",
    "CATEGORY_JA",
    "Bundle",
    "BUNDLES",
    "KEYWORDS",
    "Match",
    "Selection",
    "normalize",
    "match",
    "current_files",
    "default_bundle",
    "classify",
    "select",
    "select_files",
    "per_question_files",
    "docs_for",
    "filter_recall",
    "RecallReport",
    "QuestionResult",
    "replay",
    "Replay",
    "Sent",
    "bundle_usage",
]

#: a small, cheap model for the one-word classification
CLASSIFY_MODEL = pricing.SMALL_MODEL
#: 使い分けの記事's figure for the extra classification call (not measured here)
CLASSIFY_LATENCY_S = 0.2


# ---------------------------------------------------------------- the model as a fallback

CLASSIFY_SYSTEM = (
    "社内規程についての質問を、担当部署に分類してください。"
    "hr（人事）、fin（経理）、it（情報システム）、ga（総務）、common（全社共通）のうち、"
    "最も当てはまるものを 1 語だけ、英字で答えてください。説明は書かないでください。"
)


def classify(question: str, client, *, model: str = CLASSIFY_MODEL) -> str | None:
    """Ask the model for the department of ``question`` in one word; None when the reply is none of them.

    One extra request (``max_tokens=5``); :func:`select` calls it only online, when the
    dictionary found nothing.
    """
    msg = client.messages.create(
        model=model, max_tokens=5, system=CLASSIFY_SYSTEM,
        messages=[{"role": "user", "content": question}],
    )
    reply = normalize("".join(getattr(b, "text", "") for b in msg.content if getattr(b, "type", "") == "text"))
    words = "".join(c if c.isascii() and c.isalpha() else " " for c in reply).split()
    for w in words:
        if w in corpus.DEPARTMENTS:
            return w
    return None


def _online(client) -> bool:
    return client is not None and not is_offline(client)


# ---------------------------------------------------------------- the filter


@dataclass(frozen=True)
class Selection:
    """What :func:`select` passes for one question, and why."""

    files: tuple[str, ...]
    dept: str | None
    bundle: str | None
    source: str  # "dictionary", "model" or "fallback"
    words: tuple[str, ...] = ()
    note: str = ""
    classify_s: float | None = None

    def __len__(self) -> int:
        return len(self.files)


def _for_dept(dept: str, bundle: str, max_docs: int) -> tuple[tuple[str, ...], str]:
    files = current_files(dept)
    name = corpus.DEPARTMENTS[dept]
    if len(files) <= max_docs:
        return files, f"{name}の現行 {len(files)} 件をそのまま（MAX_DOCS={max_docs} 以内）"
    b = BUNDLES[bundle]
    return b.files, f"{name}の現行 {len(files)} 件 > MAX_DOCS={max_docs} → 固定セット「{b.label}」{len(b.files)} 件"


def select(question: str, client=None, *, classify_model: str = CLASSIFY_MODEL) -> Selection:
    """Narrow the current regulations for ``question`` (see the module doc for the steps).

    ``client`` is used only for the fallback classification, and only when it talks to
    the real API; offline (or without a client) a question with no dictionary word gets
    :data:`FALLBACK_BUNDLE`, and :attr:`Selection.note` says so.
    """
    found = match(question)
    if found:
        top = found[0]
        files, note = _for_dept(top.dept, top.bundle, MAX_DOCS)
        return Selection(files, top.dept, top.bundle, "dictionary", top.words, "辞書: " + note)
    if _online(client):
        t0 = time.perf_counter()
        dept = classify(question, client, model=classify_model)
        elapsed = time.perf_counter() - t0
        if dept is not None:
            bundle = default_bundle(dept)
            files, note = _for_dept(dept, bundle, MAX_DOCS)
            return Selection(files, dept, bundle, "model", (), f"モデル分類（{elapsed:.2f} 秒）: " + note, elapsed)
        fb = BUNDLES[FALLBACK_BUNDLE]
        return Selection(fb.files, fb.dept, fb.name, "fallback", (),
                         f"モデル分類でも部署が決まらず → 固定セット「{fb.label}」", elapsed)
    fb = BUNDLES[FALLBACK_BUNDLE]
    why = "オフラインのためモデル分類は使わず" if client is not None else "client が無いのでモデル分類は使わず"
    return Selection(fb.files, fb.dept, fb.name, "fallback", (),
                     f"辞書に該当なし。{why}、固定セット「{fb.label}」を渡します")


def select_files(question: str) -> list[str]:
    """:func:`select` without a client, as a plain list of file names (a filter function)."""
    return list(select(question).files)


def _bigrams(text: str) -> set[str]:
    """Two-character pieces of a normalized text that carry content (not kana-only, no punctuation)."""
    t = normalize(text)
    out = set()
    for a, b in zip(t, t[1:]):
        pair = a + b
        if not all(c.isalnum() for c in pair):
            continue
        if all("\u3040" <= c <= "\u309f" for c in pair):  # hiragana only: particles and endings
            continue
        out.add(pair)
    return out


@lru_cache(maxsize=None)
def _text_bigrams(file: str) -> frozenset:
    return frozenset(_bigrams(corpus.by_file()[file].text))


def per_question_files(question: str, max_docs: int = MAX_DOCS) -> list[str]:
    """The counter-example for caching: the ``max_docs`` files of the key's department
    that share the most two-character pieces with the question, most relevant first
    (ties in catalog order).

    Each question gets its own set in its own order, so the prefix of the request, and with
    it the cache entry, changes from question to question. Without a key, all current
    files are ranked.
    """
    if not isinstance(max_docs, int) or max_docs < 1:
        raise ValueError(f"max_docs must be a positive int, got {max_docs!r}")
    found = match(question)
    files = current_files(found[0].dept if found else None)
    q = _bigrams(question)
    score = {f: len(q & _text_bigrams(f)) for f in files}
    ranked = sorted(files, key=lambda f: -score[f])  # stable: ties keep catalog order
    return ranked[:max_docs]


def docs_for(files: Iterable[str]) -> list:
    """The corpus documents of ``files`` (in that order), for ``messages.question_request``."""
    by = corpus.by_file()
    out = []
    for f in files:
        if f not in by:
            raise ValueError(f"{f!r} is not a file of data/rules (see corpus.by_file())")
        out.append(by[f])
    return out


# ---------------------------------------------------------------- replay through a sandbox


def replay(questions: Sequence, choose: Callable[[str], Iterable[str]], *, sandbox: Sandbox | None = None,
           rounds: int = 2, interval_s: float = 60.0, model: str = pricing.DEFAULT_MODEL,
           max_tokens: int = 300, progress: bool = False) -> Replay:
    """Send every question ``rounds`` times, one every ``interval_s`` seconds, with the files ``choose`` picks.

    Requests are built with :func:`ctxlab.api.messages.question_request` (documents, breakpoint
    on the last one, 5-minute TTL, then the question) and sent through the SDK to ``sandbox``,
    whose manual clock moves ``interval_s`` between requests, so TTLs behave as with one question
    every ``interval_s`` seconds (``interval_s=0`` sends them all at once, in parallel). By
    default a fresh sandbox is made; pass one (``ctxlab.Sandbox(realtime=False)``) to read its
    log afterwards. Costs come from each response's ``usage``, as they would online. Each
    request of the result (:class:`~ctxlab.labs._replay.Sent`) has the question ``id``, the
    ``files`` sent and its ``round``.
    """
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"rounds must be a positive int, got {rounds!r}")
    if isinstance(interval_s, bool) or not isinstance(interval_s, (int, float)) or not interval_s >= 0:
        raise ValueError(f"interval_s must be a number of seconds >= 0, got {interval_s!r}")
    entries = []
    for rnd in range(1, rounds + 1):
        for q in questions:
            files = tuple(choose(q.question))
            req = question_request(docs_for(files), q.question, model=model, max_tokens=max_tokens)
            entries.append(_replay.Entry(len(entries) * interval_s, req, q.id, files, rnd))
    return _replay.replay(entries, ttl="5m", model=model, sandbox=sandbox, progress=progress,
                          desc="replay")


def bundle_usage(selections: Iterable[Selection]) -> Counter:
    """How often each bundle was passed (a quick look at how traffic splits across caches)."""
    return Counter(s.bundle for s in selections)


def replay_table(runs: dict, logs: dict, recalls: dict, interval_s: float, questions: int) -> _table.Table:
    """One row per strategy of a replay (label -> :class:`Replay`, its sandbox's ``summary()``, its filter recall)."""
    rows = [[label, f"{recalls[label]:.0%}", f"{r.distinct_sets} 種", f"{r.hit_rate:.0%}", f"{r.cache_read_tokens:,}",
             f"{r.cache_write_tokens:,}", f"{r.cost_usd:.2f}", f"{logs[label]['cost_usd']:.2f}",
             f"{logs[label]['cost_usd_without_cache']:.2f}"] for label, r in runs.items()]
    return _table.Table(["ファイルの選び方", "filter recall", "送った組み合わせ", "ヒット率", "読み出し（tokens）",
                         "書き込み（tokens）", "料金（$）", "sandbox のログ（$）", "キャッシュなしなら（$）"], rows,
                        caption=f"{questions} 問 × 2 回、{interval_s:g} 秒に 1 問（sandbox のシミュレーション。料金は usage から"
                                "価格表の単価で計算）", align=["l"] + ["r"] * 8)


def usage_table(usage: Counter) -> _table.Table:
    """How many questions went to each bundle (:func:`bundle_usage`), most used first."""
    return _table.Table(["固定セット", "質問"], [[BUNDLES[name].label, f"{n} 問"] for name, n in usage.most_common()],
                        caption=f"{sum(usage.values())} 問が {len(usage)} 種のセットに分かれた", align=["l", "r"])
