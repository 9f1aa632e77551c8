"""07_citations in JupyterLab: the viewer shows the cited range highlighted in the file."""
import pytest

from .conftest import open_notebook, run_all, shot

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_citation_is_highlighted(page, lab):
    open_notebook(page, lab, "07_citations/07_citations.ipynb")
    run_all(page)
    mark = page.locator(".jp-OutputArea-output mark").first
    mark.wait_for(state="attached", timeout=60_000)
    mark.scroll_into_view_if_needed()
    mark.wait_for(state="visible", timeout=30_000)
    first_text = mark.text_content().strip()
    assert first_text, "the highlighted range is empty"
    # the highlight is visibly coloured (not transparent)
    bg = mark.evaluate("e => getComputedStyle(e).backgroundColor")
    assert bg not in ("rgba(0, 0, 0, 0)", "transparent"), bg
    page.mouse.wheel(0, 150)
    shot(page, "07_citations_highlight")
    # step to the next citation with the viewer's button and see the highlight change
    nxt = page.locator(".jp-OutputArea-output button", has_text="次").first
    nxt.click()
    page.wait_for_function(
        "(t) => { const m = document.querySelector('.jp-OutputArea-output mark'); return m && m.textContent.trim() !== t; }",
        arg=first_text, timeout=30_000)
