"""One learner's path through the JupyterHub classroom in Chromium, and the instructor's formgrader.

A real hub (tests/hubclass.py, deploy/jupyterhub as shipped): the instructor has released
00_start_here; the learner logs in on the hub's page, opens Nbgrader > Assignment List,
fetches the assignment, opens it and submits it from that tab. The instructor opens the
formgrader in a browser tab of its own: JupyterHub >= 4.1 sends ``frame-ancestors 'none'``
from every server (nbgrader #1870), so the formgrader cannot show inside JupyterLab's iframe;
the course keeps that protection and opens the formgrader at /services/ctxlab/formgrader.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import hubclass  # noqa: E402
from browser.conftest import shot  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.hub, pytest.mark.slow]
NAME = "00_start_here"


@pytest.fixture(scope="module")
def room():
    reason = hubclass.unavailable()
    if reason:
        if __import__("os").environ.get("CI"):
            pytest.fail(f"CI must run the JupyterHub classroom test: {reason}")
        pytest.skip(reason)
    r = hubclass.Classroom(n_learners=1)
    try:
        r.prepare(assignments=[NAME])
        r.start()
        r.login(r.instructor)
        r.wait_service(r.instructor)
        res = r.formgrader("POST", f"assignment/{NAME}/release")
        assert res.status_code == 200 and res.json()["success"], res.text
        yield r
    finally:
        r.close()


def log_in(page, room, user):
    page.goto(f"{room.url}/hub/login", wait_until="domcontentloaded")
    page.fill("#username_input", user)
    page.fill("#password_input", room.passwords[user])
    page.click("#login_submit")


def test_learner_fetches_opens_and_submits_from_the_assignments_tab(room, page):
    learner = room.learners[0]
    log_in(page, room, learner)
    # the hub starts the learner's server and sends the browser to JupyterLab
    page.wait_for_selector("#jp-main-statusbar", timeout=180_000)
    page.get_by_role("menuitem", name="Nbgrader", exact=True).click()
    page.get_by_role("menuitem", name="Assignment List", exact=True).click()
    released = page.locator("#released_assignments_list")
    released.get_by_role("button", name="Fetch", exact=True).click(timeout=60_000)
    fetched = page.locator("#fetched_assignments_list")
    fetched.get_by_text(NAME).first.wait_for(timeout=60_000)
    shot(page, "hub-assignment-list-fetched")
    assert (room.home(learner) / NAME / f"{NAME}.ipynb").exists(), "the fetch did not reach the learner's home"
    # the assignment's name unfolds its notebooks; a notebook's name opens it in JupyterLab
    fetched.locator("a", has_text=NAME).first.click()
    notebook_link = fetched.locator("a", has_text=NAME).nth(1)
    notebook_link.wait_for(state="visible", timeout=30_000)
    notebook_link.click()
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=90_000)
    page.get_by_role("tab", name="Assignments").click()
    page.locator("#fetched_assignments_list").get_by_role("button", name="Submit", exact=True).click()
    page.locator("#submitted_assignments_list").get_by_text(NAME).first.wait_for(timeout=60_000)
    shot(page, "hub-assignment-list-submitted")
    inbound = room.exchange / hubclass.COURSE_ID / "inbound"
    assert any(p.name.startswith(f"{learner}+{NAME}+") for p in inbound.iterdir()), "no submission in the exchange"


def test_formgrader_opens_for_the_instructor_in_its_own_tab(room, page):
    r = room.api(room.instructor, "GET", f"/services/{hubclass.COURSE_ID}/formgrader")
    # why a tab of its own: the hub forbids framing (JupyterLab's Formgrader panel would stay blank)
    assert "frame-ancestors 'none'" in r.headers.get("Content-Security-Policy", ""), r.headers
    log_in(page, room, room.instructor)
    page.wait_for_url("**/hub/**", timeout=60_000)
    page.goto(f"{room.url}/services/{hubclass.COURSE_ID}/formgrader", wait_until="domcontentloaded")
    page.get_by_text("Manage Assignments").first.wait_for(timeout=90_000)
    row = page.locator("#main-table tr", has_text=NAME).first
    row.wait_for(timeout=60_000)
    shot(page, "hub-formgrader")
    # the exchange is set up (no yellow warning) and the release of the fixture shows as released
    assert page.locator("#warning-exchange, #warning-course-id").count() == 0
    assert "released" in row.inner_text().split(), row.inner_text()
