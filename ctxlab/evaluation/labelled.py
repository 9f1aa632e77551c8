"""The labelled answers (``data/eval/labelled_answers.jsonl``): answers written as models write them, each with
the level a person gave it, and the measurement of a grader against them.

One line per answer (see ``data/eval/LABELLING.md`` for how a person decides the level)::

    {"id": "q01-04", "question_id": "q01", "answer": "...", "level": "wrong", "reason": "...", "kind": "wrong_slot"}

``kind`` names the class of answer it was written to test (:data:`KINDS`). A second reader's pass, where it exists,
is ``data/eval/label_review.jsonl``: ``{"id", "level_first", "level_second", "agree", "note"}`` per answer read
again (``level_first`` is the first reader's level before the two resolved a disagreement, so it may differ from the
final ``level``; ``agree`` says whether the two readings matched).

:func:`measure` grades every labelled answer with a grader (a function ``(answer, question) -> level``, such as
:func:`ctxlab.evaluation.rules.grade`) and returns a :class:`Measured`: the agreement with the labels
(:mod:`ctxlab.evaluation._agreement`) and, per kind, how many the grader got wrong.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Callable, Iterable, Literal

import pydantic

from ctxlab import _table
from ctxlab._paths import DATA_DIR
from ctxlab._schema import Strict, load_jsonl
from ctxlab.corpus import Question, questions as load_questions
from ctxlab.errors import SchemaError
from ctxlab.evaluation._agreement import Agreement, compare

LABELLED = DATA_DIR / "eval" / "labelled_answers.jsonl"
REVIEW = DATA_DIR / "eval" / "label_review.jsonl"
#: the held-out part: answers written and labelled before the grader was changed again (data/eval/PROVENANCE.md)
HELDOUT = DATA_DIR / "eval" / "heldout_answers.jsonl"
#: the rule grader's figures on both parts before issue 41's changes (re-checked from git by the tests)
BEFORE = DATA_DIR / "eval" / "grader_before.json"
#: the two parts, as the lesson and the CLI name them
PARTS = {"development": ("開発用", LABELLED), "heldout": ("検証用", HELDOUT)}

KINDS = ("paraphrase", "notation", "kanji_numeral", "fullwidth", "extra_detail", "near_miss", "negation",
         "wrong_slot", "stale", "mixed_stale", "abstain", "abstain_then_claim", "partial_multi", "gold",
         "complement", "markdown")
#: what each kind is, in the lesson's words
KIND_JA = {
    "paraphrase": "言い換え", "notation": "別の書き方", "kanji_numeral": "漢数字", "fullwidth": "全角数字",
    "extra_detail": "余計な詳しさ", "near_miss": "語が重なる別の値", "negation": "否定・禁止", "wrong_slot": "別の項目の数",
    "stale": "旧版の値だけ", "mixed_stale": "新旧の混在", "abstain": "記載なし", "abstain_then_claim": "記載なし＋断定",
    "partial_multi": "複数の問いの一部", "gold": "模範解答", "complement": "裏側からの言い方",
    "markdown": "Markdown の回答",
}
Level = Literal["correct", "partial", "wrong"]
NonEmpty = Annotated[str, pydantic.StringConstraints(min_length=1)]


class LabelledAnswer(Strict):
    """One labelled answer (a line of labelled_answers.jsonl)."""

    id: NonEmpty
    question_id: NonEmpty
    answer: NonEmpty
    level: Level
    reason: NonEmpty
    kind: Literal[KINDS]  # type: ignore[valid-type]


class Review(Strict):
    """A second reader's level for one labelled answer (a line of label_review.jsonl)."""

    id: NonEmpty
    level_first: Level
    level_second: Level
    agree: bool
    note: str = ""


def load(path: str | Path = LABELLED, questions: Iterable[Question] | None = None) -> list[LabelledAnswer]:
    """The labelled answers; a broken file, a repeated id or an unknown question id raises SchemaError."""
    rows = load_jsonl(Path(path), LabelledAnswer)
    known = {q.id for q in (load_questions() if questions is None else questions)}
    problems = [f"{r.id}: question_id {r.question_id!r} is not a question of data/eval/questions.jsonl"
                for r in rows if r.question_id not in known]
    problems += [f"id {i!r} appears {n} times" for i, n in Counter(r.id for r in rows).items() if n > 1]
    if problems:
        raise SchemaError(path, problems)
    return rows


def load_review(path: str | Path = REVIEW, labelled: Iterable[LabelledAnswer] | None = None) -> list[Review]:
    """The second reader's pass; every id must be a labelled answer's, and ``agree`` must match the two readings."""
    rows = load_jsonl(Path(path), Review)
    first = {r.id: r.level for r in (load() if labelled is None else labelled)}
    problems = [f"{r.id}: not an id of the labelled answers" for r in rows if r.id not in first]
    problems += [f"{r.id}: agree is {r.agree} but the readings are {r.level_first} and {r.level_second}"
                 for r in rows if r.id in first and r.agree != (r.level_first == r.level_second)]
    if problems:
        raise SchemaError(path, problems)
    return rows


