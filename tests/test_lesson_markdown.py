"""Money in the lessons' markdown is escaped: JupyterLab's MathJax reads "$5 / $25" as math and
prints "5/25" with the dollar signs gone. An unescaped ``$`` followed by a digit outside code is
an error (write ``\\$5``); math such as ``$k$`` stays as it is."""
from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "solutions").glob("*/*.ipynb")) + sorted((ROOT / "course").glob("*/*.ipynb"))
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
_CODE = re.compile(r"`[^`\n]*`")
_MONEY = re.compile(r"(?<!\\)\$(?=\d)")


def unescaped_money(markdown: str) -> list[str]:
    text = _CODE.sub("", _FENCE.sub("", markdown))
    return [text[max(0, m.start() - 20):m.end() + 20] for m in _MONEY.finditer(text)]


def test_the_check_finds_money_and_leaves_code_and_math_alone():
    assert unescaped_money("RAG は $5 / $25 です") == ["RAG は $5 / $25 です", "RAG は $5 / $25 です"]
    assert unescaped_money(r"月 \$5、`$5` と $k$、式 $k > (w - r)/(1 - r)$") == []
    assert unescaped_money("```\nprint('$5')\n```\nおわり") == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}")
def test_money_in_markdown_is_escaped(path):
    nb = nbformat.read(path, as_version=4)
    found = [(i, hit) for i, c in enumerate(nb.cells) if c.cell_type == "markdown" for hit in unescaped_money(c.source)]
    assert not found, f"unescaped $ before a digit (write \\$): {found[:5]}"


def test_no_dollar_pair_in_markdown_that_jupyterlab_would_read_as_math():
    """JupyterLab typesets text between two ``$`` of a markdown cell as math, escaped (``\\$``) or not, so an amount
    written ``\\$58`` next to another ``\\$`` turns the words between them into italic math. Prose writes amounts
    as 「58 ドル」; a ``$`` stays only in math (a formula between ``$`` signs) and in code spans."""
    root = Path(__file__).resolve().parent.parent
    bad = []
    for path in sorted((root / "solutions").glob("*/*.ipynb")):
        for i, cell in enumerate(nbformat.read(path, as_version=4).cells):
            if cell.cell_type != "markdown":
                continue
            text = re.sub(r"`[^`]*`", "", re.sub(r"```.*?```", "", cell.source, flags=re.S))
            if re.search(r"\\\$|\$\s?\d", text) and len(re.findall(r"\$", text)) >= 2:
                bad.append(f"{path.parent.name} cell {i}: {text.strip()[:80]}")
    assert not bad, "an amount with $ in a markdown cell that holds another $:\n" + "\n".join(bad)
