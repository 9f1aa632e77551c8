"""Japanese text helpers shared by every module: display width, headings of regulations, normalisation.

* Display width for aligned tables in a monospace terminal or notebook output: full-width
  characters take two columns (``wcwidth``).
* The heading patterns of Japanese regulations (第3章, 第2節, 第12条, 第4条の2, 附則, a caption
  line such as （目的）), with kanji numerals including 千 and 〇. Chunking, the sandbox's
  sentence analysis and the corpus generator all use these, so they agree on what an article is.
* ``fold``: NFKC (全角/半角) and lower case, for matching keywords and tokens.
"""
from __future__ import annotations

import re
import unicodedata

from wcwidth import wcswidth

# ---------------------------------------------------------------- display width


def width(s: str) -> int:
    """Columns ``s`` takes in a monospace font (a full-width character counts 2)."""
    w = wcswidth(s)
    return w if w >= 0 else len(s)  # control characters: count one column each


def pad(s: str, columns: int, right: bool = False) -> str:
    """``s`` padded with spaces to ``columns`` display columns (``right=True`` aligns right)."""
    gap = " " * max(0, columns - width(s))
    return gap + s if right else s + gap


# ---------------------------------------------------------------- headings of regulations

#: digits of article numbers: Arabic (half and full width) and kanji numerals
NUM = "0-9０-９一二三四五六七八九十百千〇"
WS = " \t\u3000"
CHAPTER = re.compile(rf"^第[{NUM}]+章(?=[\s　]|$)")
SECTION = re.compile(rf"^第[{NUM}]+節(?=[\s　]|$)")
#: 「第12条」「第4条の2」at the start of a line, followed by a space or the end of the line
ARTICLE = re.compile(rf"^(第[{NUM}]+条(?:の[{NUM}]+)?)(?=[\s　]|$)")
#: 「第6条（繰越し）」: an article whose caption follows the number on the same line
ARTICLE_INLINE = re.compile(rf"^(第[{NUM}]+条(?:の[{NUM}]+)?)([（(][^（）()]{{1,40}}[）)])")
#: an article heading that stands alone as a sentence: 「第6条」 or 「第6条（繰越し）」
ARTICLE_HEAD = re.compile(rf"^第[{NUM}]+条(の[{NUM}]+)?[\s　]*([（(][^（）()]*[）)])?$")
#: the start of an article whose text follows on the same line: 「第6条 年次有給休暇は…」
ARTICLE_START = re.compile(rf"^第[{NUM}]+条(の[{NUM}]+)?[\s　]")
#: chapter, section or supplementary provisions as one heading
CHAPTER_OR_SECTION = re.compile(rf"^(第[{NUM}]+[章節]|附[\s　]*則)")
SUPPLEMENTARY = re.compile(r"^附[\s　]*則")
#: a caption line: 「（目的）」
CAPTION = re.compile(r"^[（(][^（）()]{1,40}[）)][\s　]*$")
#: splits a whole text before each article heading (multiline), keeping the heading
ARTICLE_SPLIT = re.compile(rf"(?m)^(第[{NUM}]+条)")


# ---------------------------------------------------------------- normalisation


def fold(text: str) -> str:
    """NFKC (full width to half width, compatibility forms) and lower case."""
    return unicodedata.normalize("NFKC", text).lower()
