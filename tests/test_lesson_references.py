"""Every lesson's in-prose references to its own sections point at a heading that exists, and every heading is
a markdown heading (not a comment inside a code cell, where the outline cannot see it).

A section reference is written ``§N`` (``§8・§9`` or ``§8・9`` for several). A bare number followed by the words
of a reference (「7 で扱います」「5 の区間」) is refused: it reads as a reference but nothing checks it.
"""
from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted((ROOT / "solutions").glob("*/*.ipynb"))

HEADING = re.compile(r"^##\s+(\d+)\.\s", re.M)
REF = re.compile(r"§\s?(\d+)((?:\s?・\s?§?\s?\d+)*)")
BARE = re.compile(r"(?<![\d０-９.,@×/\w$%§・-])([1-9]\d?)(?:\s?・\s?[1-9]\d?)*\s?"
                  r"(?:で(?:扱|試|見|測|説明|表示)|の(?:表|区間|McNemar|測定|とおり|判定|2 つ目|図|セル|節))")
COMMENT_HEADING = re.compile(r"^#\s+#{1,3}\s+\S", re.M)


def _cells(path):
    nb = nbformat.read(path, as_version=4)
    return nb.cells


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.parent.name)
def test_section_references_point_at_headings(path):
    cells = _cells(path)
    markdown = "\n".join(c.source for c in cells if c.cell_type == "markdown")
    sections = {int(n) for n in HEADING.findall(markdown)}
    bad = []
    for m in REF.finditer(markdown):
        numbers = [int(m.group(1))] + [int(n) for n in re.findall(r"\d+", m.group(2))]
        bad += [f"{m.group(0)!r}: no section {n} (headings: {sorted(sections)})" for n in numbers if n not in sections]
    bare = [m.group(0) for m in BARE.finditer(markdown)]
    assert not bad, "\n".join(bad)
    assert not bare, f"write section references as §N so they are checked: {bare}"


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.parent.name)
def test_no_heading_hides_in_a_code_cell(path):
    hidden = [(i, m.group(0)) for i, c in enumerate(_cells(path)) if c.cell_type == "code"
              for m in COMMENT_HEADING.finditer(c.source)]
    assert not hidden, f"markdown headings inside code cells (make them markdown cells): {hidden}"


def test_the_checks_catch_what_they_are_for():
    assert BARE.search("旧版が混ざると何が起きるかは 6 で試します。")
    assert BARE.search("この節の 7・8 で測ったこと") and BARE.search("5 の区間の広さ")
    assert not BARE.search("recall@20 で測ります") and not BARE.search("文字数 × 1 で計算") and not BARE.search("§6 の区間")
    assert [m.group(1) for m in REF.finditer("§8・§9 と §3")] == ["8", "3"]
    assert COMMENT_HEADING.search("x = 1\n#\n# ## 4. 3 段階の自動採点\n") and not COMMENT_HEADING.search("# %% nbgrader\n# plain")
