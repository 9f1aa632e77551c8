"""A real JupyterHub classroom on 127.0.0.1 for the tests (deploy/jupyterhub as shipped).

:class:`Classroom` creates OS accounts for the class (useradd, a password each, homes 0700),
an exchange folder, the grading root (``ctxlab grade --export`` as the grading account),
writes the class file that deploy/jupyterhub/jupyterhub_config.py reads and starts the hub
with the proxy that ``make setup`` installs (node_modules/.bin/configurable-http-proxy).
Users log in through the hub's login form (PAM), as a browser does, and get an API token.
:meth:`Classroom.close` stops the hub, then every process it started (the proxy, the
servers, the formgrader service) by their ids, and deletes the accounts and folders.

Learners' servers run the learner environment that tools/hub_env.py makes (the ctxlab wheel,
no solutions, no key), as the guide's ``make hub-learner-env`` does; the formgrader runs the
checkout's Python as the grading account. Both must be runnable by their accounts. This
checkout's .venv often is not (CI's interpreter is pyenv's under /root, which is 0700: as for
any environment inside a home folder, other accounts cannot reach it), so :func:`course_python`
makes a venv from a copy of this interpreter whose site-packages reads this .venv's packages,
and the learner environment is made from the same copy.

Needs root (accounts, servers that run as them), useradd and the npm proxy; otherwise
:func:`unavailable` says why, and the tests are skipped with that reason (an error in CI).
"""
from __future__ import annotations

import copy
import json
import os
import pwd
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import requests
import yaml

import hub_env  # tools/ (conftest puts it on sys.path)

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "deploy" / "jupyterhub" / "jupyterhub_config.py"
ARTIFACTS = ROOT / "artifacts" / "hub"
CHP = ROOT / "node_modules" / ".bin" / "configurable-http-proxy"
BIN = Path(sys.executable).parent
COURSE_ID = "ctxlab"
#: put into the hub's own environment: no learner server may see it
FAKE_KEY = "-".join(["sk", "ant", "hub", "process", "only", "x" * 12])  # built, not a literal


def _reachable_by_all(path: Path) -> bool:
    """Whether an account other than root can traverse to ``path`` (o+x on every parent)."""
    p = Path(os.path.realpath(path))
    return all(os.stat(q).st_mode & 0o001 for q in [p, *p.parents])


def course_python(dest: Path) -> tuple[str, dict[str, str], str]:
    """The checkout's Python for the grading account, the environment it needs, and the
    interpreter it is made from (the learner environment is made from the same).

    This .venv's own when every account can run it. Otherwise (an interpreter under /root) a
    copy of this interpreter (same build: a system Python of another patch release is not the
    same, e.g. Debian's 3.11.2 breaks soupsieve, which nbconvert's feedback export uses) in
    ``dest``, and a venv of it whose site-packages reads this .venv's packages."""
    if _reachable_by_all(Path(os.path.realpath(sys.executable))):
        return sys.executable, {}, os.path.realpath(getattr(sys, "_base_executable", sys.executable))
    base = Path(sys.base_prefix)
    ver = f"python{sys.version_info.major}.{sys.version_info.minor}"
    copy = dest / "python"
    shutil.copytree(base, copy, symlinks=True,
                    ignore=lambda d, names: [n for n in names if n in ("site-packages", "test", "idlelib")
                                             and Path(d).name == ver])
    env = {"LD_LIBRARY_PATH": str(copy / "lib")}   # its libpython (the binary's RUNPATH is the original)
    venv = dest / "env"
    subprocess.run([str(copy / "bin" / ver), "-m", "venv", "--without-pip", str(venv)], check=True,
                   capture_output=True, env={**os.environ, **env})
    site_dir = next(p for p in map(Path, sys.path) if p.name == "site-packages" and str(p).startswith(sys.prefix))
    inner = next((venv / "lib").glob("python3*/site-packages"))
    (inner / "ctxlab-course.pth").write_text(f"import site; site.addsitedir({str(site_dir)!r})\n")
    for shared in ("etc", "share"):   # Jupyter's sys-prefix config (enabled extensions) and lab extensions
        if (Path(sys.prefix) / shared).exists():
            (venv / shared).symlink_to(Path(sys.prefix) / shared)
    hub_env.copy_scripts(BIN, venv)   # the console scripts (nbgrader runs `alembic` and `jupyter` from PATH)
    return str(venv / "bin" / "python"), env, str(copy / "bin" / ver)


