"""tools/check_learner_image.py on images it must pass and images it must refuse.

No container engine is needed: a fake engine (a script answering ``create``, ``export``,
``run`` and ``rm`` as docker does) serves a file system made here and the probe's answer.
The real check of the real image (podman, deploy/jupyterhub/Dockerfile) is in the guide.
"""
from __future__ import annotations

import io
import json
import shutil
import sys
import tarfile
from pathlib import Path

import pytest

import check_learner_image as cli  # tools/ (conftest puts it on sys.path)

ROOT = Path(__file__).resolve().parent.parent
PY = "opt/ctxlab-learner/venv/lib/python3.11/site-packages"
GOOD = {"uid": 1000, "package": f"/{PY}/ctxlab/__init__.py", "data": f"/{PY}/ctxlab/_data/data",
        "offline": True, "answer": "[sandbox]", "jupyterhub": "5.5.0", "key": False,
        "extensions": "nbgrader.server_extensions.assignment_list enabled\n"
                      "nbgrader.server_extensions.formgrader disabled"}
_ENGINE = r'''
import json, sys
from pathlib import Path
here = Path(__file__).parent
cmd = sys.argv[1]
if cmd == "create":
    print("cid")
elif cmd == "export":
    sys.stdout.buffer.write((here / "image.tar").read_bytes())
elif cmd == "run":
    if "jupyterhub-singleuser" in sys.argv:
        print("5.5.0")
    else:
        print((here / "probe.json").read_text())
'''


def image(tmp_path: Path, files: dict[str, str], probe: dict) -> str:
    """A fake engine whose one image holds ``files`` and answers the probe with ``probe``."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    (tmp_path / "image.tar").write_bytes(buf.getvalue())
    (tmp_path / "probe.json").write_text(json.dumps(probe), encoding="utf-8")
    (tmp_path / "engine.py").write_text(_ENGINE, encoding="utf-8")
    return f"{sys.executable} {tmp_path / 'engine.py'}"


BASE = {f"{PY}/ctxlab/__init__.py": "", "opt/ctxlab-learner/jupyter/common/nbgrader_config.py": "c = 1\n",
        f"{PY}/nbgrader/tests/test_x.py": "", "usr/lib/python3.11/os.py": ""}


def test_a_clean_image_passes(tmp_path):
    engine = image(tmp_path, BASE, GOOD)
    assert cli.check("img", engine.split(), "5") == []


@pytest.mark.parametrize("extra, expect", [
    ({"src/solutions/00_start_here/00_start_here.ipynb": "{}"}, "src/solutions: the checkout's answers"),
    ({"home/jovyan/.git/config": ""}, "home/jovyan/.git: the checkout's answers"),
    ({"opt/ctxlab-learner/knowledge_check.key.yaml": ""}, "knowledge_check.key.yaml"),
])
def test_the_checkout_anywhere_fails(tmp_path, extra, expect):
    engine = image(tmp_path, {**BASE, **extra}, GOOD)
    problems = cli.check("img", engine.split(), "5")
    assert any(expect in p for p in problems), problems


def test_the_key_in_the_course_files_fails(tmp_path):
    key = (ROOT / "solutions" / "09_knowledge_check" / "knowledge_check.key.yaml").read_text(encoding="utf-8")
    engine = image(tmp_path, {**BASE, f"{PY}/ctxlab/_data/quizzes/notes.yaml": key}, GOOD)
    problems = cli.check("img", engine.split(), "5")
    assert any("salt" in p or "stored key" in p for p in problems), problems


def test_a_solution_marker_in_the_course_files_fails(tmp_path):
    nb = '{"cells": [{"source": "### BEGIN HIDDEN TESTS\\nassert x\\n### END HIDDEN TESTS"}]}'
    engine = image(tmp_path, {**BASE, "opt/ctxlab-learner/jupyter/learner/00_start_here.ipynb": nb}, GOOD)
    problems = cli.check("img", engine.split(), "5")
    assert any("BEGIN HIDDEN TESTS" in p for p in problems), problems


@pytest.mark.parametrize("change, expect", [
    ({"uid": 0}, "uid 0"),
    ({"package": "/src/ctxlab/__init__.py"}, "not in /opt/ctxlab-learner"),
    ({"key": True}, "offline sandbox"),
    ({"jupyterhub": "6.1.1"}, "the hub runs 5.x"),
    ({"extensions": "nbgrader.server_extensions.assignment_list enabled\n"
                    "nbgrader.server_extensions.formgrader enabled"}, "not the formgrader"),
])
def test_a_wrong_server_fails(tmp_path, change, expect):
    engine = image(tmp_path, BASE, {**GOOD, **change})
    problems = cli.check("img", engine.split(), "5")
    assert any(expect in p for p in problems), problems


def test_no_engine_says_what_to_do(tmp_path):
    missing = tmp_path / "no-such-engine"
    assert shutil.which(str(missing)) is None
    with pytest.raises(SystemExit, match="install docker or podman"):
        cli.check("img", [str(missing)], "5")
