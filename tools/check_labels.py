"""Check data/eval/labelled_answers.jsonl and print its counts per level and per kind.

    python3 tools/check_labels.py                # checks, then prints the counts as Markdown tables
    python3 tools/check_labels.py --write-guide  # also writes the tables into data/eval/LABELLING.md

Each line is one JSON object with exactly the keys id, question_id, answer, level, reason, kind;
ids are unique and named ``<question_id>-NN``; every question of data/eval/questions.jsonl has
5 to 7 answers; level and kind come from the lists below; there are at least 150 answers.
The guide's tables sit between the markers ``<!-- counts:begin -->`` and ``<!-- counts:end -->``;
without ``--write-guide`` a guide whose tables differ from the set is reported as a problem.

data/eval/label_review.jsonl holds the second, independent reading: one line per answer with exactly the keys
id, level_first (the first reader's level before resolution), level_second, agree (level_first == level_second)
and note (empty when the readers agree, one line saying why they differ when not). A note on a label that was
changed after the comparison starts with ``resolved: first label changed``; a note on a disagreement the guide now
decides starts with ``guide:``; one a reasonable reader could hold either way starts with ``true disagreement:``.
The two readers' agreement before resolution (count, percentage, Cohen's kappa, confusion matrix) and the ids of
each kind of resolution are written between ``<!-- review:begin -->`` and ``<!-- review:end -->``.
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
REVIEW = ROOT / "data" / "eval" / "label_review.jsonl"
RELABELLED = ROOT / "data" / "eval" / "relabelled.jsonl"
RELABEL_KEYS = {"id", "from", "to", "when", "why"}
BEGIN, END = "<!-- counts:begin -->", "<!-- counts:end -->"
REVIEW_BEGIN, REVIEW_END = "<!-- review:begin -->", "<!-- review:end -->"
REVIEW_KEYS = {"id", "level_first", "level_second", "agree", "note"}
RESOLUTIONS = (("resolved: first label changed", "ラベルを改めた"),
               ("guide:", "手引きを明確にし、その規則で決めた"),
               ("true disagreement:", "どちらの読みもありうる（最初のラベルのまま）"))

LEVELS = ("correct", "partial", "wrong")
KINDS = ("paraphrase", "notation", "kanji_numeral", "fullwidth", "extra_detail", "near_miss", "negation",
         "wrong_slot", "stale", "mixed_stale", "abstain", "abstain_then_claim", "partial_multi", "gold",
         "complement", "markdown")
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


def relabel_problems(relabels: list[dict], rows: list[dict], review: list[dict]) -> list[str]:
    """What is wrong with the relabels made after the two readers' pass (e.g. when key facts were corrected)."""
    out = []
    label = {r["id"]: r["level"] for r in rows}
    resolved = {v["id"]: v["level_second"] if v["note"].startswith(RESOLUTIONS[0][0]) else v["level_first"]
                for v in review}
    for x in relabels:
        rid = x.get("id")
        if set(x) != RELABEL_KEYS:
            out.append(f"relabel {rid}: keys {sorted(x)}, expected {sorted(RELABEL_KEYS)}")
        elif rid not in label:
            out.append(f"relabel {rid}: no such answer in {LABELS.name}")
        elif x["to"] != label[rid]:
            out.append(f"relabel {rid}: the set holds {label[rid]!r}, the relabel says {x['to']!r}")
        elif rid in resolved and x["from"] != resolved[rid]:
            out.append(f"relabel {rid}: 'from' is {x['from']!r} but the review resolved it as {resolved[rid]!r}")
    return out


