"""Build the course as a static HTML site (Sphinx + myst-nb + sphinx-book-theme) into site/.

    python tools/build_site.py [--out site] [--work build/site] [--check]

What goes in: the 11 lessons of a learner release generated afresh from solutions/ (build/site/release;
never course/, where a learner may have worked), each executed offline once (the
offline sandbox; nothing is solved, so each exercise's check shows that it waits), the course map
of the README, and docs/ (the instructor guide split into one page per section, the benchmarks,
this site's own notes). The knowledge check is executed without its key file, so its widget only
records and no page holds the key. An executed lesson is reused from build/site/executed/ while
its inputs (the released notebook, the ctxlab package, data/) are unchanged: a lesson is executed
once per change, never per page render.

``--check`` searches the built site for answers (see :func:`answer_leaks`) and for internal
links that do not resolve; a hit is an error. Prints the time each step took.
"""
from __future__ import annotations

import argparse
import hashlib
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlparse

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ctxlab.grading.preprocessors import secret_lines  # noqa: E402
from ctxlab.grading.release import assignments, fresh_release, graded_bank  # noqa: E402
from ctxlab.quiz.graded import key_leaks  # noqa: E402

#: regions of the source notebooks whose lines must never reach the site
REGIONS = (("### BEGIN SOLUTION", "### END SOLUTION"), ("### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"),
           ("### BEGIN RUBRIC", "### END RUBRIC"))
TEXT_SUFFIXES = {".html", ".js", ".txt", ".json", ".ipynb", ".md", ".py", ".css", ".xml"}
GUIDE = ROOT / "docs" / "instructor.md"
#: MathJax 3 from npm (package.json; ``make setup`` runs ``npm ci``): the site serves it, no CDN
MATHJAX = ROOT / "node_modules" / "mathjax" / "es5"

CONF = '''\
# Sphinx configuration of the course site, written by tools/build_site.py.
project = "RAG か ロングコンテキストか"
author = "ctxlab"
language = "ja"
extensions = ["myst_nb"]
nb_execution_mode = "off"          # tools/build_site.py executed each lesson once (build/site/executed/)
nb_execution_raise_on_error = False
nb_merge_streams = True
myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3
html_theme = "sphinx_book_theme"
html_title = project
html_search_language = "ja"        # Sphinx's Japanese splitter (TinySegmenter) for the search index
html_static_path = ["_static"]
html_css_files = ["site.css"]
html_theme_options = {
    "use_download_button": True,    # each lesson page offers its .ipynb (the learner release, executed)
    "show_toc_level": 2,
    "home_page_in_toc": True,
}
exclude_patterns = ["_build"]
suppress_warnings = ["mystnb.unknown_mime_type", "myst.header", "misc.highlighting_failure", "myst.xref_missing"]
# The site works offline (docs/site.md): MathJax is served from the site itself (npm's mathjax, copied into
# _static/mathjax by tools/build_site.py), and no require.js or widget renderer is loaded from a CDN. A widget's
# output falls back to the stand-in each course widget puts in its bundle (text/html: the figure and numbers at
# that moment, or the text of the question).
mathjax_path = "mathjax/tex-chtml.js"
nb_ipywidgets_js = {}
nb_mime_priority_overrides = [("html", "application/vnd.jupyter.widget-view+json", None),
                              ("html", "application/vnd.jupyter.widget-state+json", None)]
'''
CSS = '''\
body, .bd-content { font-family: "Noto Sans CJK JP", "Noto Sans JP", "IPAexGothic", "Hiragino Sans", sans-serif; }
pre, code, .output { font-family: "Noto Sans Mono CJK JP", "DejaVu Sans Mono", monospace; }
'''
SITE_NOTE = (
    "```{note}\n"
    "このページは受講者用のノートブック（course/）を、API キーなしのオフライン sandbox で上から順に実行した結果です。"
    "演習は解いていないので、各演習の確認のセルは「まだ解かれていません」と表示します（解答はこのサイトにはありません）。"
    "ウィジェット（スライダー・クイズ・引用ビューア）は静的なページでは動かず、その時点の表示（文字か画像）だけが出ます。"
    "動かすには JupyterLab で開いてください（[コースの入手](get_the_course.md)）。\n"
    "```\n")


