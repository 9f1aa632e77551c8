"""``make lab`` opens the course at 00, not the Launcher, and the file browser shows folder names whole
(issue 44 item 6). The lab runs with deploy/laptop/jupyter on JUPYTER_CONFIG_PATH, as ``make lab`` and the
laptop kits do (LabApp.default_url and labconfig/default_setting_overrides.json). Screenshot:
docs/images/lab_start_1280.png."""
from pathlib import Path

import pytest

from .conftest import ROOT, running_lab

pytestmark = [pytest.mark.browser, pytest.mark.slow]

IMAGES = ROOT / "docs" / "images"
LAPTOP_SETTINGS = ROOT / "deploy" / "laptop" / "jupyter"


@pytest.fixture(scope="module")
def laptop_lab(tmp_path_factory):
    with running_lab(tmp_path_factory.mktemp("start-lab"), config_path=LAPTOP_SETTINGS) as running:
        yield running


@pytest.mark.parametrize("size", [(1280, 720), (1440, 900)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_lab_opens_00_with_folder_names_whole(browser, laptop_lab, size):
    base, token, _root = laptop_lab
    ctx = browser.new_context(viewport={"width": size[0], "height": size[1]}, locale="ja-JP")
    page = ctx.new_page()
    try:
        page.goto(f"{base}/?token={token}", wait_until="domcontentloaded")   # where make lab's browser goes
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=90_000)
        tab = page.locator(".jp-mod-current .lm-TabBar-tabLabel, .lm-TabBar-tab.jp-mod-current .lm-TabBar-tabLabel").first
        assert "00_start_here.ipynb" in tab.inner_text()
        assert page.locator(".jp-Launcher:visible").count() == 0, "the Launcher is open"
        assert "00 まず読む" in page.locator(".jp-Notebook:visible .jp-MarkdownCell").first.inner_text() \
            or "00" in page.locator(".jp-Notebook:visible h1").first.inner_text()
        # the file browser lists course/ with every folder name shown whole (no ellipsis)
        page.goto(f"{base}/lab/tree/00_start_here/00_start_here.ipynb?token={token}&reset", wait_until="domcontentloaded")
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=90_000)
        if not page.locator(".jp-DirListing:visible").count():
            page.locator(".lm-TabBar-tab[data-id='filebrowser']").click()
        crumbs = page.locator(".jp-BreadCrumbs-home").first
        crumbs.click()
        page.wait_for_selector(".jp-DirListing-item[title*='10_rag_lab'], .jp-DirListing-item >> text=10_rag_lab",
                               timeout=30_000)
        names = page.locator(".jp-DirListing-itemText:visible")
        cut = names.evaluate_all("els => els.filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent)")
        shown = names.all_inner_texts()
        assert "06_metadata_filtering" in " ".join(shown) and not cut, f"cut off: {cut}"
        if size == (1280, 720):
            IMAGES.mkdir(exist_ok=True)
            page.screenshot(path=str(IMAGES / "lab_start_1280.png"))
    finally:
        ctx.close()
