"""Lesson 11 (ctxlab decide): the course's procedure on a user's own documents and traffic.

:func:`decide` counts the documents, prices every path on every current model at the user's traffic,
takes (or simulates) the latency, measures (or plans) the accuracy, checks freshness and applies
lesson 00's procedure to the four numbers; :func:`ctxlab.decide.memo.write` turns the result into
the decision memo (HTML and Markdown). The pieces: :mod:`~ctxlab.decide._documents` (the folder),
:mod:`~ctxlab.decide._traffic` (a request log), :mod:`~ctxlab.decide._costs` (months, crossover, flip),
:mod:`~ctxlab.decide._measure` (questions, online measurements, the offline plan) and
:mod:`~ctxlab.decide._verdict` (thresholds and the verdict).
"""
from __future__ import annotations

from ctxlab.decide._core import PER_DAY_GRID, Decision, Options, decide
from ctxlab.decide._documents import Folder, UserDoc, read_folder
from ctxlab.decide._traffic import Log, parse_time, read_log
from ctxlab.decide._verdict import PATH_JA, REASON_JA, parse_duration

__all__ = ["PER_DAY_GRID", "Decision", "Options", "decide", "Folder", "UserDoc", "read_folder", "Log", "parse_time", "read_log",
           "PATH_JA", "REASON_JA", "parse_duration"]
