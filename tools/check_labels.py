"""Check data/eval/labelled_answers.jsonl and print its counts per level and per kind.

    python3 tools/check_labels.py            # checks, then prints the counts as Markdown tables

Each line is one JSON object with exactly the keys id, question_id, answer, level, reason, kind;
ids are unique and named ``<question_id>-NN``; every question of data/eval/questions.jsonl has
at least 5 answers; level and kind come from the lists below; there are at least 150 answers.
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

LEVELS = ("correct", "partial", "wrong")
KINDS = ("paraphrase", "notation", "kanji_numeral", "fullwidth", "extra_detail", "near_miss", "negation",
         "wrong_slot", "stale", "mixed_stale", "abstain", "abstain_then_claim", "partial_multi", "gold")
KEYS = {"id", "question_id", "answer", "level", "reason", "kind"}
MIN_ANSWERS = 150
MIN_PER_QUESTION = 5


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
    out += [f"{q}: {per_q[q]} answers, at least {MIN_PER_QUESTION} needed" for q in question_ids
            if per_q[q] < MIN_PER_QUESTION]
    if len(rows) < MIN_ANSWERS:
        out.append(f"{len(rows)} answers, at least {MIN_ANSWERS} needed")
    return out


def table(title: str, counts: Counter, order: tuple[str, ...]) -> str:
    lines = [f"| {title} | 件数 |", "|---|---:|"]
    lines += [f"| {k} | {counts[k]} |" for k in order if counts[k]]
    lines.append(f"| 計 | {sum(counts.values())} |")
    return "\n".join(lines)


def main() -> int:
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
    print(table("level", Counter(r["level"] for r in rows), LEVELS))
    print()
    print(table("kind", Counter(r["kind"] for r in rows), KINDS))
    print()
    kinds_by_level = Counter((r["kind"], r["level"]) for r in rows)
    print("| kind | correct | partial | wrong |\n|---|---:|---:|---:|")
    for k in KINDS:
        if any(kinds_by_level[(k, lv)] for lv in LEVELS):
            print(f"| {k} | " + " | ".join(str(kinds_by_level[(k, lv)]) for lv in LEVELS) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
