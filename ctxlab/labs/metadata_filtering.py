"""The middle option: narrow the regulations by metadata, then pass the few files whole.

Seed 000's recipe, made concrete for 株式会社みなと計測:

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
   extra call of about 0.2 s (seed 000). Offline :func:`select` passes the fallback bundle
   and says so in :attr:`Selection.note`.

:func:`filter_recall` measures a filter on the 30 field questions (share of answerable
questions whose gold files all survive; seed 000 puts the line at 90%) and says why each
failure failed. :func:`per_question_files` is the counter-example for caching (the most
relevant files of the department, chosen anew for every question), and :func:`replay`
sends questions through a client to compare cache reads and dollars.
"""
from __future__ import annotations

import time
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Iterable, Sequence

from ctxlab import corpus
from ctxlab.costs import pricing

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
    "ReplayRow",
    "bundle_usage",
]

#: the most files a filtered request carries (seed 000's MAX_DOCS)
MAX_DOCS = 8
#: seed 000: the filter option is viable when at least 90% of the needed files survive it
VIABLE_RECALL = 0.9
#: what :func:`select` passes when neither the dictionary nor the model gives a key
FALLBACK_BUNDLE = "common"
#: a small, cheap model for the one-word classification
CLASSIFY_MODEL = "claude-haiku-4-5"
#: seed 000's figure for the extra classification call (not measured here)
CLASSIFY_LATENCY_S = 0.2
#: Japanese names of the question categories (corpus.CATEGORIES)
CATEGORY_JA = {"single": "単一ファイル", "multi": "複数ファイル", "whole": "規程全体",
               "contradiction": "新旧の矛盾", "unanswerable": "規程に無い"}


@dataclass(frozen=True)
class Bundle:
    """A fixed, named set of current files of one department (sent in this order)."""

    name: str
    dept: str
    label: str
    files: tuple[str, ...]


def _bundle(name: str, dept: str, label: str, *files: str) -> Bundle:
    return Bundle(name, dept, label, tuple(files))


#: Fixed bundles, each at most MAX_DOCS current files in catalog order. A department with
#: more than MAX_DOCS files (人事 15, 経理 10, 総務 10) is split by topic; 就業規則 and
#: 経理規程, the base rules of their departments, sit in both of their department's bundles.
#: The first bundle of a department is its default (used when only the department is known).
BUNDLES: dict[str, Bundle] = {b.name: b for b in (
    _bundle("hr_work", "hr", "人事: 勤務・休暇",
            "hr_shugyo_kisoku.txt", "hr_yukyu_2025.txt", "hr_ikuji_kaigo.txt", "hr_telework_2025.txt",
            "hr_kyushoku.txt", "hr_keicho.txt", "hr_harassment.txt", "hr_anzen_eisei.txt"),
    _bundle("hr_pay", "hr", "人事: 給与・処遇",
            "hr_shugyo_kisoku.txt", "hr_kyuyo_kitei.txt", "hr_taishokukin.txt", "hr_saikoyo.txt",
            "hr_jinji_hyoka.txt", "hr_kyoiku.txt", "hr_tsukin.txt", "hr_fukugyo.txt"),
    _bundle("fin_expense", "fin", "経理: 経費・出張",
            "fin_keiri.txt", "fin_keihi_2025.txt", "fin_ryohi_2024.txt", "fin_kaigai_ryohi.txt",
            "fin_karibarai.txt", "fin_card.txt"),
    _bundle("fin_accounting", "fin", "経理: 会計・購買",
            "fin_keiri.txt", "fin_kobai.txt", "fin_kotei_shisan.txt", "fin_yosan.txt", "fin_denshi_chobo.txt"),
    _bundle("it", "it", "情報システム",
            "it_security_kihon.txt", "it_security_2025.txt", "it_kiki_riyo.txt", "it_byod.txt",
            "it_incident.txt", "it_account.txt", "it_cloud.txt", "it_genai.txt"),
    _bundle("ga_facility", "ga", "総務: 施設・安全",
            "ga_shataku.txt", "ga_shayosha.txt", "ga_bousai.txt", "ga_nyutaikan.txt"),
    _bundle("ga_admin", "ga", "総務: 決裁・文書",
            "ga_bunsho.txt", "ga_kitei_kanri.txt", "ga_kengen.txt", "ga_ringi.txt", "ga_insho.txt",
            "ga_keiyaku.txt"),
    _bundle("common", "common", "全社共通",
            "common_kodo_kihan.txt", "common_tsuho.txt", "common_kojin_joho.txt", "common_soshiki.txt",
            "common_eigyo_himitsu.txt"),
)}

