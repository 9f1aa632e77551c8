"""The learners' environment of a JupyterHub class (tools/hub_env.py, ``make hub-learner-env``).

It is built once with this .venv's packages (``--packages-from``: no download); the real
download path is the same but for where the third-party packages come from. The checks it
runs on itself must fail on an environment that holds an answer: a solution marker, the
knowledge check's key, a ctxlab imported from elsewhere.
"""
from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

import hub_env  # tools/ (conftest puts it on sys.path)

ROOT = Path(__file__).resolve().parent.parent
KEY = ROOT / "solutions" / "09_knowledge_check" / "knowledge_check.key.yaml"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    prefix = tmp_path_factory.mktemp("hubenv") / "learner"
    probe = hub_env.build(prefix, sys.executable, packages_from=Path(sys.prefix))
    return prefix, probe


def test_the_environment_imports_the_wheel_not_the_checkout(built):
    prefix, probe = built
    assert Path(probe["package"]).resolve().is_relative_to(prefix.resolve())
    assert Path(probe["data"]).resolve().is_relative_to(prefix.resolve())
    assert (prefix / "jupyter" / "learner" / "jupyter_server_config.json").exists()
    assert (prefix / "jupyter" / "common" / "nbgrader_config.py").exists()
    assert not list(prefix.rglob("solutions")) and not list(prefix.rglob("*.key.yaml"))
    # every account can read and run it
    assert all(p.stat().st_mode & 0o005 == 0o005 for p in [prefix, prefix / "venv" / "bin"])


@contextmanager
def planted(path: Path, text: str):
    """``path`` holds ``text`` while the block runs, and is gone after it."""
    path.write_text(text, encoding="utf-8")
    try:
        yield path
    finally:
        path.unlink()


def test_the_check_fails_on_a_solution_marker(built):
    prefix, _ = built
    marker = '{"cells": [{"source": "### BEGIN SOLUTION\\nx = 1\\n### END SOLUTION"}]}'
    with planted(prefix / "jupyter" / "learner" / "00_start_here.ipynb", marker):
        with pytest.raises(SystemExit, match="BEGIN SOLUTION"):
            hub_env.check(prefix)


def test_the_check_fails_on_the_knowledge_check_key(built):
    prefix, _ = built
    with planted(prefix / "jupyter" / "common" / "notes.yaml", KEY.read_text(encoding="utf-8")):
        with pytest.raises(SystemExit, match="knowledge check's key"):
            hub_env.check(prefix)
    hub_env.check(prefix)   # and passes again once it is gone


def test_the_check_fails_when_ctxlab_comes_from_elsewhere(built):
    prefix, _ = built
    site = next((prefix / "venv" / "lib").glob("python3*/site-packages"))
    # sorted before the wheel: the checkout's ctxlab wins
    with planted(site / "aa_checkout.pth", f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"):
        with pytest.raises(SystemExit, match="not from the learner environment"):
            hub_env.check(prefix)


def test_learners_get_the_graded_build_and_the_check_fails_on_a_twin_as_code(built):
    """The class is graded: the learners' ctxlab is the graded build (issue 42), where the functions that answer an
    exercise hold recorded results; putting one function's code back makes the check fail."""
    prefix, probe = built
    package = Path(probe["package"]).parent
    assert hub_env.twins_as_code(package) == []
    from ctxlab.grading.graded_build import TWINS
    module, name, _ = TWINS[0]
    target = package.parent / Path(*module.split(".")).with_suffix(".py")
    before = target.read_text(encoding="utf-8")
    real = (ROOT / Path(*module.split(".")).with_suffix(".py")).read_text(encoding="utf-8")
    try:
        target.write_text(real, encoding="utf-8")
        with pytest.raises(SystemExit, match=name):
            hub_env.check(prefix)
    finally:
        target.write_text(before, encoding="utf-8")
    hub_env.check(prefix)


def test_it_refuses_a_prefix_in_the_checkout_or_a_foreign_folder(tmp_path):
    with pytest.raises(SystemExit, match="inside the checkout"):
        hub_env.build(ROOT / "build" / "learner", sys.executable, packages_from=Path(sys.prefix))
    foreign = tmp_path / "opt"
    foreign.mkdir()
    (foreign / "something.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(SystemExit, match="not made by this script"):
        hub_env.build(foreign, sys.executable, packages_from=Path(sys.prefix))
    assert (foreign / "something.txt").read_text(encoding="utf-8") == "keep me"


def test_a_pin_replaces_the_course_pin_and_a_bad_pin_is_refused():
    text = hub_env.requirements(["jupyterhub==5.5.0"])
    assert "jupyterhub==5.5.0" in text.splitlines()
    assert not [ln for ln in text.splitlines() if ln.startswith("jupyterhub==") and ln != "jupyterhub==5.5.0"]
    assert hub_env.requirements() == hub_env.learner_bundle.learner_requirements(hub=True)
    with pytest.raises(SystemExit, match="name==version"):
        hub_env.requirements(["jupyterhub>=5"])
    with pytest.raises(SystemExit, match="not among the learner requirements"):
        hub_env.requirements(["pytest==9.2.0"])   # a test tool: not in the learner's environment
