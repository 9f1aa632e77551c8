"""JupyterHub for a class on one machine (The Littlest JupyterHub's layout: real OS accounts).

Each learner logs in with their own OS account (PAM) and their server runs as that account
(LocalProcessSpawner): nbgrader knows who submits from the OS user name, so every learner
must have their own (one shared OS user would make every submission the same learner's).
Each course (one, ``ctxlab``, or several from the class file's ``courses:``) has one grading
account, whose Jupyter server runs as the hub service named by the course id (its
formgrader); the course's instructors reach it through the group ``formgrade-<id>``.
Learners' servers run the learner environment (``make hub-learner-env``: the ctxlab wheel, no
solutions, no key); only the formgraders run the checkout's Python.
A course's learners are the group ``nbgrader-<id>``: nbgrader's JupyterHubAuthPlugin lets only
the course's groups list, fetch and submit; a learner may be in several courses.

The class (accounts, paths, port) is read from the YAML file named by ``CTXLAB_HUB_CLASS``
(default /etc/ctxlab/class.yaml; deploy/jupyterhub/class.example.yaml says what each key
means). Start the hub from the folder that keeps its state (jupyterhub.sqlite, cookie secret):

    CTXLAB_HUB_CLASS=/etc/ctxlab/class.yaml jupyterhub -f /opt/ctxlab/deploy/jupyterhub/jupyterhub_config.py

docs/instructor.md (section 3) gives the whole setup; tests/test_hub.py runs it end to end, and
tests/test_hub_courses.py with two courses.
"""
import os
import shutil
import sys
from pathlib import Path

c = get_config()  # noqa: F821

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
import classfile  # noqa: E402  (deploy/jupyterhub/classfile.py: reads and checks the class file)

CLASS_FILE = Path(os.environ.get("CTXLAB_HUB_CLASS", "/etc/ctxlab/class.yaml"))
klass = classfile.load(CLASS_FILE)
courses = klass.courses
klass_raw = klass.raw
grader_python, learner_env, learner_python = klass.grader_python, klass.learner_env, klass.learner_python

# --------------------------------------------------------------------------- hub and proxy
c.JupyterHub.bind_url = klass_raw.get("bind_url", "http://0.0.0.0:8000")
if klass_raw.get("hub_bind_url"):
    c.JupyterHub.hub_bind_url = klass_raw["hub_bind_url"]
if klass_raw.get("proxy_api_url"):
    c.ConfigurableHTTPProxy.api_url = klass_raw["proxy_api_url"]
# the proxy the course's own setup installs (make setup: npm ci), else one on PATH
chp = REPO / "node_modules" / ".bin" / "configurable-http-proxy"
c.ConfigurableHTTPProxy.command = [str(chp) if chp.exists() else (shutil.which("configurable-http-proxy")
                                                                   or "configurable-http-proxy")]
c.JupyterHub.cleanup_servers = True   # stopping the hub stops every learner's server

# --------------------------------------------------------------------------- who logs in
c.JupyterHub.authenticator_class = "pam"
c.Authenticator.allowed_users = klass.users()
c.Authenticator.admin_users = set(klass.admin_users)
# nbgrader's JupyterHubAuthPlugin: an account is in course X when it is in the group
# nbgrader-X (learners) or formgrade-X (instructors and the grading account, whose formgrader
# lists the course's releases as it)
c.JupyterHub.load_groups = {}
for course in courses:
    c.JupyterHub.load_groups[f"nbgrader-{course.id}"] = list(course.learners)
    c.JupyterHub.load_groups[f"formgrade-{course.id}"] = [*course.instructors, course.grader]

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
    "CTXLAB_EXCHANGE": str(klass.exchange),
    **klass.environment,
}
if klass.several:
    # two cohorts release the same assignment names: a learner in both fetches them into
    # <course>/<assignment>, and every account must agree on that (jupyter/common)
    common_env["CTXLAB_PATH_INCLUDES_COURSE"] = "1"
c.Spawner.environment = dict(
    common_env,
    PATH=path_for(learner_python),
    JUPYTER_CONFIG_PATH=os.pathsep.join([str(learner_env / "jupyter" / "learner"), str(learner_env / "jupyter" / "common")]),
)
if not klass.several:
    # one course: the learners' nbgrader has its id. With several it has none, and the
    # Assignment List shows every course the learner's groups give them.
    c.Spawner.environment["CTXLAB_COURSE_ID"] = courses[0].id
# An API key for the whole class is a choice the instructor makes (docs/instructor.md, section 4):
# put it in the file named by api_key_file (readable by the hub only), never in this config.
if klass_raw.get("api_key_file"):
    key = Path(klass_raw["api_key_file"]).read_text(encoding="utf-8").strip()
    c.Spawner.environment["ANTHROPIC_API_KEY"] = key

# --------------------------------------------------------------------------- a formgrader service per course
c.JupyterHub.services = []
c.JupyterHub.load_roles = [
    {   # each server's token may read its own user's groups (nbgrader's course membership check)
        "name": "server",
        "scopes": ["users:activity!user", "access:servers!server", "read:users:name!user", "read:users:groups!user"],
    },
]
for course in courses:
    root = str(course.grading_root)
    c.JupyterHub.services.append({
        "name": course.id,                  # nbgrader finds the formgrader by the course id
        "url": f"http://127.0.0.1:{course.port}",
        "command": [grader_python, "-m", "jupyterhub.singleuser", f"--ServerApp.root_dir={root}"],
        "user": course.grader,
        # the server starts in the grading root, so nbgrader also reads its nbgrader_config.py
        # (the course's: preprocessors, the feedback without hidden tests). nbgrader reads that
        # file last, so it wins over JUPYTER_CONFIG_PATH: it takes its course id from
        # CTXLAB_COURSE_ID too (else its "ctxlab" would be every service's course).
        "cwd": root,
        "oauth_no_confirm": True,
        "environment": dict(
            common_env,
            PATH=path_for(grader_python),
            JUPYTERHUB_DEFAULT_URL="/lab",
            # nbgrader's JupyterHub plugin asks the hub which courses "the user" is in
            JUPYTERHUB_USER=course.grader,
            CTXLAB_COURSE_ID=course.id,
            CTXLAB_GRADING_ROOT=root,
            JUPYTER_CONFIG_PATH=os.pathsep.join([str(HERE / "jupyter" / "grader"), str(HERE / "jupyter" / "common")]),
            HOME=os.path.expanduser(f"~{course.grader}"),
        ),
    })
    c.JupyterHub.load_roles += [
        {   # the course's instructors (and its grading account) open its formgrader, no other
            "name": f"formgrade-{course.id}",
            "groups": [f"formgrade-{course.id}"],
            "scopes": [f"access:services!service={course.id}", "list:services", f"read:services!service={course.id}"],
        },
        {   # the course's learners see it in the service list
            "name": f"nbgrader-{course.id}",
            "groups": [f"nbgrader-{course.id}"],
            "scopes": ["list:services", f"read:services!service={course.id}"],
        },
        {   # the formgrader service reads its own grading account's groups (the same check), no one else's
            "name": f"{course.id}-service",
            "services": [course.id],
            "scopes": [f"read:users:name!user={course.grader}", f"read:users:groups!user={course.grader}"],
        },
    ]
