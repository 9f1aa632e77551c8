"""Question banks (quizzes/*.yaml): load, validate, shuffle, check answers, score.

A bank is a YAML file with an ``id``, a ``title``, a ``salt`` and a list of questions.
Every question has an ``id``, the ``lesson`` it checks, a ``topic``, the ``question``
(Japanese), 3-5 ``choices`` (each with an ``id``, a ``text`` and a ``note`` that says why
that choice does or does not hold), an ``explanation`` and a ``key``.

The ``key`` is not the id of the correct choice but :func:`key_hash` of (salt, question
id, correct choice id). A notebook that shows a question therefore never carries the
answer in plain text, and every choice carries a note, so the shape of the file does not
give the answer away either. This keeps the key out of sight, not secret: with 3-5
choices anyone can try them all (the quiz widget gives feedback anyway). What grades a
learner is the hidden tests of the nbgrader source notebook and the written "why".

To author a key: ``python -m ctxlab.quiz key BANK QUESTION CHOICE`` prints the hash;
``python -m ctxlab.quiz check`` validates every bank in quizzes/.
"""
from __future__ import annotations

import hashlib
import random
import re
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Mapping

import yaml

from ctxlab._paths import QUIZZES_DIR
from ctxlab.errors import QuizError

QUIZZES = QUIZZES_DIR
KNOWLEDGE_CHECK = "knowledge_check"

#: The course's lessons, in order: the ids a question may name as the lesson it checks.
LESSONS = (
    "00_start_here", "01_count_tokens", "02_pricing", "03_prompt_caching", "04_ttl", "05_crossover",
    "06_metadata_filtering", "07_citations", "08_measure", "09_knowledge_check", "10_rag_lab",
)
MIN_CHOICES, MAX_CHOICES = 3, 5
_QID = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
_CID = re.compile(r"^[a-e]$")


def key_hash(salt: str, question_id: str, choice_id: str) -> str:
    """The stored form of "choice_id is the answer to question_id" (16 hex digits of SHA-256)."""
    data = f"{salt}\x1f{question_id}\x1f{choice_id}".encode("utf-8")
    return hashlib.sha256(data).hexdigest()[:16]


@dataclass(frozen=True)
class Choice:
    id: str
    text: str
    note: str


@dataclass(frozen=True)
class Question:
    """One multiple-choice question. ``choices`` are in authored order; see :meth:`shuffled`."""

    id: str
    lesson: str
    topic: str
    text: str
    choices: tuple[Choice, ...]
    explanation: str
    key: str = field(repr=False)
    salt: str = field(repr=False)

    @property
    def choice_ids(self) -> tuple[str, ...]:
        return tuple(c.id for c in self.choices)

    def choice(self, choice_id: str) -> Choice:
        for c in self.choices:
            if c.id == choice_id:
                return c
        raise KeyError(f"question {self.id} has no choice {choice_id!r} (choices: {', '.join(self.choice_ids)})")

    def is_correct(self, choice_id: str) -> bool:
        """Whether ``choice_id`` is the answer (checked against the stored hash)."""
        return isinstance(choice_id, str) and key_hash(self.salt, self.id, choice_id) == self.key

    def correct_id(self) -> str:
        """The id of the correct choice (for the widget's feedback, tests and instructors)."""
        matches = [c.id for c in self.choices if self.is_correct(c.id)]
        if len(matches) != 1:
            raise QuizError(f"question {self.id}: the key matches {len(matches)} choices, not exactly one")
        return matches[0]

    def shuffled(self) -> tuple[Choice, ...]:
        """The choices in display order: shuffled with a seed derived from the question id.

        The order is the same on every run and every machine (it does not depend on
        PYTHONHASHSEED), and never the authored order: if the shuffle happens to return
        it, the order is rotated by one, so the correct choice is not always where the
        author put it.
        """
        seed = int.from_bytes(hashlib.sha256(f"shuffle\x1f{self.id}".encode("utf-8")).digest()[:8], "big")
        order = list(self.choices)
        random.Random(seed).shuffle(order)
        if order == list(self.choices):
            order = order[1:] + order[:1]
        return tuple(order)


