"""The corpus of 株式会社みなと計測: regulations with metadata, and the 30 field questions.

``data/rules/catalog.json`` lists every file with its department, document type, fiscal
year, version, effective date and the file it supersedes. :func:`load` returns current
versions (what a well-run document system would pass), :func:`load` with
``current_only=False`` every version (what an unmanaged folder holds). :func:`validate`
and :func:`validate_questions` check the data; :func:`scaled` builds larger corpora
deterministically for scaling experiments.
"""
from __future__ import annotations

import json
import random
import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from .docs import DocumentError

DATA = Path(__file__).resolve().parent.parent / "data"
RULES_DIR = DATA / "rules"
CATALOG = RULES_DIR / "catalog.json"
QUESTIONS = DATA / "eval" / "questions.jsonl"

DEPARTMENTS = {"hr": "人事", "fin": "経理", "it": "情報システム", "ga": "総務", "common": "全社共通"}
CATEGORIES = ("single", "multi", "whole", "contradiction", "unanswerable")
MIN_CHARS, MAX_CHARS = 1500, 12000


@dataclass(frozen=True)
class Doc:
    """One regulation file and its metadata."""

    file: str
    title: str
    dept: str
    doc_type: str
    fiscal_year: int
    version: int
    effective_date: str
    supersedes: str | None
    superseded_by: str | None
    text: str = field(repr=False)

    @property
    def current(self) -> bool:
        return self.superseded_by is None

    @property
    def chars(self) -> int:
        return len(self.text)

    @property
    def label(self) -> str:
        """Title with version and date, as a document block title."""
        return f"{self.title}（第{self.version}版・{self.effective_date} 施行）"


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    answer: str
    key_facts: tuple[str, ...]
    gold_files: tuple[str, ...]
    category: str
    #: for contradictions: facts of the superseded version; an answer that states them mixes versions
    stale_facts: tuple[str, ...] = ()


def _read_catalog(rules_dir: Path) -> dict:
    path = rules_dir / "catalog.json"
    if not path.exists():
        raise DocumentError(f"{path}: カタログがありません。data/rules/catalog.json を確かめてください。")
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _read_text(path: Path) -> str:
    if not path.exists():
        raise DocumentError(f"{path}: カタログにあるファイルがありません")
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DocumentError(f"{path}: UTF-8 ではありません (byte {exc.start}). UTF-8 で保存し直してください。") from None


@lru_cache(maxsize=4)
def _load_all(rules_dir: str) -> tuple[Doc, ...]:
    root = Path(rules_dir)
    entries = _read_catalog(root)["documents"]
    successor = {e["supersedes"]: e["file"] for e in entries if e.get("supersedes")}
    docs = []
    for e in entries:
        docs.append(Doc(
            file=e["file"], title=e["title"], dept=e["dept"], doc_type=e["doc_type"],
            fiscal_year=int(e["fiscal_year"]), version=int(e["version"]),
            effective_date=e["effective_date"], supersedes=e.get("supersedes"),
            superseded_by=successor.get(e["file"]), text=_read_text(root / e["file"]),
        ))
    return tuple(docs)


def load(current_only: bool = True, rules_dir: str | Path = RULES_DIR) -> list[Doc]:
    """The regulations: current versions only (default) or every version."""
    docs = _load_all(str(Path(rules_dir).resolve()))
    return [d for d in docs if d.current or not current_only]


def by_file(rules_dir: str | Path = RULES_DIR) -> dict[str, Doc]:
    return {d.file: d for d in load(current_only=False, rules_dir=rules_dir)}


def company(rules_dir: str | Path = RULES_DIR) -> str:
    return _read_catalog(Path(rules_dir))["company"]


def revised_pairs(rules_dir: str | Path = RULES_DIR) -> list[tuple[Doc, Doc]]:
    """(old, new) pairs of regulations that exist in two versions."""
    docs = by_file(rules_dir)
    return [(docs[d.supersedes], d) for d in docs.values() if d.supersedes]


def total_chars(docs) -> int:
    return sum(d.chars for d in docs)


