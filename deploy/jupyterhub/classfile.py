"""The class file that jupyterhub_config.py reads (class.yaml): one course or several on one hub.

One course: the top-level keys ``grader``, ``grading_root``, ``formgrader_port``,
``instructors`` and ``learners``; its course id is ``ctxlab`` (the class files written before
``courses:`` existed work unchanged). Several courses (e.g. two cohorts of this course): a
``courses:`` list, each entry with its own ``id``, grading account, grading root, formgrader
port, instructors and learners; a learner may be in more than one. The other keys (paths,
URLs, ``other_users``) are shared by every course. class.example.yaml says what each key means.

:func:`load` checks the file and stops the hub with every mistake it finds and what to do about
it: an unknown key, a duplicate course id, port, grading account or grading root, a name that is
not an account on this machine, a grading root that ``ctxlab grade --export`` has not made, a
missing environment, a learner environment built from older settings.
"""
from __future__ import annotations

import filecmp
import os
import pwd
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import yaml

HERE = Path(__file__).resolve().parent
DEFAULT_COURSE = "ctxlab"   # the course id of a one-course class file (nbgrader_config.py's default)
DEFAULT_PORT = 9999
COURSE_KEYS = ("id", "grader", "grading_root", "formgrader_port", "instructors", "learners")
SHARED_KEYS = ("bind_url", "hub_bind_url", "proxy_api_url", "learner_env", "grader_python", "environment",
               "exchange", "other_users", "admin_users", "api_key_file")
# a JupyterHub service, role and group name, and a folder of the exchange
_COURSE_ID = re.compile(r"^[a-z][a-z0-9_-]*[a-z0-9]$")


@dataclass(frozen=True)
class Course:
    """One course of the hub: its formgrader service (named by the id), accounts and root."""

    id: str
    grader: str
    grading_root: Path
    port: int
    instructors: tuple[str, ...]
    learners: tuple[str, ...]


@dataclass(frozen=True)
class Classroom:
    courses: tuple[Course, ...]
    grader_python: str
    learner_env: Path
    exchange: Path
    environment: dict[str, str]
    other_users: tuple[str, ...]
    admin_users: tuple[str, ...]
    raw: dict

    @property
    def several(self) -> bool:
        """More than one course: learners have no fixed course id, and every account's
        assignment folders include the course (``Exchange.path_includes_course``), since two
        cohorts release the same assignment names."""
        return len(self.courses) > 1

    @property
    def learner_python(self) -> str:
        return str(self.learner_env / "venv" / "bin" / "python")

    def users(self) -> set[str]:
        return {u for c in self.courses for u in (c.grader, *c.instructors, *c.learners)} | set(self.other_users)


def _names(value, where: str, problems: list[str]) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        problems.append(f"{where} must be a list of account names, e.g. [learner1, learner2]")
        return ()
    return tuple(value)


def _course(entry: dict, where: str, problems: list[str]) -> Course | None:
    unknown = sorted(set(entry) - set(COURSE_KEYS))
    if unknown:
        problems.append(f"{where}: unknown key(s) {', '.join(unknown)} (a course has {', '.join(COURSE_KEYS)})")
    cid = entry.get("id", DEFAULT_COURSE)
    if not isinstance(cid, str) or not _COURSE_ID.match(cid):
        problems.append(f"{where}: id {cid!r} must be lower-case letters, digits, '-' or '_', starting with a "
                        "letter (it names the formgrader service /services/<id> and the groups nbgrader-<id>)")
        return None
    missing = [k for k in ("grader", "grading_root", "learners") if not entry.get(k)]
    if missing:
        problems.append(f"{where} (course {cid}): set {', '.join(missing)}")
        return None
    try:
        port = int(entry.get("formgrader_port", DEFAULT_PORT))
    except (TypeError, ValueError):
        problems.append(f"{where} (course {cid}): formgrader_port must be a port number")
        return None
    return Course(cid, str(entry["grader"]), Path(entry["grading_root"]), port,
                  _names(entry.get("instructors"), f"{where} instructors", problems),
                  _names(entry.get("learners"), f"{where} learners", problems))


def _duplicates(values: list) -> list:
    seen, dup = set(), []
    for v in values:
        if v in seen and v not in dup:
            dup.append(v)
        seen.add(v)
    return dup


def _check_courses(courses: list[Course], problems: list[str]) -> None:
    for what, get, fix in (("course id", lambda c: c.id, "give each course its own id"),
                           ("formgrader_port", lambda c: c.port, "give each course its own formgrader_port"),
                           ("grader", lambda c: c.grader, "each course needs its own grading account"),
                           ("grading_root", lambda c: str(c.grading_root), "each course needs its own grading root")):
        for dup in _duplicates([get(c) for c in courses]):
            problems.append(f"two courses have the same {what} {dup}: {fix}")
    graders = {c.grader for c in courses}
    for c in courses:
        for name in sorted(set(c.learners) & graders):
            problems.append(f"course {c.id}: {name} is a grading account, not a learner")
        for name in sorted(set(c.learners) & set(c.instructors)):
            problems.append(f"course {c.id}: {name} is both a learner and an instructor")
        for name in _duplicates(list(c.learners)):
            problems.append(f"course {c.id}: learner {name} is listed twice")


