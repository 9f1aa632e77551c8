"""The course as a static site (make site, tools/build_site.py): every lesson page with its figures,
the guide as pages, no answer anywhere, every internal link resolving.

The browser half (opening pages, searching in Japanese): tests/browser/test_site.py.
"""
from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

import nbformat
import pytest

import build_site
from ctxlab.grading.release import assignments, graded_bank

ROOT = Path(__file__).resolve().parent.parent
LESSONS = assignments(ROOT)


def test_every_lesson_page_exists_with_its_figures(built_site):
    executed = ROOT / "build" / "site" / "executed"
    for name in LESSONS:
        page = built_site / "lessons" / f"{name}.html"
        assert page.exists(), f"no page for {name}"
        html = page.read_text(encoding="utf-8")
        nb = nbformat.read(executed / f"{name}.ipynb", as_version=4)
        title = next(c.source for c in nb.cells if c.cell_type == "markdown").splitlines()[0].lstrip("# ").strip()
        assert title.split(":")[0] in html, f"{name}: the page lacks the lesson's title {title!r}"
        figures = sum("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code" for o in c.outputs)
        shown = len(re.findall(r'<img[^>]+src="\.\./_images/', html))
        assert shown >= figures, f"{name}: {figures} figures in the executed lesson, {shown} on the page"
        for img in re.findall(r'<img[^>]+src="(\.\./_images/[^"]+)"', html):
            assert (page.parent / img).resolve().stat().st_size > 1000, f"{name}: {img} is empty"
        assert "静的なページでは動かず" in html, f"{name}: the page does not say what it is (an offline run)"
    assert sum(len(re.findall("<img", (built_site / "lessons" / f"{n}.html").read_text(encoding="utf-8")))
               for n in LESSONS) >= 10


def test_the_guide_is_split_into_pages_reachable_from_the_front_page(built_site):
    sections = [t for t, _ in build_site._sections((ROOT / "docs" / "instructor.md").read_text(encoding="utf-8"))[1:]]
    pages = sorted((built_site / "guide").glob("[0-9][0-9].html"))
    assert len(pages) == len(sections) >= 5
    for page, title in zip(pages, sections):
        assert title.split("`")[0].strip()[:12] in page.read_text(encoding="utf-8"), (page.name, title)
    index = (built_site / "index.html").read_text(encoding="utf-8")
    assert "guide/index.html" in index and all(f"lessons/{n}.html" in index for n in LESSONS)
    # previous / next on a lesson page
    lesson = (built_site / "lessons" / f"{LESSONS[1]}.html").read_text(encoding="utf-8")
    assert f"{LESSONS[0]}.html" in lesson and f"{LESSONS[2]}.html" in lesson


def test_no_solution_hidden_test_rubric_or_key_reaches_the_site(built_site, tmp_path):
    assert build_site.answer_leaks(built_site) == []
    # positive controls: a solution line, a hidden test line and the key planted in a copy are found
    secrets = sorted(build_site.secrets_of_sources())
    assert len(secrets) > 50
    copy = tmp_path / "copy"
    shutil.copytree(built_site / "lessons", copy / "lessons")
    page = copy / "lessons" / f"{LESSONS[3]}.html"
    # as a highlighter writes it: every word in its own span, quotes escaped
    spans = " ".join(f'<span class="n">{html.escape(w)}</span>' for w in secrets[0].split(" "))
    page.write_text(page.read_text(encoding="utf-8") + f"<pre>{spans}</pre>", encoding="utf-8")
    assert any(repr(secrets[0]) in hit for hit in build_site.answer_leaks(copy))
    bank = graded_bank(ROOT)
    key = ROOT / "solutions" / "09_knowledge_check" / "knowledge_check.key.yaml"
    shutil.copy(key, copy / "lessons" / "key.txt")
    leaks = build_site.answer_leaks(copy)
    assert bank is not None and any("knowledge check's key" in hit for hit in leaks), leaks


