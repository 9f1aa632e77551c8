"""The course's times in README's course map and docs/instructor.md's schedules, written from the lessons.

Each lesson states its time in its header (「**所要時間** 約 N 分（任意の部分を含めると約 M 分）」), which
tests/test_site.py keeps within 10% of the learner-time model (tools/learner_time.py) on the site's executed
lessons. This tool writes what the documents say about times from those stated times, so one command refreshes
them after a lesson changes:

* README.md: the course map's 時間 column (core, and the optional parts when a lesson has them) and its totals;
* docs/instructor.md: the model's times per lesson, the 3-day and 1-day schedules (clock times recomputed:
  each row starts when the one before ends), their totals and the half-day line.

The schedules run the **core** of each lesson; the optional parts (（任意） headings) are left to self-study.

Usage: .venv/bin/python tools/course_times.py [--docs | --check] [--model]
  (no option) print each lesson's stated core and optional minutes and the totals
  --docs   rewrite the marked regions of README.md and docs/instructor.md
  --check  exit 1 when the documents differ from what --docs would write
  --model  also compare each lesson's stated times with the model on build/site/executed (run `make site` first)
"""
from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import learner_time as lt  # noqa: E402

README = ROOT / "README.md"
GUIDE = ROOT / "docs" / "instructor.md"
START, END = "<!-- course-times:{}:start (tools/course_times.py writes this) -->", "<!-- course-times:{}:end -->"

# The schedules: (label, minutes or lesson id, submission). A lesson's row takes its stated core time.
DAY_START = "09:30"
THREE_DAYS = [
    [("導入・環境確認（`make lab`、1 つ目のセルに「モード: オフライン sandbox」と出ることを全員で確かめる）", 20, ""),
     ("00_start_here: 50% の前提（経験則）、4 つの数字、3 つの方式", "00_start_here", "00"),
     ("01_count_tokens: count_tokens と推定、使用率", "01_count_tokens", "01"),
     ("休憩", 10, ""),
     ("02_pricing: 1 回あたりと月額、比較表、ヒット率はトラフィックから", "02_pricing", "02"),
     ("昼休み", 60, ""),
     ("03_prompt_caching: 前方一致、区切り、損益分岐", "03_prompt_caching", "03"),
     ("休憩", 10, ""),
     ("1 日目のふりかえり（00〜03 を提出）。講師は提出を `ctxlab grade` で自動採点し、夜に記述を採点する（下の「記述問題の採点計画」）", 20, "")],
    [("04_ttl: 5 分と 1 時間、ログからヒット率", "04_ttl", "04"),
     ("休憩", 10, ""),
     ("05_crossover: ウィジェットで交点を動かす、ρ と k の 2 軸", "05_crossover", "05"),
     ("昼休み", 60, ""),
     ("06_metadata_filtering: 中間の選択肢、固定セット", "06_metadata_filtering", "06"),
     ("休憩", 10, ""),
     ("07_citations: 文書ブロックと文字位置", "07_citations", "07"),
     ("2 日目のふりかえり（04〜07 を提出。講師は夜に自動採点と記述の採点）", 20, "")],
    [("08_measure: 30 問で測る、採点を測る、差は偶然か、4 つの数字で決める", "08_measure", "08"),
     ("昼休み", 60, ""),
     ("10_rag_lab: 日本語 BM25、文脈付きチャンク、RRF、recall@20", "10_rag_lab", "10"),
     ("休憩", 10, ""),
     ("09_knowledge_check: 9 問の確認テストと記述", "09_knowledge_check", "09"),
     ("11_decide: 自社の数字で決める（`ctxlab decide` の手順と意思決定メモ。自社の文書を持ち込んでもよい）", "11_decide", "11"),
     ("まとめ・記述問題の講評（00〜07 は記述まで確定した点を返す。08〜11 は後日 `ctxlab grade` で採点して返す）", 30, "")],
]
ONE_DAY = [
    ("導入・環境確認（1 つ目のセルに「モード: オフライン sandbox」と出るか）", 15, ""),
    ("00_start_here", "00_start_here", "00"),
    ("02_pricing", "02_pricing", "02"),
    ("昼休み（講師は 00・02 を `ctxlab grade` で自動採点）", 55, ""),
    ("03_prompt_caching", "03_prompt_caching", "03"),
    ("休憩", 10, ""),
    ("09_knowledge_check（9 問と記述）", "09_knowledge_check", "09"),
    ("まとめ・記述問題の講評（自動採点分の点を返す。記述の点と 09 の解説は締め切り後）", 30, ""),
]
HALF_DAY = ["00_start_here", "02_pricing", None, "09_knowledge_check"]   # None: a break


