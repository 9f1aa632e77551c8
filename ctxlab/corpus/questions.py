"""The 30 field questions of the corpus (``data/eval/questions.jsonl``) and their checks.

Each question has a gold answer, the key facts an answer must state, the files that hold
them and a category. Contradiction questions also list the stale facts of the superseded
version, so an answer that states them can be caught mixing versions.
"""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import pydantic
import pydantic.dataclasses

from ctxlab._paths import DATA_DIR
from ctxlab._schema import STRICT, load_jsonl
from ctxlab.corpus.rules import RULES_DIR, by_file

QUESTIONS = DATA_DIR / "eval" / "questions.jsonl"
CATEGORIES = ("single", "multi", "whole", "contradiction", "unanswerable")
#: the categories' Japanese names, the one set every lesson's tables and figures use
CATEGORY_JA = {"single": "単一ファイル", "multi": "複数ファイル", "whole": "規程全体",
               "contradiction": "新旧の矛盾", "unanswerable": "記載なし"}


@pydantic.dataclasses.dataclass(frozen=True, config=STRICT)
class Question:
    """One field question (a line of questions.jsonl)."""

    id: Annotated[str, pydantic.Field(min_length=1)]
    question: str
    answer: str
    key_facts: tuple[str, ...]
    gold_files: tuple[str, ...]
    category: Literal["single", "multi", "whole", "contradiction", "unanswerable"]
    #: for contradictions: facts of the superseded version; an answer that states them mixes versions
    stale_facts: tuple[str, ...] = ()


def questions(path: str | Path = QUESTIONS) -> list[Question]:
    """The field questions; a broken file raises SchemaError listing every problem (line and field)."""
    return load_jsonl(Path(path), Question)


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


