"""The decision memo of ``ctxlab decide`` in a browser: Japanese text, the verdict, both figures, no script.

The screenshot is the one the README shows (docs/images/decide_memo.png, copied from artifacts/browser/).
A document named like an HTML tag must show as text, never as markup.
"""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT, shot

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_memo_opens_with_japanese_text_and_figures(page, tmp_path):
    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "data" / "capstone" / "docs", docs)
    (docs / "setup" / "<img src=x onerror=alert(1)>.exe").write_bytes(b"\x00not a document")
    out = tmp_path / "memo"
    r = subprocess.run([str(Path(sys.executable).parent / "ctxlab"), "decide", "--docs", "docs", "--questions-per-day", "20",
                        "--out", str(out), "--quiet"], capture_output=True, text=True, cwd=tmp_path,
                       env={"CTXLAB_OFFLINE": "1", "PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg"}, timeout=300)
    assert r.returncode == 0, r.stderr
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(Path(out / "memo.html").as_uri())
    assert page.locator("h1").first.text_content().startswith("意思決定メモ")
    assert page.locator("p.verdict").count() == 1
    assert page.locator("figure svg").count() == 2
    assert page.locator("script").count() == 0 and page.locator("img").count() == 0 and not dialogs
    assert page.locator("td", has_text="<img src=x onerror=alert(1)>.exe").count() == 1   # shown as text
    page.set_viewport_size({"width": 1000, "height": 1400})
    shot(page, "decide_memo")
