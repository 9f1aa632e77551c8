"""One term per concept: the glossary (course/glossary.md, also a page of the site) lists each term, and the
names of the same concept that the course does not use; no learner-facing text uses one of those."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GLOSSARY = ROOT / "course" / "glossary.md"
#: places where an avoided word means something else (the word, then the phrase that allows it)
OTHER_MEANINGS = {"境目": ("ファイルの境目", "色の境目")}


def glossary_rows() -> list[dict[str, str]]:
    rows, header = [], None
    for line in GLOSSARY.read_text(encoding="utf-8").splitlines():
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if header is None:
            header = cells
        elif not set(line) <= set("|-: "):
            rows.append(dict(zip(header, cells)))
    return rows


def avoided() -> dict[str, str]:
    """avoided word -> the term to use instead."""
    out = {}
    for row in glossary_rows():
        for word in re.split(r"[、,]", row.get("使わない言い方", "")):
            word = word.strip()
            if word and "「" not in word:
                out[word] = row["用語"]
    return out


def learner_texts() -> list[tuple[str, str]]:
    """(where, text) of what a learner reads: the lessons' markdown and code comments, the check questions, the map."""
    out = []
    for nb_path in sorted((ROOT / "course").glob("*/*.ipynb")):
        nb = json.loads(nb_path.read_text(encoding="utf-8"))
        for i, cell in enumerate(nb["cells"]):
            src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            if cell["cell_type"] == "code":
                src = "\n".join(line for line in src.splitlines() if line.lstrip().startswith("#"))
            out.append((f"{nb_path.parent.name} cell {i}", src))
    for path in sorted((ROOT / "quizzes").glob("*.yaml")) + [ROOT / "course" / "README.md"]:
        out.append((str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")))
    return out


def test_the_glossary_defines_every_symbol_of_the_formulas_and_says_where_each_term_is_taught():
    rows = glossary_rows()
    symbols = {row.get("記号", "") for row in rows}
    assert {"k", "ρ", "s", "w", "r", "m0", "E", "h"} <= symbols
    lessons = {p.name[:2] for p in (ROOT / "course").iterdir() if p.is_dir()}
    for row in rows:
        assert row["意味"] and row["初出"] in lessons, row


def test_no_learner_facing_text_uses_a_name_the_glossary_avoids():
    words = avoided()
    assert {"ブレークポイント", "固定バンドル", "交差点", "オンライン", "再現率"} <= set(words)
    found = []
    for where, text in learner_texts():
        for word, term in words.items():
            for m in re.finditer(re.escape(word), text):
                around = text[max(0, m.start() - 8): m.end() + 8]
                if any(ok in around for ok in OTHER_MEANINGS.get(word, ())):
                    continue
                found.append(f"{where}: 「{around.strip()}」 uses {word!r}; the glossary's term is {term!r}")
    assert not found, "\n".join(found[:40])


@pytest.mark.parametrize("planted", ["ブレークポイント", "固定バンドル"])
def test_the_synonym_check_finds_a_planted_synonym(planted, monkeypatch):
    real = learner_texts()
    monkeypatch.setitem(globals(), "learner_texts", lambda: real + [("planted", f"キャッシュの{planted}を置く")])
    with pytest.raises(AssertionError, match=planted):
        test_no_learner_facing_text_uses_a_name_the_glossary_avoids()
