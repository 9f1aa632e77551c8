"""The course site in a browser: three pages open with their content, and the Japanese search finds
「キャッシュ」. The screenshot of the search is the one docs/site.md shows (docs/images/site_search.png)."""
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import quote

import pytest

from .conftest import shot

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def served(built_site):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--directory", str(built_site),
                             "--bind", "127.0.0.1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 30
    while True:
        try:
            urllib.request.urlopen(base + "/index.html", timeout=2).close()
            break
        except OSError:
            if time.time() > deadline:
                proc.kill()
                raise
            time.sleep(0.2)
    yield base
    proc.terminate()
    proc.wait(timeout=10)


def test_three_pages_open_with_their_content(page, served):
    page.goto(served + "/index.html")
    assert page.locator("a", has_text="00 まず読む").count() >= 1
    page.goto(served + "/lessons/05_crossover.html")
    page.locator("img[src*='_images/']").first.wait_for(state="visible", timeout=30_000)
    assert page.locator("img[src*='_images/']").count() >= 3
    assert page.locator("text=静的なページでは動かず").count() == 1
    page.goto(served + "/guide/index.html")
    assert page.locator("h1").first.text_content().strip().startswith("講師ガイド")


def test_japanese_search_finds_cache(page, served):
    page.goto(served + "/search.html?q=" + quote("キャッシュ"))
    results = page.locator("#search-results li")
    results.first.wait_for(state="visible", timeout=60_000)
    titles = " ".join(results.all_text_contents())
    assert results.count() >= 3 and "03 プロンプトキャッシュ" in titles, titles[:500]
    assert page.locator("#search-results mark, #search-results .highlighted").count() >= 1 or "キャッシュ" in titles
    shot(page, "site_search")


def test_the_site_works_with_the_network_blocked(browser, served):
    """Issue 44 item 7: with every request to a host other than the site's aborted, formulas are typeset (MathJax
    from the site itself), and the simulator's and the quiz's places show their stand-ins, not a blank."""
    from urllib.parse import urlparse

    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, locale="ja-JP")
    blocked = []

    def route(r):
        host = urlparse(r.request.url).hostname
        if host in ("127.0.0.1", "localhost") or r.request.url.startswith("data:"):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    ctx.route("**/*", route)
    page = ctx.new_page()
    try:
        page.goto(served + "/lessons/03_prompt_caching.html")
        page.locator("mjx-container").first.wait_for(state="attached", timeout=60_000)
        assert page.locator("mjx-container").count() >= 3
        body = page.locator("article").first.inner_text()
        assert "\\frac" not in body and "\\(" not in body, "raw TeX left on the page"
        page.goto(served + "/lessons/05_crossover.html")
        page.wait_for_load_state("networkidle")
        stand_in = page.locator(".cell_output img[src^='data:image/png']")
        assert stand_in.count() >= 1, "the simulator's place shows no image"
        assert page.locator(".cell_output", has_text="ロングコンテキスト").count() >= 1
        page.goto(served + "/lessons/09_knowledge_check.html")
        page.wait_for_load_state("networkidle")
        assert page.locator(".cell_output", has_text="問").count() >= 1
        assert not blocked, f"the site asked other hosts: {blocked[:5]}"
        page.goto(served + "/lessons/05_crossover.html")
        stand_in.first.scroll_into_view_if_needed()
        page.screenshot(path=str(Path(__file__).resolve().parents[2] / "docs" / "images" / "site_offline_05.png"))
    finally:
        ctx.close()
