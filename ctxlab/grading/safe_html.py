"""Learner HTML made harmless before an instructor, a TA or the LMS sees it.

A submission is hostile: its markdown cells, its outputs (HTML, JavaScript, SVG, widget
views) and its cell attachments are written by the learner, and two pages show them to
someone else: formgrader's submission view (in the instructor's Jupyter session, where a
script could start kernels, read the hidden tests or rewrite the gradebook) and the
feedback HTML (sent back through the LMS). Both are rendered by nbconvert's
``HTMLExporter`` from the autograded notebook, so both are defended in two layers:

1. :class:`SanitizeLearnerHTML`, in ``HTMLExporter.preprocessors`` (``nbgrader_config.py``),
   cleans the notebook as it is rendered, with nbconvert's own sanitizer (``SanitizeHTML``,
   bleach) and an allowlist of harmless tags. Markdown is rendered first by nbconvert's
   markdown renderer and the resulting HTML is cleaned (cleaning the markdown source would
   keep ``[x](javascript:...)`` links, which the renderer emits as they are). Tags outside
   the allowlist are escaped, not dropped: the instructor reads the answer as the learner
   wrote it, ``<img src=x onerror=...>`` included, as text. JavaScript, SVG, widget and
   other active outputs are replaced by a note; attachments become inline PNG, JPEG or GIF
   images or are dropped. The autograded notebook on disk is not changed (it is the
   evidence, and the gradebook's scores come from nbgrader, not from this rendering).
2. :func:`install` (called by ``nbgrader_config.py``, which formgrader loads in the
   instructor's server) gives formgrader's submission view a Content-Security-Policy that
   lets only formgrader's own scripts run: the inline scripts and event handlers that the
   formgrade template produces for an empty notebook, by hash, and scripts from the server
   itself. Any other inline script, event handler or ``javascript:`` URL in the page (one
   that got past the sanitizer) is refused by the browser; images load only from the
   server or ``data:``, so a tracking image cannot reach another host. Files of a
   submission served by formgrader (``/formgrader/submissions/<id>/<file>``) get a
   ``sandbox`` policy: a learner's ``.html`` file opened from there runs no script.
3. The feedback HTML (a file the learner opens from the LMS, anywhere) is made by
   :class:`FeedbackHTMLExporter` (``GenerateFeedback.exporter_class``), which puts
   :data:`FEEDBACK_POLICY` in a ``<meta http-equiv="Content-Security-Policy">`` at the top of
   its ``<head>``: the page is static, so no script runs and nothing loads from another
   host (a learner's ``<img src="https://…">`` that the sanitizer kept as an image loads nothing).
"""
from __future__ import annotations

import base64
import copy
import hashlib
import re
from html import escape as html_escape

import bleach
import nbformat
from nbconvert.exporters import HTMLExporter
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from nbconvert.preprocessors.sanitize import SanitizeHTML
from traitlets import List, Unicode

#: tags a learner's HTML may keep (bleach's own list plus text structure, tables and images)
TAGS = sorted(set(bleach.ALLOWED_TAGS) | {
    "p", "br", "hr", "div", "span", "pre", "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody",
    "tfoot", "tr", "th", "td", "caption", "img", "sub", "sup", "dl", "dt", "dd", "del", "ins", "kbd", "s",
    "small", "details", "summary", "tt", "var", "samp", "mark", "q", "cite", "u"})
#: attributes per tag (no class, no style: a learner's HTML must not restyle formgrader's page)
ATTRIBUTES = {"a": ["href", "title"], "abbr": ["title"], "acronym": ["title"],
              "img": ["src", "alt", "title", "width", "height"], "th": ["colspan", "rowspan", "align"],
              "td": ["colspan", "rowspan", "align"]}
#: URL schemes kept in href and src (relative URLs are kept; javascript:, vbscript:, data: are not)
PROTOCOLS = ["http", "https", "mailto"]
#: attachment types shown inline (as data: URIs, which only images may use)
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif")
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
REMOVED_NOTE = "（安全のため表示しません: 受講者のノートブックの {kinds} 出力）"
_GRADE_ID = re.compile(r"^[A-Za-z0-9_\-]+$")
_ATTACHMENT = re.compile(r'(?:src|href)="attachment:([^"]*)"')


class _Renderer(IPythonRenderer):
    """nbconvert's markdown renderer, leaving ``attachment:`` URLs for :class:`SanitizeLearnerHTML`
    (nbconvert would inline any type of attachment, SVG and HTML included, or fail on a missing one)."""

    def _embed_image_or_attachment(self, url: str) -> str:
        return url