def _check_machine(klass: Classroom, account: Callable, problems: list[str]) -> None:
    """What must exist on this machine: the accounts, the environments, the exchange, the roots."""
    for name in sorted(klass.users()):
        try:
            account(name)
        except KeyError:
            where = [c.id for c in klass.courses if name in (c.grader, *c.instructors, *c.learners)] or ["other_users"]
            problems.append(f"{name} (in {', '.join(where)}) is not an account on this machine: create it "
                            "(useradd, docs/instructor.md section 3, step 1) or remove it from the class file")
    build = f"make hub-learner-env PREFIX={klass.learner_env}"
    for need, how in ((klass.learner_python, build), (klass.learner_env / "jupyter" / "learner", build),
                      (klass.grader_python, "make setup in the checkout")):
        if not os.path.exists(need):
            problems.append(f"{need} does not exist: run `{how}` (docs/instructor.md, section 3)")
    stale = stale_settings(klass.learner_env / "jupyter")
    if stale and os.path.exists(klass.learner_python):
        problems.append(f"the learner environment's settings differ from {HERE / 'jupyter'} ({', '.join(stale)}): "
                        f"rebuild it with `{build}`")
    if not (klass.exchange.is_dir() and klass.exchange.stat().st_mode & 0o777 == 0o777):
        problems.append(f"the exchange {klass.exchange} must exist and be writable by every account: "
                        f"mkdir -p {klass.exchange} && chmod ugo+rwx {klass.exchange}")
    for c in klass.courses:
        if not (c.grading_root / "nbgrader_config.py").exists():
            problems.append(f"course {c.id}: the grading root {c.grading_root} is not made yet: as {c.grader}, run "
                            f"`env CTXLAB_COURSE_ID={c.id} ctxlab grade --export --root {c.grading_root} --course <checkout>`")
        else:
            try:
                if c.grading_root.stat().st_uid != account(c.grader).pw_uid:
                    problems.append(f"course {c.id}: the grading root {c.grading_root} must belong to {c.grader} "
                                    "(make it as that account)")
            except KeyError:
                pass


def stale_settings(copied: Path) -> list[str]:
    """The files of the learner environment's ``jupyter/learner`` and ``jupyter/common`` that are
    not those of deploy/jupyterhub/jupyter (the environment copies them when it is built)."""
    out = []
    for part in ("learner", "common"):
        src = HERE / "jupyter" / part
        for path in (p for p in src.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            rel = path.relative_to(HERE / "jupyter")
            if not (copied / rel).is_file() or not filecmp.cmp(path, copied / rel, shallow=False):
                out.append(str(rel))
    return out


def parse(data: dict, where: str = "class file", account: Callable | None = None) -> Classroom:
    """The class described by ``data`` (a class file's YAML), checked against this machine
    (``account``: the account of a name, KeyError when there is none)."""
    example = HERE / "class.example.yaml"
    account = account or pwd.getpwnam
    if not isinstance(data, dict):
        raise SystemExit(f"{where}: not a class file (see {example})")
    problems: list[str] = []
    if "course_python" in data:
        problems.append("course_python is now two keys: grader_python (the checkout's .venv, for the hub's "
                        "formgrader) and learner_env (make hub-learner-env; see class.example.yaml)")
    one = [k for k in COURSE_KEYS if k in data and k != "id"]
    if "courses" in data:
        if one:
            problems.append(f"{', '.join(one)} belong(s) to a course: with courses:, put them in each course's entry")
        entries = data["courses"]
        if not isinstance(entries, list) or not entries or not all(isinstance(e, dict) for e in entries):
            raise SystemExit(f"{where}: courses must be a list of courses, each with id, grader, grading_root, "
                             f"formgrader_port, instructors, learners (see {example})")
        for i, e in enumerate(entries):
            if "id" not in e:
                problems.append(f"courses[{i}]: set id (the course id; one per course)")
        parsed = [_course(e, f"courses[{i}]", problems) for i, e in enumerate(entries)]
    else:
        parsed = [_course({k: data[k] for k in one}, where, problems)]
    unknown = sorted(set(data) - set(SHARED_KEYS) - set(COURSE_KEYS) - {"courses", "course_python"} | ({"id"} & set(data)))
    if unknown:
        problems.append(f"unknown key(s) {', '.join(unknown)} (see {example})")
    missing = [k for k in ("grader_python", "learner_env", "exchange") if not data.get(k)]
    if missing:
        problems.append(f"set {', '.join(missing)}")
    courses = [c for c in parsed if c is not None]
    _check_courses(courses, problems)
    if problems or len(courses) != len(parsed):
        raise SystemExit(f"{where}:\n  - " + "\n  - ".join(problems) + f"\n(see {example})")
    klass = Classroom(tuple(courses), str(data["grader_python"]), Path(data["learner_env"]), Path(data["exchange"]),
                      {str(k): str(v) for k, v in (data.get("environment") or {}).items()},
                      _names(data.get("other_users"), "other_users", problems),
                      _names(data.get("admin_users"), "admin_users", problems), data)
    _check_machine(klass, account, problems)
    if problems:
        raise SystemExit(f"{where}:\n  - " + "\n  - ".join(problems) + f"\n(see {example})")
    return klass


def load(path: Path, account: Callable | None = None) -> Classroom:
    path = Path(path)
    if not path.exists():
        raise SystemExit(f"{path} not found: copy {HERE / 'class.example.yaml'} there and edit it "
                         "(or set CTXLAB_HUB_CLASS to its path)")
    return parse(yaml.safe_load(path.read_text(encoding="utf-8")), str(path), account)
