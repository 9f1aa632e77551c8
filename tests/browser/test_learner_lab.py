"""The learner's JupyterLab (``make lab`` and the laptop kits' settings) shows no instructor tools.

The learner's lab runs with deploy/laptop/jupyter first on JUPYTER_CONFIG_PATH, as ``make lab``
does (the laptop kits' wheel installs the same files into the venv's etc/jupyter:
tests/test_learner_bundle.py). Its menu bar has no Nbgrader menu (no Formgrader, Create
Assignment or Assignment List), no panel is Create Assignment, the formgrader's server
extension is not loaded, and the notebook toolbar keeps nbgrader's Validate button.
The control: the same course in a lab without those settings (the instructor's) shows the
Nbgrader menu with Formgrader and the Create Assignment panel, so the checks can fail.
"""
import os
import re
import urllib.request

import pytest

from .conftest import ROOT, open_notebook, running_lab, shot

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LAPTOP_SETTINGS = ROOT / "deploy" / "laptop" / "jupyter"
HUB_LEARNER_SETTINGS = ROOT / "deploy" / "jupyterhub" / "jupyter" / "learner"


@pytest.fixture(scope="module")
def learner_lab(tmp_path_factory):
    with running_lab(tmp_path_factory.mktemp("learner-lab"), config_path=LAPTOP_SETTINGS) as running:
        yield running


def test_make_lab_uses_the_settings_this_test_checks():
    recipe = (ROOT / "Makefile").read_text(encoding="utf-8").split("\nlab: setup\n", 1)[1].split("\n\n", 1)[0]
    assert 'JUPYTER_CONFIG_PATH="$(HERE)/deploy/laptop/jupyter' in recipe
    assert "--ServerApp.root_dir=course" in recipe


def instructor_tools(page, lab) -> dict:
    """What the lab's main menu and side panels offer (opened on a lesson, so the notebook tools are loaded)."""
    open_notebook(page, lab, "03_prompt_caching/03_prompt_caching.ipynb")
    menus = [t.strip() for t in page.locator("#jp-menu-panel .lm-MenuBar-itemLabel").all_inner_texts()]
    items = []
    if "Nbgrader" in menus:
        page.locator("#jp-menu-panel .lm-MenuBar-item", has_text="Nbgrader").click()
        page.wait_for_selector("#jp-mainmenu-nbgrader", timeout=10_000)
        items = page.eval_on_selector_all("#jp-mainmenu-nbgrader .lm-Menu-item",
                                          "els => els.filter(e => e.offsetHeight > 0).map(e => e.textContent.trim())")
        shot(page, "nbgrader_menu")
        page.keyboard.press("Escape")
    panels = page.eval_on_selector_all(".jp-SideBar .lm-TabBar-tab",
                                       "tabs => tabs.map(t => t.getAttribute('title') || t.textContent || '')")
    validate = page.locator(".jp-NotebookPanel-toolbar >> text=Validate").count()
    return {"menus": menus, "nbgrader": items, "panels": panels, "validate": validate}


def _formgrader_status(lab) -> int:
    base, token, _root = lab
    try:
        with urllib.request.urlopen(f"{base}/formgrader?token={token}", timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def test_the_learners_lab_has_no_instructor_tools(page, learner_lab):
    seen = instructor_tools(page, learner_lab)
    shot(page, "learner_lab")
    assert "Nbgrader" not in seen["menus"], seen
    assert not [p for p in seen["panels"] if re.search(r"Create Assignment|Formgrader|Assignment", p, re.I)], seen
    assert seen["validate"] >= 1, f"the Validate button is gone from the notebook toolbar: {seen}"
    assert _formgrader_status(learner_lab) == 404, "the formgrader's server extension answers in the learner's lab"


def test_the_hub_learners_lab_keeps_only_the_assignment_list(page, tmp_path):
    """A hub learner's server (deploy/jupyterhub's learner settings): the Nbgrader menu holds the
    Assignment List alone (fetch and submit through the exchange), no instructor tool; also when the
    laptop settings are there too, at a lower level (a hub image made with the laptop kits' wheel)."""
    both = f"{HUB_LEARNER_SETTINGS}{os.pathsep}{LAPTOP_SETTINGS}"
    with running_lab(tmp_path / "hub-learner", config_path=both) as hub_learner:
        seen = instructor_tools(page, hub_learner)
        assert seen["nbgrader"] == ["Assignment List"], seen
        assert not [p for p in seen["panels"] if "Create Assignment" in p], seen
        assert seen["validate"] >= 1, seen
        assert _formgrader_status(hub_learner) == 404


def test_control_the_instructors_lab_has_them(page, lab):
    seen = instructor_tools(page, lab)
    assert "Nbgrader" in seen["menus"] and "Formgrader" in seen["nbgrader"], seen
    assert [p for p in seen["panels"] if "Create Assignment" in p], seen
    assert _formgrader_status(lab) != 404
