"""nbgrader settings every account of the hub reads (learners and the graders).

JupyterHub puts this folder on JUPYTER_CONFIG_PATH of every server it starts
(deploy/jupyterhub/jupyterhub_config.py), so nothing has to be copied to /etc/jupyter.
The hub sets the variables read here: CTXLAB_COURSE_ID (a formgrader's course; a learner's
when the hub has one course only, none when it has several) and CTXLAB_PATH_INCLUDES_COURSE
(several courses).
"""
import os

c = get_config()  # noqa: F821

if os.environ.get("CTXLAB_COURSE_ID"):
    c.CourseDirectory.course_id = os.environ["CTXLAB_COURSE_ID"]
# With several courses a learner in two of them fetches 00_start_here of each: into
# <course>/00_start_here, not both into 00_start_here. Every account must agree on it.
c.Exchange.path_includes_course = os.environ.get("CTXLAB_PATH_INCLUDES_COURSE") == "1"
c.Exchange.root = os.environ.get("CTXLAB_EXCHANGE", "/srv/nbgrader/exchange")
# Who is in a course X is JupyterHub's group nbgrader-X (learners) or formgrade-X
# (instructors): an account in neither cannot list, fetch or submit (nbgrader's own plugin).
c.Authenticator.plugin_class = "nbgrader.auth.JupyterHubAuthPlugin"
