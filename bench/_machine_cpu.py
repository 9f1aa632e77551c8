"""Machine-wide CPU time from /proc/stat, and a pytest plugin that records it per test.

A test's work runs in many processes: nbgrader, its sandboxed kernels, the hub's servers. The
resource usage of child processes (``RUSAGE_CHILDREN``) misses most of them: a sandboxed kernel
lives in a PID namespace of its own and is killed with it, never waited for by the process tree
the suite started, so its CPU time is never added to anyone's children's total. What the machine
as a whole spent is in /proc/stat. On a quiet machine (nothing else running) that is the suite's
CPU time; with other work running it counts that too, so :func:`busy_seconds` is only meaningful
on a quiet machine, and the figures say so.

As a pytest plugin (tests/conftest.py registers it when ``CTXLAB_BENCH_CPU_LOG`` names a file: not
through ``PYTHONPATH``, which the classroom's servers would inherit), every test's start, wall time,
worker and the machine's busy CPU time over it (setup, call and teardown: the first test of a file
pays for its fixtures) are appended to that file as JSON lines. Only a serial run gives each test
its own CPU figure; with parallel workers the start times show what ran while cores sat idle.
"""
from __future__ import annotations

import json
import os
import time

import pytest

_HZ = os.sysconf("SC_CLK_TCK")


def busy_seconds() -> float:
    """CPU seconds the whole machine has spent busy since boot (every core, every process)."""
    with open("/proc/stat", encoding="ascii") as fh:
        fields = [int(x) for x in fh.readline().split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields[:8]
    return (user + nice + system + irq + softirq + steal) / _HZ


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    log = os.environ.get("CTXLAB_BENCH_CPU_LOG")
    cpu0, start, t0 = busy_seconds(), time.time(), time.perf_counter()
    yield
    if log:
        with open(log, "a", encoding="utf-8") as fh:   # one short line per write: workers' lines never mix
            fh.write(json.dumps({"nodeid": item.nodeid, "start": start, "wall": time.perf_counter() - t0,
                                 "cpu": busy_seconds() - cpu0,
                                 "worker": os.environ.get("PYTEST_XDIST_WORKER", "")}) + "\n")