def validate(rules_dir: str | Path = RULES_DIR) -> list[str]:
    """Problems with the corpus (empty list when it is sound)."""
    root = Path(rules_dir)
    problems = []
    entries = _read_catalog(root)["documents"]
    files = [e["file"] for e in entries]
    if len(set(files)) != len(files):
        problems.append("catalog lists a file twice")
    listed = set(files)
    on_disk = {p.name for p in root.glob("*.txt")}
    for extra in sorted(on_disk - listed):
        problems.append(f"{extra}: on disk but not in catalog.json")
    required = {"file", "title", "dept", "doc_type", "fiscal_year", "version", "effective_date", "supersedes"}
    for e in entries:
        missing = required - set(e)
        if missing:
            problems.append(f"{e.get('file')}: catalog entry lacks {sorted(missing)}")
        if e.get("dept") not in DEPARTMENTS:
            problems.append(f"{e.get('file')}: unknown department {e.get('dept')!r}")
        sup = e.get("supersedes")
        if sup is not None and sup not in listed:
            problems.append(f"{e['file']}: supersedes {sup}, which is not in the catalog")
        if sup is not None and sup in listed:
            old = next(x for x in entries if x["file"] == sup)
            if old["effective_date"] >= e["effective_date"]:
                problems.append(f"{e['file']}: supersedes {sup} but is not newer")
        path = root / e["file"]
        if not path.exists():
            problems.append(f"{e['file']}: listed in catalog.json but missing")
            continue
        raw = path.read_bytes()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            problems.append(f"{e['file']}: not UTF-8")
            continue
        if text.startswith("\ufeff"):
            problems.append(f"{e['file']}: starts with a BOM")
        if not unicodedata.is_normalized("NFC", text):
            problems.append(f"{e['file']}: not NFC")
        if not MIN_CHARS <= len(text) <= MAX_CHARS:
            problems.append(f"{e['file']}: {len(text)} characters, outside {MIN_CHARS}..{MAX_CHARS}")
        first = text.split("\n", 1)[0].strip()
        if e.get("title") and e["title"] not in first:
            problems.append(f"{e['file']}: first line {first!r} is not the title {e['title']!r}")
    return problems


def questions(path: str | Path = QUESTIONS) -> list[Question]:
    """The field questions (data/eval/questions.jsonl)."""
    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                q = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DocumentError(f"{path}:{n}: JSON として読めません ({exc.msg})") from None
            out.append(Question(q["id"], q["question"], q["answer"], tuple(q["key_facts"]),
                                tuple(q["gold_files"]), q["category"], tuple(q.get("stale_facts", ()))))
    return out


def validate_questions(path: str | Path = QUESTIONS, rules_dir: str | Path = RULES_DIR) -> list[str]:
    docs = by_file(rules_dir)
    problems = []
    qs = questions(path)
    ids = [q.id for q in qs]
    if len(set(ids)) != len(ids):
        problems.append("duplicate question ids")
    for q in qs:
        if q.category not in CATEGORIES:
            problems.append(f"{q.id}: unknown category {q.category!r}")
        if not q.question.strip() or not q.answer.strip():
            problems.append(f"{q.id}: empty question or answer")
        if q.category == "unanswerable":
            if q.gold_files:
                problems.append(f"{q.id}: an unanswerable question has no gold files")
            continue
        if not q.key_facts:
            problems.append(f"{q.id}: no key facts")
        for g in q.gold_files:
            if g not in docs:
                problems.append(f"{q.id}: gold file {g} does not exist")
        if q.category == "contradiction":
            if not any(docs[g].current for g in q.gold_files if g in docs):
                problems.append(f"{q.id}: a contradiction question needs the current version as a gold file")
            old_text = "".join(docs[docs[g].supersedes].text for g in q.gold_files
                               if g in docs and docs[g].supersedes)
            if not q.stale_facts:
                problems.append(f"{q.id}: a contradiction question lists the superseded facts (stale_facts)")
            for fact in q.stale_facts:
                if fact not in old_text:
                    problems.append(f"{q.id}: stale fact {fact!r} is not in the superseded version")
        gold_text = "".join(docs[g].text for g in q.gold_files if g in docs)
        for fact in q.key_facts:
            if fact not in gold_text:
                problems.append(f"{q.id}: key fact {fact!r} appears in no gold file")
    return problems


_ARTICLE = re.compile(r"(?m)^(第[0-9０-９一二三四五六七八九十百]+条)")


def scaled(factor: int, seed: int = 0, rules_dir: str | Path = RULES_DIR) -> list[tuple[str, str]]:
    """A larger corpus, ``factor`` times the current regulations, as (name, text) pairs.

    Each copy is the regulation set of one more fictional site (事業所), with its articles
    reordered by a seeded shuffle inside each document, so copies are not byte-identical and
    retrieval has to tell them apart. Deterministic for a given ``factor`` and ``seed``;
    generated on demand, never committed.
    """
    if not isinstance(factor, int) or factor < 1:
        raise ValueError(f"factor must be an integer >= 1, got {factor!r}")
    docs = load(rules_dir=rules_dir)
    rng = random.Random(seed)
    out = []
    for i in range(factor):
        site = "本社" if i == 0 else f"第{i}事業所"
        for d in docs:
            if i == 0:
                out.append((d.file, d.text))
                continue
            head, *parts = _ARTICLE.split(d.text)
            articles = ["".join(parts[j:j + 2]) for j in range(0, len(parts), 2)]
            rng.shuffle(articles)
            text = f"{site}版 " + head + "".join(articles)
            out.append((f"site{i:03d}_{d.file}", text))
    return out
