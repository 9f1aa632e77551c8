"""Lesson 08's three ways of choosing the documents of a request, and a folder whose files can change.

:class:`LongContext`, :class:`MetadataFilter` and :class:`RAG` differ only in who picks the
documents: nobody (every document, in catalog order), a keyword dictionary of departments,
or BM25 over article chunks. Each
reads a list of documents or a :class:`Folder` (whose files can change, for the freshness
experiment) and turns a question into the keyword arguments of ``client.messages.create``
(:meth:`Method.request`).
"""
from __future__ import annotations

import dataclasses
import unicodedata
from dataclasses import dataclass
from typing import Iterable

from ctxlab.api.messages import SYSTEM_PROMPT, question_request
from ctxlab.retrieval import BM25Index, chunk_by_articles


#: words of a question that point at a department (a simple, hand-written dictionary)
DEPT_KEYWORDS: dict[str, tuple[str, ...]] = {
    "hr": ("給料", "給与", "賞与", "休み", "休暇", "有給", "年休", "結婚", "慶弔", "退職", "定年", "再雇用",
           "在宅", "テレワーク", "通勤", "交通費", "育児", "介護", "評価", "休職", "ハラスメント", "研修",
           "副業", "兼業", "残業", "勤務", "転勤", "健康診断"),
    "fin": ("経費", "精算", "出張", "旅費", "日当", "ホテル", "宿泊", "購買", "購入", "買い", "見積", "予算",
            "仮払", "カード", "領収書", "固定資産", "支払"),
    "it": ("パソコン", "PC", "USB", "パスワード", "アカウント", "ログイン", "セキュリティ", "システム",
           "メール", "誤送信", "クラウド", "生成AI", "スマホ", "私物", "ウイルス"),
    "ga": ("社宅", "地震", "防災", "災害", "安否", "稟議", "決裁", "権限", "印鑑", "社有車", "入館", "契約"),
    "common": ("通報", "個人情報", "倫理", "秘密", "組織", "コンプライアンス"),
}
#: what the filter passes when no department can be read from the question
FALLBACK_DEPTS = ("common",)
FALLBACK_FILES = ("hr_shugyo_kisoku.txt",)


@dataclass(frozen=True)
class Passage:
    """What a method puts into the request: one document block."""

    file: str
    title: str
    text: str


class Folder:
    """The regulations as they are now, in memory: :meth:`update` simulates editing a file.

    :meth:`docs` reads the folder (a fresh list each time). A method built on the folder
    reads it on every question; a method built on ``folder.docs()`` read it once, at
    start-up, and keeps what it read.
    """

    def __init__(self, docs: Iterable):
        self._docs = list(docs)
        if not self._docs:
            raise ValueError("a folder needs at least one document")
        #: how many updates the folder has seen
        self.version = 0

    def docs(self) -> list:
        return list(self._docs)

    def __len__(self) -> int:
        return len(self._docs)

    def update(self, file: str, text: str):
        """Replace the text of ``file`` (as if someone saved a new revision); returns the new document."""
        for i, d in enumerate(self._docs):
            if d.file == file:
                if not isinstance(text, str) or not text.strip():
                    raise ValueError("the new text is empty")
                self._docs[i] = dataclasses.replace(d, text=text)
                self.version += 1
                return self._docs[i]
        raise KeyError(f"{file}: not in the folder")


def _read(source) -> list:
    return source.docs() if isinstance(source, Folder) else list(source)


def _passages(docs) -> list[Passage]:
    return [Passage(d.file, getattr(d, "label", None) or d.title, d.text) for d in docs]


