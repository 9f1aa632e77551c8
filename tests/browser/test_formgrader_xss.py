"""A hostile submission opened in formgrader by the instructor runs nothing (issue 31).

tests/hostile_html.py grades a submission whose written answer, outputs, attachments, raw
cell, extra file and LMS name carry script aimed at a canary: a request to a canary URL,
a kernel started and a file written with the instructor's Jupyter session. The instructor's
JupyterLab runs in the course root (the guide's step: JupyterLab in ``grading/``), and
Chromium opens the submission in formgrader as the instructor. Nothing may run: no request
reaches the canary, no kernel is started, no file is written. The page still shows the
learner's answer (the payload as text) and formgrader's own controls work (its scripts run
under the Content-Security-Policy). Last, the policy itself is checked: an inline script
added to the page is refused, and the learner's ``.html`` file served by formgrader runs
nothing.
"""
from __future__ import annotations

import json
import os
import sys
import time
import urllib.request
from pathlib import Path

import pytest

import hostile_html
from .conftest import jupyter_lab, shot

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def canary():
    c = hostile_html.Canary()
    yield c
    c.close()


@pytest.fixture(scope="module")
def formgrader(tmp_path_factory, canary):
    """(base_url, token, course root, hostile submission) of the instructor's JupyterLab in the course root."""
    tmp = tmp_path_factory.mktemp("xss")
    graded = hostile_html.build(tmp, canary.url)
    root = graded["root"]
    env = dict(os.environ, CTXLAB_OFFLINE="1", JUPYTER_CONFIG_DIR=str(tmp / ".jupyter"),
               JUPYTERLAB_SETTINGS_DIR=str(tmp / ".lab-settings"))
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    # started in the course root, as the guide says (formgrader reads nbgrader_config.py there)
    with jupyter_lab(root, tmp / "jupyter.log", env, cwd=root) as (base, token):
        yield base, token, root, graded


def _kernels(base: str, token: str) -> list:
    with urllib.request.urlopen(f"{base}/api/kernels?token={token}", timeout=10) as r:
        return json.loads(r.read())


def test_hostile_submission_runs_nothing_in_formgrader(formgrader, canary, page):
    base, token, root, graded = formgrader
    assert _kernels(base, token) == []
    page.goto(f"{base}/formgrader?token={token}", wait_until="domcontentloaded")   # logs in (cookie)
    url = f"{base}/formgrader/submissions/{graded['submission_id']}/?index=0"
    response = page.goto(url, wait_until="load")
    assert response.status == 200
    policies = response.header_values("content-security-policy")
    assert any("script-src" in p and "'unsafe-inline'" not in p.split("script-src")[1].split(";")[0] for p in policies), policies
    # formgrader's own scripts run under the policy: a test cell's score box shows its automatic score
    page.wait_for_function("() => { const e = document.querySelector('input.score#choose_path-tests');"
                           " return e !== null && e.placeholder !== ''; }", timeout=60_000)
    page.wait_for_timeout(3000)   # time for any payload (image errors, fetches) to fire
    text = page.inner_text("#notebook")
    assert hostile_html.ANSWER_TEXT in text
    assert "<img src=x onerror=" in text or "<script>(function()" in text   # the payload shown as text
    shot(page, "formgrader_xss")
    assert canary.requests == [], canary.requests
    assert _kernels(base, token) == []
    assert not list(root.rglob(hostile_html.MARK))
    # and the instructor grades the written answer as usual: the score reaches the gradebook
    page.fill("input.score#why-not-rag", "1.5")
    page.press("input.score#why-not-rag", "Tab")
    page.wait_for_function("() => document.querySelector('input.score#why-not-rag').value === '1.5'")
    deadline = time.time() + 30
    while hostile_html.written_score(root) != 1.5 and time.time() < deadline:
        time.sleep(0.5)
    assert hostile_html.written_score(root) == 1.5
    # no element of the page carries the payload as script: not a <script>, an event handler or a javascript: URL
    armed = page.evaluate("""(canary) => [...document.querySelectorAll('*')].filter(e =>
        (e.tagName === 'SCRIPT' && e.textContent.includes(canary)) ||
        [...e.attributes].some(a => a.value.includes(canary) && (a.name.startsWith('on') || /^\\s*javascript:/i.test(a.value)))
    ).map(e => e.outerHTML.slice(0, 200))""", graded["canary"])
    assert armed == [], armed


def test_the_policy_refuses_inline_script_and_the_learners_files_run_nothing(formgrader, canary, page):
    base, token, root, graded = formgrader
    page.goto(f"{base}/formgrader?token={token}", wait_until="domcontentloaded")
    page.goto(f"{base}/formgrader/submissions/{graded['submission_id']}/?index=0", wait_until="load")
    ran = page.evaluate("""() => new Promise(done => {
        window.__ctxlab_ran = false;
        const s = document.createElement('script');
        s.textContent = 'window.__ctxlab_ran = true';
        document.body.appendChild(s);
        setTimeout(() => done(window.__ctxlab_ran), 500);
    })""")
    assert ran is False
    assert (root / "autograded" / hostile_html.STUDENT / hostile_html.ASSIGNMENT / "notes.html").exists()
    response = page.goto(f"{base}/formgrader/submissions/{graded['submission_id']}/notes.html", wait_until="load")
    assert response.status == 200
    page.wait_for_timeout(2000)
    assert canary.requests == [], canary.requests
    assert _kernels(base, token) == []
    assert not list(root.rglob(hostile_html.MARK))
