"""A learner's first screen of 00 in JupyterLab (issue 44): an unsolved exercise is one line, and the
comparison table is an HTML table whose numbers line up, with its source under it and the notes folded.

The screenshots are the ones docs show (docs/images/00_unsolved_one_line.png, docs/images/00_compare_table.png).
"""
from pathlib import Path

import pytest

from .conftest import open_notebook, run_all

pytestmark = [pytest.mark.browser, pytest.mark.slow]

IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"


@pytest.fixture(scope="module")
def lesson00(browser, lab):
    ctx = browser.new_context(viewport={"width": 1440, "height": 900}, locale="ja-JP")
    page = ctx.new_page()
    open_notebook(page, lab, "00_start_here/00_start_here.ipynb")
    run_all(page)
    yield page
    ctx.close()


def test_an_unsolved_exercise_is_one_line(lesson00):
    page = lesson00
    errors = page.locator(".jp-Notebook:not(.lm-mod-hidden) .jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    waiting = errors.filter(has_text="はまだ解かれていません")
    assert waiting.count() >= 2, f"each unsolved exercise says so: {waiting.count()}"
    for i in range(waiting.count()):
        text = waiting.nth(i).inner_text().strip()
        assert len(text.splitlines()) == 1, f"not one line: {text[:600]}"
        assert "Traceback" not in text and "NotImplementedError" not in text and text.startswith("演習 "), text
    IMAGES.mkdir(exist_ok=True)
    cell = waiting.first.locator("xpath=ancestor::div[contains(@class,'jp-CodeCell')]")
    cell.scroll_into_view_if_needed()
    cell.screenshot(path=str(IMAGES / "00_unsolved_one_line.png"))


def test_the_comparison_table_is_an_html_table_with_aligned_numbers(lesson00):
    page = lesson00
    table = page.locator(".jp-Notebook:not(.lm-mod-hidden) .ctxlab-table table").filter(has_text="ロングコンテキスト").first
    table.wait_for(state="attached", timeout=60_000)
    assert "出典:" in table.locator("caption").inner_text()
    # the dollars of the lines around it stay dollars: MathJax typesets nothing in the table's block
    assert page.locator(".ctxlab-table mjx-container, .ctxlab-table .MathJax").count() == 0
    assert "ロングコンテキスト $" in page.locator(".ctxlab-table").filter(has_text="絞り込み").first.inner_text()
    # every number column right-aligned: the right edges of its cells coincide
    edges = table.evaluate("""t => [1, 2, 3].map(j => [...t.querySelectorAll('tbody tr')].map(
        r => Math.round(r.children[j].getBoundingClientRect().right - parseFloat(getComputedStyle(r.children[j]).paddingRight))))""")
    rights = table.evaluate("""t => [1, 2, 3].map(j => [...t.querySelectorAll('tbody tr')].map(r => {
        const c = r.children[j], range = document.createRange(); range.selectNodeContents(c);
        return Math.round(range.getBoundingClientRect().right); }))""")
    for col in rights:
        assert max(col) - min(col) <= 1, f"numbers not aligned: {col} (cell edges {edges})"
    # the notes are folded under the table, closed until opened
    details = page.locator(".jp-Notebook:not(.lm-mod-hidden) .ctxlab-table details").first
    assert details.get_attribute("open") is None and "注と前提" in details.locator("summary").inner_text()
    assert not details.locator("li").first.is_visible()
    box = table.locator("xpath=ancestor::div[contains(@class,'jp-CodeCell')]")
    box.scroll_into_view_if_needed()
    # a table with five columns fits the 1440-wide notebook without wrapping a number
    assert table.evaluate("t => t.scrollWidth <= t.parentElement.parentElement.clientWidth + 1")
    box.screenshot(path=str(IMAGES / "00_compare_table.png"))
