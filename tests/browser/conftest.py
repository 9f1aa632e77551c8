"""A real JupyterLab server and Debian's Chromium driven by Playwright.

The server runs on a free localhost port with token auth, on a scratch copy of course/
(so running cells never changes the repository), and is stopped by its own PID at the
end, also when a test fails. Without Chromium the tests are skipped with one line saying
how to enable them; in CI (.ci/run installs Chromium) a missing browser is an error.
"""
from __future__ import annotations

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


@pytest.fixture(scope="session")
def lab(tmp_path_factory):
    """(base_url, token, root) of a running JupyterLab on a scratch copy of course/."""
    root = tmp_path_factory.mktemp("lab")
    shutil.copytree(ROOT / "course", root, dirs_exist_ok=True)
    port, token = _free_port(), secrets.token_hex(16)
    settings = root / ".lab-settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    # no news/update pop-up over the notebook in screenshots
    (settings / "notification.jupyterlab-settings").write_text('{"fetchNews": "false", "checkForUpdates": false}')
    env = dict(os.environ, CTXLAB_OFFLINE="1", CTXLAB_TIME_SCALE="0", JUPYTER_CONFIG_DIR=str(root / ".jupyter"),
               JUPYTERLAB_SETTINGS_DIR=str(root / ".lab-settings"))
    env.pop("ANTHROPIC_API_KEY", None)
    exe = Path(sys.executable).parent / "jupyter-lab"
    cmd = [str(exe), "--no-browser", f"--port={port}", "--ip=127.0.0.1", f"--ServerApp.root_dir={root}",
           f"--IdentityProvider.token={token}", "--ServerApp.open_browser=False",
           "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    log = open(root / "jupyter.log", "w")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
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
                raise RuntimeError("JupyterLab did not start:\n" + (root / "jupyter.log").read_text()[-3000:])
            time.sleep(0.5)
        yield base, token, root
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()


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
    one would keep the notebooks of earlier tests open in hidden tabs)."""
    base, token, _ = lab
    workspace = "t-" + secrets.token_hex(4)
    page.goto(f"{base}/lab/workspaces/{workspace}/tree/{relpath}?reset&token={token}", wait_until="domcontentloaded")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=90_000)
    page.wait_for_selector("#jp-main-statusbar >> text=Idle", timeout=90_000)


def run_all(page, timeout_ms: int = 180_000):
    page.locator(".jp-Notebook:visible").first.click()
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    # wait until the kernel has executed every cell: no cell shows [*] any more
    page.wait_for_function(
        "() => { const p = [...document.querySelectorAll('.jp-InputPrompt')];"
        " return p.length > 0 && p.every(e => !e.textContent.includes('*'))"
        " && [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].some(e => /\\[\\d+\\]/.test(e.textContent)); }",
        timeout=timeout_ms)
    page.wait_for_selector("#jp-main-statusbar >> text=Idle", timeout=timeout_ms)
