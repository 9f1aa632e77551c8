"""The instructor guide's schedule gives every lesson the time its notebook states, and its total adds up."""
from __future__ import annotations

import re
from pathlib import Path

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
