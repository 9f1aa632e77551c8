"""`ctxlab compare` on 200,000 characters (a fresh process each run, start-up included) and `import ctxlab`."""
from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import measure, report  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
EXE = Path(sys.executable).parent / "ctxlab"


def main() -> None:
    rules = sorted((ROOT / "data" / "rules").glob("*.txt"))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        total, i = 0, 0
        while total < 200_000:
            src = rules[i % len(rules)] if rules else None
            text = src.read_text(encoding="utf-8") if src else "第1条　本規程は従業員に適用する。" * 200
            (folder / f"doc{i:03d}.txt").write_text(text, encoding="utf-8")
            total += len(text)
            i += 1
        print(f"documents: {i} files, {total:,} characters")
        cmd = [str(EXE), "compare", "--docs", str(folder), "--ask", "有給の繰越上限は？"]
        report("ctxlab compare --docs (200k chars, process start-up incl.)",
               measure(lambda: subprocess.run(cmd, check=True, capture_output=True), runs=7), goal_s=1.0)
    report("python -c 'import ctxlab'",
           measure(lambda: subprocess.run([sys.executable, "-c", "import ctxlab"], check=True), runs=7))
    report("python -c 'import ctxlab.costs.pricing, ctxlab.api.tokens'",
           measure(lambda: subprocess.run([sys.executable, "-c", "import ctxlab.costs.pricing, ctxlab.api.tokens"],
                                          check=True), runs=7))
    report("python -c 'pass' (interpreter start-up, for reference)",
           measure(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True), runs=7))


if __name__ == "__main__":
    main()