#: Words that point to a bundle: the titles of its files, the words of their articles and
#: the everyday words employees use for them (給料 for 給与, 休み for 休暇, パソコン for PC).
#: Matching is on NFKC-normalized, lower-cased text, so ＰＣ, pc and PC are the same word.
KEYWORDS: dict[str, tuple[str, ...]] = {
    "hr_work": ("人事", "就業規則", "勤務時間", "労働時間", "残業", "時間外", "休日", "遅刻", "早退", "欠勤",
                "有給", "年休", "休暇", "休み", "育児", "育休", "介護", "産休", "出産", "休職", "復職",
                "結婚", "慶弔", "忌引", "弔慰", "在宅勤務", "在宅", "テレワーク", "リモートワーク",
                "ハラスメント", "パワハラ", "セクハラ", "安全衛生", "健康診断", "ストレスチェック", "産業医"),
    "hr_pay": ("給与", "給料", "賃金", "月給", "賞与", "ボーナス", "手当", "昇給", "残業代", "人事評価", "評価",
               "昇格", "異動", "退職", "退職金", "定年", "再雇用", "通勤", "交通費", "定期券", "研修", "教育",
               "資格取得", "副業", "兼業"),
    "fin_expense": ("経費", "精算", "立替", "領収書", "出張", "海外出張", "旅費", "日当", "宿泊", "ホテル",
                    "航空券", "ビジネスクラス", "仮払", "コーポレートカード", "法人カード", "接待", "交際費"),
    "fin_accounting": ("経理", "会計", "購買", "購入", "発注", "見積", "相見積", "予算", "固定資産",
                       "減価償却", "電子取引", "請求書", "帳簿", "支払"),
    "it": ("情報システム", "情シス", "パスワード", "pc", "パソコン", "ノートpc", "端末", "ロック", "アカウント",
           "ログイン", "usb", "メール", "誤送信", "セキュリティ", "ウイルス", "マルウェア", "インシデント",
           "クラウド", "私物", "私有", "スマホ", "スマートフォン", "byod", "生成ai", "chatgpt", "vpn",
           "多要素認証", "ソフトウェア"),
    "ga_facility": ("総務", "社宅", "寮", "社有車", "社用車", "運転", "防災", "地震", "災害", "安否確認",
                    "避難", "入館", "入退館", "来訪者", "来客", "入館証"),
    "ga_admin": ("稟議", "決裁", "承認", "職務権限", "権限", "印鑑", "印章", "押印", "契約", "契約書", "文書管理",
                 "保存期間", "規程管理"),
    "common": ("全社", "内部通報", "通報", "公益通報", "個人情報", "行動規範", "企業倫理", "倫理",
               "コンプライアンス", "組織", "営業秘密", "機密", "守秘"),
}


def normalize(text: str) -> str:
    """NFKC (full-width letters and digits, half-width kana) and lower case."""
    if not isinstance(text, str):
        raise TypeError(f"a question must be a str, got {type(text).__name__}")
    return unicodedata.normalize("NFKC", text).lower()


@dataclass(frozen=True)
class Match:
    """A bundle the dictionary points to, with the words that matched and their weight."""

    bundle: str
    score: int
    words: tuple[str, ...]

    @property
    def dept(self) -> str:
        return BUNDLES[self.bundle].dept


def match(question: str, keywords: dict[str, Iterable[str]] | None = None) -> list[Match]:
    """Bundles whose words occur in ``question``, best first.

    A bundle scores the total length of its matched words (a longer word is more specific:
    在宅勤務 outweighs 手当). A word found only inside a longer matched word (出張 inside
    海外出張) does not count. Ties keep the order of ``keywords``.
    """
    keywords = KEYWORDS if keywords is None else keywords
    q = normalize(question)
    hits = [(name, normalize(w)) for name, words in keywords.items() for w in words if normalize(w) in q]
    found = {w for _, w in hits}
    kept = [(name, w) for name, w in hits if not any(w != other and w in other for other in found)]
    order = {name: i for i, name in enumerate(keywords)}
    words: dict[str, list[str]] = {}
    for name, w in kept:
        if w not in words.setdefault(name, []):
            words[name].append(w)
    out = [Match(name, sum(len(w) for w in ws), tuple(ws)) for name, ws in words.items()]
    return sorted(out, key=lambda m: (-m.score, order[m.bundle]))


