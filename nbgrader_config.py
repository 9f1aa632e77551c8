"""nbgrader configuration of the course.

solutions/ holds the instructor (source) notebooks, course/ the released ones.
"""
import os

c = get_config()  # noqa: F821

# "ctxlab", or the course a JupyterHub formgrader serves (deploy/jupyterhub: one course id per
# service). nbgrader reads this file (copied into a grading root) after JUPYTER_CONFIG_PATH, so
# a fixed id here would be every formgrader's course.
c.CourseDirectory.course_id = os.environ.get("CTXLAB_COURSE_ID") or "ctxlab"
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "course"
# No db_url here: nbgrader's default is the absolute path <course root>/gradebook.db. A relative
# "sqlite:///gradebook.db" is relative to the folder a process starts in, not to the root: a
# formgrader started in the grader's home then opened an empty gradebook there (0 submissions).

# Cells are executed offline; never wait forever on a cell.
c.ExecutePreprocessor.timeout = 120
c.ExecutePreprocessor.interrupt_on_timeout = True
# After a cell's reply, nbclient waits iopub_timeout (default 4 s) for the cell's last output and,
# under nbgrader, fails the whole submission when it is late: on a loaded machine (parallel
# workers, sandboxed kernels) honest submissions failed that way. Waiting longer costs nothing
# when the output is on time.
c.ExecutePreprocessor.iopub_timeout = 30

# Every kernel that runs a learner's code runs in a bubblewrap sandbox (IsolatedExecute: own
# tmpfs folder, read-only interpreter, no network, no secrets, limits; ctxlab/grading/isolation.py).
# nbgrader's LimitOutput counts lines only: a 10 MB one-line print would go whole into the
# autograded notebook and the feedback. LimitOutputSize caps characters as well (nbgrader
# 0.9.6's default list, with it inserted after LimitOutput).
c.Autograde.autograde_preprocessors = [
    # the learner's cells in the sandboxed kernel, every graded test cell in a grader kernel that never
    # runs learner code (the learner's names are proxies, values cross as data: ctxlab/grading/graded.py)
    "ctxlab.grading.graded.GradedExecute",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "ctxlab.grading.preprocessors.LimitOutputSize",
    "nbgrader.preprocessors.SaveAutoGrades",
    "ctxlab.grading.tamper.FlagForReview",   # a held submission's tests need manual grading, and say why
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
    # each written answer's rubric (source notebook, ### BEGIN RUBRIC) next to the answer: formgrader shows it
    "ctxlab.grading.preprocessors.InsertRubrics",
]

# A released lesson runs top to bottom before its exercises are solved: each stub names its
# exercise and how to go on, and answer and test cells carry the raises-exception tag, so Run All
# goes on past them (ctxlab/grading/preprocessors.py LearnerRunAll, right after ClearSolutions;
# the rest is nbgrader 0.9.6's default list).
c.GenerateAssignment.preprocessors = [
    "nbgrader.preprocessors.IncludeHeaderFooter",
    "nbgrader.preprocessors.InstantiateTests",
    "nbgrader.preprocessors.LockCells",
    "nbgrader.preprocessors.ClearSolutions",
    "ctxlab.grading.preprocessors.LearnerRunAll",
    "nbgrader.preprocessors.ClearOutput",
    "nbgrader.preprocessors.CheckCellMetadata",
    "nbgrader.preprocessors.ComputeChecksums",
    "nbgrader.preprocessors.SaveCells",
    "nbgrader.preprocessors.ClearHiddenTests",
    "nbgrader.preprocessors.ClearMarkScheme",
    "nbgrader.preprocessors.ComputeChecksums",
    "nbgrader.preprocessors.CheckCellMetadata",
]

# Feedback must not reveal hidden tests (nbgrader shows them unless they are cleared).
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
    "ctxlab.grading.preprocessors.HideHiddenTestTracebacks",  # before ClearHiddenTests: it needs the hidden lines
    "nbgrader.preprocessors.ClearHiddenTests",
    # the rubrics stay in the feedback (the criteria explain the written mark); to keep them
    # instructor-only, add "ctxlab.grading.preprocessors.DropRubrics" here
]

# solutions/NN/NN.py is the jupytext twin of the source notebook (with the solutions): never
# copy it, or the pairing config, into a release, a submission or feedback. Nor a graded bank's
# key file (solutions/09_knowledge_check/knowledge_check.key.yaml): nbgrader's release and the
# autograded folders (where learner code runs) never hold it; `ctxlab release` adds it to the
# self-study course/ only.
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "*.py", "jupytext.toml",
                            "*.key.yaml"]

# `nbgrader collect` copies what learners wrote into the exchange (on JupyterHub, their own
# folders): this collect never follows a symbolic link in a submission (a link to the grader's
# .env, to solutions/ or to another learner's notebook is logged, not read).
c.ExchangeFactory.collect = "ctxlab.grading.exchange.SafeExchangeCollect"

# Learner HTML is hostile (ctxlab/grading/safe_html.py): formgrader's submission view and the
# feedback HTML are both rendered by nbconvert's HTMLExporter, which cleans the notebook first
# (markdown rendered then cleaned, active outputs and attachments replaced). install() gives
# formgrader's submission pages a Content-Security-Policy (formgrader loads this file in the
# instructor's Jupyter server).
c.HTMLExporter.preprocessors = ["ctxlab.grading.safe_html.SanitizeLearnerHTML"]
# the feedback page carries a Content-Security-Policy of its own: no script, nothing from another host
c.GenerateFeedback.exporter_class = "ctxlab.grading.safe_html.FeedbackHTMLExporter"
import ctxlab.grading.safe_html  # noqa: E402

ctxlab.grading.safe_html.install()
