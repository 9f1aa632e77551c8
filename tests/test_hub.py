"""A class on a real JupyterHub, from release to returned feedback (deploy/jupyterhub as shipped).

The hub runs on 127.0.0.1 with PAM logins and a server per learner as their own OS account
(tests/hubclass.py). The instructor releases 00_start_here and 09_knowledge_check from the
formgrader; three learners fetch them through their own servers with the Assignments tab's
REST calls, save an answer with the contents API (as JupyterLab does) and submit: the
solution, a partial answer, the untouched notebook. The grading account collects them and
grades with ``ctxlab grade`` into the one grading root, which the formgrader serves; feedback
is released from the formgrader and each learner fetches their own. An account that is not
in the course cannot fetch. Run it alone: ``.venv/bin/pytest tests/test_hub.py -m hub``.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import nbformat
import pytest

import hubclass
from graded_class import source
from test_feedback import html_text, secret_lines

pytestmark = [pytest.mark.hub, pytest.mark.slow]
NAMES = ["00_start_here", "09_knowledge_check"]
KINDS = ["solution", "partial", "untouched"]


@pytest.fixture(scope="module")
def hub_class(tmp_path_factory):
    hubclass.skip_or_fail()
    room = hubclass.Classroom(n_learners=3)
    out: dict = {"room": room}
    try:
        room.prepare(assignments=NAMES)
        room.start()
        for user in [room.instructor, *room.learners, room.outsider]:
            room.login(user)
        room.wait_service(room.instructor)
        for name in NAMES:   # the formgrader's "Release" button
            r = room.formgrader("POST", f"assignment/{name}/release")
            assert r.status_code == 200 and r.json()["success"], r.text
        kinds = dict(zip(room.learners, KINDS))
        out["kinds"] = kinds
        room.spawn(*room.learners, room.outsider)
        out["pids"] = room.server_pids()
        # what a learner's kernel gets: the course's packages and the offline sandbox, no key
        out["server_env"] = {u: room.server_environ(u) for u in room.learners}
        out["server_cmd"] = {u: room.server_process(u)[0] for u in room.learners}
        probe = ("from ctxlab.api.client import is_offline, make_client, mode_line\n"
                 "c = make_client(); print(is_offline(c)); print(mode_line(c))\n"
                 "import json, sys, ctxlab, ctxlab._paths as p\n"
                 "print(json.dumps({'package': ctxlab.__file__, 'data': str(p.DATA_DIR), 'path': sys.path}))")
        out["kernel_probe"] = room.as_user(room.learners[0], [room.learner_python, "-c", probe],
                                           **out["server_env"][room.learners[0]])
        for user in room.learners:
            listed = room.assignments(user)
            out.setdefault("listed", {})[user] = {a["assignment_id"]: a["status"] for a in listed["value"]}
            for name in NAMES:
                room.assignments(user, "fetch", name)
                path = f"{name}/{name}.ipynb"
                nb = hubclass.contents(room, user, path)["content"]
                hubclass.save_notebook(room, user, path, hubclass.answered(nb, name, kinds[user]))
                res = room.assignments(user, "submit", name)
                assert res["success"], res
        outsider = room.outsider
        out["outsider_list"] = room.assignments(outsider)
        out["outsider_fetch"] = room.assignments(outsider, "fetch", NAMES[0])
        out["outsider_home"] = sorted(p.name for p in room.home(outsider).iterdir() if not p.name.startswith("."))
        # the grading account: collect (into collected/, not submitted/), grade, release feedback
        for name in NAMES:
            proc = room.as_grader([room.python, "-m", "nbgrader", "collect", name,
                                   "--CourseDirectory.submitted_directory=collected"])
            assert proc.returncode == 0, proc.stdout + proc.stderr
        proc = room.as_grader([room.python, "-m", "ctxlab.cli", "grade", str(room.grading_root / "collected"),
                               "--root", str(room.grading_root), "--course", str(hubclass.ROOT), "--quiet",
                               *[f"--assignment={n}" for n in NAMES]])
        out["grade"] = proc
        assert proc.returncode == 0, proc.stdout + proc.stderr
        out["formgrader"] = {name: room.formgrader("GET", f"submissions/{name}").json() for name in NAMES}
        for name in NAMES:   # the formgrader's "Release feedback" button
            r = room.formgrader("POST", f"assignment/{name}/release_feedback")
            assert r.status_code == 200 and r.json()["success"], r.text
        feedback_dir = tmp_path_factory.mktemp("feedback")
        for user in room.learners:
            for name in NAMES:
                room.assignments(user, "fetch_feedback", name)
                out.setdefault("feedback", {})[(user, name)] = hubclass.feedback_pages(
                    room, user, name, feedback_dir / f"{user}-{name}")
        # what a learner can reach of another's feedback, as their own OS account
        a, b = room.learners[0], room.learners[1]
        b_page = next(room.home(b).glob(f"{NAMES[0]}/feedback/*/*.html"))
        probe = ("import os, sys\n"
                 "for p in sys.argv[1:]:\n"
                 "    try:\n        os.listdir(p) if os.path.isdir(p) else open(p).read()\n        print('READ', p)\n"
                 "    except PermissionError:\n        print('DENIED', p)\n")
        out["probe"] = room.as_user(a, [room.learner_python, "-c", probe, str(b_page), str(room.home(b)),
                                        str(room.exchange / hubclass.COURSE_ID / "feedback"),
                                        str(room.exchange / hubclass.COURSE_ID / "inbound")]).stdout
        out["cross_api"] = room.api(a, "GET", f"/user/{b}/api/contents/{NAMES[0]}/feedback").status_code
        out["environ"] = {}
        for user, pids in out["pids"].items():
            for pid in pids:
                try:
                    out["environ"].setdefault(user, []).append(Path(f"/proc/{pid}/environ").read_bytes())
                except OSError:
                    pass
        yield out
    finally:
        room.close()


def test_each_learner_gets_their_own_score(hub_class):
    """Full marks for the solution, part for the partial answer, 0 for the untouched notebook:
    in the gradebook the formgrader serves (the one grading root) and in each learner's feedback."""
    kinds = hub_class["kinds"]
    for name in NAMES:
        subs = {s["student"]: s for s in hub_class["formgrader"][name]}
        assert set(subs) == set(kinds), f"{name}: the formgrader shows {sorted(subs)}"
        by_kind = {kinds[u]: subs[u] for u in subs}
        full, part, zero = (by_kind[k] for k in KINDS)
        assert full["max_code_score"] > 0
        assert full["code_score"] == full["max_code_score"], f"{name}: solution {full['code_score']}"
        assert 0 < part["code_score"] < part["max_code_score"], f"{name}: partial {part['code_score']}"
        assert zero["code_score"] == 0, f"{name}: untouched {zero['code_score']}"
        for user, sub in subs.items():
            pages = hub_class["feedback"][(user, name)]
            assert len(pages) == 1, f"{user} {name}: {len(pages)} feedback pages"
            got = hubclass.feedback_score(pages[0].read_text(encoding="utf-8"))
            assert got == (pytest.approx(sub["score"]), pytest.approx(sub["max_score"])), (user, name, got)


