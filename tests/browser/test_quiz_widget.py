"""09_knowledge_check in JupyterLab: answer wrongly, then rightly, and see feedback and progress."""
import pytest
from playwright.sync_api import Error as PlaywrightError

from ctxlab import quiz

from .conftest import open_notebook, run_all, shot

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _choose(page, choice_id: str):
    """Pick a choice. The labels are the choice ids (a, b, …) for every question, and moving to the next
    question re-renders them: a label found a moment earlier can be replaced under the click, so the
    click is retried until the choice is checked in the current DOM."""
    radio = page.locator(".widget-radio-box label", has_text=choice_id).first
    for _ in range(5):
        try:
            radio.click(timeout=10_000)   # scrolls it into view; re-resolves a detached label
            if radio.locator("input").is_checked():
                return
        except PlaywrightError:
            pass
        page.wait_for_timeout(300)
    raise AssertionError(f"choice {choice_id} could not be selected: {radio.count()} labels match")


def test_quiz_feedback_and_progress(page, lab):
    bank = quiz.instructor_bank()   # course/ is the self-study release: its widget judges with the key file
    q1, q2 = bank.questions[0], bank.questions[1]
    wrong = next(c for c in q1.choice_ids if c != q1.correct_id())

    open_notebook(page, lab, "09_knowledge_check/09_knowledge_check.ipynb")
    run_all(page)
    area = page.locator(".jp-OutputArea-output", has_text="01 / 09").first
    area.wait_for(state="attached", timeout=60_000)
    area.scroll_into_view_if_needed()

    _choose(page, wrong)
    page.get_by_role("button", name="回答").first.click()
    feedback = page.locator(".jp-OutputArea-output >> text=不正解").first
    feedback.wait_for(timeout=30_000)
    # the note written for the chosen wrong choice is shown
    note = q1.choice(wrong).note
    assert page.locator(".jp-OutputArea-output", has_text=note[:20]).count() >= 1
    shot(page, "09_quiz_wrong")

    page.get_by_role("button", name="次へ").first.click()
    page.locator(".jp-OutputArea-output >> text=02 / 09").first.wait_for(timeout=30_000)
    _choose(page, q2.correct_id())
    page.get_by_role("button", name="回答").first.click()
    page.locator(".jp-OutputArea-output >> text=正解").first.wait_for(timeout=30_000)
    assert page.locator(".jp-OutputArea-output >> text=不正解").count() == 0
    shot(page, "09_quiz_right")
