"""The class file of deploy/jupyterhub, one course or several (fast: nothing is started).

deploy/jupyterhub/jupyterhub_config.py is loaded as JupyterHub loads it, on a made-up machine
(folders in tmp_path, accounts that ``account`` says exist), and the resulting services,
groups, roles and environments are checked; so is nbgrader's own reading of the course id in
a grading root. tests/test_hub_courses.py runs two courses on a real hub.
"""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from traitlets.config import PyFileConfigLoader

ROOT = Path(__file__).resolve().parent.parent
HUB = ROOT / "deploy" / "jupyterhub"
sys.path.insert(0, str(HUB))
import classfile  # noqa: E402

ACCOUNTS = {"g-a", "g-b", "in-a", "in-b", "l1", "l2", "l3", "grader-ctxlab", "instructor1", "out"}


@pytest.fixture
def machine(tmp_path, monkeypatch):
    """Everything the class file names, made in tmp_path; the accounts of ACCOUNTS exist."""
    def account(name):
        if name not in ACCOUNTS:
            raise KeyError(name)
        return SimpleNamespace(pw_uid=os.getuid(), pw_dir=str(tmp_path / "home" / name))

    monkeypatch.setattr(classfile.pwd, "getpwnam", account)
    env = tmp_path / "learner"
    (env / "venv" / "bin").mkdir(parents=True)
    (env / "venv" / "bin" / "python").write_text("")
    for part in ("learner", "common"):
        shutil.copytree(HUB / "jupyter" / part, env / "jupyter" / part)
    (tmp_path / "python").write_text("")
    exchange = tmp_path / "exchange"
    exchange.mkdir()
    exchange.chmod(0o777)
    for root in ("a", "b", "one"):
        (tmp_path / root).mkdir()
        shutil.copy(ROOT / "nbgrader_config.py", tmp_path / root / "nbgrader_config.py")
    shared = {"learner_env": str(env), "grader_python": str(tmp_path / "python"), "exchange": str(exchange),
              "other_users": ["out"]}
    one = {**shared, "grader": "grader-ctxlab", "grading_root": str(tmp_path / "one"), "formgrader_port": 9999,
           "instructors": ["instructor1"], "learners": ["l1", "l2", "l3"]}
    two = {**shared, "courses": [
        {"id": "ctxlab-a", "grader": "g-a", "grading_root": str(tmp_path / "a"), "formgrader_port": 9998,
         "instructors": ["in-a"], "learners": ["l1", "l2"]},
        {"id": "ctxlab-b", "grader": "g-b", "grading_root": str(tmp_path / "b"), "formgrader_port": 9997,
         "instructors": ["in-b"], "learners": ["l1", "l3"]}]}
    return SimpleNamespace(path=tmp_path, one=one, two=two)


def hub_config(tmp_path: Path, data: dict, monkeypatch):
    """deploy/jupyterhub/jupyterhub_config.py loaded with this class file, as JupyterHub does."""
    f = tmp_path / "class.yaml"
    f.write_text(yaml.safe_dump(data), encoding="utf-8")
    monkeypatch.setenv("CTXLAB_HUB_CLASS", str(f))
    return PyFileConfigLoader("jupyterhub_config.py", path=str(HUB)).load_config()


def test_the_one_course_file_is_one_course_ctxlab(machine, monkeypatch):
    cfg = hub_config(machine.path, machine.one, monkeypatch)
    [service] = cfg.JupyterHub.services
    assert service["name"] == "ctxlab" and service["user"] == "grader-ctxlab"
    assert service["environment"]["CTXLAB_COURSE_ID"] == "ctxlab"
    assert cfg.JupyterHub.load_groups == {"nbgrader-ctxlab": ["l1", "l2", "l3"],
                                          "formgrade-ctxlab": ["instructor1", "grader-ctxlab"]}
    assert cfg.Spawner.environment["CTXLAB_COURSE_ID"] == "ctxlab"   # as before: the learners' course
    assert "CTXLAB_PATH_INCLUDES_COURSE" not in cfg.Spawner.environment
    assert cfg.Authenticator.allowed_users == {"l1", "l2", "l3", "instructor1", "grader-ctxlab", "out"}


def test_two_courses_get_a_formgrader_each_and_only_their_own_roles(machine, monkeypatch):
    cfg = hub_config(machine.path, machine.two, monkeypatch)
    services = {s["name"]: s for s in cfg.JupyterHub.services}
    assert set(services) == {"ctxlab-a", "ctxlab-b"}
    for cid, grader, root, port in (("ctxlab-a", "g-a", "a", 9998), ("ctxlab-b", "g-b", "b", 9997)):
        s = services[cid]
        assert s["user"] == grader and s["url"].endswith(f":{port}") and s["cwd"] == str(machine.path / root)
        assert s["environment"]["CTXLAB_COURSE_ID"] == cid
        assert s["environment"]["CTXLAB_GRADING_ROOT"] == str(machine.path / root)
        assert s["environment"]["CTXLAB_PATH_INCLUDES_COURSE"] == "1"
    assert cfg.JupyterHub.load_groups == {
        "nbgrader-ctxlab-a": ["l1", "l2"], "formgrade-ctxlab-a": ["in-a", "g-a"],
        "nbgrader-ctxlab-b": ["l1", "l3"], "formgrade-ctxlab-b": ["in-b", "g-b"]}
    roles = {r["name"]: r for r in cfg.JupyterHub.load_roles}
    assert roles["formgrade-ctxlab-a"]["groups"] == ["formgrade-ctxlab-a"]
    assert "access:services!service=ctxlab-a" in roles["formgrade-ctxlab-a"]["scopes"]
    assert not any("ctxlab-b" in s for s in roles["formgrade-ctxlab-a"]["scopes"])
    # each formgrader reads its own grading account's groups, no one else's
    assert roles["ctxlab-a-service"]["services"] == ["ctxlab-a"]
    assert roles["ctxlab-a-service"]["scopes"] == ["read:users:name!user=g-a", "read:users:groups!user=g-a"]
    assert roles["ctxlab-b-service"]["scopes"] == ["read:users:name!user=g-b", "read:users:groups!user=g-b"]
    # learners: no fixed course (the Assignment List lists every course of their groups), folders per course
    assert "CTXLAB_COURSE_ID" not in cfg.Spawner.environment
    assert cfg.Spawner.environment["CTXLAB_PATH_INCLUDES_COURSE"] == "1"


