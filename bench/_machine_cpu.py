"""Machine-wide CPU time from /proc/stat, and a pytest plugin that records it per test.

A test's work runs in many processes: nbgrader, its sandboxed kernels, the hub's servers. The
resource usage of child processes (``RUSAGE_CHILDREN``) misses most of them: a sandboxed kernel
lives in a PID namespace of its own and is killed with it, never waited for by the process tree
the suite started, so its CPU time is never added to anyone's children's total. What the machine
as a whole spent is in /proc/stat. On a quiet machine (nothing else running) that is the suite's
CPU time; with other work running it counts that too, so :func:`busy_seconds` is only meaningful
on a quiet machine, and the figures say so.

As a plugin (``-p _machine_cpu`` with bench/ on ``PYTHONPATH`` and ``CTXLAB_BENCH_CPU_LOG`` set to
a file), every test's wall time and the machine's busy CPU time over it (setup, call and
teardown: the first test of a file pays for its fixtures) are appended to that file as JSON
lines. Only a serial run (``-p no:xdist``) gives each test its own CPU figure.
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
    cpu0, t0 = busy_seconds(), time.perf_counter()
    yield
    if log:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"nodeid": item.nodeid, "wall": time.perf_counter() - t0,
                                 "cpu": busy_seconds() - cpu0}) + "\n")
