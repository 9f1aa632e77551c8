"""Grading with nbgrader: the learner release, LMS intake, parallel autograde, grades CSV.

The modules, from the bottom up (each imports only the ones above it in this list):

- :mod:`~ctxlab.grading.codec`: the values that cross between the grader and the learner's kernel (JSON, an allowlist of types)
- :mod:`~ctxlab.grading._learner`: the learner kernel's side of a call from the grader
- :mod:`~ctxlab.grading.harness`: the grader kernel's proxies for the learner's names
- :mod:`~ctxlab.grading.isolation`: the grading sandbox (bubblewrap) every kernel that runs learner code runs in
- :mod:`~ctxlab.grading.graded`: autograde with the tests in a grader kernel outside the learner's process
- :mod:`~ctxlab.grading.tamper`: a submission held for review (only for a cause a person can act on)
- :mod:`~ctxlab.grading.preprocessors`: the course's nbgrader preprocessors (named in nbgrader_config.py)
- :mod:`~ctxlab.grading._audit`: what a worker gradebook may change (grades come only from the grader)
- :mod:`~ctxlab.grading._nbgrader`: running nbgrader offline, the one course-root builder, scores, validation
- :mod:`~ctxlab.grading.release`: ``ctxlab release`` (course/ from solutions/), the assignment list
- :mod:`~ctxlab.grading.parallel`: sharded autograde in worker course roots, merged into one gradebook
- :mod:`~ctxlab.grading.lms`: reading an LMS export (Moodle, Canvas, a folder per learner, zips)
- :mod:`~ctxlab.grading.report`: the grades CSV and the run summary
- :mod:`~ctxlab.grading.workflow`: ``ctxlab grade``, the whole run and its arguments
"""