@dataclass(frozen=True)
class Stated:
    core: int
    total: int          # with the optional parts (= core when the lesson has none)

    @property
    def optional(self) -> int:
        return self.total - self.core


def stated_times(root: Path = ROOT) -> dict[str, Stated]:
    """lesson -> the minutes its header states (core, with the optional parts)."""
    out = {}
    for src in sorted((root / "solutions").glob("*/*.ipynb")):
        said = lt.stated(src)
        if said is None:
            raise SystemExit(f"{src.parent.name}: no 「**所要時間** 約 N 分」 in its header: add it (the model's time: "
                             "bench/bench_learner_time.py) and run this again")
        out[src.parent.name] = Stated(said[0], said[1] if said[1] is not None else said[0])
    return out


def _hours(minutes: int) -> str:
    h, m = divmod(minutes, 60)
    return f"{h} 時間" + (f" {m} 分" if m else "")


def _clock(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _rows(items, times: dict[str, Stated], start: str, first_prefix: str = "") -> tuple[list[str], int, int]:
    """Table rows for a day (each row starts when the one before ends), the lessons' minutes and the day's end."""
    h, m = map(int, start.split(":"))
    now, lessons, rows = h * 60 + m, 0, []
    for i, (label, length, submit) in enumerate(items):
        if isinstance(length, str):
            length, lessons = times[length].core, lessons + times[length].core
        clock = f"{first_prefix} {_clock(now)}" if i == 0 and first_prefix else _clock(now)
        rows.append(f"| {clock} | {label} | {length} 分 | {submit} |")
        now += length
    return rows, lessons, now


def _table(rows: list[str]) -> str:
    return "\n".join(["| 時刻 | 内容 | 時間 | 提出 |", "|---|---|---|---|", *rows])


def _time_cell(s: Stated) -> str:
    return f"約 {s.core} 分" + (f"（任意 +{s.optional} 分）" if s.optional else "")


def _totals(times: dict[str, Stated]) -> tuple[int, int]:
    return sum(s.core for s in times.values()), sum(s.total for s in times.values())


def map_region(times: dict[str, Stated], readme: str) -> str:
    """README's course map: the 内容 of each row is kept, the 時間 column and the totals are written."""
    content = dict(re.findall(r"^\| (\d\d_[a-z_]+) \| (.*) \| [^|]* \|$", readme, re.M))
    core, total = _totals(times)
    rows = [f"| {name} | {content.get(name, '（内容を書く）')} | {_time_cell(s)} |" for name, s in times.items()]
    over = [n[:2] for n, s in times.items() if s.core > lt.CORE_LIMIT]
    note = (f"{'・'.join(over)} の核は 1 回に座る目安（{lt.CORE_LIMIT:.0f} 分）をまだ超えています。" if over else
            f"どのレッスンも核は 1 回に座る目安（{lt.CORE_LIMIT:.0f} 分）以内です。")
    return "\n".join([
        "| レッスン | 内容 | 時間 |", "|---|---|---:|", *rows, "",
        "時間は受講者が読んで実行する時間のモデル（`tools/learner_time.py`: 本文と表示された出力を 500 字/分、コード 1 行 8 秒、図 20 秒、"
        "ウィジェット 1 分、自動採点の演習 1 点 3 分、記述 1 点 4 分、実行時間は実測）から出したもので、各レッスンの冒頭の「所要時間」と同じです。"
        "見出しに（任意）の付いた節は任意の部分で、採点される演習はなく、進行表では自習に回します（「任意 +」がその時間）。"
        f"核の合計は約 {core} 分（約 {_hours(core)}）、任意の部分を含めると約 {total} 分（約 {_hours(total)}）です。{note}"])


def guide_regions(times: dict[str, Stated]) -> dict[str, str]:
    core, total = _totals(times)
    per = "、".join(f"{n[:2]} が約 {s.core} 分" + (f"（任意 +{s.optional} 分）" if s.optional else "") for n, s in times.items())
    model = (
        "各レッスンの冒頭の「所要時間」と README のコースの地図は、モデル（`tools/learner_time.py`: 本文と表示された出力を 500 字/分、"
        "コード 1 行 8 秒、図 20 秒、ウィジェット 1 分、自動採点の演習 1 点 3 分、記述 1 点 4 分、実行時間は実測。`tests/test_site.py` が "
        "10% 以内に保ちます）から出しています。見出しに（任意）の付いた節は任意の部分で、採点される演習はなく、下の進行表では扱わず自習に回します。"
        f"モデルでは {per}、核の合計は約 {core} 分（約 {_hours(core)}）、任意の部分を含めると約 {total} 分です。"
        "下の進行表は核の時間で組んであり、`.venv/bin/python tools/course_times.py --docs` がレッスンの「所要時間」から書き直します"
        "（`.venv/bin/python bench/bench_learner_time.py` は、このマシンでの実行時間を測り直して内訳を出します）。")
    rows, lessons = [], 0
    for day, items in enumerate(THREE_DAYS, start=1):
        day_rows, n, _ = _rows(items, times, DAY_START, f"**{day} 日目**")
        rows += day_rows
        lessons += n
    three = "\n\n".join([
        "各レッスンの時間は、ノートブック冒頭の「所要時間」の核（任意の部分を除く）です。",
        _table(rows),
        f"レッスンの合計は {lessons} 分（{_hours(lessons)}）です。任意の部分（合計 {total - core} 分）は自習に回します。"])
    day_rows, day_lessons, day_end = _rows(ONE_DAY, times, DAY_START)
    one = "\n\n".join([
        f"3 日版から、計算と判断の中心になるレッスンを残します（1 日版のレッスンは {day_lessons} 分。"
        f"導入とまとめ・休憩・昼休みを含めて {DAY_START}〜{_clock(day_end)}）。",
        _table(day_rows)])
    half = " → ".join("休憩" if n is None else f"{n[:2]}（{times[n].core} 分）" for n in HALF_DAY)
    return {"model": model, "three-days": three, "one-day": one, "half-day": f"{half}。03〜08 は自習で補ってもらいます。"}


def _replace(text: str, key: str, body: str, path: Path) -> str:
    start, end = START.format(key), END.format(key)
    if start not in text or end not in text:
        raise SystemExit(f"{path.relative_to(ROOT)} lacks the markers {start} … {end}: put them around the region to write")
    head, rest = text.split(start, 1)
    return head + start + "\n" + body + "\n" + end + rest.split(end, 1)[1]


def rendered(root: Path = ROOT) -> dict[Path, str]:
    """What README.md and docs/instructor.md hold once their time regions are written."""
    times = stated_times(root)
    readme, guide = (root / "README.md"), (root / "docs" / "instructor.md")
    r = readme.read_text(encoding="utf-8")
    r = _replace(r, "map", map_region(times, r), readme)
    g = guide.read_text(encoding="utf-8")
    for key, body in guide_regions(times).items():
        g = _replace(g, key, body, guide)
    return {readme: r, guide: g}


def model_report(root: Path = ROOT) -> list[str]:
    """Each lesson's stated times against the model on the site's executed lessons; lines that are off."""
    executed = root / "build" / "site" / "executed"
    off = []
    for src in sorted((root / "solutions").glob("*/*.ipynb")):
        ran = executed / src.name
        if not ran.exists():
            off.append(f"{src.parent.name}: not executed yet ({ran.relative_to(root)}): run `make site` first")
            continue
        m, said = lt.lesson_time(src, ran), lt.stated(src)
        want = (lt.rounded(m.core_min), lt.rounded(m.total_min))
        print(f"{src.parent.name:22s} model core {m.core_min:5.1f} min, with optional {m.total_min:5.1f}; states {said}; "
              f"would state {want}")
        if said is None or abs(said[0] - m.core_min) > lt.TOLERANCE * m.core_min or (
                said[1] is not None and abs(said[1] - m.total_min) > lt.TOLERANCE * m.total_min):
            off.append(f"{src.parent.name}: states {said}, the model gives {m.core_min:.0f} (with optional {m.total_min:.0f})")
    return off


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", action="store_true")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--model", action="store_true")
    args = ap.parse_args(argv)
    times = stated_times()
    for name, s in times.items():
        print(f"{name:22s} core {s.core:4d} min" + (f", optional +{s.optional}" if s.optional else ""))
    core, total = _totals(times)
    print(f"course: core {core} min, with the optional parts {total} min")
    status = 0
    if args.model:
        off = model_report()
        for line in off:
            print("OFF:", line)
        status = 1 if off else 0
    if args.docs or args.check:
        for path, text in rendered().items():
            if path.read_text(encoding="utf-8") != text:
                if args.docs:
                    path.write_text(text, encoding="utf-8")
                    print(f"wrote {path.relative_to(ROOT)}")
                else:
                    print(f"{path.relative_to(ROOT)} differs: run .venv/bin/python tools/course_times.py --docs")
                    status = 1
    return status


if __name__ == "__main__":
    raise SystemExit(main())
