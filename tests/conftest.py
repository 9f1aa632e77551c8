import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

# Tests never call the real API and never wait for simulated latency.
os.environ.pop("ANTHROPIC_API_KEY", None)
os.environ["CTXLAB_OFFLINE"] = "1"
os.environ["CTXLAB_TIME_SCALE"] = "0"
os.environ.setdefault("MPLBACKEND", "Agg")


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def graded_class(tmp_path_factory) -> dict:
    """The class export of tests/graded_class.py, graded once for every test that reads it
    (end-to-end grading and feedback): the suite pays for each nbgrader autograde once."""
    import graded_class

    return graded_class.build(tmp_path_factory.mktemp("class"))