@lru_cache(maxsize=1)
def _current() -> tuple:
    return tuple(corpus.load())


def current_files(dept: str | None = None) -> tuple[str, ...]:
    """Current files (catalog order), of one department or of all."""
    if dept is not None and dept not in corpus.DEPARTMENTS:
        raise ValueError(f"unknown department {dept!r}: one of {sorted(corpus.DEPARTMENTS)}")
    return tuple(d.file for d in _current() if dept is None or d.dept == dept)


def default_bundle(dept: str) -> str:
    """The first bundle of a department (what a department-only key passes)."""
    for b in BUNDLES.values():
        if b.dept == dept:
            return b.name
    raise ValueError(f"no bundle for department {dept!r}: one of {sorted({b.dept for b in BUNDLES.values()})}")


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
    if client is None:
        return False
    from ctxlab.api.client import is_offline

    return not is_offline(client)


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


# ---------------------------------------------------------------- filter recall


@dataclass(frozen=True)
class QuestionResult:
    """One answerable question under a filter."""

    id: str
    category: str
    question: str
    gold: tuple[str, ...]
    kept: tuple[str, ...]
    missing: tuple[str, ...]
    reason: str

    @property
    def ok(self) -> bool:
        return not self.missing


@dataclass
class RecallReport:
    """Filter recall over the answerable questions (unanswerable ones have no gold files)."""

    results: list[QuestionResult]
    skipped: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)

    @property
    def recall(self) -> float:
        """Share of answerable questions whose gold files all survive the filter."""
        return sum(r.ok for r in self.results) / len(self.results) if self.results else 0.0

    @property
    def file_recall(self) -> float:
        """Share of all gold files (over all questions) that survive the filter."""
        total = sum(len(r.gold) for r in self.results)
        return sum(len(r.gold) - len(r.missing) for r in self.results) / total if total else 0.0

    def by_category(self) -> dict[str, tuple[int, int]]:
        """category -> (questions passed, questions), in corpus.CATEGORIES order."""
        out: dict[str, tuple[int, int]] = {}
        for c in corpus.CATEGORIES:
            rs = [r for r in self.results if r.category == c]
            if rs:
                out[c] = (sum(r.ok for r in rs), len(rs))
        return out

    @property
    def failures(self) -> list[QuestionResult]:
        return [r for r in self.results if not r.ok]

    @property
    def viable(self) -> bool:
        """Seed 000's line: at least VIABLE_RECALL of the answerable questions keep their files."""
        return self.recall >= VIABLE_RECALL

    def format(self) -> str:
        lines = [f"filter recall: {self.recall:.0%}（{sum(r.ok for r in self.results)}/{len(self.results)} 問）"
                 f"  ファイル単位: {self.file_recall:.0%}  90% の線: {'越える' if self.viable else '届かない'}"]
        for c, (ok, n) in self.by_category().items():
            name = CATEGORY_JA[c]
            pad = " " * (14 - sum(1 if ord(ch) < 128 else 2 for ch in name))
            lines.append(f"  {name}{pad}{ok:>2}/{n:<2} {ok / n:5.0%}  ({c})")
        if self.violations:
            lines.append("規則違反: " + "; ".join(self.violations[:5]))
        return "\n".join(lines)


def _reason(gold: Sequence[str], kept: Sequence[str], missing: Sequence[str], by: dict) -> str:
    if not missing:
        return ""
    if not kept:
        return "何も渡していない"
    order = list(corpus.DEPARTMENTS)
    gold_depts = sorted({by[g].dept for g in gold}, key=order.index)
    kept_depts = {by[k].dept for k in kept if k in by}
    if len(gold_depts) > 1:
        return "部署をまたぐ（" + "・".join(corpus.DEPARTMENTS[d] for d in gold_depts) + "）"
    if gold_depts[0] not in kept_depts:
        return f"別の部署を渡した（必要: {corpus.DEPARTMENTS[gold_depts[0]]}）"
    if any(not by[m].current for m in missing):
        return "旧版が必要（現行版だけを渡している）"
    return "部署は合っているが、固定セットに入っていない"


