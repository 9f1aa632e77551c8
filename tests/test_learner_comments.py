"""Comments a learner reads in the released lessons' code cells are Japanese (issue 44: learner cells mixed
English and Japanese). Code, identifiers and strings stay as they are; only ``#`` comments are read."""
from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
RELEASED = sorted((ROOT / "course").glob("*/*.ipynb"))
JAPANESE = re.compile(r"[ぁ-んァ-ヶ一-龥]")
ALLOWED = {"YOUR CODE HERE"}


def english_comments(source: str) -> list[str]:
    """``#`` comments with words and no Japanese (tokenized, so a "#" inside a string is no comment)."""
    out = []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return out
    for tok in tokens:
        if tok.type != tokenize.COMMENT:
            continue
        body = tok.string.lstrip("#").strip()
        if (body in ALLOWED or body.startswith(("noqa", "%", "type:")) or JAPANESE.search(body)
                or not re.search(r"[A-Za-z]{3,}", body)):
            continue
        out.append(tok.string)
    return out


def test_the_check_reads_comments_only():
    assert english_comments("x = 1  # the model\ny = '#not a comment'\n# 日本語の注釈\n") == ["# the model"]


@pytest.mark.parametrize("path", RELEASED, ids=lambda p: p.parent.name)
def test_learner_visible_comments_are_japanese(path):
    nb = nbformat.read(path, as_version=4)
    found = [c for cell in nb.cells if cell.cell_type == "code"
             for c in english_comments("\n".join(line for line in cell.source.splitlines() if not line.startswith("%")))]
    assert not found, f"English comments in learner cells: {found[:5]}"
