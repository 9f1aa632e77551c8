"""nbgrader settings of the grading account (the formgrader service and its terminal).

The course root is the one grading root that ``ctxlab grade --root`` writes: the formgrader
shows the submissions, scores and feedback that ``ctxlab grade`` made. Its gradebook path
is absolute (nbgrader's default ``sqlite:///<root>/gradebook.db``), whatever the folder the
service starts in.
"""
import os

c = get_config()  # noqa: F821

c.CourseDirectory.root = os.environ.get("CTXLAB_GRADING_ROOT", "/home/grader-ctxlab/grading")