def _digest(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for path in paths:
        for p in sorted(path.rglob("*")) if path.is_dir() else [path]:
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc":
                h.update(p.relative_to(path.parent).as_posix().encode())
                h.update(p.read_bytes())
    return h.hexdigest()


def execute_lessons(work: Path, release: Path) -> tuple[list[str], dict[str, float]]:
    """Execute each lesson of the learner ``release`` (:func:`fresh_release`, never the checkout's
    course/) offline into ``work/executed`` (reused while its inputs are unchanged); returns the lesson
    names and the seconds each execution took (0 when reused)."""
    import nbformat
    from nbclient import NotebookClient

    names = assignments(ROOT)
    shared = _digest([ROOT / "ctxlab", ROOT / "data"])
    out_dir = work / "executed"
    out_dir.mkdir(parents=True, exist_ok=True)
    took = {}
    for name in names:
        src = Path(release) / name / f"{name}.ipynb"
        stamp = hashlib.sha256((shared + _digest([src])).encode()).hexdigest()
        target, stamp_file = out_dir / f"{name}.ipynb", out_dir / f"{name}.stamp"
        if target.exists() and stamp_file.exists() and stamp_file.read_text() == stamp:
            took[name] = 0.0
            continue
        # a scratch folder with the notebook alone: no key file beside it (09's quiz then only records)
        scratch = work / "run" / name
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir(parents=True)
        nb = nbformat.read(src, as_version=4)
        env_before = dict(os.environ)
        t0 = time.perf_counter()
        try:
            os.environ.update(CTXLAB_OFFLINE="1", CTXLAB_TIME_SCALE="0", MPLBACKEND="module://matplotlib_inline.backend_inline")
            os.environ.pop("ANTHROPIC_API_KEY", None)
            # cells tagged raises-exception (unsolved exercises) may fail; any other error stops the build
            NotebookClient(nb, timeout=600, kernel_name="python3",
                           resources={"metadata": {"path": str(scratch)}}).execute()
        finally:
            os.environ.clear()
            os.environ.update(env_before)
        took[name] = time.perf_counter() - t0
        nbformat.write(nb, target)
        stamp_file.write_text(stamp)
    shutil.rmtree(work / "run", ignore_errors=True)
    return names, took


def _sections(markdown: str) -> list[tuple[str, str]]:
    """Split a Markdown file at its level-2 headings (outside code fences): [(title, text)],
    the part before the first heading first (title "")."""
    parts, title, lines, fence = [], "", [], False
    for line in markdown.splitlines(keepends=True):
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        if not fence and line.startswith("## "):
            parts.append((title, "".join(lines)))
            title, lines = line[3:].strip(), [line]
            continue
        lines.append(line)
    parts.append((title, "".join(lines)))
    return parts


def _readme_section(heading: str) -> str:
    for title, text in _sections((ROOT / "README.md").read_text(encoding="utf-8")):
        if title == heading:
            return text
    raise SystemExit(f"README.md has no section '## {heading}' (the site's front page needs it)")


def write_sources(src: Path, names: list[str], work: Path) -> None:
    """The Sphinx source tree: front page, lessons, guide pages, benchmarks, notes."""
    import nbformat

    if src.exists():
        shutil.rmtree(src)
    (src / "lessons").mkdir(parents=True)
    (src / "guide").mkdir()
    (src / "_static").mkdir()
    (src / "conf.py").write_text(CONF, encoding="utf-8")
    (src / "_static" / "site.css").write_text(CSS, encoding="utf-8")
    if not (MATHJAX / "tex-chtml.js").exists():
        raise SystemExit(f"{MATHJAX} がありません: make setup（npm ci）で MathJax を入れてから作り直してください")
    # the TeX input and CommonHTML output with their fonts and extensions; not the SVG, MathML or speech builds
    shutil.copytree(MATHJAX, src / "_static" / "mathjax",
                    ignore=shutil.ignore_patterns("sre", "svg", "*svg*.js", "mml-*.js", "tex-mml-*.js", "*-full*.js",
                                                  "node-main.js"))
    for name in names:
        nb = nbformat.read(work / "executed" / f"{name}.ipynb", as_version=4)
        nb.cells.insert(1, nbformat.v4.new_markdown_cell(SITE_NOTE.replace("](get_the_course.md)", "](../get_the_course.md)")))
        nbformat.write(nb, src / "lessons" / f"{name}.ipynb")
    guide_pages = []
    sections = _sections(GUIDE.read_text(encoding="utf-8"))
    intro = sections[0][1]
    for i, (title, text) in enumerate(sections[1:], 1):
        page = f"guide/{i:02d}"
        guide_pages.append(page)
        (src / f"{page}.md").write_text("#" + text.lstrip()[2:] if text.startswith("## ") else text, encoding="utf-8")
    (src / "guide" / "index.md").write_text(
        intro + "\n```{toctree}\n:maxdepth: 1\n\n" + "\n".join(p.split("/")[1] for p in guide_pages) + "\n```\n",
        encoding="utf-8")
    shutil.copy(work / "release" / "glossary.md", src / "glossary.md")   # 用語と記号 (as committed: the fresh release)
    for doc in ("benchmarks.md", "site.md"):
        if (ROOT / "docs" / doc).exists():
            shutil.copy(ROOT / "docs" / doc, src / doc)
    images = ROOT / "docs" / "images"
    if images.is_dir():
        shutil.copytree(images, src / "images")
    (src / "get_the_course.md").write_text(
        "# コースの入手\n\n"
        "各レッスンのページ右上のダウンロードボタンで、そのノートブック（.ipynb、実行結果つき）を保存できます。"
        "コース全体を手元で動かすには、リポジトリを取得して次を実行します（Python 3.11 以上と make だけで動きます）。\n\n"
        "```bash\nmake lab    # .venv を作って依存を入れ、course/ を JupyterLab で開く\n```\n\n"
        "ノート PC に配る一式（zip）は `make learner-bundle` で dist/ にできます（講師ガイドの「ワークショップの進行表」）。\n",
        encoding="utf-8")
    lessons = "\n".join(f"lessons/{n}" for n in names)
    (src / "index.md").write_text(
        "# RAG か ロングコンテキストか — 測って決めるための Jupyter コース\n\n"
        + _readme_section("コースの地図").split("\n", 1)[1]
        + "\n各レッスンは、受講者用のノートブックをオフラインで実行した結果です。\n\n"
        "```{toctree}\n:caption: レッスン\n:maxdepth: 1\n\n" + lessons + "\nglossary\n```\n\n"
        "```{toctree}\n:caption: 講師と開発者へ\n:maxdepth: 1\n\nget_the_course\nguide/index\n"
        + "".join(f"{d[:-3]}\n" for d in ("benchmarks.md", "site.md") if (src / d).exists()) + "```\n",
        encoding="utf-8")


def sphinx_build(src: Path, out: Path) -> None:
    if out.exists():
        shutil.rmtree(out)
    # run in the source folder: myst-nb writes its jupyter_execute/ folder of outputs in the working folder
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", "-j", "auto", str(src), str(out)],
                          capture_output=True, text=True, cwd=src)
    if proc.returncode:
        raise SystemExit("sphinx-build failed:\n" + proc.stdout[-3000:] + proc.stderr[-3000:])
    shutil.rmtree(out / ".doctrees", ignore_errors=True)


