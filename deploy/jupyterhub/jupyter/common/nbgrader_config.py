"""nbgrader settings every account of the hub reads (learners and the grader).

JupyterHub puts this folder on JUPYTER_CONFIG_PATH of every server it starts
(deploy/jupyterhub/jupyterhub_config.py), so nothing has to be copied to /etc/jupyter.
"""
import os

c = get_config()  # noqa: F821

c.CourseDirectory.course_id = "ctxlab"
c.Exchange.root = os.environ.get("CTXLAB_EXCHANGE", "/srv/nbgrader/exchange")
# Who is in the course is JupyterHub's group nbgrader-ctxlab (learners) or formgrade-ctxlab
# (instructors): an account in neither cannot list, fetch or submit (nbgrader's own plugin).
c.Authenticator.plugin_class = "nbgrader.auth.JupyterHubAuthPlugin"