def review_problems(review: list[dict], rows: list[dict], relabels: list[dict] = ()) -> list[str]:
    """What is wrong with the second reading, checked against the labelled set (before any later relabel)."""
    out = []
    later = {x["id"]: x["from"] for x in relabels}
    label = {r["id"]: later.get(r["id"], r["level"]) for r in rows}
    seen = Counter(v.get("id") for v in review)
    out += [f"review: id {i!r} appears {n} times" for i, n in seen.items() if n > 1]
    out += [f"review: {i} has no second reading" for i in label if i not in seen]
    for v in review:
        rid = v.get("id")
        if set(v) != REVIEW_KEYS:
            out.append(f"review {rid}: keys {sorted(v)}, expected {sorted(REVIEW_KEYS)}")
            continue
        if rid not in label:
            out.append(f"review {rid}: no such answer in {LABELS.name}")
            continue
        if v["level_first"] not in LEVELS or v["level_second"] not in LEVELS:
            out.append(f"review {rid}: levels must be in {LEVELS}")
        if v["agree"] is not (v["level_first"] == v["level_second"]):
            out.append(f"review {rid}: agree must be {v['level_first'] == v['level_second']}")
        note = v["note"]
        if not isinstance(note, str) or "\n" in note:
            out.append(f"review {rid}: note must be one line of text")
            continue
        if v["agree"] is True and note:
            out.append(f"review {rid}: the readers agree, so the note stays empty")
        if v["agree"] is False and not note.startswith(tuple(p for p, _ in RESOLUTIONS)):
            out.append(f"review {rid}: a disagreement's note starts with one of {[p for p, _ in RESOLUTIONS]}")
        changed = label[rid] != v["level_first"]
        if changed != note.startswith(RESOLUTIONS[0][0]):
            out.append(f"review {rid}: the set holds {label[rid]!r}, the first reading was {v['level_first']!r}; "
                       f"a changed label (and only one) has a note starting {RESOLUTIONS[0][0]!r}")
    return out


def cohen_kappa(pairs: list[tuple[str, str]]) -> float:
    """Cohen's kappa of two readers' levels: (observed - chance agreement) / (1 - chance agreement)."""
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    first, second = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    chance = sum(first[lv] * second[lv] for lv in LEVELS) / n ** 2
    return 1.0 if chance == 1 else (observed - chance) / (1 - chance)


def agreement(review: list[dict]) -> str:
    """The two readers' agreement before resolution and how the disagreements were resolved, as Markdown."""
    pairs = [(v["level_first"], v["level_second"]) for v in review]
    same = sum(a == b for a, b in pairs)
    lines = [f"- 二人の読み手の一致（解消前）：{same} / {len(pairs)} 件（{100 * same / len(pairs):.1f}%）、"
             f"Cohen の κ = {cohen_kappa(pairs):.3f}",
             "", "| 1人目 ＼ 2人目 | " + " | ".join(LEVELS) + " |", "|---|" + "---:|" * len(LEVELS)]
    by = Counter(pairs)
    lines += [f"| {a} | " + " | ".join(str(by[(a, b)]) for b in LEVELS) + " |" for a in LEVELS]
    lines += ["", "| 解消のしかた | 件数 | id |", "|---|---:|---|"]
    for prefix, text in RESOLUTIONS:
        ids = [v["id"] for v in review if not v["agree"] and v["note"].startswith(prefix)]
        lines.append(f"| {text} | {len(ids)} | {'、'.join(ids) or '―'} |")
    return "\n".join(lines)


def place(guide: str, begin: str, end: str, body: str) -> tuple[str, bool]:
    """The guide with ``body`` between the markers, and whether it was already there."""
    head, rest = guide.split(begin, 1)
    old, tail = rest.split(end, 1)
    return f"{head}{begin}\n{body}\n{end}{tail}", old.strip() == body


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
    review = [json.loads(line) for line in REVIEW.read_text(encoding="utf-8").splitlines() if line.strip()]
    relabels = ([json.loads(line) for line in RELABELLED.read_text(encoding="utf-8").splitlines() if line.strip()]
                if RELABELLED.exists() else [])
    found = review_problems(review, rows, relabels) + relabel_problems(relabels, rows, review)
    if found:
        print("\n".join(found), file=sys.stderr)
        return 1
    sections = [(BEGIN, END, counts(rows)), (REVIEW_BEGIN, REVIEW_END, agreement(review))]
    guide = GUIDE.read_text(encoding="utf-8")
    stale = False
    for begin, end, body in sections:
        print(body, end="\n\n")
        if begin not in guide or end not in guide:
            print(f"{GUIDE}: add the markers {begin} and {end} where the tables go", file=sys.stderr)
            return 1
        guide, same = place(guide, begin, end, body)
        stale |= not same
    if stale:
        if "--write-guide" not in argv:
            print(f"{GUIDE}: the tables differ from the set; run with --write-guide", file=sys.stderr)
            return 1
        GUIDE.write_text(guide, encoding="utf-8")
        print(f"wrote the tables into {GUIDE}")
    return 0

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
