"""05's simulator as a learner on a small screen meets it (issue 44 item 4): at 1280 × 720 with the file
browser open, a slider and the figure are in view together; after Kernel → Restart the widget says the
kernel restarted and what to run, instead of sliders that move while nothing updates.
Screenshots: docs/images/05_simulator_1280.png, docs/images/05_simulator_restarted.png."""
import pytest

from .conftest import ROOT, open_notebook, run_all

pytestmark = [pytest.mark.browser, pytest.mark.slow]

IMAGES = ROOT / "docs" / "images"


def test_controls_and_figure_in_view_and_a_restart_says_what_to_run(browser, lab):
    ctx = browser.new_context(viewport={"width": 1280, "height": 720}, locale="ja-JP")
    page = ctx.new_page()
    try:
        open_notebook(page, lab, "05_crossover/05_crossover.ipynb")
        if not page.locator(".jp-DirListing:visible").count():   # the file browser open, as a learner has it
            page.locator(".lm-TabBar-tab[data-id='filebrowser']").click()
        assert page.locator(".jp-DirListing").first.is_visible()
        run_all(page)
        box = page.locator(".ctxlab-live-widget").first
        box.wait_for(state="visible", timeout=60_000)
        note = box.locator(".ctxlab-restart-note")
        assert not note.is_visible(), "the restart note shows while the kernel is alive"
        box.scroll_into_view_if_needed()
        box.evaluate("e => e.scrollIntoView({block: 'start'})")
        page.wait_for_timeout(500)
        slider = box.locator(".widget-slider", has_text="文書量").first
        image = box.locator("img").first
        view = page.viewport_size
        s, i = slider.bounding_box(), image.bounding_box()
        assert s["y"] >= 0 and s["y"] + s["height"] <= view["height"], f"slider out of view: {s}"
        # the figure's plot area (its upper two thirds at least) on the same screen as the slider
        assert i["y"] >= 0 and i["y"] + i["height"] * 2 / 3 <= view["height"], f"figure below the fold: {i}, slider {s}"
        IMAGES.mkdir(exist_ok=True)
        page.screenshot(path=str(IMAGES / "05_simulator_1280.png"))

        page.locator(".jp-Notebook:visible").first.click()
        page.get_by_role("menuitem", name="Kernel", exact=True).click()
        page.get_by_role("menuitem", name="Restart Kernel…").click()
        page.locator(".jp-Dialog .jp-Dialog-button.jp-mod-accept").first.click()
        note.wait_for(state="visible", timeout=60_000)
        assert "カーネルが再起動した" in note.inner_text() and "Run All" in note.inner_text()
        note.scroll_into_view_if_needed()
        page.screenshot(path=str(IMAGES / "05_simulator_restarted.png"))
    finally:
        ctx.close()
