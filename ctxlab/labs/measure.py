"""The field-question harness: three ways of choosing documents, the run, three-level grading.

Grading (:func:`grade`) compares an answer with the question's ``key_facts`` (after NFKC
normalisation, ignoring spaces and thousands separators):

* answerable questions: every key fact present -> correct, some -> partial, none -> wrong;
  a contradiction answer that also states a superseded fact (``stale_facts``) mixes the
  old and the new regulation and is at best partial;
* unanswerable questions: correct when the answer says the documents do not cover it and
  states no rule of its own, otherwise wrong.

It is a yardstick, not a judge: :mod:`ctxlab.widgets.grader` lets a person grade the same
answers, and :func:`agreement` compares the two.

The harness: :class:`LongContext`, :class:`MetadataFilter` and :class:`RAG` differ only in
who picks the documents of a request; each reads a list of documents or a :class:`Folder`
(whose files can change, for the freshness experiment). :func:`run` asks every question
with every method through the client (real API or sandbox) with a progress bar, after
:func:`ctxlab.api.budget.check` has seen the estimated cost, and returns :class:`Graded`
records; :func:`format_table`, :func:`by_method`, :func:`plot_accuracy`,
:func:`version_mixing` and :func:`summary` report them. :func:`position_sweep` moves the
gold file through the prompt (online only: the sandbox ignores positions).
"""
from __future__ import annotations

import re
import unicodedata
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Iterable

from ctxlab import estimate
from ctxlab.corpus import CATEGORIES, Question
from ctxlab import _text
from ctxlab.costs.usage import total_input
from ctxlab.retrieval import BM25Index, chunk_by_articles

LEVELS = ("correct", "partial", "wrong")

#: phrases with which an answer says the documents do not cover the question
NOT_COVERED = (
    "記載がありません", "記載はありません", "記載されていません", "定めがありません", "定めはありません",
    "見当たりません", "見つかりません", "含まれていません", "書かれていません", "規定がありません",
    "わかりません", "分かりません", "答えられません", "確認できません", "該当する記述がありません",
    "文書がありません", "引用できる文書がありません",
)

_SEP = re.compile(r"(?<=\d),(?=\d{3})")
_SPACE = re.compile(r"\s+")


def normalize(text: str) -> str:
    """NFKC, no whitespace, no thousands separators: '50,000 円' -> '50000円'."""
    t = unicodedata.normalize("NFKC", text)
    t = _SEP.sub("", t)
    return _SPACE.sub("", t)


def facts_found(answer: str, facts: Iterable[str]) -> list[str]:
    a = normalize(answer)
    return [f for f in facts if normalize(f) in a]


def says_not_covered(answer: str) -> bool:
    a = normalize(answer)
    return any(normalize(p) in a for p in NOT_COVERED)


def grade(answer: str, q: Question) -> str:
    """Three-level grade of one answer (see the module docstring)."""
    if q.category == "unanswerable":
        return "correct" if says_not_covered(answer) else "wrong"
    found = facts_found(answer, q.key_facts)
    if len(found) == len(q.key_facts):
        level = "correct"
    elif found:
        level = "partial"
    else:
        level = "wrong"
    if level == "correct" and facts_found(answer, q.stale_facts):
        level = "partial"
    return level


@dataclass(frozen=True)
class Graded:
    """One answer and its grade. The last three fields say what the method sent."""

    question: Question
    method: str
    answer: str
    level: str
    #: files the method put into the request (RAG: the files of its chunks)
    files: tuple[str, ...] = ()
    #: input tokens of the request (usage: uncached + cache write + cache read)
    input_tokens: int = 0
    #: what the call cost (online) or would have cost (offline), in dollars
    cost_usd: float = 0.0


def accuracy(levels: Iterable[str], partial_weight: float = 0.5) -> float:
    """Share of correct answers, partial ones counted with ``partial_weight``."""
    levels = list(levels)
    if not levels:
        raise ValueError("no graded answers")
    bad = [lv for lv in levels if lv not in LEVELS]
    if bad:
        raise ValueError(f"levels must be one of {LEVELS}, got {bad[0]!r}")
    c = Counter(levels)
    return (c["correct"] + partial_weight * c["partial"]) / len(levels)