def filter_recall(filter_fn: Callable[[str], Iterable[str]], questions: Sequence | None = None) -> RecallReport:
    """Run ``filter_fn(question) -> file names`` on the field questions and count what survives.

    A gold file survives when the filter returns it. The report also lists rule
    violations: superseded files, more than MAX_DOCS files, names that are not files.
    """
    qs = corpus.questions() if questions is None else list(questions)
    by = corpus.by_file()
    results, skipped, violations = [], [], []
    for q in qs:
        kept = tuple(filter_fn(q.question))
        for f in kept:
            if f not in by:
                violations.append(f"{q.id}: {f!r} はファイルではない")
            elif not by[f].current:
                violations.append(f"{q.id}: 旧版 {f}")
        if len(kept) > MAX_DOCS:
            violations.append(f"{q.id}: {len(kept)} 件 > MAX_DOCS={MAX_DOCS}")
        if not q.gold_files:
            skipped.append(q.id)
            continue
        missing = tuple(g for g in q.gold_files if g not in kept)
        results.append(QuestionResult(q.id, q.category, q.question, tuple(q.gold_files), kept, missing,
                                      _reason(q.gold_files, kept, missing, by)))
    return RecallReport(results, skipped, violations)


# ---------------------------------------------------------------- replay through a client


@dataclass(frozen=True)
class ReplayRow:
    round: int
    id: str
    files: tuple[str, ...]
    input_tokens: int
    cache_write_tokens: int
    cache_read_tokens: int
    output_tokens: int
    cost_usd: float

    @property
    def hit(self) -> bool:
        return self.cache_read_tokens > 0


@dataclass
class Replay:
    """The requests of :func:`replay`, with totals."""

    rows: list[ReplayRow]
    interval_s: float

    @property
    def requests(self) -> int:
        return len(self.rows)

    @property
    def hit_rate(self) -> float:
        return sum(r.hit for r in self.rows) / len(self.rows) if self.rows else 0.0

    @property
    def cache_read_tokens(self) -> int:
        return sum(r.cache_read_tokens for r in self.rows)

    @property
    def cache_write_tokens(self) -> int:
        return sum(r.cache_write_tokens for r in self.rows)

    @property
    def input_tokens_total(self) -> int:
        """All input tokens sent (uncached + written + read)."""
        return sum(r.input_tokens + r.cache_write_tokens + r.cache_read_tokens for r in self.rows)

    @property
    def cost_usd(self) -> float:
        return sum(r.cost_usd for r in self.rows)

    @property
    def distinct_sets(self) -> int:
        """How many different (ordered) file lists were sent: each is its own cache entry."""
        return len({r.files for r in self.rows})

    def cumulative_cost(self) -> list[float]:
        out, s = [], 0.0
        for r in self.rows:
            s += r.cost_usd
            out.append(s)
        return out


def replay(client, questions: Sequence, choose: Callable[[str], Iterable[str]], *, clock=None,
           rounds: int = 2, interval_s: float = 60.0, model: str = pricing.DEFAULT_MODEL,
           max_tokens: int = 300) -> Replay:
    """Send every question ``rounds`` times through ``client`` with the files ``choose`` picks.

    Requests are built with :func:`ctxlab.api.messages.question_request` (documents, breakpoint
    on the last one, then the question). Costs come from each response's ``usage``
    (:func:`ctxlab.costs.pricing.usage_cost`), as they would online. With ``clock`` (a
    :class:`ctxlab.Sandbox`), the clock moves ``interval_s`` after every request, so TTLs
    behave as with one question every ``interval_s`` seconds.
    """
    from ctxlab.api.messages import question_request

    if not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"rounds must be a positive int, got {rounds!r}")
    if interval_s < 0:
        raise ValueError(f"interval_s must be >= 0, got {interval_s!r}")
    rows = []
    for rnd in range(1, rounds + 1):
        for q in questions:
            files = tuple(choose(q.question))
            req = question_request(docs_for(files), q.question, model=model, max_tokens=max_tokens)
            msg = client.messages.create(**req)
            u = msg.usage
            rows.append(ReplayRow(
                rnd, q.id, files, u.input_tokens, u.cache_creation_input_tokens or 0,
                u.cache_read_input_tokens or 0, u.output_tokens, pricing.usage_cost(u, model).total,
            ))
            if clock is not None:
                clock.advance(interval_s)
    return Replay(rows, interval_s)


def bundle_usage(selections: Iterable[Selection]) -> Counter:
    """How often each bundle was passed (a quick look at how traffic splits across caches)."""
    return Counter(s.bundle for s in selections)