def test_learners_see_the_release_then_fetch_it(hub_class):
    for user, listed in hub_class["listed"].items():
        assert listed == {name: "released" for name in NAMES}, user


def test_feedback_is_the_learners_alone(hub_class):
    probe = hub_class["probe"].split("\n")
    assert probe and all(line.startswith("DENIED") for line in probe if line), hub_class["probe"]
    assert len([line for line in probe if line]) == 4
    assert hub_class["cross_api"] in (403, 404), "one learner's token opened another's server"


def test_no_hidden_test_in_any_feedback(hub_class):
    for name in NAMES:
        src = source(name)
        release = (hubclass.ROOT / "course" / name / f"{name}.ipynb").read_text(encoding="utf-8")
        secrets_ = secret_lines(src, release)
        assert secrets_, f"{name} has no hidden test lines to look for"
        for (user, assignment), pages in hub_class["feedback"].items():
            if assignment != name:
                continue
            text = html_text(pages[0])
            leaked = [line for line in secrets_ if line in text]
            assert not leaked, f"{user} {name}: hidden test lines in the feedback: {leaked[:3]}"


def test_an_account_outside_the_course_cannot_fetch(hub_class):
    assert hub_class["outsider_list"]["value"] == []
    assert hub_class["outsider_fetch"]["value"] == []
    assert not set(NAMES) & set(hub_class["outsider_home"]), hub_class["outsider_home"]


def test_no_api_key_reaches_a_learner(hub_class):
    """The hub's own ANTHROPIC_API_KEY is not passed on: the servers run offline (the sandbox)."""
    envs = hub_class["environ"]
    assert set(envs) >= set(hub_class["room"].learners)
    for user, blobs in envs.items():
        for blob in blobs:
            assert b"ANTHROPIC_API_KEY" not in blob and hubclass.FAKE_KEY.encode() not in blob, user
    for user, env in hub_class["server_env"].items():
        assert env["USER"] == user and env["JUPYTERHUB_USER"] == user   # each server is its own account


def test_a_learner_kernel_has_the_course_and_the_sandbox(hub_class):
    """With the server's environment, as the learner: ctxlab imports and make_client() is the sandbox."""
    proc = hub_class["kernel_probe"]
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split("\n")[0] == "True", proc.stdout


def test_learners_run_the_learner_environment_not_the_checkout(hub_class):
    """Learners' servers run the environment `make hub-learner-env` builds (the ctxlab wheel
    and its data, no solutions, no key): nothing of the checkout is imported or configured, so
    the checkout can be the grading account's alone."""
    room = hub_class["room"]
    env_root = room.learner_env.resolve()
    for user, cmd in hub_class["server_cmd"].items():
        assert cmd[0] == room.learner_python, f"{user}'s server runs {cmd[0]}"
        config = hub_class["server_env"][user]["JUPYTER_CONFIG_PATH"].split(os.pathsep)
        assert config and all(Path(c).resolve().is_relative_to(env_root) for c in config), config
    probe = json.loads(hub_class["kernel_probe"].stdout.strip().split("\n")[-1])
    assert Path(probe["package"]).resolve().is_relative_to(env_root), probe["package"]
    assert Path(probe["data"]).resolve().is_relative_to(env_root), probe["data"]
    root = hubclass.ROOT.resolve()
    # the test reuses this .venv's third-party packages (--packages-from); nothing else of the checkout
    venv = Path(sys.prefix).resolve()
    near = [p for p in probe["path"] if p and Path(p).resolve().is_relative_to(root)
            and not Path(p).resolve().is_relative_to(venv)]
    assert not near, f"a learner's Python reaches into the checkout: {near}"


def test_zz_stopping_the_hub_leaves_no_process_account_or_folder(hub_class):
    """Last in the module: stop the hub (what the fixture does at the end) and check that no
    process it started (servers, the formgrader service) is left, nor an account or folder."""
    room = hub_class["room"]
    assert hub_class["pids"] and all(hub_class["pids"][u] for u in room.learners), hub_class["pids"]
    room.close()
    left = hubclass.alive([p for pids in hub_class["pids"].values() for p in pids])
    assert not left, f"processes left after the hub stopped: {left}"
    assert room.stopped is not None and room.stopped.poll() is not None
    assert not room.base.exists()
    assert room.removed_users and not any(Path("/home", u).exists() for u in room.removed_users)
