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


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    """The course site (tools/build_site.py) built once for the session: lessons executed
    offline (reused from build/site/ while unchanged), then Sphinx. Returns the site folder."""
    import build_site

    out = tmp_path_factory.mktemp("site") / "site"
    build_site.build(out, ROOT / "build" / "site")
    return out



@pytest.fixture(scope="session")
def executed_lessons() -> Path:
    """The released lessons executed offline, as the site build executes them (tools/build_site.py:
    build/site/executed, reused while the release, ctxlab and data/ are unchanged; no Sphinx).
    Returns the folder of executed notebooks that the prose checks read. ``CTXLAB_EXECUTED`` names another
    folder of executed lessons to check instead (tools/drift_check.py: the lessons on another default model)."""
    if os.environ.get("CTXLAB_EXECUTED"):
        return Path(os.environ["CTXLAB_EXECUTED"])
    import build_site
    from ctxlab.grading.release import fresh_release

    import shutil

    work = ROOT / "build" / "site"
    release = work / "release"
    shutil.rmtree(release, ignore_errors=True)
    fresh_release(release, ROOT)   # from solutions/ now; a lesson's execution is reused while it is unchanged
    build_site.execute_lessons(work, release)
    return work / "executed"


def pytest_configure(config):
    """One id for the whole run, set before xdist starts its workers (they inherit it): what the
    workers share for this run only lives in folders named by it (tests/hubclass.py shared_envs).
    Test kernels use ipc sockets, so parallel workers never race for a TCP port (tests/ipc_kernels.py)."""
    import ipc_kernels

    ipc_kernels.install()
    if os.environ.get("CTXLAB_BENCH_CPU_LOG"):   # bench/bench_suite.py: where the time and CPU go, per test
        import importlib.util

        spec = importlib.util.spec_from_file_location("_machine_cpu", ROOT / "bench" / "_machine_cpu.py")
        plugin = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(plugin)
        config.pluginmanager.register(plugin, "ctxlab-machine-cpu")
    if not hasattr(config, "workerinput"):
        import uuid

        os.environ["CTXLAB_TEST_RUN"] = uuid.uuid4().hex[:12]


def pytest_unconfigure(config):
    if not hasattr(config, "workerinput") and os.environ.get("CTXLAB_TEST_RUN"):
        import shutil
        import tempfile

        shutil.rmtree(Path(tempfile.gettempdir()) / f"ctxlab-hub-envs-{os.environ['CTXLAB_TEST_RUN']}",
                      ignore_errors=True)


# --------------------------------------------------------------------------- parallel workers
# `make test` runs the files in parallel (pytest-xdist, `--dist loadfile`): each file is one unit of
# work, so its module fixtures are built once, on one worker. Files that read one expensive session
# fixture form one unit (the fixture is then built once per run, not once per worker): the
# scheduler below. (xdist's own `loadgroup` cannot do it with pytest 9: it renames test ids
# through an attribute that pytest 9 no longer reads.)
SHARED = {
    # the class graded once per session (graded_class: the suite's longest fixture)
    "graded_class": ("test_grading_e2e.py", "test_feedback.py", "test_attacks.py", "test_assessment.py"),
    # the course site, built once per session (built_site: executes every released lesson)
    "built_site": ("test_site.py", "browser/test_site.py", "test_prose_numbers.py", "test_prose_claims.py"),
}
#: the longest units first, so that no long file starts last (from the sums of each unit's test
#: times, docs/benchmarks.md "Where the test time goes"); the rest follow in file order. Only the
#: schedule depends on this list: every test runs whatever it says.
HEAVY_FIRST = (
    "graded_class", "test_hub_courses.py", "test_hub.py", "test_online.py", "test_notebooks.py",
    "test_lesson_pairs.py", "test_lms.py", "test_shortcuts.py", "browser/test_hub_assignments.py",
    "test_always_equal.py", "test_learner_bundle.py",
)
GRADED_CLASS_TIMEOUT_S = 1800
#: fixtures whose tests run nbgrader, jupytext or pip, so they are "slow" (not in `make test-fast`)
SLOW_FIXTURES = {
    "scratch": "tests/test_lesson_pairs.py: make notebooks (jupytext, nbgrader) on a copy of the course",
    "venv_path": "tests/test_lms.py: ctxlab grade, nbgrader's gradebook",
    "built": "tests/test_hub_env.py: builds the learners' environment with pip",
    "built_site": "tests/test_site.py: executes every released lesson and runs Sphinx",
    "executed_lessons": "tests/test_prose_numbers.py, test_prose_claims.py: execute every released lesson (as the site)",
    "graded_class": "tests/graded_class.py: autogrades a whole class in the sandbox with nbgrader (minutes)",
}


def unit(nodeid: str) -> str:
    """The unit of work of a test id: its file (relative to tests/), or its SHARED group."""
    rel = nodeid.split("::")[0].removeprefix("tests/")
    return next((group for group, files in SHARED.items() if rel in files), rel)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(HEAVY_FIRST)}
    for item in items:
        if SLOW_FIXTURES.keys() & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
        if "graded_class" in getattr(item, "fixturenames", ()):
            # the first of these tests pays for grading the whole class (pytest-timeout counts the
            # fixture's setup): minutes on a quiet machine, more beside two other busy workers
            item.add_marker(pytest.mark.timeout(GRADED_CLASS_TIMEOUT_S))
    items.sort(key=lambda item: rank.get(unit(item.nodeid), len(rank)))   # stable: file order within a unit


@pytest.hookimpl(optionalhook=True)   # xdist's hook: absent when xdist is off (-p no:xdist)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile``, with the files of a SHARED group as one unit."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class UnitScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit(nodeid)

    return UnitScheduling(config, log)


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
