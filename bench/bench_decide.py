"""Benchmark of ``ctxlab decide`` offline on large folders: wall time and peak memory. Prints figures, never fails.

    .venv/bin/python bench/bench_decide.py [--runs 3] [--files 10000] [--mb 200] [--pdf-pages 1000]

Two folders are generated in a temporary directory (deleted at the end):

* **text**: ``--files`` Markdown files of Japanese text totalling ``--mb`` MB (UTF-8), spread over
  ten subfolders (so the filter path is priced too), every file distinct;
* **pdf**: ``--pdf-pages`` pages of text in PDFs of 10 pages each (pypdf writes them; the text layer is
  ASCII in Helvetica).

Each run is the command a user types, in its own process (``ctxlab decide --docs DIR
--questions-per-day 20 --quiet --out DIR`` with CTXLAB_OFFLINE=1): start-up, reading, counting,
pricing every current model, the figures and the memo. The figure is the median wall time of the
runs and the largest peak resident memory (ru_maxrss of the child process).

Goals (issue 45): the text folder in at most 60 s with under 1 GB, the PDF pages in at most 60 s.
Figures depend on the machine and on its load: say the load next to them.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CTXLAB = str(Path(sys.executable).parent / "ctxlab")
GOAL_S = 60.0
GOAL_RSS_MB = 1024.0
KANA = "あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをん"
KANJI = "規程経費旅費申請承認部長課長会議資料休暇勤務給与手当支給期限提出書類保存管理責任担当窓口"


def text_folder(root: Path, files: int, mb: float, seed: int = 45) -> int:
    """``files`` distinct Markdown files of about ``mb`` MB in total; returns the bytes written."""
    rng = random.Random(seed)
    per_file = int(mb * 1_000_000 / files)
    alphabet = KANA + KANJI + "、。"
    total = 0
    for i in range(files):
        dept = root / f"dept{i % 10:02d}"
        dept.mkdir(exist_ok=True)
        head = f"# 規程 {i}\n\n第 1 条 この規程は番号 {i} の文書です。\n"
        # about 3 bytes a character in UTF-8
        body = "".join(rng.choice(alphabet) for _ in range(200))
        text = head + (body * (per_file // 600 + 1))[: max(0, per_file // 3 - len(head))]
        data = text.encode("utf-8")
        (dept / f"rule_{i:05d}.md").write_bytes(data)
        total += len(data)
    return total


def pdf_folder(root: Path, pages: int, per_pdf: int = 10) -> int:
    import pypdf
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    made = 0
    for n in range((pages + per_pdf - 1) // per_pdf):
        w = pypdf.PdfWriter()
        font = w._add_object(DictionaryObject({NameObject("/Type"): NameObject("/Font"),
                                               NameObject("/Subtype"): NameObject("/Type1"),
                                               NameObject("/BaseFont"): NameObject("/Helvetica")}))
        for p in range(min(per_pdf, pages - made)):
            page = w.add_blank_page(595, 842)
            page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})})
            lines = " ".join(f"0 -14 Td (Manual {n} page {p} line {k}: check the filter before replacing it.) Tj"
                             for k in range(45))
            stream = DecodedStreamObject()
            stream.set_data(f"BT /F1 10 Tf 40 800 Td {lines} ET".encode())
            page[NameObject("/Contents")] = w._add_object(stream)
            made += 1
        with (root / f"manual_{n:04d}.pdf").open("wb") as f:
            w.write(f)
    return made


def run(folder: Path, out: Path, runs: int) -> tuple[list[float], float, list[float]]:
    """Wall seconds of each run, the largest peak RSS (MB) of the runs' processes, and each run's CPU seconds."""
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env.update(CTXLAB_OFFLINE="1", MPLBACKEND="Agg")
    walls, peak, cpu = [], 0.0, []
    for _ in range(runs):
        with tempfile.TemporaryFile() as log:
            t0 = time.perf_counter()
            proc = subprocess.Popen([CTXLAB, "decide", "--docs", str(folder), "--questions-per-day", "20", "--quiet",
                                     "--out", str(out)], stdout=log, stderr=log, env=env)
            _pid, status, usage = os.wait4(proc.pid, 0)   # this child's own rusage
            walls.append(time.perf_counter() - t0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            if proc.returncode != 0:
                log.seek(0)
                raise SystemExit(f"ctxlab decide failed on {folder}:\n{log.read().decode()[-2000:]}")
        peak = max(peak, usage.ru_maxrss / 1024)
        cpu.append(usage.ru_utime + usage.ru_stime)
    return walls, peak, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--mb", type=float, default=200.0)
    ap.add_argument("--pdf-pages", type=int, default=1_000)
    ap.add_argument("--only", choices=["text", "pdf"], help="measure one folder only")
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f} / {os.getloadavg()[1]:.1f} / {os.getloadavg()[2]:.1f} "
          f"(1 / 5 / 15 min), {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="bench-decide-") as tmp:
        tmp = Path(tmp)
        text, pdfs = tmp / "text", tmp / "pdf"
        text.mkdir()
        pdfs.mkdir()
        t0 = time.perf_counter()
        size = text_folder(text, args.files, args.mb) if args.only != "pdf" else 0
        pages = pdf_folder(pdfs, args.pdf_pages) if args.only != "text" else 0
        print(f"generated {size / 1e6:,.0f} MB of text files and {pages:,} PDF pages in "
              f"{time.perf_counter() - t0:.0f} s")
        for name, folder, goal in (("text", text, f"{args.files:,} files / {size / 1e6:,.0f} MB"),
                                   ("pdf", pdfs, f"{pages:,} PDF pages")):
            if args.only and name != args.only:
                continue
            walls, peak, cpu = run(folder, tmp / f"memo-{name}", args.runs)
            med = statistics.median(walls)
            print(f"ctxlab decide offline, {goal:28s} median {med:6.1f} s (runs: "
                  f"{', '.join(f'{w:.1f}' for w in walls)}; CPU {statistics.median(cpu):.1f} s)  peak RSS {peak:,.0f} MB   goal <= {GOAL_S:.0f} s"
                  f"{' and < 1 GB' if name == 'text' else ''}: "
                  f"{'met' if med <= GOAL_S and (name != 'text' or peak < GOAL_RSS_MB) else 'NOT met'}")
    print(f"load average after: {os.getloadavg()[0]:.1f} / {os.getloadavg()[1]:.1f} / {os.getloadavg()[2]:.1f}")


if __name__ == "__main__":
    main()
