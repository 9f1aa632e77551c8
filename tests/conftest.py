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



# --------------------------------------------------------------------------- parallel workers
# `make test` runs the files in parallel (pytest-xdist, --dist loadgroup): each file is one unit of
# work, so its module fixtures are built once, on one worker. Files that read one expensive
# session fixture form one unit (the fixture is then built once per run, not once per worker).
SHARED = {
    # the class graded once per session (graded_class, ~2 min of nbgrader autograde)
    "graded_class": ("test_grading_e2e.py", "test_feedback.py", "test_attacks.py", "test_assessment.py"),
}
#: the longest units first, so that no long file starts last (the order of the sum of each unit's
#: test times in a serial run, docs/benchmarks.md "Where the test time goes"); the rest follow in
#: file order. Only the schedule depends on this list: every test runs whatever it says.
HEAVY_FIRST = (
    "test_hub_courses.py", "graded_class", "test_hub.py", "test_online.py", "test_notebooks.py",
    "browser/test_hub_assignments.py", "test_grading_twins.py", "test_placement_exercise.py",
)


def _unit(item) -> str:
    rel = Path(str(item.path)).relative_to(ROOT / "tests").as_posix()
    for group, files in SHARED.items():
        if rel in files:
            return group
    return rel


@pytest.hookimpl(tryfirst=True)  # before xdist reads the xdist_group marks
def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(HEAVY_FIRST)}
    units = {id(item): _unit(item) for item in items}
    for item in items:
        item.add_marker(pytest.mark.xdist_group(units[id(item)]))
    items.sort(key=lambda item: rank.get(units[id(item)], len(rank)))   # stable: file order within a unit


# --------------------------------------------------------------------------- what was skipped
# Tests that need what a machine with only Python and make lacks skip, and the run ends with one
# short summary of them; in CI (CI set, as .ci/run does) a skipped test fails the run instead.
TIERS = {
    "hub": "JupyterHub の教室（root、useradd、npm の proxy が要る）",
    "browser": "ブラウザ（Chromium が要る）",
}
ENABLE = "bash .ci/install-system-packages"


def _skipped(config) -> list:
    if hasattr(config, "workerinput"):   # an xdist worker: the controller reports for the run
        return []
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    return list(reporter.stats.get("skipped", [])) if reporter else []


def _reason(report) -> str:
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return text.removeprefix("Skipped: ")


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    skipped = _skipped(config)
    if not skipped:
        return
    groups: dict[str, dict[str, int]] = {}
    for rep in skipped:
        tier = next((t for t in TIERS if t in rep.keywords), "other")
        reasons = groups.setdefault(tier, {})
        reasons[_reason(rep)] = reasons.get(_reason(rep), 0) + 1
    terminalreporter.section("省略したテスト (skipped)")
    for tier, reasons in groups.items():
        what = TIERS.get(tier, "その他")
        terminalreporter.write_line(f"{what}: {sum(reasons.values())} 件")
        for reason, n in sorted(reasons.items(), key=lambda kv: -kv[1]):
            terminalreporter.write_line(f"    {n:3d} × {reason[:160]}")
    terminalreporter.write_line(f"有効にするには: {ENABLE}"
                                + ("（教室のテストは root で実行）" if "hub" in groups and os.geteuid() != 0 else ""))
    if os.environ.get("CI"):
        terminalreporter.write_line("CI では何も省略しません: 省略があったので失敗にします", red=True)


def pytest_sessionfinish(session, exitstatus):
    if os.environ.get("CI") and _skipped(session.config) and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
