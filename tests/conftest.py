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
