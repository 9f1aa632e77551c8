"""A real JupyterLab server and Debian's Chromium driven by Playwright.

The server runs on a free localhost port with token auth, on a scratch copy of course/
(so running cells never changes the repository), and is stopped by its own PID at the
end, also when a test fails. Without Chromium the tests are skipped with one line saying
how to enable them; in CI (.ci/run installs Chromium) a missing browser is an error.
"""
from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = ROOT / "artifacts" / "browser"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
ENABLE_HINT = ("browser tests skipped: Chromium not found. To run them: sudo apt-get install chromium "
               "fonts-noto-cjk (or bash .ci/install-system-packages)")


def pytest_collection_modifyitems(config, items):
    if Path(CHROMIUM).exists():
        return
    if os.environ.get("CI"):
        raise pytest.UsageError("CI must run the browser tests, but Chromium is missing: run .ci/install-system-packages")
    skip = pytest.mark.skip(reason=ENABLE_HINT)
    for item in items:
        if "browser" in item.keywords:
            item.add_marker(skip)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def running_lab(root: Path, config_path: Path | str | None = None):
    """A JupyterLab on a scratch copy of course/ in ``root``: yields (base_url, token, root) and
    stops the server by its PID at the end (also used by bench/bench_widget_browser.py).
    ``config_path``: folders of Jupyter settings (os.pathsep between them) for JUPYTER_CONFIG_PATH, as ``make lab`` sets it."""
    shutil.copytree(ROOT / "course", root, dirs_exist_ok=True)
    settings = root / ".lab-settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    # no news/update pop-up over the notebook in screenshots
    (settings / "notification.jupyterlab-settings").write_text('{"fetchNews": "false", "checkForUpdates": false}')
    # JupyterLab 4 renders notebooks windowed: with the default "contentVisibility" (like "defer"; "full"
    # even detaches cells out of view) a notebook opens with only some cells in the DOM, the others are
    # attached when the browser has idle time. On a busy machine that is late: a DOM check then sees a
    # part of the notebook (run_all returned early, outputs not there). "none" attaches every cell at once.
    notebook_settings = root / ".lab-settings" / "@jupyterlab" / "notebook-extension"
    notebook_settings.mkdir(parents=True)
    (notebook_settings / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
    env = dict(os.environ, CTXLAB_OFFLINE="1", CTXLAB_TIME_SCALE="0", JUPYTER_CONFIG_DIR=str(root / ".jupyter"),
               JUPYTERLAB_SETTINGS_DIR=str(root / ".lab-settings"))
    env.pop("JUPYTER_CONFIG_PATH", None)
    if config_path is not None:
        env["JUPYTER_CONFIG_PATH"] = str(config_path)
    with jupyter_lab(root, root / "jupyter.log", env) as (base, token):
        yield base, token, root


@contextlib.contextmanager
def jupyter_lab(root: Path, log_path: Path, env: dict, cwd: Path | None = None):
    """A JupyterLab server on ``root`` (started in ``cwd``), ``(base_url, token)`` while it runs;
    stopped by its own PID afterwards, also when a test fails."""
    env = dict(env)
    env.pop("ANTHROPIC_API_KEY", None)
    port, token = _free_port(), secrets.token_hex(16)
    exe = Path(sys.executable).parent / "jupyter-lab"
    cmd = [str(exe), "--no-browser", f"--port={port}", "--ip=127.0.0.1", f"--ServerApp.root_dir={root}",
           f"--IdentityProvider.token={token}", "--ServerApp.open_browser=False",
           "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    log = open(log_path, "w")
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.time() > deadline:
                raise RuntimeError("JupyterLab did not start:\n" + Path(log_path).read_text()[-3000:])
            time.sleep(0.5)
        yield base, token
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()


@pytest.fixture(scope="session")
def lab(tmp_path_factory):
    """(base_url, token, root) of a running JupyterLab on a scratch copy of course/."""
    with running_lab(tmp_path_factory.mktemp("lab")) as running:
        yield running


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="ja-JP")
    pg = ctx.new_page()
    yield pg
    ctx.close()


def shot(page, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def open_notebook(page, lab, relpath: str):
    """Open one notebook in a fresh workspace of its own (the server remembers workspaces: a shared
    one would keep the notebooks of earlier tests open in hidden tabs). Returns once every cell of the
    file is in the page and the kernel is idle."""
    base, token, root = lab
    nb = json.loads((root / relpath).read_text(encoding="utf-8"))
    n_cells = len(nb["cells"])
    n_code = sum(c["cell_type"] == "code" for c in nb["cells"])
    workspace = "t-" + secrets.token_hex(4)
    page.goto(f"{base}/lab/workspaces/{workspace}/tree/{relpath}?reset&token={token}", wait_until="domcontentloaded")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=90_000)
    # every cell of the file is in the DOM: fails here, not in a later check, if windowing is back
    page.wait_for_function(
        "([n, c]) => document.querySelectorAll('.jp-Notebook:not(.lm-mod-hidden) .jp-Cell').length === n"
        " && document.querySelectorAll('.jp-Notebook:not(.lm-mod-hidden) .jp-CodeCell .jp-InputPrompt').length === c",
        arg=[n_cells, n_code], timeout=90_000)
    page.wait_for_selector("#jp-main-statusbar >> text=Idle", timeout=90_000)


def run_all(page, timeout_ms: int = 180_000):
    """Run All Cells and return when the kernel has finished: every code cell ran or was skipped after
    the first error (no [*] left), at least one has an execution count, and the kernel is idle."""
    prompts = ".jp-Notebook:not(.lm-mod-hidden) .jp-CodeCell .jp-InputPrompt"
    n_code = page.locator(prompts).count()
    assert n_code > 0, "no code cells in the page"
    page.locator(".jp-Notebook:visible").first.click()
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    # Run All marks every code cell [*] at once; each one then gets its count, or [ ] when the kernel
    # skips it after an error. JupyterLab also turns every pending [*] into [ ] as soon as one cell
    # replies with an error (even a raises-exception cell) while the kernel goes on running them, and
    # the kernel is Idle for a moment between two cells: so done means no [*], the kernel Idle, and
    # the prompts unchanged across three looks over two seconds.
    look = ("([sel, n]) => { const p = [...document.querySelectorAll(sel)].map(e => e.textContent);"
            " const bar = document.querySelector('#jp-main-statusbar');"
            " const idle = !!bar && bar.textContent.includes('Idle');"
            " return idle && p.length === n && p.every(t => !t.includes('*')) && p.some(t => /\\[\\d+\\]/.test(t))"
            " ? p.join('|') : ''; }")
    deadline = time.monotonic() + timeout_ms / 1000
    seen, same = None, 0
    while time.monotonic() < deadline:
        state = page.evaluate(look, [prompts, n_code])
        same = same + 1 if state and state == seen else 0
        if same >= 2:
            return
        seen = state
        page.wait_for_timeout(1000)
    raise AssertionError(f"Run All did not settle within {timeout_ms / 1000:.0f} s (a cell still [*] or the kernel busy)")