def learner_env(dest: Path, base_python: str, env: dict[str, str]) -> str:
    """The learners' environment, made as the guide makes it (tools/hub_env.py, ``make
    hub-learner-env``) but with this .venv's third-party packages (``--packages-from``, no
    download); return its Python."""
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "hub_env.py"), "--prefix", str(dest),
                           "--python", base_python, "--packages-from", sys.prefix],
                          env={**os.environ, **env}, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"tools/hub_env.py failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return str(dest / "venv" / "bin" / "python")


def shared_envs() -> tuple[str, dict[str, str], Path, str]:
    """The grading accounts' Python (:func:`course_python`) and the learners' environment
    (:func:`learner_env`), built once per test run and used by every classroom of the run, in
    every parallel worker: the first to need them builds them under a lock, the others wait and
    reuse them. They live in ``/tmp/ctxlab-hub-envs-RUN`` (readable by every account; RUN is
    CTXLAB_TEST_RUN, which tests/conftest.py sets for the run and removes the folder with at its
    end). Returns (python, its environment, the learners' environment folder, its Python)."""
    import fcntl

    run = os.environ.get("CTXLAB_TEST_RUN") or f"pid{os.getpid()}"
    base = Path(tempfile.gettempdir()) / f"ctxlab-hub-envs-{run}"
    base.mkdir(exist_ok=True)
    os.chmod(base, 0o755)
    built = base / "built.json"
    with open(base / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)    # released when the file closes
        if not built.exists():
            python, env, base_python = course_python(base / "course-env")
            learner_python = learner_env(base / "learner-env", base_python, env)
            built.write_text(json.dumps({"python": python, "env": env, "learner_python": learner_python}))
        info = json.loads(built.read_text())
    return info["python"], info["env"], base / "learner-env", info["learner_python"]


def skip_or_fail() -> None:
    """Skip a classroom test where this machine cannot run it; in CI, fail instead."""
    import pytest

    reason = unavailable()
    if reason and os.environ.get("CI"):
        pytest.fail(f"CI must run the JupyterHub classroom test: {reason}")
    if reason:
        pytest.skip(reason)


