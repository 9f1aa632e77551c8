"""CPU share of an honest grading kernel next to a kernel that starts 30 busy processes.

    .venv/bin/python bench/bench_cpu_share.py [--rounds 5] [--busy 60]

Two sandboxed kernels run at once, as two grading workers do: the attacker (tests/attacks.py
SESSIONS) forks 30 processes that spin for ``--busy`` seconds, each trying to start a session
of its own; the honest one times a fixed CPU loop ``--rounds`` times. Linux's scheduler
(autogroup) shares CPU between sessions, so 30 sessions take 30 shares. Printed: the median
round of the honest kernel alone, next to the attacker with the sandbox as it is (setsid
refused: the attacker's processes share one session), and next to the attacker with setsid
allowed (the sandbox before issue 31). Other work on the machine changes every figure: the
load average is printed; never fails on time.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

HONEST = ("import json, time\nts = []\nfor _ in range({rounds}):\n    t = time.perf_counter()\n"
          "    sum(i * i for i in range(3_000_000))\n    ts.append(time.perf_counter() - t)\nprint(json.dumps(ts))\n")


def run_kernel(code: str, allow_setsid: bool) -> str:
    """Run one cell in a sandboxed kernel as nbgrader does; what it printed."""
    import nbformat

    from ctxlab.grading import _seccomp, isolation

    if allow_setsid:
        _seccomp.DENIED_SYSCALLS = tuple(x for x in _seccomp.DENIED_SYSCALLS if x != "setsid")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    with tempfile.TemporaryDirectory() as folder:   # the kernel's working folder (not /tmp itself: it is the sandbox's /tmp)
        isolation.IsolatedExecute(timeout=600, startup_timeout=120).preprocess(nb, {"metadata": {"path": folder}})
    return "".join(o.get("text", "") for o in nb.cells[0].outputs)


def child(role: str, args) -> subprocess.Popen:
    cmd = [sys.executable, __file__, "--role", role, "--rounds", str(args.rounds), "--busy", str(args.busy)]
    return subprocess.Popen(cmd + (["--allow-setsid"] if args.allow_setsid else []), stdout=subprocess.PIPE, text=True)


def descendants(pid: int) -> int:
    """How many processes descend from ``pid`` (from /proc: bwrap, the launcher's kernel, its children)."""
    parent = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(stat.parent.name)] = int(fields[1])
    found, frontier = 0, {pid}
    while frontier:
        frontier = {p for p, pp in parent.items() if pp in frontier}
        found += len(frontier)
    return found


def honest_rounds(args) -> list[float]:
    out = child("honest", args).communicate()[0]
    return json.loads(out.strip().splitlines()[-1])


def scenario(args, attacker: bool, allow_setsid: bool) -> list[float]:
    args.allow_setsid = allow_setsid
    if not attacker:
        return honest_rounds(args)
    atk = child("attacker", args)
    deadline = time.time() + args.head_start
    while descendants(atk.pid) < 30 + 3 and time.time() < deadline:   # its kernel has started and forked
        time.sleep(0.5)
    print(f"  attacker's processes when the honest kernel starts: {descendants(atk.pid)}")
    try:
        return honest_rounds(args)
    finally:
        atk.communicate()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--busy", type=int, default=60, help="seconds the attacker's processes spin")
    ap.add_argument("--head-start", type=float, default=120.0,
                    help="at most this many seconds for the attacker's 30 processes to start before the honest kernel")
    ap.add_argument("--role", choices=["honest", "attacker"])
    ap.add_argument("--allow-setsid", action="store_true")
    args = ap.parse_args()
    if args.role == "honest":
        print(run_kernel(HONEST.format(rounds=args.rounds), args.allow_setsid).strip().splitlines()[-1])
        return
    if args.role == "attacker":
        import attacks

        print(run_kernel(attacks.SESSIONS.replace("{seconds}", str(args.busy)), args.allow_setsid))
        return
    print(f"load average before: {os.getloadavg()[0]:.2f} (cores: {os.cpu_count()})")
    rows = [("honest kernel alone", scenario(args, False, False)),
            ("next to 30 busy processes, setsid refused (the sandbox now)", scenario(args, True, False)),
            ("next to 30 busy processes, setsid allowed (before)", scenario(args, True, True))]
    alone = statistics.median(rows[0][1])
    for name, ts in rows:
        med = statistics.median(ts)
        print(f"{name}: median round {med:.2f} s ({med / alone:.1f}x alone), rounds {', '.join(f'{t:.2f}' for t in ts)}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
