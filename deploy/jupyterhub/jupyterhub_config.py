"""JupyterHub for one class on one machine (The Littlest JupyterHub's layout: real OS accounts).

Each learner logs in with their own OS account (PAM) and their server runs as that account
(LocalProcessSpawner): nbgrader knows who submits from the OS user name, so every learner
must have their own (one shared OS user would make every submission the same learner's).
The instructors share one grading account, whose Jupyter server runs as the hub service
``ctxlab`` (the formgrader); the instructors reach it through the group ``formgrade-ctxlab``.
Learners' servers run the learner environment (``make hub-learner-env``: the ctxlab wheel, no
solutions, no key); only the formgrader runs the checkout's Python.
Learners are the group ``nbgrader-ctxlab``: nbgrader's JupyterHubAuthPlugin lets only the
course's groups list, fetch and submit.

The class (accounts, paths, port) is read from the YAML file named by ``CTXLAB_HUB_CLASS``
(default /etc/ctxlab/class.yaml; deploy/jupyterhub/class.example.yaml says what each key
means). Start the hub from the folder that keeps its state (jupyterhub.sqlite, cookie secret):

    CTXLAB_HUB_CLASS=/etc/ctxlab/class.yaml jupyterhub -f /opt/ctxlab/deploy/jupyterhub/jupyterhub_config.py

docs/instructor.md (section 3) gives the whole setup; tests/test_hub.py runs it end to end.
"""
import os
import shutil
from pathlib import Path

import yaml

c = get_config()  # noqa: F821

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
COURSE_ID = "ctxlab"   # = CourseDirectory.course_id of nbgrader_config.py (repository and jupyter/common)

CLASS_FILE = Path(os.environ.get("CTXLAB_HUB_CLASS", "/etc/ctxlab/class.yaml"))
if not CLASS_FILE.exists():
    raise SystemExit(f"{CLASS_FILE} not found: copy {HERE / 'class.example.yaml'} there and edit it "
                     "(or set CTXLAB_HUB_CLASS to its path)")
klass = yaml.safe_load(CLASS_FILE.read_text(encoding="utf-8"))
if "course_python" in klass:
    raise SystemExit(f"{CLASS_FILE}: course_python is now two keys: grader_python (the checkout's .venv, "
                     "for the hub's formgrader) and learner_env (make hub-learner-env; see class.example.yaml)")
missing = [k for k in ("grader_python", "learner_env", "grader", "grading_root", "exchange", "learners")
           if not klass.get(k)]
if missing:
    raise SystemExit(f"{CLASS_FILE}: set {', '.join(missing)} (see {HERE / 'class.example.yaml'})")

# Learners' servers run the learner environment (tools/hub_env.py: the ctxlab wheel, no
# solutions, no key); only the formgrader runs the checkout's Python, as the grading account.
grader_python = str(klass["grader_python"])
learner_env = Path(klass["learner_env"])
learner_python = str(learner_env / "venv" / "bin" / "python")
for need, how in ((learner_python, f"make hub-learner-env PREFIX={learner_env}"),
                  (learner_env / "jupyter" / "learner", f"make hub-learner-env PREFIX={learner_env}"),
                  (grader_python, "make setup in the checkout")):
    if not os.path.exists(need):
        raise SystemExit(f"{CLASS_FILE}: {need} does not exist: run `{how}` (docs/instructor.md, section 3)")
grader = klass["grader"]
instructors = list(klass.get("instructors") or [])
learners = list(klass["learners"])
others = list(klass.get("other_users") or [])
port = int(klass.get("formgrader_port", 9999))

# --------------------------------------------------------------------------- hub and proxy
c.JupyterHub.bind_url = klass.get("bind_url", "http://0.0.0.0:8000")
if klass.get("hub_bind_url"):
    c.JupyterHub.hub_bind_url = klass["hub_bind_url"]
if klass.get("proxy_api_url"):
    c.ConfigurableHTTPProxy.api_url = klass["proxy_api_url"]
# the proxy the course's own setup installs (make setup: npm ci), else one on PATH
chp = REPO / "node_modules" / ".bin" / "configurable-http-proxy"
c.ConfigurableHTTPProxy.command = [str(chp) if chp.exists() else (shutil.which("configurable-http-proxy")
                                                                   or "configurable-http-proxy")]
