"""Check data/eval/labelled_answers.jsonl and print its counts per level and per kind.

    python3 tools/check_labels.py                # checks, then prints the counts as Markdown tables
    python3 tools/check_labels.py --write-guide  # also writes the tables into data/eval/LABELLING.md

Each line is one JSON object with exactly the keys id, question_id, answer, level, reason, kind;
ids are unique and named ``<question_id>-NN``; every question of data/eval/questions.jsonl has
5 to 7 answers; level and kind come from the lists below; there are at least 150 answers.
The guide's tables sit between the markers ``<!-- counts:begin -->`` and ``<!-- counts:end -->``;
without ``--write-guide`` a guide whose tables differ from the set is reported as a problem.
Plain ``json`` only, so it runs with the system Python. Exits 1 with the problems found.
"""
from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LABELS = ROOT / "data" / "eval" / "labelled_answers.jsonl"
QUESTIONS = ROOT / "data" / "eval" / "questions.jsonl"
GUIDE = ROOT / "data" / "eval" / "LABELLING.md"
BEGIN, END = "<!-- counts:begin -->", "<!-- counts:end -->"

LEVELS = ("correct", "partial", "wrong")
KINDS = ("paraphrase", "notation", "kanji_numeral", "fullwidth", "extra_detail", "near_miss", "negation",
         "wrong_slot", "stale", "mixed_stale", "abstain", "abstain_then_claim", "partial_multi", "gold")
KEYS = {"id", "question_id", "answer", "level", "reason", "kind"}
MIN_ANSWERS = 150
MIN_PER_QUESTION, MAX_PER_QUESTION = 5, 7


def problems(rows: list[dict], question_ids: list[str]) -> list[str]:
    out = []
    ids = Counter(r.get("id") for r in rows)
    out += [f"id {i!r} appears {n} times" for i, n in ids.items() if n > 1]
    for r in rows:
        rid = r.get("id")
        if set(r) != KEYS:
            out.append(f"{rid}: keys {sorted(r)}, expected {sorted(KEYS)}")
            continue
        if not all(isinstance(r[k], str) and r[k].strip() for k in KEYS):
            out.append(f"{rid}: every field must be a non-empty string")
        if r["question_id"] not in question_ids:
            out.append(f"{rid}: unknown question_id {r['question_id']!r}")
        if not re.fullmatch(re.escape(r["question_id"]) + r"-\d{2}", rid):
            out.append(f"{rid}: id must be <question_id>-NN")
        if r["level"] not in LEVELS:
            out.append(f"{rid}: level {r['level']!r} not in {LEVELS}")
        if r["kind"] not in KINDS:
            out.append(f"{rid}: kind {r['kind']!r} not in {KINDS}")
        if "\n" in r["reason"]:
            out.append(f"{rid}: reason must be one line")
    per_q = Counter(r.get("question_id") for r in rows)
    out += [f"{q}: {per_q[q]} answers, {MIN_PER_QUESTION} to {MAX_PER_QUESTION} expected" for q in question_ids
            if not MIN_PER_QUESTION <= per_q[q] <= MAX_PER_QUESTION]
    if len(rows) < MIN_ANSWERS:
        out.append(f"{len(rows)} answers, at least {MIN_ANSWERS} needed")
    return out


def table(title: str, counts: Counter, order: tuple[str, ...]) -> str:
    lines = [f"| {title} | 件数 |", "|---|---:|"]
    lines += [f"| {k} | {counts[k]} |" for k in order if counts[k]]
    lines.append(f"| 計 | {sum(counts.values())} |")
    return "\n".join(lines)


def counts(rows: list[dict]) -> str:
    """The counts per level, per kind and per kind and level, as Markdown tables."""
    parts = [table("level", Counter(r["level"] for r in rows), LEVELS),
             table("kind", Counter(r["kind"] for r in rows), KINDS)]
    by = Counter((r["kind"], r["level"]) for r in rows)
    lines = ["| kind | correct | partial | wrong |", "|---|---:|---:|---:|"]
    lines += [f"| {k} | " + " | ".join(str(by[(k, lv)]) for lv in LEVELS) + " |"
              for k in KINDS if any(by[(k, lv)] for lv in LEVELS)]
    parts.append("\n".join(lines))
    return "\n\n".join(parts)


def main(argv: list[str]) -> int:
    raw = LABELS.read_bytes()
    if raw.startswith(b"\xef\xbb\xbf"):
        print(f"{LABELS}: remove the UTF-8 BOM", file=sys.stderr)
        return 1
    rows = []
    for n, line in enumerate(raw.decode("utf-8").splitlines(), 1):
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as e:
            print(f"{LABELS}:{n}: not JSON ({e})", file=sys.stderr)
            return 1
    question_ids = [json.loads(line)["id"] for line in QUESTIONS.read_text(encoding="utf-8").splitlines()]
    found = problems(rows, question_ids)
    if found:
        print("\n".join(found), file=sys.stderr)
        return 1
    tables = counts(rows)
    print(tables)
    guide = GUIDE.read_text(encoding="utf-8")
    if BEGIN not in guide or END not in guide:
        print(f"{GUIDE}: add the markers {BEGIN} and {END} where the tables go", file=sys.stderr)
        return 1
    head, rest = guide.split(BEGIN, 1)
    body, tail = rest.split(END, 1)
    if body.strip() != tables:
        if "--write-guide" not in argv:
            print(f"{GUIDE}: the tables differ from the set; run with --write-guide", file=sys.stderr)
            return 1
        GUIDE.write_text(f"{head}{BEGIN}\n{tables}\n{END}{tail}", encoding="utf-8")
        print(f"wrote the tables into {GUIDE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
