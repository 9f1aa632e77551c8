"""The online path, on every commit: every solution notebook as a learner with a key runs it.

Each lesson runs in its own kernel with a fake ``ANTHROPIC_API_KEY`` and ``ANTHROPIC_BASE_URL``
pointing at its own local HTTP stand-in (tests/standin.py: the offline sandbox served on
127.0.0.1), so the real SDK, the metered HTTP client, retries and the budget all run, with no
network and no cost. Two runs of the whole course, two lessons at a time:

* with a budget that covers everything (``CI_BUDGET_USD``): every cell runs, the kernel's meter
  agrees with what the stand-in billed, and no key text appears in any output, saved notebook,
  the SDK's log (``ANTHROPIC_LOG=info``), the kernels' own output or the stand-in's access log;
* with the default budget ($0.05), the lessons that spend: a lesson may stop, but no request
  reaches the stand-in after the first refusal, and nothing past the budget is billed.

Then the SDK's retries against 429 and 529 from the stand-in, in a kernel, and the Japanese
message when they run out.
"""
from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest

from ctxlab.api import online
from ctxlab.corpus import questions as ctxlab_questions
from standin import FAKE_KEY, StandIn, online_env, run_online

# slow; the first test of each course run also runs the whole course (a few minutes, more on a loaded machine)
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted((ROOT / "solutions").glob("*/*.ipynb"))
NAMES = [p.parent.name for p in LESSONS]
#: more than the whole course costs on the default model (see data/lesson_costs.json)
CI_BUDGET_USD = 25.0
SMALL_BUDGET_USD = 0.05
#: distinctive pieces of the fake key: none of them may appear anywhere the learner or a log sees
KEY_PIECES = (FAKE_KEY, FAKE_KEY[7:], FAKE_KEY[-16:])


def _run_course(tmp: Path, budget_usd: float, lessons=LESSONS, **extra) -> dict:
    def one(path: Path):
        folder = tmp / path.parent.name
        folder.mkdir()
        log = folder / "kernel.log"
        with StandIn(log_dir=folder) as s:
            run = run_online(path, online_env(s, budget_usd, ANTHROPIC_LOG="info", **extra), stand_in=s,
                             allow_errors=True, kernel_log=log)
            saved = folder / path.name
            nbformat.write(run.notebook, saved)
            return path.parent.name, {
                "run": run, "saved": saved, "kernel_log": log, "access_log": s.log_path,
                "messages": s.messages(), "billed": s.billed_usd(), "keys_seen": set(s.keys_seen),
                "received": list(s.received),
            }

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(one, lessons))


@pytest.fixture(scope="module")
def course_online(tmp_path_factory):
    return _run_course(tmp_path_factory.mktemp("online"), CI_BUDGET_USD)


#: the lessons that send billable requests (the others cannot reach a budget)
SPENDING = [p for p in LESSONS if online.lesson_cost(p.parent.name, online.lesson_costs()["default_model"]).requests]


@pytest.fixture(scope="module")
def course_small_budget(tmp_path_factory):
    return _run_course(tmp_path_factory.mktemp("small"), SMALL_BUDGET_USD, SPENDING)


def _errors(nb) -> list[tuple[int, str, str]]:
    return [(i, o.get("ename", ""), o.get("evalue", "")[:300]) for i, c in enumerate(nb.cells)
            if c.cell_type == "code" for o in c.get("outputs", []) if o.get("output_type") == "error"]


def _text_of(nb) -> str:
    return json.dumps(nb, ensure_ascii=False, default=str)


@pytest.mark.parametrize("lesson", NAMES)
def test_every_cell_runs_online(course_online, lesson):
    r = course_online[lesson]
    nb, ledger = r["run"].notebook, r["run"].ledger
    assert not _errors(nb), f"{lesson} failed online: {_errors(nb)}"
    first = "".join(o.get("text", "") or o.get("data", {}).get("text/plain", "")   # the banner is a display
                    for c in nb.cells if c.cell_type == "code" for o in c.outputs)[:2000]
    assert "モード: 実 API" in first, "the first cell should say the lesson runs on the real API"
    assert "実 API での料金" in first and "実 API でないと意味を持たない結果" in first, "the first cell prints the cost line"
    # the kernel's meter saw exactly what the stand-in received and billed
    assert ledger["requests"] == r["messages"] and ledger["refused"] == 0
    assert ledger["spent_usd"] == pytest.approx(r["billed"], abs=1e-9)
    assert ledger["spent_usd"] <= CI_BUDGET_USD


def test_the_course_sends_its_requests_through_the_stand_in(course_online):
    sent = {name: r["messages"] for name, r in course_online.items()}
    table = online.lesson_costs()["lessons"]
    # the measured table (tools/lesson_costs.py) counts the same requests on the default model
    expected = {name: table[name]["runs"][online.lesson_costs()["default_model"]]["requests"] for name in NAMES}
    assert sent == expected, "the lessons' requests changed: run tools/lesson_costs.py to measure them again"
    assert sum(sent.values()) > 0


