"""05_crossover in JupyterLab: move a control, see the monthly costs and the plot change."""
import re

import pytest
from playwright.sync_api import expect

from .conftest import open_notebook, run_all, shot

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_moving_a_slider_redraws_costs_and_plot(page, lab):
    open_notebook(page, lab, "05_crossover/05_crossover.ipynb")
    run_all(page)
    slider = page.locator(".widget-slider", has_text="1 日の質問数").first
    slider.wait_for(state="attached", timeout=60_000)
    slider.scroll_into_view_if_needed()
    output = page.locator(".jp-OutputArea-output", has=page.locator(".widget-slider", has_text="1 日の質問数")).first
    numbers = output.locator(".widget-html", has_text="$").first
    image = output.locator("img").first
    expect(image).to_have_attribute("src", re.compile(r"."), timeout=30_000)
    before_text = numbers.text_content()
    before_png = image.get_attribute("src")
    assert "$" in before_text, before_text
    shot(page, "05_crossover_before")

    handle = slider.locator(".noUi-handle").first
    handle.focus()
    for _ in range(15):
        handle.press("ArrowRight")
    # the simulator's own numbers and plot change (not any other widget or figure on the page)
    expect(numbers).not_to_have_text(before_text, timeout=30_000)
    after_text = numbers.text_content()
    assert "$" in after_text and after_text != before_text, after_text
    expect(image).not_to_have_attribute("src", before_png, timeout=30_000)
    shot(page, "05_crossover_after")
