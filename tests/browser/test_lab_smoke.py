"""JupyterLab opens a lesson, runs it, and shows Japanese text and a plot."""
import subprocess

import pytest

from .conftest import open_notebook, run_all, shot

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_japanese_font_is_installed():
    out = subprocess.run(["fc-list", ":lang=ja", "family"], capture_output=True, text=True).stdout
    assert out.strip(), "no Japanese font for the browser: install fonts-noto-cjk"


def test_start_here_runs_in_jupyterlab(page, lab):
    open_notebook(page, lab, "00_start_here/00_start_here.ipynb")
    run_all(page)
    # the mode line of the first code cell
    page.wait_for_selector(".jp-OutputArea-output >> text=オフライン sandbox", timeout=60_000)
    # a matplotlib figure rendered as an image (the PNG decoded, not a broken <img>)
    page.locator(".jp-RenderedImage img").first.wait_for(state="attached", timeout=60_000)
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jp-RenderedImage img')].some(i => i.complete && i.naturalWidth > 0)",
        timeout=60_000)
    # the expected error of the untouched exercise is there, the rest ran
    page.locator(".jp-OutputArea-output >> text=はまだ解かれていません").first.wait_for(state="attached", timeout=60_000)
    shot(page, "00_start_here")
