"""`make setup` notices a .venv made for another folder (a moved or copied checkout) and rebuilds it."""
import shutil
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def _checkout(tmp_path: Path, stamp: str) -> Path:
    work = tmp_path / "copy"
    work.mkdir()
    for name in ("Makefile", "requirements.txt", "pyproject.toml"):
        shutil.copy(ROOT / name, work / name)
    time.sleep(0.01)
    (work / ".venv" / "bin").mkdir(parents=True)
    (work / ".venv" / "bin" / "python").write_text("#!/bin/sh\n", encoding="utf-8")
    (work / ".venv" / "bin" / "python").chmod(0o755)
    (work / ".venv" / ".installed-stamp").write_text(stamp + "\n", encoding="utf-8")
    return work


def _dry_setup(work: Path) -> str:
    proc = subprocess.run(["make", "-n", "setup"], cwd=work, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout + proc.stderr


def test_a_venv_of_another_folder_is_rebuilt(tmp_path):
    work = _checkout(tmp_path, "/somewhere/else")
    out = _dry_setup(work)
    assert "made in another folder" in out and "/somewhere/else" in out
    assert not (work / ".venv").exists(), "the dead venv should be removed"
    assert "-m venv .venv" in out and "pip install" in out


def test_the_venv_of_this_folder_is_kept(tmp_path):
    work = _checkout(tmp_path, "")
    (work / ".venv" / ".installed-stamp").write_text(str(work.resolve()) + "\n", encoding="utf-8")
    out = _dry_setup(work)
    assert "another folder" not in out
    assert (work / ".venv" / "bin" / "python").exists()
    assert "pip install" not in out


def test_make_lab_says_which_port_it_uses_when_the_port_is_taken():
    """`make lab` picks the next free port itself (FREE_PORT in the Makefile) and prints the URL to open."""
    import socket
    import sys

    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    snippet = text.split("FREE_PORT := ", 1)[1].split("\n", 1)[0]
    recipe = text.split("\nlab: setup\n", 1)[1].split("\n\n", 1)[0]
    assert "$(FREE_PORT)" in recipe and "--ServerApp.port_retries=0" in recipe and "http://localhost:$$port/lab" in recipe
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        got = subprocess.run([sys.executable, "-c", snippet, str(port)], capture_output=True, text=True, timeout=30)
        assert got.returncode == 0, got.stderr
        assert int(got.stdout) > port
    free = subprocess.run([sys.executable, "-c", snippet, str(port)], capture_output=True, text=True, timeout=30)
    assert int(free.stdout) == port   # control: once free, the asked port is the one used
