"""Two courses on one JupyterHub (deploy/jupyterhub's ``courses:``), from release to feedback.

Two cohorts of this course, ``ctxlab-a`` and ``ctxlab-b``, on one hub (tests/hubclass.py): each
with its own grading account, grading root, formgrader service and port, and instructor.
Learner l1 is in both, l2 in A only, l3 in B only. Both formgraders release 00_start_here.
l1 fetches both into ctxlab-a/ and ctxlab-b/ and submits the solution to A and the untouched
notebook to B; l2 submits the untouched notebook to A, l3 the solution to B. l2 cannot fetch
or submit B (l3 not A), even with the folder in place. Each grading account collects its course
and grades it with ``ctxlab grade`` into its own root; each formgrader shows its own course's
submissions only, and refuses the other course's instructor. Each learner fetches their own
feedback of their own courses. Run it alone: ``.venv/bin/pytest tests/test_hub_courses.py -m hub``.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import requests

import hubclass

pytestmark = [pytest.mark.hub, pytest.mark.slow, pytest.mark.timeout(1800)]
NAME = "00_start_here"
A, B = "ctxlab-a", "ctxlab-b"
COURSES = {A: ["l1", "l2"], B: ["l1", "l3"]}
#: what each learner submits to each course they are in
KINDS = {(A, "l1"): "solution", (A, "l2"): "untouched", (B, "l1"): "untouched", (B, "l3"): "solution"}
DENIED = "You do not have access to this course"


def folder(course: str) -> str:
    return f"{course}/{NAME}"   # Exchange.path_includes_course: one folder per course


def listed(room, user) -> dict:
    return {(a["course_id"], a["assignment_id"]): a["status"] for a in room.assignments(user)["value"]}


def top_folders(room, user) -> set[str]:
    return {p.name for p in room.home(user).iterdir() if not p.name.startswith(".")}


@pytest.fixture(scope="module")
def two_courses(tmp_path_factory):
    hubclass.skip_or_fail()
    room = hubclass.Classroom(courses=COURSES)
    acc = room.accounts
    out: dict = {"room": room}
    try:
        room.prepare(assignments=[NAME])
        room.start()
        for user in [*(c.instructor for c in room.courses), *room.learners, room.outsider]:
            room.login(user)
        for c in room.courses:
            room.wait_service(c.instructor, course=c.id)
            r = room.formgrader("POST", f"assignment/{NAME}/release", course=c.id)
            assert r.status_code == 200 and r.json()["success"], r.text
        out["exchange"] = sorted(p.name for p in room.exchange.iterdir())
        room.spawn(*room.learners, room.outsider)
        out["pids"] = room.server_pids()
        out["listed"] = {label: listed(room, acc[label]) for label in acc}
        out["outsider_list"] = listed(room, room.outsider)
        for (course, label), kind in KINDS.items():
            user = acc[label]
            room.assignments(user, "fetch", NAME, course=course)
            path = f"{folder(course)}/{NAME}.ipynb"
            nb = hubclass.contents(room, user, path)["content"]
            hubclass.save_notebook(room, user, path, hubclass.answered(nb, NAME, kind))
            res = room.assignments(user, "submit", NAME, course=course)
            assert res["success"], res
        # l2 asks for B's release, l3 for A's: nothing arrives
        for label, other in (("l2", B), ("l3", A)):
            room.assignments(acc[label], "fetch", NAME, course=other)
            out.setdefault("after_fetch", {})[label] = top_folders(room, acc[label])
            # with the other course's folder in place (their own course's notebook), submit is refused
            own = A if other == B else B
            nb = hubclass.contents(room, acc[label], f"{folder(own)}/{NAME}.ipynb")["content"]
            for part in (other, folder(other)):
                room.api(acc[label], "PUT", f"/user/{acc[label]}/api/contents/{part}", json={"type": "directory"})
            hubclass.save_notebook(room, acc[label], f"{folder(other)}/{NAME}.ipynb", nb)
            out.setdefault("foreign_submit", {})[label] = room.assignments(acc[label], "submit", NAME, course=other)
        out["inbound"] = {c.id: sorted(p.name.split("+")[0] for p in (room.exchange / c.id / "inbound").iterdir())
                          for c in room.courses}
        # each grading account: collect its course (into collected/) and grade it into its own root
        for c in room.courses:
            proc = room.as_grader([room.python, "-m", "nbgrader", "collect", NAME,
                                   "--CourseDirectory.submitted_directory=collected"], course=c.id)
            assert proc.returncode == 0, proc.stdout + proc.stderr
            proc = room.as_grader([room.python, "-m", "ctxlab.cli", "grade", str(room.root_of(c.id) / "collected"),
                                   "--root", str(room.root_of(c.id)), "--course", str(hubclass.ROOT), "--quiet",
                                   f"--assignment={NAME}"], course=c.id)
            assert proc.returncode == 0, proc.stdout + proc.stderr
            out.setdefault("formgrader", {})[c.id] = room.formgrader("GET", f"submissions/{NAME}", course=c.id).json()
        # each instructor on the other course's formgrader
        a_in, b_in = room.course(A).instructor, room.course(B).instructor
        out["cross"] = {
            "a_on_b": room.formgrader("GET", f"submissions/{NAME}", course=B, user=a_in).status_code,
            "b_on_a": room.formgrader("GET", f"submissions/{NAME}", course=A, user=b_in).status_code,
            "a_on_b_page": room.api(a_in, "GET", f"/services/{B}/formgrader", allow_redirects=False).status_code,
            "l1_on_a": room.formgrader("GET", f"submissions/{NAME}", course=A, user=acc["l1"]).status_code,
        }
        # each formgrader's own hub token (nbgrader's course check) reads its grading account, no one else
        tokens = {c.id: room.server_environ(c.grader)["JUPYTERHUB_API_TOKEN"] for c in room.courses}
        reads = {}
        for who in (room.course(A).grader, room.course(B).grader, acc["l1"]):
            r = requests.get(f"{room.url}/hub/api/users/{who}", headers={"Authorization": f"token {tokens[A]}"},
                             timeout=30)
            reads[who] = (r.status_code, r.json().get("groups") if r.status_code == 200 else None)
        out["service_reads"] = reads
        for c in room.courses:   # the formgrader's "Release feedback" button
            r = room.formgrader("POST", f"assignment/{NAME}/release_feedback", course=c.id)
            assert r.status_code == 200 and r.json()["success"], r.text
        feedback_dir = tmp_path_factory.mktemp("feedback")
        for label, user in acc.items():
            for c in room.courses:   # every learner asks every course; only their own answers
                room.assignments(user, "fetch_feedback", NAME, course=c.id)
                if (c.id, label) in KINDS:
                    out.setdefault("feedback", {})[(c.id, label)] = hubclass.feedback_pages(
                        room, user, folder(c.id), feedback_dir / f"{label}-{c.id}")
            out.setdefault("home", {})[label] = top_folders(room, user)
        yield out
    finally:
        room.close()


def test_each_formgrader_serves_its_own_course(two_courses):
    """Each formgrader released into its own course folder of the exchange (not "ctxlab", the
    grading root's copied nbgrader_config.py's default) and collected only its learners."""
    room, acc = two_courses["room"], two_courses["room"].accounts
    assert two_courses["exchange"] == [A, B]
    assert two_courses["inbound"] == {A: sorted([acc["l1"], acc["l2"]]), B: sorted([acc["l1"], acc["l3"]])}
    for c in room.courses:
        assert {s["student"] for s in two_courses["formgrader"][c.id]} == set(c.learners), c.id


def test_a_learner_lists_exactly_the_courses_they_are_in(two_courses):
    got = two_courses["listed"]
    assert got["l1"] == {(A, NAME): "released", (B, NAME): "released"}
    assert got["l2"] == {(A, NAME): "released"}
    assert got["l3"] == {(B, NAME): "released"}
    assert two_courses["outsider_list"] == {}


def test_a_learner_cannot_fetch_or_submit_another_course(two_courses):
    assert two_courses["after_fetch"]["l2"] == {A}, "l2 fetched something of course B"
    assert two_courses["after_fetch"]["l3"] == {B}, "l3 fetched something of course A"
    for label, res in two_courses["foreign_submit"].items():
        assert res["success"] is False and DENIED in res["value"], (label, res)


def test_scores_stay_in_their_course(two_courses):
    """l1's solution in A is full marks and their untouched notebook in B is 0, in each
    course's own gradebook (the one its formgrader serves)."""
    acc = two_courses["room"].accounts
    for course in (A, B):
        subs = {s["student"]: s for s in two_courses["formgrader"][course]}
        for (c, label), kind in KINDS.items():
            if c != course:
                continue
            sub = subs[acc[label]]
            assert sub["max_code_score"] > 0
            want = sub["max_code_score"] if kind == "solution" else 0
            assert sub["code_score"] == want, (course, label, kind, sub["code_score"])


