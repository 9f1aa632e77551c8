"""Run All in JupyterLab on a lesson with no exercise solved: it goes on to the last cell.

The release tags answer and test cells ``raises-exception`` (ctxlab/grading/preprocessors.py
LearnerRunAll), which JupyterLab honours: an unsolved exercise's check fails with its one-line
message and the cells below still run (the check questions at the end included).
"""
import re

import pytest

from .conftest import open_notebook, run_all, shot

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_run_all_goes_on_past_unsolved_exercises(page, lab):
    open_notebook(page, lab, "03_prompt_caching/03_prompt_caching.ipynb")
    run_all(page)
    prompts = page.locator(".jp-Notebook:not(.lm-mod-hidden) .jp-CodeCell .jp-InputPrompt").all_text_contents()
    skipped = [i for i, t in enumerate(prompts) if not re.search(r"\[\d+\]", t)]
    if skipped:   # say what stopped it: the output of the last cell that ran before the first one skipped
        stop = page.locator(".jp-Notebook:not(.lm-mod-hidden) .jp-CodeCell").nth(max(skipped[0] - 1, 0))
        stopped = stop.locator(".jp-OutputArea").text_content() or ""
        raise AssertionError(f"code cells left unexecuted after Run All: {skipped} of {len(prompts)}; "
                             f"prompts {prompts[max(skipped[0] - 2, 0):skipped[0] + 2]}; the cell before: {stopped[-600:]}")
    waiting = page.locator(".jp-OutputArea-output", has_text="はまだ解かれていません")
    assert waiting.count() >= 3, f"each unsolved exercise says so: {waiting.count()} messages"
    text = waiting.first.text_content()
    assert "演習 1 はまだ解かれていません" in text and "Run All は止まりません" in text, text[-400:]
    waiting.first.scroll_into_view_if_needed()
    shot(page, "03_run_all_unsolved")
    # the check questions at the end were drawn: the last code cell has an output
    last = page.locator(".jp-Notebook:not(.lm-mod-hidden) .jp-CodeCell").last
    assert last.locator(".jp-OutputArea-output").count() > 0, "the lesson's last cell has no output"


def test_run_all_on_the_knowledge_check_shows_each_open_question_in_one_line(page, lab):
    """09 with no answer given: each question's check says 「qN に答えがありません」 as its message alone (AnswerMissing),
    not a red traceback per question, and Run All still reaches the end."""
    open_notebook(page, lab, "09_knowledge_check/09_knowledge_check.ipynb")
    run_all(page)
    errors = page.locator(".jp-Notebook:not(.lm-mod-hidden) .jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    texts = errors.all_text_contents()
    open_questions = [t for t in texts if "に答えがありません" in t]
    assert len(open_questions) >= 9, f"one message per question: {len(open_questions)} of {len(texts)} error outputs"
    assert not [t for t in texts if "Traceback" in t or "File " in t], [t[:200] for t in texts if "Traceback" in t][:2]
    assert all(len(t.strip().splitlines()) == 1 for t in open_questions), [t for t in open_questions if "\n" in t.strip()][:2]
    errors.first.scroll_into_view_if_needed()
    shot(page, "09_run_all_open_questions")
