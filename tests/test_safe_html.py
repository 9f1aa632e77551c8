"""Learner HTML carries no active content into formgrader or feedback (issue 31; ctxlab/grading/safe_html.py).

The fast tests render a hostile notebook (tests/hostile_html.py: the payload in the written
answer, JavaScript/HTML/SVG outputs, attachments, a raw HTML cell) with the HTMLExporter
settings of nbgrader_config.py and check the page with an HTML parser: no script but the
template's own, no event handler, no ``javascript:`` URL, no SVG, frame or object; the
learner's text is still there, the payload shown as text. The slow test checks the feedback
file nbgrader itself writes for the graded hostile submission, and that its score is in it.
"""
from __future__ import annotations

import base64
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
from nbconvert import HTMLExporter
from traitlets.config import Config

import hostile_html
from ctxlab.grading.safe_html import SanitizeLearnerHTML, page_policy
from graded_class import ROOT

CANARY = "http://127.0.0.1:9/"
ACTIVE_TAGS = {"script", "iframe", "object", "embed", "svg", "base", "form", "frame", "frameset", "applet"}
URL_ATTRS = {"href", "src", "action", "formaction", "xlink:href", "data", "background", "poster"}


class _Scan(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found, self._script = [], None

    def handle_starttag(self, tag, attrs):
        if tag in ACTIVE_TAGS:
            self._script = [tag, dict(attrs), ""]
            self.found.append(self._script)
        for name, value in attrs:
            v = (value or "").strip().lower()
            if name.startswith("on") or (name in URL_ATTRS and v.startswith(("javascript:", "vbscript:", "data:text"))):
                self.found.append([tag, {name: value}, ""])
            if tag == "meta" and name == "http-equiv" and v == "refresh":
                self.found.append([tag, {name: value}, ""])

    def handle_data(self, data):
        if self._script is not None:
            self._script[2] += data

    def handle_endtag(self, tag):
        self._script = None


def _scan_all(page: str) -> list:
    scan = _Scan()
    scan.feed(page)
    return scan.found


def active_content(page: str, own_page: str) -> list:
    """What in ``page`` could run, leaving out the template's own scripts (those of ``own_page``,
    the same template rendered for an empty notebook)."""
    own = _Scan()
    own.feed(own_page)
    scan = _Scan()
    scan.feed(page)
    return [x for x in scan.found if x not in own.found]


def exporter() -> HTMLExporter:
    """nbconvert's HTMLExporter with the settings nbgrader_config.py gives formgrader and feedback."""
    c = Config()
    ns = {"get_config": lambda: c}
    exec(compile((ROOT / "nbgrader_config.py").read_text(encoding="utf-8"), "nbgrader_config.py", "exec"), ns)  # noqa: S102
    return HTMLExporter(config=Config({"HTMLExporter": c.HTMLExporter}), template_name="classic")


def hostile_with_outputs() -> nbformat.NotebookNode:
    """The hostile notebook with the outputs its code cell makes when it runs."""
    nb = hostile_html.hostile_notebook(ROOT / "course" / hostile_html.ASSIGNMENT / f"{hostile_html.ASSIGNMENT}.ipynb",
                                       CANARY)
    js = hostile_html.payload(CANARY)
    cell = next(c for c in nb.cells if c.cell_type == "code" and "Javascript(" in c.source)
    cell.outputs = [
        nbformat.v4.new_output("display_data", data={"application/javascript": js, "text/plain": "<Javascript>"}),
        nbformat.v4.new_output("display_data", data={"text/html": f'<img src=x onerror="{js}"><script>{js}</script>'
                                                                  '<table><tr><td>42</td></tr></table>'}),
        nbformat.v4.new_output("display_data", data={"image/svg+xml": f'<svg onload="{js}"/>', "text/plain": "svg"}),
        nbformat.v4.new_output("display_data", data={"text/markdown": f"[x](javascript:{js}) **太字**"}),
        # the template writes an image's width into the tag as it is
        nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo="},
                               metadata={"image/png": {"width": f'1 onerror="{js}"'}}),
    ]
    return nb


def test_config_names_the_sanitizer():
    assert "ctxlab.grading.safe_html.SanitizeLearnerHTML" in exporter().preprocessors


def test_rendered_submission_has_no_active_content_and_keeps_the_answer():
    ex = exporter()
    page, _ = ex.from_notebook_node(hostile_with_outputs())
    own, _ = ex.from_notebook_node(nbformat.v4.new_notebook())
    assert active_content(page, own) == []
    assert hostile_html.ANSWER_TEXT in page
    assert "&lt;script&gt;" in page                  # the payload is shown as text
    assert "<td>42</td>" in page and "<strong>太字</strong>" in page   # harmless HTML and markdown output kept
    assert "application/javascript" in page and "image/svg+xml" in page   # the note says what was removed


def test_the_check_finds_the_payload_without_the_sanitizer():
    """The scan above can fail: without SanitizeLearnerHTML the same notebook is full of active content."""
    page, _ = HTMLExporter(template_name="classic").from_notebook_node(hostile_with_outputs())
    own, _ = HTMLExporter(template_name="classic").from_notebook_node(nbformat.v4.new_notebook())
    found = active_content(page, own)
    assert {x[0] for x in found} >= {"script", "img", "svg"}, found


def test_attachments_become_images_or_nothing():
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n").decode()
    cell = nbformat.v4.new_markdown_cell("![p](attachment:p.png) ![s](attachment:s.svg) ![m](attachment:missing.png)")
    cell.attachments = {"p.png": {"image/png": png}, "s.svg": {"image/svg+xml": "PHN2Zy8+"}}
    nb = nbformat.v4.new_notebook(cells=[cell])
    SanitizeLearnerHTML().preprocess(nb, {})
    assert f'src="data:image/png;base64,{png}"' in nb.cells[0].source
    assert "svg" not in nb.cells[0].source.replace('alt="s"', "") and "attachments" not in nb.cells[0]


def test_policy_allows_only_the_pages_own_scripts():
    own = ('<script src="/static/a.js"></script><script>var submission_id = "1";</script>'
           '<span onclick="toggle_name(true);"></span><script src="https://cdn.example/lib/m/2.7/m.js?x=1"></script>')
    policy = page_policy(own)
    script = next(d for d in policy.split("; ") if d.startswith("script-src"))
    assert "'unsafe-inline'" not in script and "'unsafe-eval'" not in script
    assert len([t for t in script.split() if t.startswith("'sha256-")]) == 2    # the inline script and the handler
    assert "https://cdn.example/lib/m/" in script
    assert "img-src 'self' data:" in policy and "object-src 'none'" in policy and "base-uri 'none'" in policy


@pytest.mark.slow
def test_feedback_written_by_nbgrader_has_no_active_content(tmp_path):
    graded = hostile_html.build(tmp_path, CANARY)
    page = graded["feedback"].read_text(encoding="utf-8")
    # the feedback template's own scripts (MathJax) are the only ones
    found = [x for x in _scan_all(page) if not (x[0] == "script" and CANARY not in x[2] + str(x[1])
                                               and ("mathjax" in str(x[1]).lower() or "init_mathjax" in x[2]))]
    assert found == [], found
    assert hostile_html.ANSWER_TEXT in page and "Score:" in page
    # the autograded notebook itself is the evidence: it still holds what the learner's code produced
    autograded = graded["autograded"].read_text(encoding="utf-8")
    assert "application/javascript" in autograded and "image/svg+xml" in autograded
    assert Path(graded["root"] / "autograded" / hostile_html.STUDENT / hostile_html.ASSIGNMENT / "notes.html").exists()
