"""Show that the prose checks catch drift: execute the lessons with another default model and list what they flag.

    python tools/drift_check.py [--model claude-opus-5] [--lesson 03_prompt_caching ...] [--work build/drift]

The course prices and teaches on ``pricing.DEFAULT_MODEL``. This tool executes a fresh learner release (as the
site build does: offline, unsolved) with ``CTXLAB_DRIFT_DEFAULT_MODEL`` set to ``--model`` (the only place that
variable is set), then runs on that run

1. the number check (tools/prose_numbers.py): figures in prose that no output of their section prints,
   compared with the same check on the default model's run (build/site/executed, when present): what is new
   is the drift;
2. the claim tests (tests/test_prose_claims.py, through pytest on the new run with ``CTXLAB_EXECUTED``): each
   failed test quotes its sentence;
3. cells that raised on the new run (an authoring assert left in a lesson fails there).

It prints the sentences that would be wrong if the default model changed and nobody touched the prose. It takes
about a minute per lesson on a quiet machine. Exit status 0 (flags are the point of the run, not an error).
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

import prose_numbers  # noqa: E402

ENV = "CTXLAB_DRIFT_DEFAULT_MODEL"


def execute(release: Path, names: list[str], out: Path, model: str) -> dict[str, list[str]]:
    """Execute each lesson of ``release`` offline with the default model switched; returns, per lesson, the cells
    that raised (other than an unsolved exercise's, tagged raises-exception)."""
    import nbformat
    from nbclient import NotebookClient

    out.mkdir(parents=True, exist_ok=True)
    errors = {}
    for name in names:
        nb = nbformat.read(release / name / f"{name}.ipynb", as_version=4)
        scratch = out.parent / "run" / name
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir(parents=True)
        before = dict(os.environ)
        t0 = time.perf_counter()
        try:
            os.environ.update({ENV: model, "CTXLAB_OFFLINE": "1", "CTXLAB_TIME_SCALE": "0",
                               "MPLBACKEND": "module://matplotlib_inline.backend_inline"})
            os.environ.pop("ANTHROPIC_API_KEY", None)
            NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True,
                           resources={"metadata": {"path": str(scratch)}}).execute()
        finally:
            os.environ.clear()
            os.environ.update(before)
        nbformat.write(nb, out / f"{name}.ipynb")
        errors[name] = [_error_line(c) for c in nb.cells if c.cell_type == "code"
                        and "raises-exception" not in c.metadata.get("tags", [])
                        and any(o.get("output_type") == "error" for o in c.get("outputs", []))]
        print(f"  executed {name} on {model} in {time.perf_counter() - t0:.0f} s"
              f"{f' ({len(errors[name])} cell(s) raised)' if errors[name] else ''}", flush=True)
    shutil.rmtree(out.parent / "run", ignore_errors=True)
    return errors


def _error_line(cell) -> str:
    err = next(o for o in cell.outputs if o.get("output_type") == "error")
    first = next((l for l in cell.source.splitlines() if l.strip() and not l.lstrip().startswith("#")), "")
    return f"{err.get('ename')}: {str(err.get('evalue'))[:140]}  (cell {cell.get('id')}: {first[:60]})"


def claim_failures(executed: Path, names: list[str], work: Path) -> list[tuple[str, str, str]]:
    """Run tests/test_prose_claims.py on ``executed``; returns (test, sentence from its docstring, message)
    for each failed test about one of ``names``."""
    report = work / "claims.xml"
    env = {**os.environ, "CTXLAB_EXECUTED": str(executed)}
    env.pop(ENV, None)
    subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "-q", "--tb=short",
                    f"--junitxml={report}", str(ROOT / "tests" / "test_prose_claims.py")],
                   cwd=ROOT, env=env, capture_output=True, text=True)
    docs = {f.name: ast.get_docstring(f) or "" for f in
            ast.parse((ROOT / "tests" / "test_prose_claims.py").read_text(encoding="utf-8")).body
            if isinstance(f, ast.FunctionDef)}
    out = []
    for case in ET.parse(report).getroot().iter("testcase"):
        failed = case.find("failure")
        if failed is None:
            failed = case.find("error")
        test = case.get("name")
        if failed is None or not any(test.startswith(f"test_{n[:2]}_") for n in names):
            continue
        msg = (failed.get("message") or "").splitlines()
        out.append((test, " ".join(docs.get(test, "").split()), (msg[0] if msg else "")[:200]))
    return out


def main(argv: list[str] | None = None) -> int:
    from ctxlab.costs import pricing
    from ctxlab.grading.release import assignments, fresh_release

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=pricing.ARTICLE_MODEL, help="the default model to switch to (a price table id)")
    ap.add_argument("--lesson", action="append", default=[], help="a lesson id (repeatable); default: every lesson")
    ap.add_argument("--work", type=Path, default=ROOT / "build" / "drift")
    ap.add_argument("--json", type=Path, help="also write the flags to this file")
    args = ap.parse_args(argv)
    if args.model not in pricing.models():
        print(f"--model {args.model!r} は価格表にありません。次のどれかにしてください: {', '.join(pricing.models())}",
              file=sys.stderr)
        return 2
    names = assignments(ROOT)
    unknown = sorted(set(args.lesson) - set(names))
    if unknown:
        print(f"--lesson {', '.join(unknown)} はありません。次のどれかにしてください: {', '.join(names)}", file=sys.stderr)
        return 2
    names = [n for n in names if not args.lesson or n in args.lesson]
    work = args.work.resolve() / args.model
    release = work / "release"
    shutil.rmtree(release, ignore_errors=True)
    t0 = time.perf_counter()
    print(f"default model {pricing.DEFAULT_MODEL} → {args.model}: executing {len(names)} lesson(s)", flush=True)
    fresh_release(release, ROOT)
    errors = execute(release, names, work / "executed", args.model)

    baseline_dir = ROOT / "build" / "site" / "executed"
    report = {"model": args.model, "lessons": names, "numbers": [], "claims": [], "errors": errors}
    print(f"\n== Figures in prose that the run on {args.model} does not print (new against the default model's run)")
    for name in names:
        base = set()
        if (baseline_dir / f"{name}.ipynb").exists():
            base = {(f.section, f.figure, f.sentence) for f in prose_numbers.check_notebook(baseline_dir / f"{name}.ipynb")}
        for f in prose_numbers.check_notebook(work / "executed" / f"{name}.ipynb"):
            if (f.section, f.figure, f.sentence) not in base:
                report["numbers"].append(str(f))
                print(f"- {f}")
    print(f"\n== Claims whose test fails on the run on {args.model}")
    for test, doc, msg in claim_failures(work / "executed", names, work):
        report["claims"].append({"test": test, "sentence": doc, "message": msg})
        print(f"- {test}\n    {doc}\n    → {msg}")
    print(f"\n== Cells that raised on {args.model}")
    for name, errs in errors.items():
        for e in errs:
            print(f"- {name}: {e}")
    n_err = sum(len(e) for e in errors.values())
    print(f"\nsummary ({args.model}, {len(names)} lesson(s), {time.perf_counter() - t0:.0f} s): "
          f"{len(report['numbers'])} figure(s), {len(report['claims'])} claim(s), {n_err} cell(s) that raised")
    if args.json:
        args.json.write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