c.JupyterHub.cleanup_servers = True   # stopping the hub stops every learner's server

# --------------------------------------------------------------------------- who logs in
c.JupyterHub.authenticator_class = "pam"
c.Authenticator.allowed_users = set(learners + instructors + others + [grader])
c.Authenticator.admin_users = set(klass.get("admin_users") or [])
c.JupyterHub.load_groups = {
    f"nbgrader-{COURSE_ID}": learners,
    # the grading account is in the course too: the formgrader lists the course's releases as it
    f"formgrade-{COURSE_ID}": instructors + [grader],
}

# --------------------------------------------------------------------------- learners' servers
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = [learner_python, "-m", "jupyterhub.singleuser"]
c.Spawner.default_url = "/lab"
c.Spawner.notebook_dir = "~"


def path_for(python: str) -> str:
    return os.pathsep.join([os.path.dirname(python), "/usr/local/bin", "/usr/bin", "/bin"])


common_env = {
    # JupyterHub passes no variable of its own process on (no API key, no proxy token):
    # a learner's server gets exactly this, plus JupyterHub's and the account's own.
    "LANG": "C.UTF-8",
    "CTXLAB_EXCHANGE": str(klass["exchange"]),
    **{str(k): str(v) for k, v in (klass.get("environment") or {}).items()},
}
c.Spawner.environment = dict(
    common_env,
    PATH=path_for(learner_python),
    JUPYTER_CONFIG_PATH=os.pathsep.join([str(learner_env / "jupyter" / "learner"), str(learner_env / "jupyter" / "common")]),
)
# An API key for the whole class is a choice the instructor makes (docs/instructor.md, section 4):
# put it in the file named by api_key_file (readable by the hub only), never in this config.
if klass.get("api_key_file"):
    key = Path(klass["api_key_file"]).read_text(encoding="utf-8").strip()
    c.Spawner.environment["ANTHROPIC_API_KEY"] = key

# --------------------------------------------------------------------------- the formgrader service
c.JupyterHub.services = [{
    "name": COURSE_ID,                      # nbgrader finds the formgrader by the course id
    "url": f"http://127.0.0.1:{port}",
    "command": [grader_python, "-m", "jupyterhub.singleuser", f"--ServerApp.root_dir={klass['grading_root']}"],
    "user": grader,
    # the server starts in the grading root, so nbgrader also reads its nbgrader_config.py
    # (the course's: preprocessors, the feedback without hidden tests)
    "cwd": str(klass["grading_root"]),
    "oauth_no_confirm": True,
    "environment": dict(
        common_env,
        PATH=path_for(grader_python),
        JUPYTERHUB_DEFAULT_URL="/lab",
        # nbgrader's JupyterHub plugin asks the hub which courses "the user" is in
        JUPYTERHUB_USER=grader,
        CTXLAB_GRADING_ROOT=str(klass["grading_root"]),
        JUPYTER_CONFIG_PATH=os.pathsep.join([str(HERE / "jupyter" / "grader"), str(HERE / "jupyter" / "common")]),
        HOME=os.path.expanduser(f"~{grader}"),
    ),
}]

c.JupyterHub.load_roles = [
    {   # instructors (and the grading account) open the formgrader
        "name": f"formgrade-{COURSE_ID}",
        "groups": [f"formgrade-{COURSE_ID}"],
        "scopes": [f"access:services!service={COURSE_ID}", "list:services", f"read:services!service={COURSE_ID}"],
    },
    {   # learners see the course in the service list
        "name": f"nbgrader-{COURSE_ID}",
        "groups": [f"nbgrader-{COURSE_ID}"],
        "scopes": ["list:services", f"read:services!service={COURSE_ID}"],
    },
    {   # each server's token may read its own user's groups (nbgrader's course membership check)
        "name": "server",
        "scopes": ["users:activity!user", "access:servers!server", "read:users:name!user", "read:users:groups!user"],
    },
    {   # the formgrader service reads the grading account's groups (the same check)
        "name": f"{COURSE_ID}-service",
        "services": [COURSE_ID],
        "scopes": [f"read:users:name!user={grader}", f"read:users:groups!user={grader}"],
    },
]