class SanitizeLearnerHTML(SanitizeHTML):
    """nbconvert's ``SanitizeHTML`` for graded notebooks: markdown is rendered, then cleaned;
    attachments are inlined or dropped; active outputs are replaced by a note (module docstring)."""

    tags = List(Unicode(), default_value=TAGS).tag(config=True)

    def clean(self, html: str, protocols: list[str] = PROTOCOLS) -> str:
        return bleach.clean(html, tags=self.tags, attributes=ATTRIBUTES, protocols=protocols,
                            strip=False, strip_comments=True)

    sanitize_html_tags = clean

    def preprocess(self, nb, resources):
        # widget state is written into a <script> block, and makes the page load widget code from a CDN
        nb.metadata.pop("widgets", None)
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, cell_index):
        meta = cell.metadata.get("nbgrader")
        if isinstance(meta, dict) and not _GRADE_ID.match(str(meta.get("grade_id", "x"))):
            # formgrader writes grade_id into an HTML attribute unescaped; nbgrader's ids are plain
            del cell.metadata["nbgrader"]
        if cell.cell_type == "markdown":
            cell.source = self.markdown_html(cell.source, cell.pop("attachments", None) or {})
            return cell, resources
        if cell.cell_type == "raw":
            cell.source = self.clean(cell.source)
            return cell, resources
        if cell.cell_type == "code":
            cell.outputs = self.sanitize_code_outputs(cell.outputs)
        return cell, resources

    def markdown_html(self, source: str, attachments: dict) -> str:
        """A markdown cell as cleaned HTML, in one line (the template's markdown renderer then
        passes it through as one HTML block)."""
        html = self.clean(MarkdownWithMath(renderer=_Renderer(escape=False)).render(source),
                          protocols=[*PROTOCOLS, "attachment"])

        def inline(m: re.Match) -> str:
            data = attachments.get(m.group(1)) or {}
            kind = next((k for k in IMAGE_TYPES if k in data), None)
            if kind is None or m.group(0).startswith("href"):
                return 'src=""' if m.group(0).startswith("src") else 'href=""'
            payload = data[kind] if isinstance(data[kind], str) else "".join(data[kind])
            try:
                base64.b64decode(payload, validate=True)
            except ValueError:
                return 'src=""'
            return f'src="data:{kind};base64,{payload}"'

        html = _ATTACHMENT.sub(inline, html)
        return "<div>" + html.strip().replace("\r", "").replace("\n", "&#10;") + "</div>"

    def sanitize_code_outputs(self, outputs):
        for out in outputs:
            if out.get("output_type") not in ("display_data", "execute_result"):
                continue   # stream and error outputs are text: the template escapes them
            data = out.get("data", {})
            removed = []
            for key in list(data):
                if key in self.safe_output_keys:
                    continue
                if key == "text/html":
                    data[key] = self.clean(data[key] if isinstance(data[key], str) else "".join(data[key]))
                elif key == "text/markdown":
                    text = data.pop(key)
                    data.setdefault("text/html", self.markdown_html(text if isinstance(text, str) else "".join(text), {}))
                else:
                    removed.append(key)
                    del data[key]
            # a widget view never renders in a static page (its text/plain stays): not worth a note
            removed = [k for k in removed if k != WIDGET_VIEW]
            if removed and not set(data) - {"text/plain"}:
                note = REMOVED_NOTE.format(kinds=", ".join(sorted(removed)))
                data["text/plain"] = note + ("\n" + str(data["text/plain"]) if "text/plain" in data else "")
            out["metadata"] = {}   # the template writes an image's width/height metadata into the tag unescaped
        return outputs


# --------------------------------------------------------------------------- formgrader's Content-Security-Policy

_SCRIPT = re.compile(r"<script\b([^>]*)>(.*?)</script\s*>", re.S | re.I)
_SRC = re.compile(r"""\bsrc\s*=\s*["']([^"']+)["']""", re.I)
_TYPE = re.compile(r"""\btype\s*=\s*["']([^"']+)["']""", re.I)
_HANDLER = re.compile(r"""\son[a-z]+\s*=\s*"([^"]*)\"""", re.I)
_JS_TYPES = {"", "text/javascript", "application/javascript", "module"}
#: fields of formgrader's page that come from the learner (the LMS), not from formgrader
LEARNER_FIELDS = ("first_name", "last_name", "student")
#: the policy of files of a submission that formgrader serves as they are
FILES_POLICY = "sandbox; default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'"


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