def table(graded: Iterable[Graded]) -> dict[str, dict[str, Counter]]:
    """Counts of levels per method and per category: ``t[method][category][level]``."""
    t: dict[str, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    for g in graded:
        t[g.method][g.question.category][g.level] += 1
        t[g.method]["all"][g.level] += 1
    return t


def format_table(graded: list[Graded], partial_weight: float = 0.5) -> str:
    """A text table: per method, correct/partial/wrong and accuracy overall and per category."""
    t = table(graded)
    cats = [c for c in CATEGORIES if any(c in t[m] for m in t)]
    head = (_text.pad("方式", 14) + _text.pad("正しい", 8, right=True) + _text.pad("惜しい", 8, right=True) + _text.pad("違う", 6, right=True) + _text.pad("正答率", 8, right=True)
            + "".join(_text.pad(c, 15, right=True) for c in cats))
    lines = [head]
    for m, per in t.items():
        allc = per["all"]
        acc = accuracy(list(allc.elements()), partial_weight)
        cells = []
        for c in cats:
            n = sum(per[c].values())
            cell = f"{per[c]['correct']}/{n} {accuracy(list(per[c].elements()), partial_weight):4.0%}" if n else "-"
            cells.append(_text.pad(cell, 15, right=True))
        lines.append(_text.pad(m, 14) + _text.pad(str(allc["correct"]), 8, right=True) + _text.pad(str(allc["partial"]), 8, right=True)
                     + _text.pad(str(allc["wrong"]), 6, right=True) + _text.pad(f"{acc:.0%}", 8, right=True) + "".join(cells))
    return "\n".join(lines)


def by_method(graded: Iterable[Graded], partial_weight: float = 0.5) -> dict[str, dict[str, float]]:
    """Accuracy per method and category: ``r[method][category]``, with ``r[method]["all"]``."""
    return {m: {c: accuracy(list(cnt.elements()), partial_weight) for c, cnt in per.items()}
            for m, per in table(graded).items()}


def compare_levels(before: Iterable[Graded], after: Iterable[Graded], category: str | None = "contradiction") -> str:
    """A text table of how each question's level changed between two runs (per method).

    Rows are questions (of ``category``, or all when None), columns methods; a cell reads
    ``wrong`` when nothing changed and ``partial → correct`` when it did.
    """
    old = {(g.question.id, g.method): g for g in before}
    new = {(g.question.id, g.method): g for g in after}
    keys = [k for k in old if k in new and (category is None or old[k].question.category == category)]
    if not keys:
        raise ValueError("the two runs share no question of that category")
    methods = list(dict.fromkeys(m for _, m in keys))
    qids = list(dict.fromkeys(q for q, _ in keys))
    width = 22
    lines = [_text.pad("質問", 6) + "".join(_text.pad(m, width, right=True) for m in methods)]
    for q in qids:
        cells = []
        for m in methods:
            if (q, m) not in old or (q, m) not in new:
                cells.append(_text.pad("-", width, right=True))
                continue
            a, b = old[(q, m)].level, new[(q, m)].level
            cells.append(_text.pad(a if a == b else f"{a} → {b}", width, right=True))
        lines.append(f"{q:6s}" + "".join(cells))
    return "\n".join(lines)


def version_mixing(graded: Iterable[Graded], rules_dir=None) -> dict[str, dict[str, int]]:
    """For the contradiction questions, per method: how many requests carried a superseded
    version of the answer's regulation (``sent_old``), how many answers state a superseded
    fact (``quoted_old``), and how many were graded correct (``correct``), out of ``n``."""
    from ctxlab.corpus import RULES_DIR, by_file

    files = by_file(rules_dir or RULES_DIR)
    out: dict[str, dict[str, int]] = {}
    for g in graded:
        if g.question.category != "contradiction":
            continue
        row = out.setdefault(g.method, {"n": 0, "sent_old": 0, "quoted_old": 0, "correct": 0})
        old = {files[f].supersedes for f in g.question.gold_files if f in files and files[f].supersedes}
        row["n"] += 1
        row["sent_old"] += bool(old & set(g.files))
        row["quoted_old"] += bool(facts_found(g.answer, g.question.stale_facts))
        row["correct"] += g.level == "correct"
    return out


def format_version_mixing(runs: dict[str, Iterable[Graded]]) -> str:
    """:func:`version_mixing` of several runs (e.g. all versions / current only) as one table."""
    lines = [_text.pad("渡した文書", 16) + _text.pad("方式", 14) + _text.pad("旧版も渡した", 14, right=True)
             + _text.pad("旧版の値を答えた", 18, right=True) + _text.pad("正しい", 8, right=True)]
    for name, graded in runs.items():
        for m, r in version_mixing(graded).items():
            n = r["n"]
            lines.append(_text.pad(name, 16) + _text.pad(m, 14) + _text.pad(f"{r['sent_old']}/{n}", 14, right=True)
                         + _text.pad(f"{r['quoted_old']}/{n}", 18, right=True) + _text.pad(f"{r['correct']}/{n}", 8, right=True))
    return "\n".join(lines)


# ====================================================================== the harness
#
# Three ways of choosing what goes into the request (they differ only in who picks the
# documents), a folder whose files can change, and run(): every question through every
# method, graded automatically, with a progress bar and a budget check before online calls.

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
        import dataclasses

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
        from ctxlab.api.messages import SYSTEM_PROMPT, question_request

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


# ---------------------------------------------------------------- running


@dataclass(frozen=True)
class Planned:
    method: Method
    question: Question
    request: dict
    files: tuple[str, ...]


def plan(methods: Iterable[Method], questions: Iterable[Question], *, model: str | None = None,
         max_tokens: int = 700) -> list[Planned]:
    """Every request of a run, method by method (so a method's cache stays warm)."""
    from ctxlab.costs.pricing import DEFAULT_MODEL

    model = model or DEFAULT_MODEL
    questions = list(questions)
    out = []
    for m in methods:
        for q in questions:
            req, passages = m.request(q.question, model=model, max_tokens=max_tokens)
            out.append(Planned(m, q, req, tuple(dict.fromkeys(p.file for p in passages))))
    return out


def estimate_cost(planned: Iterable[Planned]) -> float:
    """Dollars a run would cost online: estimated tokens, output at ``max_tokens`` (an upper bound).

    A cached method reads its documents from the cache when it already sent the same
    documents earlier in the run (each entry is assumed to stay warm: a run takes minutes
    and every read refreshes the TTL), and writes them (5 minutes) otherwise; an uncached
    method pays the base rate. Offline the sandbox bills the same estimates.
    """
    from ctxlab.costs import pricing
    from ctxlab.api import tokens

    memo: dict[str, int] = {}

    def doc_tokens_of(block: dict) -> int:
        text = block["source"]["data"]
        n = memo.get(text)
        if n is None:
            n = memo[text] = estimate.estimate_blocks([{**block, "source": {**block["source"], "data": ""}}])[0] \
                + estimate.estimate_text(text)
        return n

    total = 0.0
    seen: dict[int, set] = defaultdict(set)
    for p in planned:
        content = p.request["messages"][0]["content"]
        docs = [b for b in content if b.get("type") == "document"]
        doc_tokens = sum(doc_tokens_of(b) for b in docs)
        rest_request = {**p.request, "messages": [{"role": "user",
                                                    "content": [b for b in content if b.get("type") != "document"]}]}
        rest = estimate.estimate_request(rest_request)
        key = tuple(b["source"]["data"] for b in docs)
        model = p.request["model"]
        out = p.request["max_tokens"]
        if not docs or p.method.cache_ttl is None:
            cost = pricing.call_cost(model, input_tokens=doc_tokens + rest, output_tokens=out)
        elif key in seen[id(p.method)]:
            cost = pricing.call_cost(model, input_tokens=rest, cache_read_tokens=doc_tokens, output_tokens=out)
        else:
            cost = pricing.call_cost(model, input_tokens=rest, cache_write_5m_tokens=doc_tokens, output_tokens=out)
        seen[id(p.method)].add(key)
        total += cost.total
    return total


def run(methods: Iterable[Method], questions: Iterable[Question], client, *, model: str | None = None,
        max_tokens: int = 700, progress: bool = True, what: str | None = None,
        over_budget: str = "sandbox") -> list[Graded]:
    """Ask every question with every method and grade each answer automatically.

    The requests are planned first and their cost estimated; :func:`ctxlab.api.budget.check`
    prints the estimate and, online, refuses a run that does not fit ``CTXLAB_BUDGET_USD``.
    Then (``over_budget="sandbox"``) the run goes to the offline sandbox instead, and says
    so; with ``over_budget="raise"`` the :class:`~ctxlab.api.budget.BudgetExceeded` propagates.
    A tqdm bar shows the progress. Returns one :class:`Graded` per (method, question).
    """
    from ctxlab.api import budget
    from ctxlab.costs import pricing
    from ctxlab.api.client import make_client
    from ctxlab.api.messages import answer_text

    if over_budget not in ("sandbox", "raise"):
        raise ValueError(f"over_budget must be 'sandbox' or 'raise', got {over_budget!r}")
    methods = list(methods)
    questions = list(questions)
    if not methods or not questions:
        raise ValueError("run() needs at least one method and one question")
    names = [m.name for m in methods]
    if len(set(names)) != len(names):
        raise ValueError(f"two methods share a name: {names}")
    model = model or pricing.DEFAULT_MODEL
    planned = plan(methods, questions, model=model, max_tokens=max_tokens)
    what = what or f"{len(questions)} 問 × {len(methods)} 方式（{len(planned)} 回の呼び出し）"
    try:
        budget.check(estimate_cost(planned), client, what)
    except budget.BudgetExceeded as exc:
        if over_budget == "raise":
            raise
        print(f"{exc}\n→ 代わりにオフラインの sandbox で実行します（結果は sandbox の抜粋回答です）。")
        client = make_client(offline=True)

    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(planned), desc="質問", unit="問")
    out = []
    try:
        for p in planned:
            if bar is not None:
                bar.set_postfix_str(p.method.name)
            msg = client.messages.create(**p.request)
            text = answer_text(msg)
            out.append(Graded(p.question, p.method.name, text, grade(text, p.question), p.files,
                              total_input(msg.usage), pricing.usage_cost(msg.usage, model).total))
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return out


