"""The regulations of 株式会社みなと計測 and their catalog (``data/rules/catalog.json``).

``data/rules/catalog.json`` lists every file with its department, document type, fiscal
year, version, effective date and the file it supersedes. :func:`load` returns current
versions (what a well-run document system would pass), :func:`load` with
``current_only=False`` every version (what an unmanaged folder holds). The catalog is read
against a pydantic schema; :func:`validate` checks what a schema cannot (files on disk,
versions, sizes). :func:`scaled` builds larger corpora deterministically for scaling
experiments.
"""
from __future__ import annotations

import random
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Literal

import pydantic

from ctxlab import _text
from ctxlab._paths import DATA_DIR
from ctxlab._schema import Strict, load_json
from ctxlab.errors import DocumentError

RULES_DIR = DATA_DIR / "rules"
CATALOG = RULES_DIR / "catalog.json"

DEPARTMENTS = {"hr": "人事", "fin": "経理", "it": "情報システム", "ga": "総務", "common": "全社共通"}
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


class CatalogEntry(Strict):
    """One file of the catalog."""

    file: str = pydantic.Field(pattern=r"^[a-z0-9_]+\.txt$")
    title: str = pydantic.Field(min_length=1)
    dept: Literal["hr", "fin", "it", "ga", "common"]
    doc_type: str
    fiscal_year: int = pydantic.Field(ge=1990, le=2100)
    version: int = pydantic.Field(ge=1)
    effective_date: str = pydantic.Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    supersedes: str | None


class Catalog(Strict):
    """``data/rules/catalog.json``: the company and its documents."""

    company: str
    documents: tuple[CatalogEntry, ...]


def _read_catalog(rules_dir: Path) -> Catalog:
    path = rules_dir / "catalog.json"
    if not path.exists():
        raise DocumentError(f"{path}: カタログがありません。data/rules/catalog.json を確かめてください。")
    return load_json(path, Catalog)


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
    entries = _read_catalog(root).documents
    successor = {e.supersedes: e.file for e in entries if e.supersedes}
    docs = []
    for e in entries:
        docs.append(Doc(**e.model_dump(), superseded_by=successor.get(e.file), text=_read_text(root / e.file)))
    return tuple(docs)


def load(current_only: bool = True, rules_dir: str | Path = RULES_DIR) -> list[Doc]:
    """The regulations: current versions only (default) or every version."""
    docs = _load_all(str(Path(rules_dir).resolve()))
    return [d for d in docs if d.current or not current_only]


def by_file(rules_dir: str | Path = RULES_DIR) -> dict[str, Doc]:
    return {d.file: d for d in load(current_only=False, rules_dir=rules_dir)}


def company(rules_dir: str | Path = RULES_DIR) -> str:
    return _read_catalog(Path(rules_dir)).company


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
    entries = _read_catalog(root).documents
    files = [e.file for e in entries]
    if len(set(files)) != len(files):
        problems.append("catalog lists a file twice")
    listed = set(files)
    on_disk = {p.name for p in root.glob("*.txt")}
    for extra in sorted(on_disk - listed):
        problems.append(f"{extra}: on disk but not in catalog.json")
    by_name = {e.file: e for e in entries}
    for e in entries:
        sup = e.supersedes
        if sup is not None and sup not in listed:
            problems.append(f"{e.file}: supersedes {sup}, which is not in the catalog")
        if sup is not None and sup in listed and by_name[sup].effective_date >= e.effective_date:
            problems.append(f"{e.file}: supersedes {sup} but is not newer")
        path = root / e.file
        if not path.exists():
            problems.append(f"{e.file}: listed in catalog.json but missing")
            continue
        raw = path.read_bytes()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            problems.append(f"{e.file}: not UTF-8")
            continue
        if text.startswith("\ufeff"):
            problems.append(f"{e.file}: starts with a BOM")
        if not unicodedata.is_normalized("NFC", text):
            problems.append(f"{e.file}: not NFC")
        if not MIN_CHARS <= len(text) <= MAX_CHARS:
            problems.append(f"{e.file}: {len(text)} characters, outside {MIN_CHARS}..{MAX_CHARS}")
        first = text.split("\n", 1)[0].strip()
        if e.title not in first:
            problems.append(f"{e.file}: first line {first!r} is not the title {e.title!r}")
    return problems




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
            head, *parts = _text.ARTICLE_SPLIT.split(d.text)
            articles = ["".join(parts[j:j + 2]) for j in range(0, len(parts), 2)]
            rng.shuffle(articles)
            text = f"{site}版 " + head + "".join(articles)
            out.append((f"site{i:03d}_{d.file}", text))
    return out
