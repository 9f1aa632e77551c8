"""Shortcut submissions score 0 on the exercise they target (lessons 06, 07, 08 and 10).

Two shortcuts per autograded exercise:

* the **library shortcut**: the answer cell returns what the nearest library function gives (06's ``my_filter``
  returns the lesson's own ``select_files``; 10's ``one_minus_recall_at_k`` averages ``fact_recall`` without the
  lesson's rules). Where the library has the exercise's very answer (08's ``measure.by_method``, 10's
  ``retrieval.rrf``), the grading kernel's graded build holds recorded results instead of that code, so a
  submission that calls it is graded by tests/test_tamper.py (``TWIN_CALLS``), not here: this test runs the
  test cells in one kernel with the full package, as self-study does;
* the **always-equal object**: the answer returns an object whose ``__eq__`` always answers True
  (and whose comparisons and arithmetic never fail), shaped like the expected type.

Each lesson's solution notebook runs once in one kernel; then, for each shortcut, the shortcut's
definition replaces the answer and the exercise's test cell (visible and hidden tests, as nbgrader
runs it in the instructor's copy) is executed again. A test cell that raises scores 0 in nbgrader,
so "errored" is "scored 0". The solution's definition is restored before the next shortcut, and a
last run of every test cell with the solutions checks that nothing was left broken.
"""
from __future__ import annotations

import copy
import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent

ALWAYS_EQUAL = '''
class _AlwaysEqual({base}):
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __lt__(self, other): return True
    def __le__(self, other): return True
    def __gt__(self, other): return True
    def __ge__(self, other): return True
    def __sub__(self, other): return 0.0
    def __rsub__(self, other): return 0.0
    def __abs__(self): return 0.0
    def __bool__(self): return True
    def __hash__(self): return 0
    def __getitem__(self, key): return self
    def __format__(self, spec): return "0"
'''


def always_equal(signature: str, base: str) -> str:
    return ALWAYS_EQUAL.format(base=base) + f"\ndef {signature}:\n    return _AlwaysEqual()\n"


#: lesson -> [(answer grade_id, test grade_id, {shortcut name: code that redefines the function})]
SHORTCUTS = {
    "06_metadata_filtering": [
        ("my_filter", "my_filter-tests", {
            "twin": "def my_filter(question):\n    return metadata_filtering.select_files(question)\n",
            "always_equal": always_equal("my_filter(question)", "list"),
        }),
        ("pick_bundle", "pick_bundle-tests", {
            "twin": ("def pick_bundle(dept, log, max_docs=metadata_filtering.MAX_DOCS):\n"
                     "    return list(metadata_filtering.BUNDLES[metadata_filtering.default_bundle(dept)].files)\n"),
            "always_equal": always_equal("pick_bundle(dept, log, max_docs=8)", "list"),
        }),
    ],
    "07_citations": [
        ("locate", "locate-tests", {
            "twin": ("def locate(citation, docs):\n"
                     "    b = citations.bundle(docs)\n"
                     "    name, a, _ = b.locate(b.parts[citation.document_index].start + citation.start_char_index,\n"
                     "                          b.parts[citation.document_index].start + citation.end_char_index)\n"
                     "    return name, a\n"),
            "always_equal": always_equal("locate(citation, docs)", "tuple"),
        }),
        ("mismatched", "mismatched-tests", {
            "twin": "def mismatched(cites, docs):\n    return []\n",
            "always_equal": always_equal("mismatched(cites, docs)", "list"),
        }),
    ],
    "08_measure": [
        ("accuracy_by_method", "accuracy-tests", {
            "always_equal": always_equal("accuracy_by_method(graded, partial_weight=0.5)", "dict"),
        }),
        ("decide", "decide-tests", {
            "twin": ("def decide(doc_tokens, context_window, lc_monthly, rag_monthly, rag_budget_monthly,\n"
                     "           ttft_cached_s, lc_accuracy, rag_accuracy, accuracy_margin, reindex_hours, max_delay_hours):\n"
                     "    return ('long_context', 'all_clear')\n"),
            "always_equal": always_equal(
                "decide(doc_tokens, context_window, lc_monthly, rag_monthly, rag_budget_monthly, ttft_cached_s, "
                "lc_accuracy, rag_accuracy, accuracy_margin, reindex_hours, max_delay_hours)", "tuple"),
        }),
    ],
    "10_rag_lab": [
        ("rrf", "rrf-tests", {
            "always_equal": always_equal("rrf(rankings, k=60)", "list"),
        }),
        ("one_minus_recall_at_k", "failure-tests", {
            "twin": ("def one_minus_recall_at_k(rankings, questions, texts, files, k=20):\n"
                     "    from ctxlab import retrieval as r\n"
                     "    values = [r.fact_recall(rk, texts, files, q.key_facts, q.gold_files, k)\n"
                     "              for rk, q in zip(rankings, questions) if q.key_facts]\n"
                     "    return 1 - sum(values) / len(values)\n"),
            "always_equal": always_equal("one_minus_recall_at_k(rankings, questions, texts, files, k=20)", "float"),
        }),
    ],
}


def _grade_id(cell) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def _errored(cell) -> bool:
    return any(o.get("output_type") == "error" for o in cell.get("outputs", []))


@pytest.mark.slow
@pytest.mark.parametrize("lesson", sorted(SHORTCUTS))
def test_shortcut_submissions_score_zero_on_their_exercise(lesson):
    path = ROOT / "solutions" / lesson / f"{lesson}.ipynb"
    nb = nbformat.read(path, as_version=4)
    by_id = {_grade_id(c): i for i, c in enumerate(nb.cells) if _grade_id(c)}
    env_before = dict(os.environ)
    failures = []
    try:
        os.environ["CTXLAB_OFFLINE"] = "1"
        os.environ["CTXLAB_TIME_SCALE"] = "0"
        os.environ["NBGRADER_EXECUTION"] = "autograde"
        os.environ.pop("ANTHROPIC_API_KEY", None)
        client = NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True,
                                resources={"metadata": {"path": str(path.parent)}})
        with client.setup_kernel():
            for i, cell in enumerate(nb.cells):
                client.execute_cell(cell, i)
            broken = [_grade_id(c) for c in nb.cells if _grade_id(c) and _errored(c)]
            assert not broken, f"{lesson}: the solution fails {broken}"

            def run(source: str, index: int):
                cell = nbformat.v4.new_code_cell(source)
                client.execute_cell(cell, index)
                return cell

            for answer_id, test_id, shortcuts in SHORTCUTS[lesson]:
                answer, test = nb.cells[by_id[answer_id]], nb.cells[by_id[test_id]]
                for name, code in shortcuts.items():
                    defined = run(code, by_id[answer_id])
                    assert not _errored(defined), f"{lesson} {answer_id} {name}: the shortcut does not define"
                    graded = copy.deepcopy(test)
                    graded.outputs = []
                    client.execute_cell(graded, by_id[test_id])
                    if not _errored(graded):
                        failures.append(f"{lesson} {test_id}: the {name} submission passed")
                    restored = run(answer.source, by_id[answer_id])
                    assert not _errored(restored)
            for _, test_id, _ in SHORTCUTS[lesson]:
                again = copy.deepcopy(nb.cells[by_id[test_id]])
                again.outputs = []
                client.execute_cell(again, by_id[test_id])
                assert not _errored(again), f"{lesson} {test_id}: the solution fails after the shortcuts"
    finally:
        os.environ.clear()
        os.environ.update(env_before)
    assert not failures, failures