def secrets_of_sources(release: Path | None = None) -> set[str]:
    """Lines of the source notebooks' solution, hidden-test and rubric regions that a learner
    never sees: lines that also appear in the released notebooks (``release``, default: one generated
    now from solutions/; never the checkout's course/, which may hold a learner's answers), or in
    ctxlab's own code (a traceback in an output quotes it), are left out."""
    import nbformat

    if release is None:
        with tempfile.TemporaryDirectory(prefix="ctxlab-site-release-") as tmp:
            fresh_release(Path(tmp) / "course", ROOT)
            return secrets_of_sources(Path(tmp) / "course")
    released = "\n".join(p.read_text(encoding="utf-8") for p in Path(release).glob("*/*.ipynb"))
    released_lines = {json.loads(f'"{m}"').strip() for m in re.findall(r'^\s*"((?:[^"\\]|\\.)*)"', released, re.M)}
    released_lines |= {line.strip() for p in (ROOT / "ctxlab").rglob("*.py")
                       for line in p.read_text(encoding="utf-8").splitlines()}
    out = set()
    for path in sorted((ROOT / "solutions").glob("*/*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for begin, end in REGIONS:
            out |= {line for line in secret_lines(nb, begin, end, shortest=12) if line not in released_lines}
    return out


def _lines_of(path: Path) -> set[str]:
    """The stripped lines a reader sees in ``path``: an HTML page without its tags (a highlighted
    code line is split into many spans), a notebook's cell sources and text outputs, other text as is."""
    text = path.read_text(encoding="utf-8", errors="ignore")
    if path.suffix == ".html":
        text = html.unescape(re.sub(r"<[^>]+>", "", text))
    elif path.suffix == ".ipynb":
        try:
            nb = json.loads(text)
            parts = []
            for cell in nb.get("cells", []):
                parts.append("".join(cell.get("source", "")))
                for out in cell.get("outputs", []):
                    parts.append("".join(out.get("text", "")))
                    parts += ["".join(v) for k, v in out.get("data", {}).items() if k.startswith("text/")]
            text = "\n".join(parts)
        except (ValueError, AttributeError):
            pass
    return {line.strip() for line in text.splitlines()}


def answer_leaks(site: Path, release: Path | None = None) -> list[str]:
    """Where the built ``site`` holds an answer: a line of a solution, a hidden test or a rubric
    of the source notebooks (as a whole line of what a reader sees), or the knowledge check's key
    in any recoverable form."""
    secrets = secrets_of_sources(release)
    found = []
    for path in sorted(p for p in site.rglob("*") if p.is_file() and p.suffix in TEXT_SUFFIXES):
        hits = sorted(secrets & _lines_of(path))
        if hits:
            found.append(f"{path.relative_to(site)}: holds {hits[0]!r}")
    bank = graded_bank(ROOT)
    if bank is not None:
        found += [f"the knowledge check's key: {leak}" for leak in key_leaks([site], bank)]
    return found


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        for key, value in attrs:
            if key in ("href", "src") and value:
                self.links.append(value)


def broken_links(site: Path) -> list[str]:
    """Internal links (href/src) of the site's pages whose target file does not exist."""
    out = []
    for page in sorted(site.rglob("*.html")):
        if "_static" in page.relative_to(site).parts:   # the theme's template fragments, not pages
            continue
        parser = _Links()
        parser.feed(page.read_text(encoding="utf-8", errors="ignore"))
        for link in parser.links:
            url = urlparse(link)
            if url.scheme or url.netloc or link.startswith(("#", "mailto:", "data:", "javascript:")):
                continue
            target = (page.parent / unquote(url.path)).resolve() if url.path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                out.append(f"{page.relative_to(site)} → {link}")
    return sorted(set(out))


def build(out: Path, work: Path) -> dict[str, float]:
    """Generate a fresh learner release into ``work/release`` (from solutions/: whatever a learner
    left in course/ is never published), execute it, write the Sphinx sources and build ``out``."""
    times = {}
    t0 = time.perf_counter()
    release = work / "release"
    shutil.rmtree(release, ignore_errors=True)
    fresh_release(release, ROOT)
    names, took = execute_lessons(work, release)
    times["execute"] = time.perf_counter() - t0
    times.update({f"execute {n}": s for n, s in took.items()})
    t1 = time.perf_counter()
    write_sources(work / "src", names, work)
    sphinx_build(work / "src", out)
    times["sphinx"] = time.perf_counter() - t1
    return times


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "site")
    ap.add_argument("--work", type=Path, default=ROOT / "build" / "site")
    ap.add_argument("--check", action="store_true", help="search the built site for answers and broken links")
    ap.add_argument("--check-only", action="store_true", help="check an existing site without building it")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    if not args.check_only:
        times = build(args.out.resolve(), args.work.resolve())
        reused = [k[8:] for k, v in times.items() if k.startswith("execute ") and v == 0]
        print(f"site: {args.out}  (lessons executed in {times['execute']:.1f} s"
              f"{f', {len(reused)} reused' if reused else ''}; sphinx {times['sphinx']:.1f} s; "
              f"total {time.perf_counter() - t0:.1f} s)")
    if args.check or args.check_only:
        release = args.work.resolve() / "release"
        problems = answer_leaks(args.out, release if release.exists() and not args.check_only else None) + [f"broken link: {b}" for b in broken_links(args.out)]
        if problems:
            print("the site fails its checks:\n  - " + "\n  - ".join(problems[:40]), file=sys.stderr)
            return 1
        print("checked: no solution, hidden test, rubric or key; every internal link resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main())