@dataclass(frozen=True)
class Bank:
    id: str
    title: str
    questions: tuple[Question, ...]

    def __len__(self) -> int:
        return len(self.questions)

    def __iter__(self):
        return iter(self.questions)

    def question(self, question_id: str) -> Question:
        for q in self.questions:
            if q.id == question_id:
                return q
        raise KeyError(f"bank {self.id} has no question {question_id!r}")

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(q.id for q in self.questions)


# ------------------------------------------------------------------ loading and validation

def _text(value) -> str:
    return value.strip() if isinstance(value, str) else ""


def problems(raw: Mapping) -> list[str]:
    """Every problem of a bank as parsed from YAML (an empty list means the bank is usable)."""
    out: list[str] = []
    if not isinstance(raw, Mapping):
        return ["the bank must be a mapping with id, title, salt and questions"]
    for name in ("id", "title", "salt"):
        if not _text(raw.get(name)):
            out.append(f"the bank needs a non-empty {name!r}")
    questions = raw.get("questions")
    if not isinstance(questions, list) or not questions:
        return out + ["the bank needs a non-empty list 'questions'"]
    salt = _text(raw.get("salt"))
    seen: set[str] = set()
    for n, q in enumerate(questions, 1):
        if not isinstance(q, Mapping):
            out.append(f"question #{n} is not a mapping")
            continue
        qid = q.get("id")
        where = f"question {qid!r}" if qid else f"question #{n}"
        if not isinstance(qid, str) or not _QID.match(qid):
            out.append(f"{where}: id must be lower-case letters, digits, '_' or '-'")
        elif qid in seen:
            out.append(f"{where}: duplicate id")
        seen.add(qid)
        if q.get("lesson") not in LESSONS:
            out.append(f"{where}: lesson {q.get('lesson')!r} is not one of {', '.join(LESSONS)}")
        for name in ("topic", "question", "explanation"):
            if not _text(q.get(name)):
                out.append(f"{where}: needs a non-empty {name!r}")
        choices = q.get("choices")
        if not isinstance(choices, list) or not MIN_CHOICES <= len(choices) <= MAX_CHOICES:
            out.append(f"{where}: needs {MIN_CHOICES} to {MAX_CHOICES} choices")
            continue
        cids = []
        for c in choices:
            if not isinstance(c, Mapping):
                out.append(f"{where}: a choice is not a mapping")
                continue
            cid = c.get("id")
            if not isinstance(cid, str) or not _CID.match(cid):
                out.append(f"{where}: choice id {cid!r} must be one letter a-e")
            elif cid in cids:
                out.append(f"{where}: duplicate choice id {cid!r}")
            cids.append(cid)
            if not _text(c.get("text")):
                out.append(f"{where}, choice {cid!r}: needs a non-empty 'text'")
            # Every choice has a note: a missing note on one choice would point at the answer.
            if not _text(c.get("note")):
                out.append(f"{where}, choice {cid!r}: needs a non-empty 'note'")
        if "correct" in q or any(isinstance(c, Mapping) and "correct" in c for c in choices):
            out.append(f"{where}: store the answer as 'key' (ctxlab.quiz.key_hash), never as 'correct'")
        key = q.get("key")
        if not isinstance(key, str) or not key:
            out.append(f"{where}: needs a 'key' (python -m ctxlab.quiz key BANK QUESTION CHOICE)")
        elif isinstance(qid, str):
            hits = [cid for cid in cids if isinstance(cid, str) and key_hash(salt, qid, cid) == key]
            if len(hits) != 1:
                out.append(f"{where}: the key matches {len(hits)} choices, exactly one must be correct")
    return out


