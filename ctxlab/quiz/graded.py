"""Lesson 09's graded knowledge check: its hidden tests, the feedback they print, and the search for a leaked key.

The graded bank (quizzes/knowledge_check.yaml) holds questions and choices only; the key,
the notes and the explanations are in the instructor's key file
(:data:`ctxlab.quiz.INSTRUCTOR_KEY`). Lesson 09's source notebook carries one test cell per
question, written by :func:`hidden_test`: its visible part checks the form of ``answers``,
its hidden part prints :func:`feedback_text` (every choice's note and the explanation, so
they reach the learner in nbgrader's feedback after grading) and then compares the answer.

The comparison is ``"X".__eq__(answers["qN"]) is True`` (X the correct choice): ``str.__eq__`` of the literal
compares characters and returns NotImplemented for anything that is not a ``str``, so an
object whose ``__eq__`` always says True, or a ``str`` subclass that lies, earns nothing.

:func:`key_leaks` searches files for every form in which a correct choice could be
recovered: the salt (with it, each choice's hash can be tried), the stored hashes, a
mapping from a question id to its correct choice id, the notes and the explanations.
``ctxlab release --graded`` runs it on what it wrote, and the tests run it on the
installed package.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Iterable

from ctxlab.quiz.bank import Bank, Question

#: files a search reads as text (the rest are images, databases, compiled code)
TEXT_SUFFIXES = {".py", ".ipynb", ".yaml", ".yml", ".json", ".jsonl", ".txt", ".md", ".csv", ".tsv", ".html", ".cfg",
                 ".toml", ".ini", ""}


def feedback_text(q: Question) -> str:
    """What the learner reads after grading: the right choice, every choice with its note, the explanation."""
    right = q.correct_id()
    lines = [f"{q.id}（{q.lesson}）{q.topic}", f"正解: {right}", ""]
    for c in q.choices:
        mark = "（正解）" if c.id == right else ""
        lines += [f"{c.id}) {c.text}{mark}", f"   {c.note}"]
    lines += ["", "なぜ: " + " ".join(q.explanation.split())]
    return "\n".join(lines)


def hidden_test(q: Question) -> str:
    """The source of lesson 09's test cell for ``q`` (its form check, then the hidden feedback and grade)."""
    right = json.dumps(q.correct_id())
    return (f"# {q.id}（{q.lesson}）: 答えの形を確かめる\n"
            "from ctxlab.quiz import check_answers, load\n"
            f"check_answers(load(), answers, only={json.dumps(q.id)})\n"
            "### BEGIN HIDDEN TESTS\n"
            f"print({json.dumps(feedback_text(q), ensure_ascii=False)})\n"
            f"assert {right}.__eq__(answers[{json.dumps(q.id)}]) is True, "
            f"{json.dumps(q.id + ' の答えが違います（解説は上）', ensure_ascii=False)}\n"
            "### END HIDDEN TESTS")


def _patterns(q: Question) -> list[tuple[str, re.Pattern]]:
    qid, cid = re.escape(q.id), re.escape(q.correct_id())
    plain = [
        rf"""\b{qid}\b["']?\s*[:=]\s*["']?{cid}(?![\w-])""",                 # qN: X / "qN": "X" / qN = "X"
        rf"""\b{qid}\b["']?\s*\]\s*==\s*["']{cid}["']""",                  # answers["qN"] == "X"
        rf"""["']{cid}["']\s*(?:==|\.__eq__\()\s*\w+\[\s*["']{qid}["']""",  # "X" == answers["qN"]
    ]
    out = [(f"{q.id}: the salt of its key", re.compile(re.escape(q.salt))),
           (f"{q.id}: its stored key (hash)", re.compile(re.escape(q.key)))]
    out += [(f"{q.id}: its correct choice id in plain text", re.compile(p)) for p in plain]
    texts = [q.explanation.split("\n")[0]] + [c.note for c in q.choices]
    out += [(f"{q.id}: a note or its explanation", re.compile(re.escape(t.strip()[:30]))) for t in texts if t.strip()]
    return out


def _files(paths: Iterable[Path]) -> Iterable[Path]:
    for root in paths:
        root = Path(root)
        found = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for p in found:
            if p.suffix.lower() in TEXT_SUFFIXES and "__pycache__" not in p.parts:
                yield p


def key_leaks(paths: Iterable[str | Path], bank: Bank) -> list[str]:
    """Every place under ``paths`` where a correct choice of ``bank`` (with its key) can be recovered."""
    patterns = [pat for q in bank for pat in _patterns(q)]
    out = []
    for path in _files(paths):
        text = path.read_text(encoding="utf-8", errors="ignore")
        text = text + "\n" + text.replace('\\"', '"')   # a notebook's JSON escapes the quotes of its sources
        out += [f"{path}: {what}" for what, pattern in patterns if pattern.search(text)]
    return list(dict.fromkeys(out))
