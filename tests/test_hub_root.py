"""One grading root for ``ctxlab grade`` and the formgrader, with an absolute gradebook path (fast).

The classroom test (tests/test_hub.py) runs it end to end; these check the configuration
the way nbgrader reads it, without starting anything.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from nbgrader.coursedir import CourseDirectory
from traitlets.config import Config, PyFileConfigLoader

from ctxlab.errors import GradeError
from ctxlab.grading import workflow

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy" / "jupyterhub" / "jupyter"


def load(*folders: Path) -> Config:
    """nbgrader_config.py of each folder, merged in order (later ones win, as on JUPYTER_CONFIG_PATH
    read lowest priority first)."""
    cfg = Config()
    for folder in folders:
        cfg.merge(PyFileConfigLoader("nbgrader_config.py", path=str(folder)).load_config())
    return cfg


def test_the_gradebook_is_in_the_course_root_whatever_the_working_folder(tmp_path, monkeypatch):
    """The course's config sets no relative db_url: a formgrader started in another folder (the
    grader's home) opens the gradebook of its course root, not an empty one where it started."""
    home, root = tmp_path / "home", tmp_path / "grading"
    home.mkdir()
    monkeypatch.chdir(home)
    cfg = load(ROOT)
    cfg.CourseDirectory.root = str(root)
    assert CourseDirectory(config=cfg).db_url == f"sqlite:///{root / 'gradebook.db'}"


def test_the_formgrader_root_is_the_grading_root(tmp_path, monkeypatch):
    """deploy/jupyterhub's grader settings point the formgrader at CTXLAB_GRADING_ROOT, the folder
    the hub config also passes to ``ctxlab grade --root`` (class.yaml's grading_root)."""
    root = tmp_path / "grading"
    monkeypatch.setenv("CTXLAB_GRADING_ROOT", str(root))
    monkeypatch.setenv("CTXLAB_EXCHANGE", str(tmp_path / "exchange"))
    monkeypatch.chdir(tmp_path)
    cfg = load(DEPLOY / "common", DEPLOY / "grader", ROOT)   # the grading root's own config last (cwd)
    cd = CourseDirectory(config=cfg)
    assert Path(cd.root) == root and cd.db_url == f"sqlite:///{root / 'gradebook.db'}"
    assert cd.course_id == "ctxlab" and cfg.Exchange.root == str(tmp_path / "exchange")
    assert cfg.Authenticator.plugin_class == "nbgrader.auth.JupyterHubAuthPlugin"


def test_learners_servers_have_no_formgrader():
    import json

    server = json.loads((DEPLOY / "learner" / "jupyter_server_config.json").read_text())
    assert server["ServerApp"]["jpserver_extensions"]["nbgrader.server_extensions.formgrader"] is False
    lab = json.loads((DEPLOY / "learner" / "labconfig" / "page_config.json").read_text())
    assert {"@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment"} <= set(lab["disabledExtensions"])


def test_grading_the_root_s_own_submitted_folder_is_refused(tmp_path):
    """``nbgrader collect`` puts submissions in ROOT/submitted by default; ``ctxlab grade`` replaces
    that folder with what it reads, so it stops and says to collect elsewhere."""
    root = tmp_path / "grading"
    (root / "submitted" / "learner1" / "00_start_here").mkdir(parents=True)
    with pytest.raises(GradeError, match="submitted_directory=collected"):
        workflow.grade(root / "submitted", root, ROOT)
    assert not (root / "gradebook.db").exists(), "it must stop before touching the root"
    assert os.listdir(root / "submitted" / "learner1") == ["00_start_here"]


@pytest.mark.parametrize("who", ["grader", "learner"])
def test_terminals_keep_the_path_the_hub_gives(who, tmp_path, monkeypatch):
    """A server the hub starts has no tty, so jupyter_server_terminals opens every Terminal as a
    login shell (``bash -l``), and Debian's /etc/profile resets PATH: ``nbgrader`` and ``ctxlab``
    are then "command not found" in the formgrader's Terminal (seen on a fresh Debian 12). The
    deploy settings make the Terminal a plain bash, which keeps the PATH of the server."""
    import json

    from jupyter_server.serverapp import ServerApp
    from jupyter_server_terminals.app import TerminalsExtensionApp

    monkeypatch.setenv("SHELL", "/bin/bash")
    monkeypatch.setattr("sys.stdout.isatty", lambda: False, raising=False)

    def shell(settings: dict) -> list[str]:
        app = TerminalsExtensionApp()
        app.serverapp = ServerApp(terminado_settings=settings, root_dir=str(tmp_path))
        app.initialize_configurables()
        return list(app.terminal_manager.shell_command)

    assert shell({}) == ["/bin/bash", "-l"], "jupyter_server_terminals no longer adds -l: review this setting"
    server = json.loads((DEPLOY / who / "jupyter_server_config.json").read_text())
    assert shell(server["ServerApp"]["terminado_settings"]) == ["/bin/bash"]
