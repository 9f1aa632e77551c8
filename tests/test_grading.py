"""nbgrader round trip: the solution as a submission gets full autograded marks, the release 0."""
from pathlib import Path

import pytest

from ctxlab import grading, release

ROOT = Path(__file__).resolve().parent.parent
ASSIGNMENTS = release.assignments(ROOT)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    return grading.roundtrip(ASSIGNMENTS, tmp_path_factory.mktemp("course"))


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_solution_gets_full_autograded_marks(graded, name):
    s = graded[("solution", name)]
    assert s.max_code_score > 0
    assert s.code_score == s.max_code_score


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_untouched_release_gets_zero(graded, name):
    s = graded[("untouched", name)]
    assert s.max_code_score > 0
    assert s.code_score == 0
