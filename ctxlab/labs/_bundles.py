"""Lesson 06's key from a question: the fixed bundles of files and the keyword table that points to them.

:data:`KEYWORDS` maps words an employee uses (有給, 給料, 出張, パスワード, 社宅, ...) to a named
bundle of :data:`BUNDLES`, and through it to a department. :func:`match` scores every bundle
by its words found in the question (longer words count more; a word inside a longer match does
not count twice). A bundle is a fixed set of at most :data:`MAX_DOCS` current files in catalog
order, so the same bundle is the same prompt prefix every time. Lesson 06's filter
(:func:`ctxlab.labs.metadata_filtering.select`) and lesson 08's ``MetadataFilter`` both key on
these tables; there is no second one.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable

from ctxlab import _text, corpus

#: the most files a filtered request carries (the MAX_DOCS of 使い分けの記事)
MAX_DOCS = 8
#: what the filter passes when neither the dictionary nor the model gives a key
FALLBACK_BUNDLE = "common"


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
    """NFKC (full-width letters and digits, half-width kana) and lower case (``ctxlab._text.fold``)."""
    if not isinstance(text, str):
        raise TypeError(f"a question must be a str, got {type(text).__name__}")
    return _text.fold(text)


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
    hits = [(name, w) for name, words in keywords.items() for w in map(normalize, words) if w in q]
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


__all__ = ["MAX_DOCS", "FALLBACK_BUNDLE", "Bundle", "BUNDLES", "KEYWORDS", "Match", "normalize", "match",
           "current_files", "default_bundle"]