def test_an_instructor_cannot_open_the_other_course_s_formgrader(two_courses):
    cross = two_courses["cross"]
    assert cross["a_on_b"] == 403 and cross["b_on_a"] == 403, cross
    assert cross["a_on_b_page"] == 403, cross
    assert cross["l1_on_a"] == 403, "a learner opened a formgrader"


def test_a_formgrader_reads_only_its_own_grading_account(two_courses):
    """The service role of a course lets its formgrader read its grading account's groups (how
    nbgrader finds its course) and nobody else: not the other course's grader, not a learner."""
    room = two_courses["room"]
    reads = two_courses["service_reads"]
    assert reads[room.course(A).grader] == (200, [f"formgrade-{A}"]), reads
    assert reads[room.course(B).grader][0] == 404, reads   # JupyterHub: "Not authorizing access", as 404
    assert reads[room.accounts["l1"]][0] == 404, reads


def test_each_learner_gets_their_own_feedback_of_their_own_courses(two_courses):
    room = two_courses["room"]
    acc = room.accounts
    for (course, label), pages in two_courses["feedback"].items():
        assert len(pages) == 1, (course, label, pages)
        sub = next(s for s in two_courses["formgrader"][course] if s["student"] == acc[label])
        got = hubclass.feedback_score(pages[0].read_text(encoding="utf-8"))
        assert got == (pytest.approx(sub["score"]), pytest.approx(sub["max_score"])), (course, label, got)
    # full for the solutions, 0 for the untouched: the two courses' feedback is not swapped
    scores = {key: hubclass.feedback_score(p[0].read_text(encoding="utf-8"))[0]
              for key, p in two_courses["feedback"].items()}
    assert scores[(A, "l1")] > 0 and scores[(B, "l1")] == 0 and scores[(B, "l3")] > 0 and scores[(A, "l2")] == 0
    assert two_courses["home"]["l2"] >= {A} and not (room.home(acc["l2"]) / folder(B) / "feedback").exists()


def test_zz_stopping_the_hub_leaves_no_process_account_or_folder(two_courses):
    room = two_courses["room"]
    assert all(two_courses["pids"][u] for u in room.learners), two_courses["pids"]
    room.close()
    left = hubclass.alive([p for pids in two_courses["pids"].values() for p in pids])
    assert not left, f"processes left after the hub stopped: {left}"
    assert room.stopped is not None and room.stopped.poll() is not None
    assert not room.base.exists()
    assert len(room.removed_users) == 3 + 2 * 2 + 1
    assert not any(Path("/home", u).exists() for u in room.removed_users)