def summary(graded: Iterable[Graded]) -> str:
    """Per method: calls, mean input tokens, total cost, and how often the gold files were all sent."""
    rows: dict[str, list[Graded]] = defaultdict(list)
    for g in graded:
        rows[g.method].append(g)
    lines = [_text.pad("方式", 14) + _text.pad("呼び出し", 10, right=True) + _text.pad("平均入力tok", 13, right=True) + _text.pad("料金計", 10, right=True)
             + _text.pad("正解ファイルを全部渡せた", 26, right=True)]
    for m, gs in rows.items():
        answerable = [g for g in gs if g.question.gold_files]
        covered = sum(all(f in g.files for f in g.question.gold_files) for g in answerable)
        mean_in = sum(g.input_tokens for g in gs) / len(gs)
        cover = f"{covered}/{len(answerable)}" if answerable else "-"
        lines.append(_text.pad(m, 14) + _text.pad(str(len(gs)), 10, right=True) + _text.pad(f"{mean_in:,.0f}", 13, right=True)
                     + _text.pad(f"${sum(g.cost_usd for g in gs):.3f}", 10, right=True) + _text.pad(cover, 26, right=True))
    return "\n".join(lines)


# ---------------------------------------------------------------- people and machines


@dataclass(frozen=True)
class Agreement:
    """How often a person's grades match the automatic ones."""

    n: int
    agree: int
    #: counts of (automatic level, human level)
    confusion: dict
    kappa: float | None

    @property
    def rate(self) -> float:
        return self.agree / self.n if self.n else 0.0

    def __str__(self) -> str:
        if not self.n:
            return "まだ 1 件も採点していません"
        k = "" if self.kappa is None else f"、κ = {self.kappa:.2f}"
        return f"{self.n} 件採点、自動採点と一致 {self.agree} 件（{self.rate:.0%}{k}）"