def unavailable() -> str | None:
    """Why this machine cannot run a real classroom, or None."""
    if os.name != "posix" or os.geteuid() != 0:
        return "JupyterHub classroom tests need root (they create OS accounts): run them as root, as CI does"
    for tool in ("useradd", "userdel", "chpasswd"):
        if not shutil.which(tool):
            return f"JupyterHub classroom tests need {tool} (Debian package passwd)"
    if not CHP.exists():
        return "configurable-http-proxy is not installed: run `make setup` (it runs npm ci; needs Node.js >= 20)"
    if not (BIN / "jupyterhub").exists():
        return "jupyterhub is not installed in this environment: run `make setup`"
    if not _reachable_by_all(ROOT / "ctxlab"):
        return (f"{ROOT} is not readable by other accounts (the grading account runs the checkout, and the "
                "test's learner environment reuses its .venv's packages)")
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pids_of(user: str) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "-u", user], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def _stop_pids(pids: list[int], grace: float = 10) -> None:
    """SIGTERM each process by id, SIGKILL what is still there after ``grace`` seconds, and wait
    (``grace`` again at most) until the killed ones are gone."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.time() + grace
    while alive(pids) and time.time() < deadline:
        time.sleep(0.1)
    for pid in alive(pids):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.time() + grace
    while alive(pids) and time.time() < deadline:   # a killed process is gone only once the kernel says so
        time.sleep(0.1)


@dataclass
class Course:
    """One course of the hub: its id (the formgrader service's name), accounts and port."""

    id: str
    grader: str
    instructor: str
    learners: list[str]
    port: int


class Classroom:
    """Courses on a real JupyterHub, and an ``outsider`` in none of them.

    ``Classroom(n_learners=3)`` is one course (``ctxlab``, written as the one-course class
    file): ``learners``, ``instructor``, ``grader``. ``Classroom(courses={"ctxlab-a": ["l1", "l2"],
    "ctxlab-b": ["l1", "l3"]})`` writes a ``courses:`` class file: each course gets its own
    grading account, instructor, grading root and formgrader port, and the learners named by
    the same label are one account in every course they are listed in (``accounts[label]``).
    ``instructor`` and ``grader`` are then the first course's; methods take ``course=`` (an id)."""

    def __init__(self, n_learners: int = 3, courses: dict[str, list[str]] | None = None):
        tag = secrets.token_hex(3)
        self.base = Path(tempfile.mkdtemp(prefix=f"ctxlab-hub-{tag}-"))
        os.chmod(self.base, 0o755)          # the exchange inside must be reachable by every account
        self.one_course_file = courses is None
        courses = courses or {COURSE_ID: [f"l{i + 1}" for i in range(n_learners)]}
        labels = list(dict.fromkeys(label for group in courses.values() for label in group))
        self.accounts = {label: f"cx{tag}{label}" for label in labels}
        self.learners = list(self.accounts.values())
        self.courses = [Course(cid, f"cx{tag}c{i}gr" if len(courses) > 1 else f"cx{tag}gr",
                               f"cx{tag}c{i}in" if len(courses) > 1 else f"cx{tag}in",
                               [self.accounts[label] for label in group], _free_port())
                        for i, (cid, group) in enumerate(courses.items())]
        self.instructor, self.grader = self.courses[0].instructor, self.courses[0].grader
        self.outsider = f"cx{tag}ot"
        self.users: list[str] = []
        self.removed_users: list[str] = []   # deleted by close()
        self.passwords: dict[str, str] = {}
        self.tokens: dict[str, str] = {}
        self.proc: subprocess.Popen | None = None
        self.stopped: subprocess.Popen | None = None
        self.exchange = self.base / "exchange"
        self.state = self.base / "hub"
        self.port, self.hub_port, self.api_port = (_free_port() for _ in range(3))
        self.fg_port = self.courses[0].port
        self.url = f"http://127.0.0.1:{self.port}"
        self.python, self.python_env = "", {}   # the grading accounts' (the checkout's)
        self.learner_env = self.base / "learner-env"   # prepare(): the run's shared one (shared_envs)
        self.learner_python = ""

    def course(self, cid: str | None = None) -> Course:
        """The course ``cid`` (default: the first)."""
        return next(c for c in self.courses if c.id == cid) if cid else self.courses[0]

    @property
    def several(self) -> bool:
        return len(self.courses) > 1

    # ----------------------------------------------------------------- accounts and folders
    def _add_user(self, name: str) -> None:
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", "-K", "HOME_MODE=0700", name],
                       check=True, capture_output=True)
        self.users.append(name)
        pw = secrets.token_urlsafe(12)
        subprocess.run(["chpasswd"], input=f"{name}:{pw}\n", text=True, check=True, capture_output=True)
        self.passwords[name] = pw

    def home(self, user: str) -> Path:
        return Path(pwd.getpwnam(user).pw_dir)

    def root_of(self, cid: str | None = None) -> Path:
        """The grading root of a course (in its grading account's home)."""
        return self.home(self.course(cid).grader) / "grading"

    @property
    def grading_root(self) -> Path:
        return self.root_of()

    def as_user(self, user: str, cmd: list[str], cwd: Path | None = None, **env) -> subprocess.CompletedProcess:
        """Run a command as ``user`` (its own uid and gid, no supplementary groups)."""
        pw = pwd.getpwnam(user)
        staff = {u for c in self.courses for u in (c.grader, c.instructor)}
        python = self.python if user in staff else self.learner_python
        full_env = {"HOME": pw.pw_dir, "USER": user, "LANG": "C.UTF-8",
                    "PATH": os.pathsep.join([str(Path(python).parent), "/usr/local/bin", "/usr/bin", "/bin"]),
                    **self.python_env, **env}
        return subprocess.run(cmd, cwd=cwd or pw.pw_dir, env=full_env, user=pw.pw_uid, group=pw.pw_gid,
                              extra_groups=[], capture_output=True, text=True)

    def grader_env(self, cid: str | None = None) -> dict[str, str]:
        """The environment of a terminal in a course's formgrader service (as the hub config sets it)."""
        deploy = ROOT / "deploy" / "jupyterhub" / "jupyter"
        course = self.course(cid)
        return {"CTXLAB_EXCHANGE": str(self.exchange), "CTXLAB_GRADING_ROOT": str(self.root_of(course.id)),
                "CTXLAB_COURSE_ID": course.id, **({"CTXLAB_PATH_INCLUDES_COURSE": "1"} if self.several else {}),
                "JUPYTER_CONFIG_PATH": os.pathsep.join([str(deploy / "grader"), str(deploy / "common")])}

    def as_grader(self, cmd: list[str], course: str | None = None) -> subprocess.CompletedProcess:
        c = self.course(course)
        return self.as_user(c.grader, cmd, cwd=self.root_of(c.id), **self.grader_env(c.id))

    def prepare(self, assignments: list[str] | None = None) -> None:
        self.python, self.python_env, self.learner_env, self.learner_python = shared_envs()
        staff = [u for c in self.courses for u in (c.instructor, c.grader)]
        for name in [*self.learners, *staff, self.outsider]:
            self._add_user(name)
        self.exchange.mkdir()
        os.chmod(self.exchange, 0o777)      # the guide's step: chmod ugo+rwx (nbgrader checks it)
        self.state.mkdir(mode=0o700)
        for c in self.courses:   # each grading root, made by its grading account as the guide says
            proc = self.as_user(c.grader, [self.python, "-m", "ctxlab.cli", "grade", "--export",
                                           "--root", str(self.root_of(c.id)), "--course", str(ROOT), "--quiet",
                                           *[f"--assignment={a}" for a in assignments or []]],
                                CTXLAB_COURSE_ID=c.id)
            if proc.returncode != 0:
                raise RuntimeError(f"ctxlab grade --export failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
        klass = {
            "bind_url": self.url,
            "hub_bind_url": f"http://127.0.0.1:{self.hub_port}",
            "proxy_api_url": f"http://127.0.0.1:{self.api_port}",
            "grader_python": self.python,
            "learner_env": str(self.learner_env),
            "environment": self.python_env,
            "exchange": str(self.exchange),
            "other_users": [self.outsider],
        }
        entries = [{"id": c.id, "grader": c.grader, "grading_root": str(self.root_of(c.id)),
                    "formgrader_port": c.port, "instructors": [c.instructor], "learners": c.learners}
                   for c in self.courses]
        if self.one_course_file:   # the class file written before courses: existed
            klass.update({k: v for k, v in entries[0].items() if k != "id"})
        else:
            klass["courses"] = entries
        (self.state / "class.yaml").write_text(yaml.safe_dump(klass), encoding="utf-8")

    # ----------------------------------------------------------------- the hub
    def start(self, timeout: float = 120) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "CTXLAB_"))}
        env.update(CTXLAB_HUB_CLASS=str(self.state / "class.yaml"), ANTHROPIC_API_KEY=FAKE_KEY)
        self.log = open(self.state / "jupyterhub.log", "w")
        self.proc = subprocess.Popen([str(BIN / "jupyterhub"), "-f", str(CONFIG)], cwd=self.state, env=env,
                                     stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.time() + timeout
        while True:
            try:
                if requests.get(f"{self.url}/hub/api/", timeout=2).status_code == 200:
                    return
            except requests.RequestException:
                pass
            if self.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError("JupyterHub did not start:\n" + self.hub_log()[-4000:])
            time.sleep(0.5)

    def hub_log(self) -> str:
        return (self.state / "jupyterhub.log").read_text(errors="replace")

    def login(self, user: str) -> str:
        """Log in through the hub's form (PAM) and return an API token of the user."""
        s = requests.Session()
        s.get(f"{self.url}/hub/login", timeout=30)
        xsrf = s.cookies.get("_xsrf")
        r = s.post(f"{self.url}/hub/login?next=", data={"username": user, "password": self.passwords[user],
                                                        "_xsrf": xsrf}, allow_redirects=False, timeout=60)
        if r.status_code != 302:
            raise AssertionError(f"{user} could not log in ({r.status_code}):\n" + self.hub_log()[-3000:])
        r = s.post(f"{self.url}/hub/api/users/{user}/tokens", json={"note": "test", "expires_in": 3600},
                   headers={"X-XSRFToken": s.cookies.get("_xsrf")}, timeout=30)
        r.raise_for_status()
        self.tokens[user] = r.json()["token"]
        return self.tokens[user]

    def api(self, user: str, method: str, path: str, **kw) -> requests.Response:
        """A request to the hub (``/hub/api/...``, ``/user/...``, ``/services/...``) with the user's token."""
        headers = {"Authorization": f"token {self.tokens[user]}", **kw.pop("headers", {})}
        return requests.request(method, self.url + path, headers=headers, timeout=kw.pop("timeout", 120), **kw)

    def spawn(self, *users: str, timeout: float = 180) -> None:
        """Start the users' servers (all requested at once, as a class logging in) and wait until ready."""
        for user in users:
            r = self.api(user, "POST", f"/hub/api/users/{user}/server")
            assert r.status_code in (201, 202), f"{user}: server did not start ({r.status_code}): {r.text}"
        waiting, deadline = set(users), time.time() + timeout
        while waiting and time.time() < deadline:
            for user in sorted(waiting):
                model = self.api(user, "GET", f"/hub/api/users/{user}").json()
                if model.get("servers", {}).get("", {}).get("ready"):
                    waiting.discard(user)
            time.sleep(0.5)
        if waiting:
            raise AssertionError(f"{sorted(waiting)}: server not ready in {timeout} s:\n" + self.hub_log()[-3000:])

    def wait_service(self, user: str, timeout: float = 120, course: str | None = None) -> None:
        """Until a course's formgrader service answers the user (its instructor)."""
        cid = self.course(course).id
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                r = self.api(user, "GET", f"/services/{cid}/formgrader/api/status", timeout=10)
                if r.status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.5)
        raise AssertionError(f"the formgrader service {cid} did not answer:\n" + self.hub_log()[-3000:])

    # ----------------------------------------------------------------- nbgrader through the hub
    def assignments(self, user: str, action: str | None = None, assignment: str | None = None,
                    course: str | None = None) -> dict:
        """The Assignments tab's calls: list (GET) or fetch / submit / fetch_feedback (POST), for
        ``course`` (default: the one course; with several, a list without it is every course's)."""
        cid = course if course is not None else ("" if self.several else COURSE_ID)
        if action is None:
            r = self.api(user, "GET", f"/user/{user}/assignments", params={"course_id": cid})
        else:
            r = self.api(user, "POST", f"/user/{user}/assignments/{action}",
                         params={"course_id": cid, "assignment_id": assignment})
        assert r.status_code == 200, f"{user} {action or 'list'}: {r.status_code} {r.text[:500]}"
        return r.json()

    def formgrader(self, method: str, path: str, course: str | None = None, user: str | None = None,
                   **kw) -> requests.Response:
        """A call to a course's formgrader API, as its instructor unless ``user`` is given."""
        c = self.course(course)
        return self.api(user or c.instructor, method, f"/services/{c.id}/formgrader/api/{path}", **kw)

    def server_process(self, user: str) -> tuple[list[str], dict[str, str]]:
        """The command line and environment of the user's Jupyter server process (what its
        kernels inherit)."""
        for pid in _pids_of(user):
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
                if b"jupyterhub.singleuser" in cmd:
                    raw = Path(f"/proc/{pid}/environ").read_bytes()
                    env = dict(kv.split("=", 1) for kv in raw.decode().split("\0") if "=" in kv)
                    return cmd.decode().rstrip("\0").split("\0"), env
            except OSError:
                continue
        raise AssertionError(f"no Jupyter server process of {user}")

    def server_environ(self, user: str) -> dict[str, str]:
        return self.server_process(user)[1]

    def server_pids(self) -> dict[str, list[int]]:
        return {u: _pids_of(u) for u in self.users}

    # ----------------------------------------------------------------- teardown
    def close(self) -> None:
        """Stop the hub and every process it started, by their ids; delete accounts and folders.
        Safe to call again."""
        started = [pid for pids in self.server_pids().values() for pid in pids]
        proxy_pid = self.state / "jupyterhub-proxy.pid"
        if proxy_pid.exists():
            started.append(int(proxy_pid.read_text().strip() or 0))
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)   # the hub stops the servers, the service, the proxy
                try:
                    self.proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            self.log.close()
            self.stopped, self.proc = self.proc, None
        left = [p for p in started if p > 0] + [p for u in self.users for p in _pids_of(u)]
        _stop_pids(sorted(set(left)))
        for name in self.users:
            subprocess.run(["userdel", "--remove", name], capture_output=True)
        self.removed_users += self.users
        self.users = []
        log = self.state / "jupyterhub.log"
        if log.exists():   # kept for a failing run: artifacts/hub/jupyterhub.log (-courses.log: several)
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            shutil.copy(log, ARTIFACTS / f"jupyterhub{'-courses' if self.several else ''}.log")
        shutil.rmtree(self.base, ignore_errors=True)


