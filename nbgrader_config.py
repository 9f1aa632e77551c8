"""nbgrader configuration of the course.

solutions/ holds the instructor (source) notebooks, course/ the released ones.
"""
c = get_config()  # noqa: F821

c.CourseDirectory.course_id = "ctxlab"
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "course"
c.CourseDirectory.db_url = "sqlite:///gradebook.db"

# Cells are executed offline; never wait forever on a cell.
c.ExecutePreprocessor.timeout = 120
c.ExecutePreprocessor.interrupt_on_timeout = True

# Feedback must not reveal hidden tests (nbgrader shows them unless they are cleared).
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
    "ctxlab.nbgrader_ext.HideHiddenTestTracebacks",  # before ClearHiddenTests: it needs the hidden lines
    "nbgrader.preprocessors.ClearHiddenTests",
]
