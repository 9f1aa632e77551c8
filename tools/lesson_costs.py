"""Measure what each lesson costs online: every solution notebook x every course model, against the stand-in.

Each run executes one solution notebook top to bottom in a kernel that looks like a learner's with
a key (``ANTHROPIC_API_KEY`` fake, ``ANTHROPIC_BASE_URL`` pointing at the local HTTP stand-in of
tests/standin.py, which serves the offline sandbox on 127.0.0.1), ``CTXLAB_MODEL`` set to the model
and a budget large enough for everything. The stand-in prices what it answered with
data/pricing.json; the kernel's meter must agree. Lesson 08 is also measured with
``CTXLAB_QUESTIONS`` (the small-budget way through).

Writes data/lesson_costs.json (read by ``ctxlab.api.online``) and the table between the
``lesson-costs`` markers of README.md and docs/instructor.md. Nothing is sent to the real API.

Usage: .venv/bin/python tools/lesson_costs.py [--workers 2] [--questions 10] [--lessons ID ...] [--models M ...] [--check | --docs]
  --lessons: measure only these lessons again (on the table's models) and keep the other rows of data/lesson_costs.json
  --models: the models measured (default: every model of the price table)
  --check: only compare README.md and docs/instructor.md with data/lesson_costs.json (exit 1 on drift)
  --docs: only rewrite the tables of README.md and docs/instructor.md from data/lesson_costs.json
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from ctxlab.api import online  # noqa: E402
from ctxlab.costs import pricing  # noqa: E402
from standin import StandIn, online_env, run_online  # noqa: E402

BUDGET_USD = 1000.0
DOCS = [ROOT / "README.md", ROOT / "docs" / "instructor.md"]
SMALL_LESSONS = ("08_measure",)
SOURCE = ("tools/lesson_costs.py: each solution notebook run online against a local stand-in (the offline "
          "sandbox over HTTP): token counts are the offline estimate (1 Japanese character = 1 token), answers "
          "are the sandbox's short extracts, priced with data/pricing.json. ceiling_usd: every answer max_tokens long.")
SOURCE_SHORT = "tools/lesson_costs.py が全セルをローカルの代役 API（sandbox）に送って数えた推定（実際のトークン数と回答の長さで変わります）"


def run_one(path: Path, model: str, questions: int | None) -> dict:
    extra = {"CTXLAB_MODEL": model}
    if questions is not None:
        extra["CTXLAB_QUESTIONS"] = str(questions)
    t0 = time.perf_counter()
    with StandIn() as s:
        state = run_online(path, online_env(s, BUDGET_USD, **extra)).ledger
        sent = [r for r in s.received if r.path == "/v1/messages"]
        result = {"usd": round(s.billed_usd(), 4), "ceiling_usd": round(s.ceiling_usd(), 4),
                  "requests": len(sent), "models_sent": sorted({r.model for r in sent if r.model})}
        if abs(state["spent_usd"] - s.billed_usd()) > 1e-6 or state["refused"]:
            raise SystemExit(f"{path.parent.name} on {model}: the meter ({state}) and the stand-in disagree")
    print(f"  {path.parent.name:24s} {model:18s} {'' if questions is None else f'Q={questions} '}"
          f"${result['usd']:8.4f} (ceiling ${result['ceiling_usd']:.4f}, {result['requests']} requests) "
          f"{time.perf_counter() - t0:5.1f} s", flush=True)
    return result


def measure(workers: int, questions: int, only: list[str] | None = None, models: list[str] | None = None) -> dict:
    lessons = sorted(p for p in (ROOT / "solutions").glob("*/*.ipynb") if not only or p.parent.name in only)
    # a partial run keeps the table's columns (every row must have the same models); a full run measures
    # every model of the price table unless --models names them
    models = models or (list(online.lesson_costs()["models"]) if only else list(pricing.models()))
    unknown = [m for m in models if m not in pricing.models()]
    if unknown:
        raise SystemExit(f"not in data/pricing.json: {', '.join(unknown)}")
    jobs = [(p, m, None) for m in models for p in lessons]
    jobs += [(p, m, questions) for m in models for p in lessons if p.parent.name in SMALL_LESSONS]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(lambda job: run_one(*job), jobs))
    table = {"generated_by": "tools/lesson_costs.py", "date": dt.date.today().isoformat(), "source": SOURCE,
             "source_short": SOURCE_SHORT, "models": models, "default_model": online.LESSON_MODEL,
             "small_questions": questions, "lessons": {}}
    if only:  # keep the rows (and the date) of the lessons not measured again; the new rows carry their date
        old = online.lesson_costs()
        table["date"] = old["date"]
        table["lessons"] = {k: v for k, v in old["lessons"].items() if k not in only}
    for (p, m, q), r in zip(jobs, results):
        row = table["lessons"].setdefault(p.parent.name, {"runs": {}})
        if only:
            row["date"] = dt.date.today().isoformat()
        runs = row["runs"]
        runs[m if q is None else f"{m}@{q}"] = r
    table["lessons"] = dict(sorted(table["lessons"].items()))
    return table


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--questions", type=int, default=10, help="CTXLAB_QUESTIONS of the small-budget runs")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--docs", action="store_true")
    ap.add_argument("--lessons", nargs="+", metavar="ID", help="measure only these lessons again (e.g. 08_measure)")
    ap.add_argument("--models", nargs="+", metavar="MODEL",
                    help="the table's columns (default: every model of the price table; with --lessons, the table's own)")
    args = ap.parse_args()
    if args.check:
        stale = [str(p.relative_to(ROOT)) for p in DOCS
                 if online.replace_table(p.read_text(encoding="utf-8")) != p.read_text(encoding="utf-8")]
        print("up to date" if not stale else f"stale: {', '.join(stale)} (run tools/lesson_costs.py --docs)")
        return 1 if stale else 0
    t0 = time.perf_counter()
    if not args.docs:
        if args.lessons and args.models and args.models != online.lesson_costs()["models"]:
            raise SystemExit("--lessons keeps the table's models: measure every lesson to change the columns")
        table = measure(args.workers, args.questions, args.lessons, args.models)
        online.COSTS_PATH.write_text(json.dumps(table, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        online.lesson_costs.cache_clear()
    for p in DOCS:
        p.write_text(online.replace_table(p.read_text(encoding="utf-8")), encoding="utf-8")
    print(online.markdown_table())
    wrote = "the tables of" if args.docs else f"{online.COSTS_PATH.relative_to(ROOT)} and the tables of"
    print(f"wrote {wrote} README.md, docs/instructor.md in {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
