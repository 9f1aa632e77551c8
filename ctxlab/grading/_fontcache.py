"""matplotlib's font list for grading kernels, built once outside the sandbox.

A sandboxed kernel starts with a fresh, empty home: without a prepared font list matplotlib
would rebuild it for every notebook (seconds each). :func:`font_cache_dir` builds it once per
matplotlib version and the launcher copies it into the kernel's home.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path


def font_cache_dir() -> Path:
    """matplotlib's font list, built once outside the sandbox (a fresh home would rebuild it
    for every notebook, seconds each); the launcher copies it into the kernel's home."""
    from importlib.metadata import version  # not `import matplotlib`: the grader need not pay for it

    name = f"matplotlib-{version('matplotlib')}"
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    d = base / "ctxlab" / name
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError:  # a home the grader cannot write (e.g. HOME left at another user's): a private temp folder
        d = Path(tempfile.gettempdir()) / f"ctxlab-cache-{os.getuid()}" / name
        d.mkdir(parents=True, exist_ok=True, mode=0o700)
    if not any(d.glob("fontlist-*.json")):
        subprocess.run([sys.executable, "-c", "import matplotlib.font_manager"], capture_output=True,
                       env={**os.environ, "MPLCONFIGDIR": str(d)})
    return d