def _question(q: Mapping, salt: str) -> Question:
    return Question(
        id=q["id"], lesson=q["lesson"], topic=_text(q["topic"]), text=_text(q["question"]),
        choices=tuple(Choice(c["id"], _text(c["text"]), _text(c["note"])) for c in q["choices"]),
        explanation=_text(q["explanation"]), key=q["key"], salt=salt,
    )


def bank_path(name: str | Path) -> Path:
    """``knowledge_check`` -> quizzes/knowledge_check.yaml; a path is returned as is."""
    p = Path(name)
    if p.suffix in (".yaml", ".yml") or p.parent != Path("."):
        return p
    return QUIZZES / f"{name}.yaml"


def load(name: str | Path = KNOWLEDGE_CHECK) -> Bank:
    """Load and validate a bank; raise :class:`QuizError` listing every problem."""
    path = bank_path(name)
    if not path.exists():
        raise QuizError(f"no question bank at {path}")
    return _load_cached(str(path.resolve()), path.stat().st_mtime_ns)


@lru_cache(maxsize=16)
def _load_cached(path: str, _mtime: int) -> Bank:
    with open(path, encoding="utf-8") as f:
        raw = yaml.safe_load(f)
    found = problems(raw)
    if found:
        raise QuizError(f"{path}:\n  - " + "\n  - ".join(found))
    salt = _text(raw["salt"])
    return Bank(id=_text(raw["id"]), title=_text(raw["title"]),
                questions=tuple(_question(q, salt) for q in raw["questions"]))


def banks(folder: str | Path = QUIZZES) -> list[Bank]:
    """Every bank in ``folder`` (sorted by file name)."""
    return [load(p) for p in sorted(Path(folder).glob("*.yaml"))]


def quiz_for(lesson_id: str, folder: str | Path = QUIZZES) -> Bank:
    """The questions of every bank in ``folder`` that check ``lesson_id``, as one bank.

    Lessons 00-08 can end with a few check questions from the same mechanism as the
    knowledge check: ``Quiz(quiz.quiz_for("03_prompt_caching"))``.
    """
    if lesson_id not in LESSONS:
        raise QuizError(f"unknown lesson {lesson_id!r}; lessons: {', '.join(LESSONS)}")
    picked: "OrderedDict[str, Question]" = OrderedDict()
    for bank in banks(folder):
        for q in bank:
            if q.lesson == lesson_id and q.id not in picked:
                picked[q.id] = q
    return Bank(id=f"check_{lesson_id}", title=f"{lesson_id} の確認問題", questions=tuple(picked.values()))


# ------------------------------------------------------------------ answers and scores

def answer_problems(bank: Bank, answers) -> list[str]:
    """What is wrong with the *form* of ``answers`` (question id -> choice id), in Japanese.

    Says nothing about which answers are right; an empty list means every question of
    the bank has exactly one valid choice id.
    """
    if not isinstance(answers, Mapping):
        return [f"answers は辞書（問題 id → 選択肢 id）にしてください。いまは {type(answers).__name__} です"]
    out = []
    missing = [qid for qid in bank.ids if qid not in answers]
    if missing:
        out.append(f"答えのない問題があります: {', '.join(missing)}（{len(bank)} 問すべてに答えてください）")
    extra = [str(k) for k in answers if k not in bank.ids]
    if extra:
        out.append(f"この問題集にない id があります: {', '.join(extra)}（id は {', '.join(bank.ids)}）")
    for q in bank:
        if q.id in answers and answers[q.id] not in q.choice_ids:
            out.append(f"{q.id} の答え {answers[q.id]!r} は選択肢の id ではありません（{', '.join(sorted(q.choice_ids))} のどれか）")
    return out


def check_answers(bank: Bank, answers) -> None:
    """Assert the form of ``answers`` (for visible tests): AssertionError with a helpful message."""
    found = answer_problems(bank, answers)
    if found:
        raise AssertionError("\n".join(found))


