"""Question banks (quizzes/*.yaml): their schema, loading, keys and the shuffled order of choices.

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

To author a key: ``ctxlab quiz key BANK QUESTION CHOICE`` prints the hash;
``ctxlab quiz check`` validates every bank in quizzes/. Scoring is in :mod:`ctxlab.quiz.scoring`.
"""
from __future__ import annotations

import hashlib
import random
import re
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal, Mapping

import pydantic
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


# ------------------------------------------------------------------ the file's schema

def _nonempty(what: str):
    def check(v):
        if not isinstance(v, str) or not v.strip():
            raise ValueError(f"needs a non-empty {what!r}")
        return v.strip()
    return pydantic.BeforeValidator(check)


class _Choice(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")

    id: Annotated[str, pydantic.Field(pattern=_CID.pattern)]
    text: Annotated[str, _nonempty("text")]
    # Every choice has a note: a missing note on one choice would point at the answer.
    note: Annotated[str, _nonempty("note")]


class _Question(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")

    id: Annotated[str, pydantic.Field(pattern=_QID.pattern)]
    lesson: Literal[LESSONS]  # type: ignore[valid-type]
    topic: Annotated[str, _nonempty("topic")]
    question: Annotated[str, _nonempty("question")]
    choices: Annotated[list[_Choice], pydantic.Field(min_length=MIN_CHOICES, max_length=MAX_CHOICES)]
    explanation: Annotated[str, _nonempty("explanation")]
    key: Annotated[str, pydantic.Field(min_length=1)]


class _BankFile(pydantic.BaseModel):
    """A bank file (quizzes/*.yaml) as authored."""

    model_config = pydantic.ConfigDict(extra="forbid")

    id: Annotated[str, _nonempty("id")]
    title: Annotated[str, _nonempty("title")]
    salt: Annotated[str, _nonempty("salt")]
    questions: Annotated[list[_Question], pydantic.Field(min_length=1)]


def _where(raw: Mapping, loc: tuple) -> str:
    """'question 'q3', choice 'b'' for a pydantic location such as ('questions', 2, 'choices', 1, 'note')."""
    out = []
    qs = raw.get("questions") if isinstance(raw, Mapping) else None
    if len(loc) >= 2 and loc[0] == "questions" and isinstance(loc[1], int):
        q = qs[loc[1]] if isinstance(qs, list) and loc[1] < len(qs) else None
        qid = q.get("id") if isinstance(q, Mapping) else None
        out.append(f"question {qid!r}" if qid else f"question #{loc[1] + 1}")
        if len(loc) >= 4 and loc[2] == "choices" and isinstance(loc[3], int):
            cs = q.get("choices") if isinstance(q, Mapping) else None
            c = cs[loc[3]] if isinstance(cs, list) and loc[3] < len(cs) else None
            out.append(f"choice {c.get('id') if isinstance(c, Mapping) else loc[3] + 1!r}")
            rest = loc[4:]
        else:
            rest = loc[2:]
    else:
        rest = loc
    field = ".".join(str(x) for x in rest)
    return ", ".join(out) + (f" [{field}]" if field else "") if out else (field or "the bank")


_FRIENDLY = {
    ("choices", "too_short"): f"needs {MIN_CHOICES} to {MAX_CHOICES} choices",
    ("choices", "too_long"): f"needs {MIN_CHOICES} to {MAX_CHOICES} choices",
    ("key", "missing"): "needs a 'key' (ctxlab quiz key BANK QUESTION CHOICE)",
    ("key", "string_type"): "needs a 'key' (ctxlab quiz key BANK QUESTION CHOICE)",
    ("key", "string_too_short"): "needs a 'key' (ctxlab quiz key BANK QUESTION CHOICE)",
    ("correct", "extra_forbidden"): "store the answer as 'key' (ctxlab.quiz.key_hash), never as 'correct'",
    ("id", "string_pattern_mismatch"): "id must be lower-case letters, digits, '_' or '-' (a choice: one letter a-e)",
    ("lesson", "literal_error"): "lesson is not one of " + ", ".join(LESSONS),
}


def problems(raw: Mapping) -> list[str]:
    """Every problem of a bank as parsed from YAML (an empty list means the bank is usable).

    The shape is checked by a pydantic schema; what a schema cannot see (unique ids, a key
    that matches exactly one choice) is checked after it. Each problem names its place.
    """
    if not isinstance(raw, Mapping):
        return ["the bank must be a mapping with id, title, salt and questions"]
    out: list[str] = []
    try:
        _BankFile.model_validate(raw)
    except pydantic.ValidationError as exc:
        for err in exc.errors():
            loc = tuple(err["loc"])
            name = next((x for x in reversed(loc) if isinstance(x, str)), "")
            msg = _FRIENDLY.get((name, err["type"]))
            if msg is None:
                msg = err["msg"].removeprefix("Value error, ")
            out.append(f"{_where(raw, loc)}: {msg}")
    salt = raw.get("salt").strip() if isinstance(raw.get("salt"), str) else ""
    seen: set[str] = set()
    for n, q in enumerate(raw.get("questions") or [], 1):
        if not isinstance(q, Mapping):
            continue
        qid = q.get("id")
        where = f"question {qid!r}" if qid else f"question #{n}"
        if isinstance(qid, str) and qid in seen:
            out.append(f"{where}: duplicate id")
        seen.add(qid)
        cids = [c.get("id") for c in q.get("choices") or [] if isinstance(c, Mapping)]
        dup = sorted({c for c in cids if isinstance(c, str) and cids.count(c) > 1})
        if dup:
            out.append(f"{where}: duplicate choice id {', '.join(map(repr, dup))}")
        if "correct" in q:
            out.append(f"{where}: {_FRIENDLY[('correct', 'extra_forbidden')]}")
        key = q.get("key")
        if isinstance(key, str) and key and isinstance(qid, str):
            hits = [c for c in set(cids) if isinstance(c, str) and key_hash(salt, qid, c) == key]
            if len(hits) != 1:
                out.append(f"{where}: the key matches {len(hits)} choices, exactly one must be correct")
    return list(dict.fromkeys(out))


def _question(q: Mapping, salt: str) -> Question:
    return Question(
        id=q["id"], lesson=q["lesson"], topic=q["topic"].strip(), text=q["question"].strip(),
        choices=tuple(Choice(c["id"], c["text"].strip(), c["note"].strip()) for c in q["choices"]),
        explanation=q["explanation"].strip(), key=q["key"], salt=salt,
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
    salt = raw["salt"].strip()
    return Bank(id=raw["id"].strip(), title=raw["title"].strip(),
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