def page_policy(own_html: str) -> str:
    """The Content-Security-Policy of a formgrader page whose own markup (the template rendered
    for an empty notebook) is ``own_html``: its inline scripts and event handlers by hash, its
    external scripts' folders, the server itself; nothing else runs."""
    hashes, hosts = [], []
    for attrs, body in _SCRIPT.findall(own_html):
        src = _SRC.search(attrs)
        if src:
            url = src.group(1)
            if re.match(r"https?://", url):
                # the folder above the script's version folder (MathJax loads its parts from there)
                hosts.append(url.split("?")[0].rsplit("/", 2)[0] + "/")
        elif (_TYPE.search(attrs).group(1).lower() if _TYPE.search(attrs) else "") in _JS_TYPES:
            hashes.append(_sha256(body))
    handlers = [_sha256(h) for h in _HANDLER.findall(own_html)]
    hosts = sorted(set(hosts))
    script = ["'self'", *hosts, *sorted(set(hashes))] + (["'unsafe-hashes'", *sorted(set(handlers))] if handlers else [])
    return "; ".join([
        "default-src 'self'",
        "script-src " + " ".join(script),
        "style-src 'self' 'unsafe-inline' " + " ".join(hosts),
        "font-src 'self' data: " + " ".join(hosts),
        "img-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "frame-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
    ]).replace("  ", " ").replace(" ;", ";")


class _PolicyExporter:
    """Formgrader's exporter for one request: renders the submission, then sends the policy of
    the page (:func:`page_policy`, from the same template rendered for an empty notebook)."""

    def __init__(self, exporter, handler):
        self._exporter, self._handler = exporter, handler

    def from_filename(self, filename, resources=None, **kw):
        resources = dict(resources or {})
        # formgrader prints the learner's names and id into the page unescaped (they come from the LMS)
        for key in LEARNER_FIELDS:
            if isinstance(resources.get(key), str):
                resources[key] = html_escape(resources[key])
        # the page's own markup: the same template and page, no cells, no learner text at all
        own_resources = copy.deepcopy({**resources, **{k: "" for k in LEARNER_FIELDS}})
        html, out = self._exporter.from_filename(filename, resources=resources, **kw)
        own, _ = self._exporter.from_notebook_node(nbformat.v4.new_notebook(), resources=own_resources)
        self._handler.add_header("Content-Security-Policy", page_policy(own))
        return html, out

    def __getattr__(self, name):
        return getattr(self._exporter, name)


def _policy_exporter(handler):
    return _PolicyExporter(handler.settings["nbgrader_exporter"], handler)


def install() -> None:
    """Give formgrader's submission pages their Content-Security-Policy (idempotent; see the
    module docstring). A second policy header: the server's own (``frame-ancestors``) stays."""
    from nbgrader.server_extensions.formgrader import handlers

    if getattr(handlers.SubmissionHandler, "_ctxlab_policy", False):
        return
    handlers.SubmissionHandler.exporter = property(_policy_exporter)
    handlers.SubmissionHandler._ctxlab_policy = True

    base = handlers.SubmissionFilesHandler.set_default_headers

    def set_default_headers(self):
        base(self)
        self.add_header("Content-Security-Policy", FILES_POLICY)
        self.set_header("X-Content-Type-Options", "nosniff")

    handlers.SubmissionFilesHandler.set_default_headers = set_default_headers


#: the feedback page's policy: styles and images of its own (inline, data:), nothing else at all
FEEDBACK_POLICY = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:; "
                   "base-uri 'none'; form-action 'none'")
_HEAD = re.compile(r"<head[^>]*>", re.IGNORECASE)


class FeedbackHTMLExporter(HTMLExporter):
    """nbconvert's ``HTMLExporter`` (nbgrader's feedback template) with :data:`FEEDBACK_POLICY` as
    the first element of the page's ``<head>`` (the template's own, before any learner text)."""

    def from_notebook_node(self, nb, resources=None, **kw):
        html, resources = super().from_notebook_node(nb, resources=resources, **kw)
        meta = f'<meta http-equiv="Content-Security-Policy" content="{FEEDBACK_POLICY}">'
        head = _HEAD.search(html)
        html = html[:head.end()] + meta + html[head.end():] if head else meta + html
        return html, resources
