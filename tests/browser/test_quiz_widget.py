"""09_knowledge_check in JupyterLab: answer wrongly, then rightly, and see feedback and progress."""
import pytest
from playwright.sync_api import Error as PlaywrightError

from ctxlab import quiz

from .conftest import ROOT, open_notebook, run_all, shot

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


def test_clicked_answers_reach_validate_and_autograde(page, lab, tmp_path):
    """Issue 39: answered only by clicking in JupyterLab, then 演習 1's released line run and the notebook
    saved; Validate and autograde re-run the saved file in fresh kernels and score the clicks (8 of 9)."""
    import shutil

    import nbformat

    from ctxlab.grading import _nbgrader, workflow
    from ctxlab.widgets.quiz import WRITE_LINE

    base, token, root = lab
    rel = "09_knowledge_check/09_knowledge_check.ipynb"
    original = (root / rel).read_bytes()
    bank = quiz.instructor_bank()
    picks = {q.id: q.correct_id() for q in bank}
    picks["q4"] = next(c for c in bank.question("q4").choice_ids if c != picks["q4"])
    try:
        open_notebook(page, lab, rel)
        run_all(page)
        for n, q in enumerate(bank, 1):
            page.locator(".jp-OutputArea-output", has_text=f"{n:02d} / 09").first.wait_for(timeout=30_000)
            _choose(page, picks[q.id])
            page.get_by_role("button", name="回答").first.click()
            # enabled once the answer is recorded (Playwright waits for that before clicking)
            page.get_by_role("button", name="結果を見る" if n == len(bank) else "次へ").first.click()
        page.locator(".jp-OutputArea-output >> text=write_answers").first.wait_for(timeout=30_000)
        shot(page, "09_quiz_final_screen")
        cell = page.locator(".jp-CodeCell", has=page.locator(".jp-InputArea", has_text=WRITE_LINE)).first
        cell.locator(".jp-InputArea-editor").click()
        page.keyboard.press("Shift+Enter")
        written = page.locator(".jp-CodeCell .jp-InputArea", has_text='"q9":').first
        written.wait_for(timeout=60_000)   # JupyterLab applied set_next_input: the cell is the dict now
        written.scroll_into_view_if_needed()
        shot(page, "09_answers_written")
        page.get_by_role("menuitem", name="File", exact=True).click()
        page.get_by_role("menuitem", name="Save Notebook", exact=False).first.click()
        for _ in range(60):   # the save reaches the disk
            if '\\"q9\\": ' in (root / rel).read_text(encoding="utf-8"):
                break
            page.wait_for_timeout(500)
        saved = nbformat.read(root / rel, as_version=4)
        answer = next(c for c in saved.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "answers")
        namespace: dict = {}
        exec(compile(answer.source, "answers", "exec"), namespace)
        assert namespace["answers"] == picks
        learner = tmp_path / "export" / "carol"
        learner.mkdir(parents=True)
        shutil.copy(root / rel, learner / "09_knowledge_check.ipynb")
    finally:
        (root / rel).write_bytes(original)   # the scratch course stays the release for the other tests
    failed = [f for f in _nbgrader.validate(learner / "09_knowledge_check.ipynb")["failed"]
              if f["raw_error"] != "You did not provide a response."]   # 演習 2, the written answer
    assert failed == []
    workflow.grade(tmp_path / "export", tmp_path / "grading", course=ROOT, workers=1, progress=False,
                   assignments=["09_knowledge_check"])
    (score,) = _nbgrader.scores(tmp_path / "grading", "09_knowledge_check")
    assert (score.code_score, score.max_code_score) == (8.0, 9.0)
