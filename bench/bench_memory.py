"""Memory of a learner's server: each lesson's kernel at its peak, and the Jupyter server itself.

For the class sizes of docs/instructor.md (section 3, 規模) and z2jh-values.yaml's
singleuser.memory. Each solution notebook runs offline in a fresh kernel (nbclient); a last
cell reads the kernel's peak resident set (VmHWM of /proc/self/status). The server is
JupyterLab with this environment's extensions (nbgrader's), after it has served /lab once
(VmRSS of its process). Prints the median of several runs, in MB.

Usage: python bench/bench_memory.py [--runs N] [lesson ...]
"""
from __future__ import annotations

import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import requests
from nbclient import NotebookClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import lesson_args  # noqa: E402

_PEAK = "print([l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')][0])"


def kernel_peak_mb(path: Path) -> float:
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(_PEAK))
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    return int(nb.cells[-1].outputs[0]["text"].strip()) / 1024


def server_mb() -> float:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = secrets.token_hex(8)
    with tempfile.TemporaryDirectory() as home:
        proc = subprocess.Popen([str(Path(sys.executable).parent / "jupyter-lab"), "--no-browser", f"--port={port}",
                                 f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={home}", "--allow-root"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "HOME": home})
        try:
            url = f"http://127.0.0.1:{port}"
            for _ in range(240):
                try:
                    if requests.get(f"{url}/api/status", params={"token": token}, timeout=2).ok:
                        break
                except requests.RequestException:
                    time.sleep(0.5)
            requests.get(f"{url}/lab", params={"token": token}, timeout=30).raise_for_status()
            status = Path(f"/proc/{proc.pid}/status").read_text()
            return int(next(l.split()[1] for l in status.splitlines() if l.startswith("VmRSS"))) / 1024
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def main() -> None:
    args, paths = lesson_args(__doc__)
    peaks = {}
    for path in paths:
        runs = [kernel_peak_mb(path) for _ in range(args.runs)]
        peaks[path.stem] = statistics.median(runs)
        print(f"{path.stem:28s} kernel peak  median {peaks[path.stem]:6.0f} MB   (n={args.runs})", flush=True)
    server = statistics.median(server_mb() for _ in range(args.runs))
    print(f"{'JupyterLab server':28s} resident     median {server:6.0f} MB   (n={args.runs})")
    if peaks:
        top = max(peaks, key=peaks.get)
        print(f"one learner, the largest lesson ({top}) open: about {server + peaks[top]:.0f} MB")


if __name__ == "__main__":
    main()
