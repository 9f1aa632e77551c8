"""Lesson 11 (ctxlab decide): a request log read into request times, and what each TTL makes of it.

:func:`read_log` takes one timestamp a line, or a CSV whose header has a ``timestamp`` column
(also ``time``, ``datetime``, ``date``, ``created_at``). A timestamp is ISO 8601 or
``YYYY-MM-DD HH:MM[:SS]``, with or without a time zone (times without one are taken as they are).
Lines that do not parse are counted, skipped and reported (the first few with their line
numbers); a log with no valid line raises :class:`~ctxlab.errors.InputError`.

:func:`replay` applies lesson 04's rule (:func:`ctxlab.costs.traffic.hit_rate`: a request hits
when it starts less than one TTL after the previous one) to the whole log for each TTL.
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from ctxlab.costs import traffic
from ctxlab.errors import InputError

TIME_COLUMNS = ("timestamp", "time", "datetime", "date", "created_at", "時刻", "日時")
#: how many unparseable lines are quoted
SHOW_BAD = 5


@dataclass
class Log:
    """Request times (seconds since the epoch, sorted) and what was skipped."""

    path: Path
    times: list[float]
    days: int                                   # calendar days with at least one request
    first: datetime
    last: datetime
    bad: int = 0
    bad_examples: list[tuple[int, str]] = field(default_factory=list)   # (line number, the line)

    @property
    def per_day(self) -> float:
        """Requests per day with traffic (the log's days, not the calendar's)."""
        return len(self.times) / self.days

    def bad_report(self) -> str:
        if not self.bad:
            return ""
        shown = "; ".join(f"{n} 行目 {line[:40]!r}" for n, line in self.bad_examples)
        return f"{self.path.name}: 読めない {self.bad:,} 行を飛ばしました（例: {shown}）"


def parse_time(text: str) -> datetime:
    """ISO 8601 or ``YYYY-MM-DD HH:MM[:SS]`` (a ``/`` between date parts too), with or without a zone."""
    s = text.strip().strip('"')
    if not s:
        raise ValueError("empty")
    s = s.replace("/", "-")
    if s.endswith(("Z", "z")):
        s = s[:-1] + "+00:00"
    t = datetime.fromisoformat(s)
    if len(s) <= 10:   # a date without a time is not a request time
        raise ValueError("a date without a time")
    return t


def _epoch(t: datetime) -> float:
    # times without a zone are kept as wall-clock times (all of one log are read the same way)
    return (t if t.tzinfo else t.replace(tzinfo=timezone.utc)).timestamp()


def _lines(text: str) -> tuple[list[tuple[int, str]], str | None]:
    """(line number, timestamp text) per data line, and the CSV column used (None for one a line)."""
    lines = text.splitlines()
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        return [], None
    head = lines[first]
    if "," in head or "\t" in head:
        dialect = "excel-tab" if "\t" in head and "," not in head else "excel"
        rows = list(csv.reader(io.StringIO("\n".join(lines[first:])), dialect=dialect))
        header = [h.strip().lower().lstrip("\ufeff") for h in rows[0]]
        col = next((header.index(c) for c in TIME_COLUMNS if c in header), None)
        if col is None:
            raise InputError(f"CSV の見出し {rows[0]} に時刻の列がありません。列名を timestamp にしてください "
                             f"(one of: {', '.join(TIME_COLUMNS)})")
        return [(first + 1 + i, row[col] if col < len(row) else "") for i, row in enumerate(rows[1:], 1)
                if any(c.strip() for c in row)], header[col]
    return [(i + 1, line) for i, line in enumerate(lines) if line.strip()], None


def read_log(path: str | Path) -> Log:
    """Read a request log (see the module docstring)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: ログファイルがありません。--log にリクエストのログ（1 行に 1 時刻、または CSV）を指定してください。")
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(f"{path}: UTF-8 で読めません。UTF-8 で保存し直してください。") from None
    rows, _col = _lines(text)
    times: list[tuple[float, datetime]] = []
    bad: list[tuple[int, str]] = []
    zones = set()
    for n, s in rows:
        try:
            t = parse_time(s)
        except ValueError:
            bad.append((n, s))
            continue
        zones.add(t.tzinfo is not None)
        times.append((_epoch(t), t))
    if len(zones) > 1:
        raise InputError(f"{path}: タイムゾーン付きの時刻と無しの時刻が混ざっています。どちらかにそろえてください。")
    if not times:
        shown = "; ".join(f"{n} 行目 {s[:40]!r}" for n, s in bad[:SHOW_BAD]) or "空のファイル"
        raise InputError(f"{path}: 時刻として読める行が 1 つもありません（{shown}）。"
                         "1 行に 1 つ、2026-11-02T09:15:00+09:00 か 2026-11-02 09:15 の形で書いてください。")
    times.sort()
    days = len({t.date() for _, t in times})
    return Log(path, [e for e, _ in times], days, times[0][1], times[-1][1], len(bad), bad[:SHOW_BAD])


@dataclass(frozen=True)
class Replayed:
    """Hit rate per TTL of a log, by lesson 04's rule."""

    hit_rates: dict[str, float]
    requests: int


def replay(log: Log) -> Replayed:
    return Replayed({ttl: traffic.hit_rate(log.times, ttl) for ttl in traffic.TTL_SECONDS}, len(log.times))