def test_lesson_08_grades_with_the_judge_through_the_stand_in_within_its_budget_line(course_online):
    """Online, lesson 08 measures the judge on the labelled answers and regrades the run with it (§5)."""
    from ctxlab.evaluation import judge, labelled

    r = course_online["08_measure"]
    judged = [x for x in r["received"] if x.path == "/v1/messages" and x.body
              and (x.body.get("output_config") or {}).get("format", {}).get("schema") == judge.SCHEMA]
    assert len(judged) == len(labelled.load()) + 3 * len(ctxlab_questions())
    for x in judged:
        assert x.status == 200 and x.model == judge.JUDGE_MODEL and "temperature" not in x.body
        assert x.body["system"][1]["cache_control"] == {"type": "ephemeral"}
    # what the stand-in billed for the judge stays within the estimate the lesson's banner prints
    estimate = judge.estimate_cost([{**x.body} for x in judged])
    assert 0 < sum(x.cost_usd for x in judged) <= estimate


def test_no_key_text_in_any_output_saved_notebook_or_log(course_online):
    seen = set().union(*(r["keys_seen"] for r in course_online.values()))
    assert seen == {FAKE_KEY}, "the SDK should have sent the (fake) key to the stand-in, and only it"
    sdk_log_lines = 0
    for name, r in course_online.items():
        places = {
            "outputs": _text_of(r["run"].notebook),
            "saved notebook": r["saved"].read_text(encoding="utf-8"),
            "kernel log": r["kernel_log"].read_text(encoding="utf-8", errors="replace"),
            "stand-in access log": r["access_log"].read_text(encoding="utf-8") if r["access_log"].exists() else "",
        }
        for where, text in places.items():
            for piece in KEY_PIECES:
                assert piece not in text, f"{name}: key text in the {where}"
        sdk_log_lines += places["outputs"].count("HTTP Request: POST") + places["kernel log"].count("HTTP Request")
    assert sdk_log_lines > 0, "ANTHROPIC_LOG=info should have logged the requests somewhere this test reads"


@pytest.mark.parametrize("lesson", [p.parent.name for p in SPENDING])
def test_the_default_budget_sends_nothing_after_its_first_refusal(course_small_budget, lesson):
    r = course_small_budget[lesson]
    nb, ledger, after = r["run"].notebook, r["run"].ledger, r["run"].received_after
    assert ledger["spent_usd"] <= SMALL_BUDGET_USD and r["billed"] <= SMALL_BUDGET_USD + 1e-12
    assert ledger["requests"] == r["messages"]
    # a refusal is an error (BudgetExceeded), or, where a lesson falls back to the simulation (11: over_budget=
    # "simulate"), the line that says the measurement did not fit
    refusing = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and any(
        (o.get("ename") == "BudgetExceeded" and "を送りませんでした" in o.get("evalue", ""))
        or "予算に収まらないので測らず" in o.get("text", "") for o in c.outputs)]
    if ledger["stopped"]:
        assert refusing, "the ledger stopped, so a cell should show the refusal"
        assert after[-1] == after[refusing[0]], f"{lesson}: requests reached the API after the first refusal"
    else:
        assert not refusing and ledger["refused"] == 0
        assert not [e for e in _errors(nb) if e[1] != "BudgetExceeded"], _errors(nb)


def test_the_default_budget_stops_the_costly_lessons(course_small_budget):
    stopped = {name for name, r in course_small_budget.items() if r["run"].ledger["stopped"]}
    assert {"03_prompt_caching", "07_citations"} <= stopped
    assert sum(r["billed"] for r in course_small_budget.values()) > 0, "some lessons should spend within $0.05"


RETRY_CELLS = [
    "import anthropic, ctxlab\nclient = ctxlab.make_client()\nprint(ctxlab.mode_line(client))",
    "r = client.messages.create(model='claude-haiku-4-5', max_tokens=50,\n"
    "                           messages=[{'role': 'user', 'content': '有給休暇は何日ですか？'}])\n"
    "print('answered', r.usage.output_tokens)",
    "client.messages.create(model='claude-haiku-4-5', max_tokens=50,\n"
    "                       messages=[{'role': 'user', 'content': '有給休暇は何日ですか？'}])",
    "from ctxlab.api import budget\nbudget.report()",
]


def test_retries_handle_429_and_529_and_say_in_japanese_when_they_run_out(tmp_path):
    path = tmp_path / "retry.ipynb"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in RETRY_CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)
    with StandIn() as s:
        # the second cell: two errors, then the answer (the SDK retries twice by default);
        # the third cell: 529 three times, more than the SDK retries
        s.fail_at = {0: 429, 1: 529, 3: 529, 4: 529, 5: 529}
        run = run_online(path, online_env(s, SMALL_BUDGET_USD), stand_in=s, allow_errors=True)
        statuses = [r.status for r in s.received if r.path == "/v1/messages"]
    cells = run.notebook.cells
    assert statuses == [429, 529, 200, 529, 529, 529], statuses
    assert "answered" in cells[1].outputs[0]["text"] and not _errors(nbformat.v4.new_notebook(cells=cells[:2]))
    err = [o for o in cells[2].outputs if o.get("output_type") == "error"]
    assert err and err[0]["ename"] == "OverloadedError", "the SDK's own error class is kept"
    message = err[0]["evalue"]
    for text in ("529", "再試行", "料金はかかっていません", "待ってから", "max_retries", "stand-in 529"):
        assert text in message, (text, message)
    assert run.ledger["requests"] == 6 and "送ったリクエスト 6 件" in cells[3].outputs[0]["text"]
    assert run.ledger["spent_usd"] > 0 and not run.ledger["stopped"]
    assert FAKE_KEY not in _text_of(run.notebook)
