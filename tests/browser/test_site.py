"""The course site in a browser: three pages open with their content, and the Japanese search finds
「キャッシュ」. The screenshot of the search is the one docs/site.md shows (docs/images/site_search.png)."""
import socket
import subprocess
import sys
import time
import urllib.request
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