class Method:
    """A way of choosing the documents for a question. Subclasses implement :meth:`select`."""

    name = "method"
    label = "method"
    #: cache the documents (they repeat between questions) or not (they change every question)
    cache_ttl: str | None = "5m"

    def select(self, question: str) -> list[Passage]:  # pragma: no cover - abstract
        raise NotImplementedError

    def request(self, question: str, *, model: str, max_tokens: int) -> tuple[dict, list[Passage]]:
        """Keyword arguments for ``client.messages.create`` and the passages they carry."""
        passages = self.select(question)
        if not passages:  # nothing selected: ask without documents
            req = {"model": model, "max_tokens": max_tokens, "system": SYSTEM_PROMPT,
                   "messages": [{"role": "user", "content": [{"type": "text", "text": question}]}]}
            return req, passages
        return question_request(passages, question, model=model, max_tokens=max_tokens,
                                cache_ttl=self.cache_ttl), passages

    def sees(self, text: str, question: str) -> bool:
        """Whether ``text`` is in what this method would send for ``question`` (e.g. an updated rule)."""
        return any(text in p.text for p in self.select(question))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class LongContext(Method):
    """Every document, in catalog order (a stable prefix: the cache stays warm).

    ``source`` is a :class:`Folder` (read again on every question) or a list of documents
    (read once: later edits of the folder are not seen).
    """

    label = "ロングコンテキスト"

    def __init__(self, source, name: str = "long_context"):
        self.source = source
        self.name = name
        self.reads_every_question = isinstance(source, Folder)

    def select(self, question: str) -> list[Passage]:
        return _passages(_read(self.source))


def departments(question: str, keywords: dict[str, tuple[str, ...]] | None = None) -> list[str]:
    """Departments whose keywords occur in the question (after NFKC), in dictionary order."""
    q = unicodedata.normalize("NFKC", question).upper()
    kw = DEPT_KEYWORDS if keywords is None else keywords
    return [d for d, words in kw.items() if any(unicodedata.normalize("NFKC", w).upper() in q for w in words)]


class MetadataFilter(Method):
    """The whole files of the departments a question names (by a keyword dictionary).

    When no department can be read from the question, a fixed bundle is passed
    (全社共通 + 就業規則). Documents keep catalog order, so the same departments give the
    same prefix and the cache stays warm per bundle.
    """

    label = "メタデータで絞る"

    def __init__(self, source, name: str = "filter", keywords: dict[str, tuple[str, ...]] | None = None):
        self.source = source
        self.name = name
        self.keywords = DEPT_KEYWORDS if keywords is None else keywords

    def select(self, question: str) -> list[Passage]:
        docs = _read(self.source)
        depts = departments(question, self.keywords)
        if depts:
            chosen = [d for d in docs if d.dept in depts]
        else:
            chosen = [d for d in docs if d.dept in FALLBACK_DEPTS or d.file in FALLBACK_FILES]
        return _passages(chosen)


class RAG(Method):
    """BM25 over article chunks of about ``chunk_tokens`` tokens; the top ``k`` chunks.

    The index is built when the method is created (like a RAG service that indexes at
    start-up or in a nightly batch): edits of the folder are not seen until :meth:`reindex`.
    Chunks change with every question, so nothing is cached.
    """

    label = "RAG（BM25・上位チャンク）"
    cache_ttl = None

    def __init__(self, source, k: int = 8, chunk_tokens: int = 800, name: str = "rag"):
        if not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be a positive int, got {k!r}")
        self.source = source
        self.k = k
        self.chunk_tokens = chunk_tokens
        self.name = name
        self.label = f"RAG（BM25・上位 {k} チャンク）"
        self.reindex()

    def reindex(self) -> None:
        """Read the source again and rebuild the chunks and the index."""
        docs = _read(self.source)
        self.chunks = [c for d in docs for c in chunk_by_articles(d.text, self.chunk_tokens, doc_id=d.file,
                                                                  title=getattr(d, "label", None) or d.title)]
        self.index = BM25Index.from_chunks(self.chunks)
        self.indexed_version = self.source.version if isinstance(self.source, Folder) else 0

    @property
    def behind(self) -> int:
        """How many folder updates the index has not seen yet."""
        return (self.source.version - self.indexed_version) if isinstance(self.source, Folder) else 0

    def select(self, question: str) -> list[Passage]:
        hits = self.index.search(question, k=self.k)
        return [Passage(self.chunks[i].doc_id, self.chunks[i].context_header(), self.chunks[i].text) for i, _ in hits]


__all__ = ["DEPT_KEYWORDS", "FALLBACK_DEPTS", "FALLBACK_FILES", "Passage", "Folder", "Method", "LongContext",
           "departments", "MetadataFilter", "RAG"]