def agreement(graded: Iterable[Graded], human: dict) -> Agreement:
    """Compare automatic grades with ``human[(question_id, method)] = level`` (only graded ones).

    ``kappa`` is Cohen's kappa (agreement beyond chance; None when it is undefined).
    """
    pairs = []
    for g in graded:
        h = human.get((g.question.id, g.method))
        if h is None:
            continue
        if h not in LEVELS:
            raise ValueError(f"a human grade must be one of {LEVELS}, got {h!r}")
        pairs.append((g.level, h))
    confusion = Counter(pairs)
    n = len(pairs)
    agree = sum(1 for a, h in pairs if a == h)
    kappa = None
    if n:
        auto_c, human_c = Counter(a for a, _ in pairs), Counter(h for _, h in pairs)
        pe = sum(auto_c[lv] * human_c[lv] for lv in LEVELS) / (n * n)
        if pe < 1:
            kappa = (agree / n - pe) / (1 - pe)
    return Agreement(n, agree, dict(confusion), kappa)


# ---------------------------------------------------------------- plots


def plot_accuracy(graded: Iterable[Graded], ax=None, partial_weight: float = 0.5, title: str | None = None):
    """Bar chart: accuracy per category (and overall), one bar per method."""
    import matplotlib.pyplot as plt

    from ctxlab import plots  # noqa: F401  (Japanese font)

    acc = by_method(graded, partial_weight)
    cats = [c for c in CATEGORIES if any(c in per for per in acc.values())] + ["all"]
    names = {"single": "単一文書", "multi": "複数文書", "whole": "全体横断", "contradiction": "新旧の矛盾",
             "unanswerable": "記載なし", "all": "全体"}
    if ax is None:
        _, ax = plt.subplots(figsize=(7.2, 3.6))
    width = 0.8 / max(1, len(acc))
    for i, (m, per) in enumerate(acc.items()):
        xs = [j + (i - (len(acc) - 1) / 2) * width for j in range(len(cats))]
        ax.bar(xs, [per.get(c, 0) * 100 for c in cats], width, label=m)
    ax.set_xticks(range(len(cats)))
    ax.set_xticklabels([names.get(c, c) for c in cats])
    ax.set_ylabel("正答率 (%)（惜しい = 0.5）" if partial_weight == 0.5 else "正答率 (%)")
    ax.set_ylim(0, 105)
    ax.set_title(title or "方式ごと・質問の種類ごとの正答率", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    return ax


# ---------------------------------------------------------------- position sweep (online)


def place_at(gold, others: Iterable, position: int, n_docs: int) -> list:
    """``n_docs`` documents with ``gold`` at 1-based ``position`` and the first others around it."""
    others = [d for d in others if d is not gold]
    if not 1 <= position <= n_docs:
        raise ValueError(f"position must be between 1 and n_docs ({n_docs}), got {position!r}")
    if len(others) < n_docs - 1:
        raise ValueError(f"need {n_docs - 1} other documents, got {len(others)}")
    docs = others[: n_docs - 1]
    return docs[: position - 1] + [gold] + docs[position - 1:]


def position_sweep(questions: Iterable[Question], docs: Iterable, client, *, positions=(1, 5, 10),
                   n_docs: int = 10, model: str = "claude-haiku-4-5", max_tokens: int = 300,
                   progress: bool = True, allow_offline: bool = False) -> dict[int, list[Graded]] | None:
    """Ask single-file questions with the gold file moved through ``positions`` among ``n_docs`` files.

    Online only by default: the sandbox picks sentences by BM25 and ignores their position, so
    offline the sweep would draw a flat line that says nothing about a model; it prints why and
    returns None. Online the estimate goes through :func:`ctxlab.api.budget.check` first (it raises
    :class:`~ctxlab.api.budget.BudgetExceeded` when the run does not fit). Nothing is cached.
    """
    from ctxlab.api import budget, tokens
    from ctxlab.costs import pricing
    from ctxlab.api.client import is_offline
    from ctxlab.api.messages import answer_text, question_request

    if is_offline(client) and not allow_offline:
        print("オフラインなので位置の掃引は実行しません。sandbox の抜粋回答は BM25 で文を選び、文書の位置を"
              "見ないので、測っても平らな線になるだけです。ANTHROPIC_API_KEY を設定し、CTXLAB_BUDGET_USD で"
              "予算を決めてから、このセルを実行し直してください。")
        return None
    docs = list(docs)
    by_file = {d.file: d for d in docs}
    qs = [q for q in questions if q.category == "single" and len(q.gold_files) == 1 and q.gold_files[0] in by_file]
    if not qs:
        raise ValueError("no single-file question whose gold file is among the documents")
    jobs = []
    for pos in positions:
        for q in qs:
            gold = by_file[q.gold_files[0]]
            others = [d for d in docs if d.file != gold.file]
            req = question_request(place_at(gold, others, pos, n_docs), q.question, model=model,
                                   max_tokens=max_tokens, cache_ttl=None)
            jobs.append((pos, q, req))
    est = sum(pricing.call_cost(model, input_tokens=estimate.estimate_request(r), output_tokens=max_tokens).total
              for _, _, r in jobs)
    budget.check(est, client, f"位置の掃引（{len(qs)} 問 × {len(positions)} 位置、{n_docs} 文書）")
    it = jobs
    if progress:
        from tqdm.auto import tqdm

        it = tqdm(jobs, desc="位置", unit="問")
    out: dict[int, list[Graded]] = {p: [] for p in positions}
    for pos, q, req in it:
        msg = client.messages.create(**req)
        text = answer_text(msg)
        out[pos].append(Graded(q, f"position {pos}", text, grade(text, q), (q.gold_files[0],),
                               total_input(msg.usage), pricing.usage_cost(msg.usage, model).total))
    return out