@dataclass(frozen=True)
class Measured:
    """A grader measured on labelled answers: the agreement, and each answer's (label, grade)."""

    name: str
    agreement: Agreement
    #: (labelled answer, the grader's level), in the file's order
    grades: tuple[tuple[LabelledAnswer, str], ...]

    def misses(self) -> list[tuple[LabelledAnswer, str]]:
        """The answers the grader graded differently from the label."""
        return [(a, lv) for a, lv in self.grades if a.level != lv]

    def by_kind(self) -> dict[str, tuple[int, int]]:
        """``{kind: (missed, n)}`` in :data:`KINDS` order, for the kinds present."""
        n = Counter(a.kind for a, _ in self.grades)
        missed = Counter(a.kind for a, _ in self.misses())
        return {k: (missed[k], n[k]) for k in KINDS if n[k]}

    def kinds_table(self) -> _table.Table:
        """Per kind, how many answers the grader graded differently from the label (most missed first)."""
        rows = [[f"{k}（{KIND_JA[k]}）", f"{m}/{n}"]
                for k, (m, n) in sorted(self.by_kind().items(), key=lambda kv: (-kv[1][0] / kv[1][1], KINDS.index(kv[0])))]
        return _table.Table(["種類", "食い違い"], rows, align=["l", "r"])

    def format_kinds(self) -> str:
        """:meth:`kinds_table` as text."""
        return str(self.kinds_table())

    def still_missed(self) -> list[str]:
        """The kinds on which the grader still disagrees with at least one label, most missed share first."""
        return [k for k, (m, n) in sorted(self.by_kind().items(), key=lambda kv: -kv[1][0] / kv[1][1]) if m]


def measure(grader: Callable[[str, Question], str], answers: Iterable[LabelledAnswer] | None = None,
            questions: Iterable[Question] | None = None, *, name: str = "rules") -> Measured:
    """Grade every labelled answer with ``grader`` and compare with the labels."""
    qs = {q.id: q for q in (load_questions() if questions is None else questions)}
    answers = load(questions=qs.values()) if answers is None else list(answers)
    grades = tuple((a, grader(a.answer, qs[a.question_id])) for a in answers)
    return Measured(name, compare([lv for _, lv in grades], [a.level for a, _ in grades]), grades)


def measure_parts(grader: Callable[[str, Question], str], questions: Iterable[Question] | None = None,
                  *, name: str = "rules") -> dict[str, Measured]:
    """``{part: Measured}`` for the development and the held-out part (:data:`PARTS`), measured separately."""
    qs = list(load_questions() if questions is None else questions)
    return {part: measure(grader, load(path, qs), qs, name=name) for part, (_, path) in PARTS.items()}


def before() -> dict:
    """``{"commit", "parts": {part: {"n", "agree", "kappa", "by_kind"}}}``: the rule grader before it was improved."""
    import json

    return json.loads(BEFORE.read_text(encoding="utf-8"))


def format_before_after(parts: dict[str, Measured]) -> str:
    """Per part, the rule grader's agreement before it was improved (:data:`BEFORE`) and now."""
    old = before()
    lines = [f"ルール採点の改良の前（コミット {old['commit'][:7]}）と今"]
    for part, m in parts.items():
        b = old["parts"][part]
        lines.append(f"  {PARTS[part][0]}: 前 {b['agree']}/{b['n']}（{b['agree'] / b['n']:.0%}、κ = {b['kappa']:.2f}）"
                     f" → 今 {m.agreement.agree}/{m.agreement.n}（{m.agreement.rate:.0%}、κ = {m.agreement.kappa:.2f}）")
    return "\n".join(lines)


def format_parts(parts: dict[str, Measured], grader: str = "ルール採点", reference: str = "人のラベル",
                 detailed: tuple[str, ...] | None = None) -> str:
    """Both parts' agreement, each named: the development part is in-sample, the held-out part is not.
    ``detailed`` names the parts shown with their confusion matrix and kinds (default: every part);
    the others get their one line."""
    lines = []
    for part, m in parts.items():
        ja, path = PARTS[part]
        how = ("採点器はこの回答を見ながら書かれた（標本内）" if part == "development"
               else "採点器の改良の前にラベルを確定した（data/eval/PROVENANCE.md）")
        lines.append(f"【{ja}】{path.name}: {m.agreement.line(reference)}　← {how}")
        if detailed is None or part in detailed:
            lines += [m.agreement.format(grader, reference), m.format_kinds()]
        lines.append("")
    return "\n".join(lines).rstrip()


__all__ = ["LABELLED", "REVIEW", "HELDOUT", "PARTS", "KINDS", "KIND_JA", "LabelledAnswer", "Review", "load", "load_review", "Measured",
           "measure", "measure_parts",
           "format_parts", "BEFORE", "before", "format_before_after"]