def contents(room: Classroom, user: str, path: str) -> dict:
    r = room.api(user, "GET", f"/user/{user}/api/contents/{path}", params={"content": "1"})
    assert r.status_code == 200, f"{user} GET {path}: {r.status_code} {r.text[:300]}"
    return r.json()


def save_notebook(room: Classroom, user: str, path: str, nb: dict) -> None:
    """Save a notebook into the learner's server as JupyterLab does (contents API PUT)."""
    r = room.api(user, "PUT", f"/user/{user}/api/contents/{path}",
                 data=json.dumps({"type": "notebook", "format": "json", "content": nb}))
    assert r.status_code in (200, 201), f"{user} PUT {path}: {r.status_code} {r.text[:300]}"


def feedback_score(html: str) -> tuple[float, float]:
    """(score, max) in the heading of an nbgrader feedback page."""
    m = re.search(r"\(Score: ([\d.]+) / ([\d.]+)\)</h4>", html)
    assert m, "no score heading in the feedback page"
    return float(m.group(1)), float(m.group(2))


def answered(fetched: dict, name: str, kind: str) -> dict:
    """The fetched (released) notebook with the learner's answer cells: the solution's
    (``kind`` "solution"), the partial variant's ("partial"), or none changed ("untouched")."""
    if kind == "untouched":
        return fetched
    from graded_class import source
    from nbfixtures import answer_cells, grade_id, make_variant

    filled = make_variant(source(name), kind)[0]
    by_id = {grade_id(filled.cells[i]): filled.cells[i].source for i in answer_cells(filled)}
    nb = copy.deepcopy(fetched)
    for cell in nb["cells"]:
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if gid in by_id:
            cell["source"] = by_id[gid]
    return nb


def feedback_pages(room: Classroom, user: str, folder: str, dest: Path) -> list[Path]:
    """The feedback pages fetch_feedback put in the learner's ``folder/feedback/<timestamp>/``,
    copied (through the contents API) to ``dest-<n>.html``."""
    pages = []
    for stamp in contents(room, user, f"{folder}/feedback")["content"]:
        for f in contents(room, user, stamp["path"])["content"]:
            page = Path(f"{dest}-{len(pages)}.html")
            page.write_text(contents(room, user, f["path"])["content"], encoding="utf-8")
            pages.append(page)
    return pages


def alive(pids: list[int]) -> list[int]:
    """Those of ``pids`` that are still running (a zombie, dead but not yet reaped, is not)."""
    left = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z":
            left.append(pid)
    return left