def test_every_internal_link_resolves(built_site, tmp_path):
    assert build_site.broken_links(built_site) == []
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "a.html").write_text('<a href="b.html">b</a><img src="_images/none.png"><a href="https://x.test/">x</a>',
                                 encoding="utf-8")
    assert build_site.broken_links(copy) == ["a.html → _images/none.png", "a.html → b.html"]


def test_an_error_in_a_narrative_cell_stops_the_build(tmp_path, monkeypatch):
    """Only cells tagged raises-exception (an unsolved exercise) may fail: a lesson whose own
    text fails is not published."""
    from nbclient.exceptions import CellExecutionError

    course = tmp_path / "course" / "00_x"
    course.mkdir(parents=True)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# x"), nbformat.v4.new_code_cell("1/0")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, course / "00_x.ipynb")
    (tmp_path / "solutions" / "00_x").mkdir(parents=True)
    nbformat.write(nb, tmp_path / "solutions" / "00_x" / "00_x.ipynb")
    monkeypatch.setattr(build_site, "ROOT", tmp_path)
    (tmp_path / "ctxlab").mkdir()
    (tmp_path / "data").mkdir()
    with pytest.raises(CellExecutionError):
        build_site.execute_lessons(tmp_path / "work", tmp_path / "course")


def test_the_site_holds_nothing_a_learner_left_in_course(built_site, tmp_path, monkeypatch):
    """Issue 39: built from a checkout whose course/ holds a learner's answer, output, written answer, notes,
    .env and README line (tests/dirty_course.py), the site holds none of them: it is built from a release
    generated afresh from solutions/. The lessons' executions are reused from the session's build."""
    from dirty_course import TAG, dirty_checkout

    dirty = dirty_checkout(tmp_path / "checkout")
    work = tmp_path / "work"
    shutil.copytree(ROOT / "build" / "site" / "executed", work / "executed")
    monkeypatch.setattr(build_site, "ROOT", dirty)
    out = tmp_path / "site"
    times = build_site.build(out, work)
    assert all(v == 0 for k, v in times.items() if k.startswith("execute ")), "executions reused (same release)"
    hits = [p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()
            and TAG in p.read_text(encoding="utf-8", errors="ignore")]
    assert hits == []
    assert (out / "lessons" / "03_prompt_caching.html").exists()   # control: the lesson is published
    assert build_site.answer_leaks(out, work / "release") == []


def test_each_lesson_states_the_time_the_learner_time_model_gives(built_site):
    """The time in each lesson's header (core, and with its optional parts), and the course map's totals, come
    from the learner-time model (tools/learner_time.py) on the lessons the site executed (build/site/executed:
    no second execution). tools/course_times.py writes the map and schedules from the headers."""
    import learner_time as lt

    executed = ROOT / "build" / "site" / "executed"
    off, core, total = [], 0.0, 0.0
    for src in sorted((ROOT / "solutions").glob("*/*.ipynb")):
        model = lt.lesson_time(src, executed / src.name)
        said = lt.stated(src)
        core += model.core_min
        total += model.total_min
        assert said is not None, f"{src.parent.name}: no 「**所要時間** 約 N 分」 in its header"
        if abs(said[0] - model.core_min) > lt.TOLERANCE * model.core_min:
            off.append(f"{src.parent.name}: states {said[0]} min, the model gives {model.core_min:.0f}")
        with_optional = said[1] if said[1] is not None else said[0]
        if abs(with_optional - model.total_min) > lt.TOLERANCE * model.total_min:
            off.append(f"{src.parent.name}: states {with_optional} min with its optional parts, the model gives "
                       f"{model.total_min:.0f}")
    assert not off, "\n".join(off)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"核の合計は約 (\d+) 分", readme)
    assert m and abs(int(m.group(1)) - core) <= lt.TOLERANCE * core, (m and m.group(0), core)
    m = re.search(r"任意の部分を含めると約 (\d+) 分", readme)
    assert m and abs(int(m.group(1)) - total) <= lt.TOLERANCE * total, (m and m.group(0), total)
