"""Question banks (quizzes/*.yaml): their schema, loading, keys and the shuffled order of choices.

A bank is a YAML file with an ``id``, a ``title`` and a list of questions. Every question
has an ``id``, the ``lesson`` it checks, a ``topic``, the ``question`` (Japanese) and 3-5
``choices`` (each with an ``id`` and a ``text``). There are two kinds of bank:

- an *ungraded* bank (the lessons' check questions) also holds a ``salt``, every question's
  ``key`` and ``explanation`` and every choice's ``note`` (why it does or does not hold): the
  widget judges an answer at once and shows every note;
- a *graded* bank (``graded: true``, the knowledge check) holds the questions only. Its
  ``salt``, keys, notes and explanations are in a separate *key file* that sits with the
  instructor's source (:data:`INSTRUCTOR_KEY`), nowhere a graded learner can reach.
  ``load(name, key_file=...)`` merges a key file when it exists: the self-study release puts
  one beside lesson 09, the graded release does not, and then the widget only records answers.

The ``key`` is not the id of the correct choice but :func:`key_hash` of (salt, question
id, correct choice id), and every choice carries a note, so the shape of a file does not
give the answer away. In an ungraded bank that keeps the key out of sight, not secret
(the widget gives feedback anyway); a graded bank's key is out of the learner's reach.

To author a key: ``ctxlab quiz key BANK QUESTION CHOICE`` prints the hash;
``ctxlab quiz check`` validates every bank in quizzes/ (a graded one with its key file).
Scoring is in :mod:`ctxlab.quiz.scoring`.
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

from ctxlab._paths import QUIZZES_DIR, REPO_ROOT
from ctxlab.errors import QuizError

QUIZZES = QUIZZES_DIR
KNOWLEDGE_CHECK = "knowledge_check"
#: the name of a graded bank's key file (beside the lesson's notebook: nbgrader ignores ``*.key.yaml``)
KEY_FILE = f"{KNOWLEDGE_CHECK}.key.yaml"
#: the instructor's key file of the knowledge check (in the nbgrader source, never released when graded)
INSTRUCTOR_KEY = REPO_ROOT / "solutions" / "09_knowledge_check" / KEY_FILE

#: The course's lessons, in order: the ids a question may name as the lesson it checks.
LESSONS = (
    "00_start_here", "01_count_tokens", "02_pricing", "03_prompt_caching", "04_ttl", "05_crossover",
    "06_metadata_filtering", "07_citations", "08_measure", "09_knowledge_check", "10_rag_lab",
    "11_decide",
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
    key: str | None = field(repr=False)
    salt: str | None = field(repr=False)

    @property
    def has_key(self) -> bool:
        """False for a graded question loaded without its key file: it can be answered, not judged."""
        return bool(self.key)

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
        if not self.has_key:
            raise QuizError(f"question {self.id} is graded and its key is not here: the hidden tests grade it, "
                            "and the explanations come with the feedback")
        return type(choice_id) is str and key_hash(self.salt, self.id, choice_id) == self.key

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

    @property
    def graded(self) -> bool:
        """True when the key is not here (a graded bank without its key file): answers are recorded only."""
        return not all(q.has_key for q in self.questions)


# ------------------------------------------------------------------ the file's schema

def _nonempty(what: str, optional: bool = False):
    def check(v):
        if optional and v is None:
            return None
        if not isinstance(v, str) or not v.strip():
            raise ValueError(f"needs a non-empty {what!r}")
        return v.strip()
    return pydantic.BeforeValidator(check)


class _Choice(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")

    id: Annotated[str, pydantic.Field(pattern=_CID.pattern)]
    text: Annotated[str, _nonempty("text")]
    # Every choice of an ungraded bank has a note: a missing note on one choice would point at the answer.
    note: Annotated[str | None, _nonempty("note", optional=True)] = None


class _Question(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")

    id: Annotated[str, pydantic.Field(pattern=_QID.pattern)]
    lesson: Literal[LESSONS]  # type: ignore[valid-type]
    topic: Annotated[str, _nonempty("topic")]
    question: Annotated[str, _nonempty("question")]
    choices: Annotated[list[_Choice], pydantic.Field(min_length=MIN_CHOICES, max_length=MAX_CHOICES)]
    explanation: Annotated[str | None, _nonempty("explanation", optional=True)] = None
    key: Annotated[str | None, pydantic.Field(min_length=1)] = None


class _BankFile(pydantic.BaseModel):
    """A bank file (quizzes/*.yaml) as authored."""

    model_config = pydantic.ConfigDict(extra="forbid")

    id: Annotated[str, _nonempty("id")]
    title: Annotated[str, _nonempty("title")]
    graded: bool = False
    salt: Annotated[str | None, _nonempty("salt", optional=True)] = None
    questions: Annotated[list[_Question], pydantic.Field(min_length=1)]


class _KeyEntry(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")

    key: Annotated[str, pydantic.Field(min_length=1)]
    notes: dict[Annotated[str, pydantic.Field(pattern=_CID.pattern)], Annotated[str, _nonempty("note")]]
    explanation: Annotated[str, _nonempty("explanation")]


class _KeyFile(pydantic.BaseModel):
    """A graded bank's key file (``*.key.yaml``): salt, and per question its key, notes and explanation."""

    model_config = pydantic.ConfigDict(extra="forbid")

    bank: Annotated[str, _nonempty("bank")]
    salt: Annotated[str, _nonempty("salt")]
    questions: dict[Annotated[str, pydantic.Field(pattern=_QID.pattern)], _KeyEntry]


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
    that matches exactly one choice, what a graded or an ungraded bank must and must not
    hold) is checked after it. Each problem names its place.
    """
    if not isinstance(raw, Mapping):
        return ["the bank must be a mapping with id, title and questions"]
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
    graded = raw.get("graded") is True
    salt = raw.get("salt").strip() if isinstance(raw.get("salt"), str) else ""
    if graded and "salt" in raw:
        out.append(f"the bank: {_GRADED_HOLDS_NO_KEY}")
    elif not graded and not salt:
        out.append("the bank: needs a 'salt' (an ungraded bank holds its keys)")
    seen: set[str] = set()
    for n, q in enumerate(raw.get("questions") or [], 1):
        if not isinstance(q, Mapping):
            continue
        qid = q.get("id")
        where = f"question {qid!r}" if qid else f"question #{n}"
        if isinstance(qid, str) and qid in seen:
            out.append(f"{where}: duplicate id")
        seen.add(qid)
        choices = [c for c in q.get("choices") or [] if isinstance(c, Mapping)]
        cids = [c.get("id") for c in choices]
        dup = sorted({c for c in cids if isinstance(c, str) and cids.count(c) > 1})
        if dup:
            out.append(f"{where}: duplicate choice id {', '.join(map(repr, dup))}")
        if "correct" in q:
            out.append(f"{where}: {_FRIENDLY[('correct', 'extra_forbidden')]}")
        if graded:
            if any(k in q for k in ("key", "explanation")) or any("note" in c for c in choices):
                out.append(f"{where}: {_GRADED_HOLDS_NO_KEY}")
            continue
        if not q.get("key"):
            out.append(f"{where}: {_FRIENDLY[('key', 'missing')]}")
        if not q.get("explanation"):
            out.append(f"{where}: needs a non-empty 'explanation'")
        for c in choices:
            if not c.get("note"):
                out.append(f"{where}, choice {c.get('id')!r}: needs a non-empty 'note'")
        key = q.get("key")
        if isinstance(key, str) and key and isinstance(qid, str):
            hits = [c for c in set(cids) if isinstance(c, str) and key_hash(salt, qid, c) == key]
            if len(hits) != 1:
                out.append(f"{where}: the key matches {len(hits)} choices, exactly one must be correct")
    return list(dict.fromkeys(out))


_GRADED_HOLDS_NO_KEY = ("a graded bank holds no salt, key, note or explanation: they belong in its key file "
                        f"(e.g. {INSTRUCTOR_KEY.relative_to(REPO_ROOT)})")


def with_key(raw: Mapping, key: Mapping) -> tuple[dict, list[str]]:
    """A graded bank (as parsed) merged with its key file: the bank as an ungraded one, and the problems.

    The problems are those of the key file's shape, of questions or choices that one file
    has and the other lacks, and then :func:`problems` of the merged bank.
    """
    out: list[str] = []
    try:
        _KeyFile.model_validate(key)
    except pydantic.ValidationError as exc:
        return {}, [f"key file [{'.'.join(map(str, e['loc']))}]: {e['msg'].removeprefix('Value error, ')}"
                    for e in exc.errors()]
    if key["bank"] != raw.get("id"):
        out.append(f"key file: it is for bank {key['bank']!r}, not {raw.get('id')!r}")
    entries = key["questions"]
    qids = [q.get("id") for q in raw.get("questions") or [] if isinstance(q, Mapping)]
    out += [f"question {qid!r}: not in the key file" for qid in qids if qid not in entries]
    out += [f"key file: question {qid!r} is not in the bank" for qid in entries if qid not in qids]
    merged = {k: v for k, v in raw.items() if k != "graded"}
    merged["salt"] = key["salt"]
    merged["questions"] = []
    for q in raw.get("questions") or []:
        entry = entries.get(q.get("id")) if isinstance(q, Mapping) else None
        if entry is None:
            merged["questions"].append(q)
            continue
        cids = [c.get("id") for c in q.get("choices") or []]
        out += [f"key file: question {q['id']!r} has a note for {cid!r}, which is not a choice"
                for cid in entry["notes"] if cid not in cids]
        choices = [dict(c, note=entry["notes"].get(c.get("id"))) for c in q.get("choices") or []]
        merged["questions"].append(dict(q, choices=choices, key=entry["key"], explanation=entry["explanation"]))
    return merged, list(dict.fromkeys(out + problems(merged)))


def _question(q: Mapping, salt: str | None) -> Question:
    def clean(v):
        return v.strip() if isinstance(v, str) else ""
    return Question(
        id=q["id"], lesson=q["lesson"], topic=q["topic"].strip(), text=q["question"].strip(),
        choices=tuple(Choice(c["id"], c["text"].strip(), clean(c.get("note"))) for c in q["choices"]),
        explanation=clean(q.get("explanation")), key=q.get("key"), salt=salt,
    )


def bank_path(name: str | Path) -> Path:
    """``knowledge_check`` -> quizzes/knowledge_check.yaml; a path is returned as is."""
    p = Path(name)
    if p.suffix in (".yaml", ".yml") or p.parent != Path("."):
        return p
    return QUIZZES / f"{name}.yaml"


def _mtime(path: Path | None) -> int:
    return path.stat().st_mtime_ns if path is not None and path.exists() else 0


def load(name: str | Path = KNOWLEDGE_CHECK, key_file: str | Path | None = None) -> Bank:
    """Load and validate a bank; raise :class:`QuizError` listing every problem.

    ``key_file``: a graded bank's key file, merged when that file exists (a graded release
    has none: the bank then has no key, and :attr:`Bank.graded` is True).
    """
    path = bank_path(name)
    if not path.exists():
        raise QuizError(f"no question bank at {path}")
    key = Path(key_file).resolve() if key_file is not None and Path(key_file).exists() else None
    return _load_cached(str(path.resolve()), _mtime(path), str(key) if key else None, _mtime(key))


def instructor_bank(name: str = KNOWLEDGE_CHECK) -> Bank:
    """The knowledge check with its key (instructors, tests and ``ctxlab quiz``): an error without the key file."""
    if not INSTRUCTOR_KEY.exists():
        raise QuizError(f"no key file at {INSTRUCTOR_KEY}: the key is in the instructor's source (solutions/)")
    return load(name, key_file=INSTRUCTOR_KEY)


def _read(path: str):
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)


@lru_cache(maxsize=16)
def _load_cached(path: str, _mtime: int, key_path: str | None, _key_mtime: int) -> Bank:
    raw = _read(path)
    found = problems(raw)
    if not found and key_path is not None:
        if raw.get("graded") is not True:
            found = [f"a key file ({key_path}) goes with a graded bank only"]
        else:
            raw, found = with_key(raw, _read(key_path) or {})
    if found:
        raise QuizError(f"{path}:\n  - " + "\n  - ".join(found))
    salt = raw["salt"].strip() if isinstance(raw.get("salt"), str) else None
    return Bank(id=raw["id"].strip(), title=raw["title"].strip(),
                questions=tuple(_question(q, salt) for q in raw["questions"]))


def banks(folder: str | Path = QUIZZES) -> list[Bank]:
    """Every bank in ``folder`` (sorted by file name; graded ones without their key)."""
    return [load(p) for p in sorted(Path(folder).glob("*.yaml"))]


def quiz_for(lesson_id: str, folder: str | Path = QUIZZES) -> Bank:
    """The check questions of ``lesson_id``: the questions of every ungraded bank in ``folder`` that check it.

    Graded questions (the knowledge check) are never reused as a lesson's check:
    ``Quiz(quiz.quiz_for("03_prompt_caching"))`` shows that lesson's own questions.
    """
    if lesson_id not in LESSONS:
        raise QuizError(f"unknown lesson {lesson_id!r}; lessons: {', '.join(LESSONS)}")
    picked: "OrderedDict[str, Question]" = OrderedDict()
    for bank in banks(folder):
        if bank.graded:
            continue
        for q in bank:
            if q.lesson == lesson_id and q.id not in picked:
                picked[q.id] = q
    return Bank(id=f"check_{lesson_id}", title=f"{lesson_id} の確認問題", questions=tuple(picked.values()))
