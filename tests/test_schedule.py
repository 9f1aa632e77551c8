"""The instructor guide's schedule gives every lesson the time its notebook states, and its total adds up."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _header_minutes() -> dict[str, int]:
    out = {}
    for path in sorted((ROOT / "solutions").glob("*/*.py")):
        m = re.search(r"\*\*所要時間\*\* 約 (\d+) 分", path.read_text(encoding="utf-8"))
        assert m, f"{path.name} states no 所要時間"
        out[path.parent.name] = int(m.group(1))
    return out


def _lessons(table: str) -> dict[str, int]:
    """lesson -> minutes of a schedule table's rows that name a lesson."""
    return {name: int(minutes) for name, minutes in
            re.findall(r"^\| [^|]*\| (\d\d_[a-z_]+)[ :（][^|]*\| (\d+) 分 \|", table, re.M)}


def test_schedule_matches_the_notebooks():
    guide = (ROOT / "docs" / "instructor.md").read_text(encoding="utf-8")
    rows = _lessons(guide.split("### 3 日間")[1].split("###")[0])
    headers = _header_minutes()
    assert rows == headers, "docs/instructor.md's schedule and the notebooks' 所要時間 differ"
    total = int(re.search(r"レッスンの合計は (\d+) 分", guide).group(1))
    assert total == sum(headers.values())


def test_one_day_schedule_uses_the_notebooks_times():
    guide = (ROOT / "docs" / "instructor.md").read_text(encoding="utf-8")
    one_day = guide.split("### 1 日（")[1].split("###")[0]
    rows, headers = _lessons(one_day), _header_minutes()
    assert rows == {n: headers[n] for n in rows}, rows
    assert set(rows) >= {"00_start_here", "09_knowledge_check"}
    assert int(re.search(r"1 日版のレッスンは (\d+) 分", guide).group(1)) == sum(rows.values())
    clock = [int(h) * 60 + int(m) for h, m in re.findall(r"^\| (\d\d):(\d\d) \|", one_day, re.M)]
    lengths = [int(m) for m in re.findall(r"\| (\d+) 分 \|", one_day)]
    assert [b - a for a, b in zip(clock, clock[1:])] == lengths[:-1], "each row starts when the one before ends"


def test_the_documents_hold_what_course_times_writes():
    """README's course map and the guide's schedules are written by tools/course_times.py from the lessons'
    stated times (run `.venv/bin/python tools/course_times.py --docs` after changing a lesson's 所要時間)."""
    import course_times

    for path, text in course_times.rendered(ROOT).items():
        assert path.read_text(encoding="utf-8") == text, f"{path.name}: run .venv/bin/python tools/course_times.py --docs"


def test_the_map_and_the_guide_state_core_and_optional_totals():
    import course_times

    times = course_times.stated_times(ROOT)
    core, total = sum(s.core for s in times.values()), sum(s.total for s in times.values())
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"核の合計は約 {core} 分" in readme and f"任意の部分を含めると約 {total} 分" in readme
    for name, s in times.items():
        cell = f"約 {s.core} 分" + (f"（任意 +{s.optional} 分）" if s.optional else "")
        assert re.search(rf"^\| {name} \| .* \| {re.escape(cell)} \|$", readme, re.M), (name, cell)
    guide = (ROOT / "docs" / "instructor.md").read_text(encoding="utf-8")
    assert f"任意の部分（合計 {total - core} 分）は自習に回します" in guide
    assert f"任意の部分を含めると約 {total} 分" in guide


def test_course_times_places_each_row_after_the_one_before_and_names_missing_markers(tmp_path):
    """Positive control: a changed lesson time moves every later row of its day; a document without markers
    gets a message that says what to add, not a traceback."""
    import course_times

    times = course_times.stated_times(ROOT)
    longer = dict(times, **{"00_start_here": course_times.Stated(times["00_start_here"].core + 15, times["00_start_here"].total + 15)})
    before = course_times.guide_regions(times)["three-days"]
    after = course_times.guide_regions(longer)["three-days"]
    assert before != after
    clock = lambda text: re.findall(r"^\| (?:\*\*1 日目\*\* )?(\d\d:\d\d) \|", text, re.M)
    assert clock(after)[2] == course_times._clock(int(clock(before)[2][:2]) * 60 + int(clock(before)[2][3:]) + 15)
    with pytest.raises(SystemExit, match="course-times:map:start"):
        course_times._replace("no markers here", "map", "x", ROOT / "README.md")
