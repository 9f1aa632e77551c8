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


def test_schedule_matches_the_notebooks():
    guide = (ROOT / "docs" / "instructor.md").read_text(encoding="utf-8")
    two_days = guide.split("### 2 日間")[1].split("###")[0]
    rows = dict((name, int(minutes)) for name, minutes in
                re.findall(r"^\| [^|]*\| (\d\d_[a-z_]+): [^|]*\| (\d+) 分 \|", two_days, re.M))
    headers = _header_minutes()
    assert rows == headers, "docs/instructor.md's schedule and the notebooks' 所要時間 differ"
    total = int(re.search(r"レッスンの合計は (\d+) 分", guide).group(1))
    assert total == sum(headers.values())