@dataclass(frozen=True)
class Score:
    """The result of a set of answers against a bank."""

    correct: tuple[str, ...]
    wrong: tuple[str, ...]
    unanswered: tuple[str, ...]
    by_lesson: dict[str, tuple[int, int]]   # lesson -> (correct, questions)

    @property
    def points(self) -> int:
        return len(self.correct)

    @property
    def total(self) -> int:
        return len(self.correct) + len(self.wrong) + len(self.unanswered)

    def __str__(self) -> str:
        text = f"{self.total} 問中 {self.points} 問正解"
        if self.unanswered:
            text += f"（未回答 {len(self.unanswered)} 問）"
        return text


def score(bank: Bank, answers: Mapping | None) -> Score:
    """Score ``answers`` (question id -> choice id); an answer that is not a choice id is wrong."""
    answers = answers or {}
    correct, wrong, unanswered = [], [], []
    by_lesson: dict[str, list[int]] = {}
    for q in bank:
        tally = by_lesson.setdefault(q.lesson, [0, 0])
        tally[1] += 1
        if q.id not in answers or answers[q.id] is None:
            unanswered.append(q.id)
        elif q.is_correct(answers[q.id]):
            correct.append(q.id)
            tally[0] += 1
        else:
            wrong.append(q.id)
    return Score(tuple(correct), tuple(wrong), tuple(unanswered),
                 {k: (v[0], v[1]) for k, v in by_lesson.items()})


def plot_by_lesson(bank: Bank, answers: Mapping | None, ax=None):
    """Horizontal bars: for each lesson the bank checks, questions answered right and not."""
    import matplotlib.pyplot as plt

    from ctxlab import plots  # noqa: F401  (Japanese font)

    s = score(bank, answers)
    lessons = [lesson for lesson in LESSONS if lesson in s.by_lesson]
    right = [s.by_lesson[lesson][0] for lesson in lessons]
    rest = [s.by_lesson[lesson][1] - s.by_lesson[lesson][0] for lesson in lessons]
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 0.45 * len(lessons) + 1.2))
    y = range(len(lessons))
    ax.barh(y, right, color="#4c9f70", label="正解")
    ax.barh(y, rest, left=right, color="#e8a0a0", label="不正解・未回答（見直す節）")
    ax.set_yticks(list(y), lessons)
    ax.invert_yaxis()
    most = max(s.by_lesson[lesson][1] for lesson in lessons)
    ax.set_xlabel("問題数")
    ax.set_xticks(range(0, most + 1))
    ax.set_xlim(0, most + 0.1)
    ax.set_title(f"{bank.title}: {s}", fontsize=10)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)
    return ax


# ------------------------------------------------------------------ command line

def main(argv: list[str] | None = None) -> int:
    """python -m ctxlab.quiz check | key BANK QUESTION CHOICE"""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m ctxlab.quiz", description="Validate question banks, author keys.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("check", help="validate every bank in quizzes/")
    k = sub.add_parser("key", help="print the key of a correct choice")
    k.add_argument("bank")
    k.add_argument("question")
    k.add_argument("choice")
    args = ap.parse_args(argv)
    if args.cmd == "key":
        with open(bank_path(args.bank), encoding="utf-8") as f:
            salt = _text((yaml.safe_load(f) or {}).get("salt"))
        if not salt:
            print(f"{args.bank}: the bank needs a salt first")
            return 1
        print(key_hash(salt, args.question, args.choice))
        return 0
    ok = True
    for path in sorted(QUIZZES.glob("*.yaml")):
        try:
            b = load(path)
            print(f"{path.name}: {len(b)} questions OK")
        except QuizError as e:
            ok = False
            print(e)
    return 0 if ok else 1


if __name__ == "__main__":  # pragma: no cover
    import sys

    sys.exit(main())