@pytest.mark.parametrize("change, message", [
    (lambda d: d["courses"][1].update(id="ctxlab-a"), "same course id ctxlab-a"),
    (lambda d: d["courses"][1].update(formgrader_port=9998), "same formgrader_port 9998"),
    (lambda d: d["courses"][1].update(grader="g-a"), "same grader g-a"),
    (lambda d: d["courses"][1].update(grading_root=d["courses"][0]["grading_root"]), "same grading_root"),
    (lambda d: d["courses"][0]["learners"].append("nobody"), "nobody .in ctxlab-a. is not an account"),
    (lambda d: d["courses"][0]["learners"].append("g-b"), "g-b is a grading account, not a learner"),
    (lambda d: d["courses"][0]["learners"].append("in-a"), "in-a is both a learner and an instructor"),
    (lambda d: d["courses"][0].update(learner=["l1"]), r"unknown key\(s\) learner"),
    (lambda d: d["courses"][0].pop("id"), r"courses\[0\]: set id"),
    (lambda d: d["courses"][0].update(id="Ctxlab A"), "must be lower-case"),
    (lambda d: d.update(grader="g-a"), "with courses:, put them in each course's entry"),
    (lambda d: d.update(courses=[]), "courses must be a list"),
])
def test_a_bad_class_file_stops_the_hub_with_what_to_fix(machine, change, message):
    change(machine.two)
    with pytest.raises(SystemExit, match=message):
        classfile.parse(machine.two)


def test_a_grading_root_not_made_or_a_stale_learner_environment_is_named(machine):
    (machine.path / "b" / "nbgrader_config.py").unlink()
    env_common = Path(machine.two["learner_env"]) / "jupyter" / "common" / "nbgrader_config.py"
    env_common.write_text('c = get_config()\nc.CourseDirectory.course_id = "ctxlab"\n')   # built before courses:
    with pytest.raises(SystemExit) as err:
        classfile.parse(machine.two)
    text = str(err.value)
    assert "course ctxlab-b: the grading root" in text and "CTXLAB_COURSE_ID=ctxlab-b ctxlab grade --export" in text
    assert "common/nbgrader_config.py" in text and "make hub-learner-env" in text
    assert "ctxlab-a" not in text.split("the grading root")[0]


def nbgrader_config(cwd: Path, monkeypatch, *folders: Path, **env: str):
    """The config an nbgrader app started in ``cwd`` reads (JUPYTER_CONFIG_PATH = ``folders``)."""
    from nbgrader.apps import NbGrader

    for k in ("CTXLAB_COURSE_ID", "CTXLAB_PATH_INCLUDES_COURSE"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", os.pathsep.join(map(str, folders)))
    monkeypatch.chdir(cwd)
    app = NbGrader()
    app.load_config_file()
    return app.config


def test_the_grading_root_s_config_wins_so_it_takes_the_course_id_from_the_service(tmp_path, monkeypatch):
    """nbgrader reads the working folder's nbgrader_config.py (the grading root's copy of the
    course's) after JUPYTER_CONFIG_PATH: a fixed course id there beat the service's. The course's
    config takes CTXLAB_COURSE_ID, which the hub gives each formgrader."""
    deploy = HUB / "jupyter"
    root = tmp_path / "root"
    root.mkdir()
    (root / "nbgrader_config.py").write_text('c = get_config()\nc.CourseDirectory.course_id = "ctxlab"\n')
    fixed = nbgrader_config(root, monkeypatch, deploy / "grader", deploy / "common", CTXLAB_COURSE_ID="ctxlab-b")
    assert fixed.CourseDirectory.course_id == "ctxlab"   # what a fixed id did: every formgrader was "ctxlab"
    shutil.copy(ROOT / "nbgrader_config.py", root / "nbgrader_config.py")
    cfg = nbgrader_config(root, monkeypatch, deploy / "grader", deploy / "common",
                          CTXLAB_COURSE_ID="ctxlab-b", CTXLAB_PATH_INCLUDES_COURSE="1")
    assert cfg.CourseDirectory.course_id == "ctxlab-b" and cfg.Exchange.path_includes_course is True
    assert nbgrader_config(root, monkeypatch, deploy / "common").CourseDirectory.course_id == "ctxlab"


def test_a_learner_of_several_courses_has_no_fixed_course(tmp_path, monkeypatch):
    deploy = HUB / "jupyter"
    cfg = nbgrader_config(tmp_path, monkeypatch, deploy / "learner", deploy / "common", CTXLAB_PATH_INCLUDES_COURSE="1")
    assert "course_id" not in cfg.CourseDirectory and cfg.Exchange.path_includes_course is True
    one = nbgrader_config(tmp_path, monkeypatch, deploy / "learner", deploy / "common", CTXLAB_COURSE_ID="ctxlab")
    assert one.CourseDirectory.course_id == "ctxlab" and one.Exchange.path_includes_course is False
