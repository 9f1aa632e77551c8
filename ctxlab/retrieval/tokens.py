"""Japanese tokenisation for search: morphological lemmas (fugashi + unidic-lite) and bigrams.

:func:`tokenize` runs a real morphological analyzer, MeCab through ``fugashi`` with the
``unidic-lite`` dictionary. Each word becomes its **lemma** (dictionary form, e.g.
「繰り越せ」 -> 「繰り越す」, so a question and a rule written in another inflection
still match), with UniDic's English gloss removed (「データ-data」 -> 「データ」); words
without a lemma (unknown words such as product codes) keep their surface form.
Punctuation and symbols (UniDic 補助記号) and whitespace (空白) are dropped; particles
stay (BM25's IDF gives words found everywhere, such as 「の」, almost no weight).
Input is folded first (:func:`ctxlab._text.fold`: NFKC, so full-width digits and Latin
letters and half-width kana are one form, and lower case). One tagger is created on first
use and reused (MeCab writes only part of speech and lemma, and a regular expression reads
them: about 0.3 s for 200,000 characters). Repeated short texts (sentences, queries) are cached.

:func:`bigram_tokens` is a second tokenisation that needs no dictionary (character bigrams);
:func:`line_tokens` is :func:`tokenize` computed line by line, so that lines shared by two
chunkings are analysed once.
"""
from __future__ import annotations

import hashlib
import os
import re
import tempfile
import threading
from functools import lru_cache
from typing import Any, Iterable

from ctxlab import _text

__all__ = ["tokenize", "tokenize_many", "line_tokens", "bigram_tokens", "TOKENIZER_DESCRIPTION", "tagged",
           "content_terms", "content_nouns", "FUNCTION_POS", "QUESTION_NOUNS"]

TOKENIZER_DESCRIPTION = (
    "fugashi (MeCab) + unidic-lite; lemma (dictionary form) of each word, "
    "punctuation/symbols and whitespace dropped, NFKC-normalized, lower-cased"
)


# UniDic part-of-speech (pos1) values that are not words for search purposes.
_DROP_POS = frozenset({"補助記号", "空白"})

# A MeCab output format with only what we need: "pos1<TAB>lemma" per word (UniDic
# feature 7), and the surface for unknown words, which have no lemma.
_RC_TEXT = (
    "node-format-ctxlab = %f[0]\\t%f[7]\\n\n"
    "unk-format-ctxlab = %f[0]\\t%m\\n\n"
    "eos-format-ctxlab = \\n\n"
    "bos-format-ctxlab = \n"
)

_NONWORD = re.compile(r"[\W_]+")

_tagger_lock = threading.Lock()
_tagger: Any = None
_tagger_kind: str = ""


def _rc_file(text: str) -> str:
    """A MeCab resource file holding ``text`` (an output format), written once per content."""
    rc_path = os.path.join(tempfile.gettempdir(), "ctxlab-mecabrc-" + hashlib.sha1(text.encode()).hexdigest()[:10])
    if not os.path.exists(rc_path):
        tmp = f"{rc_path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, rc_path)
    return rc_path


def _make_tagger():
    """Create the tagger once: a fast formatted-output tagger, else fugashi's default."""
    global _tagger, _tagger_kind
    import fugashi
    import unidic_lite

    try:
        rc_path = _rc_file(_RC_TEXT)
        tagger = fugashi.GenericTagger(f'-r "{rc_path}" -Octxlab -d "{unidic_lite.DICDIR}"')
        probe = tagger.parse("有給休暇を繰り越した")
        if not probe.startswith("名詞\t有給\n") or "動詞\t繰り越す\n" not in probe:
            # the custom format did not take effect
            raise RuntimeError("unexpected MeCab output format")
        _tagger, _tagger_kind = tagger, "formatted"
    except Exception:  # pragma: no cover - fallback when no temp dir is writable
        _tagger, _tagger_kind = fugashi.Tagger(), "nodes"
    return _tagger


def _clean_lemma(surface: str, lemma: str) -> str:
    if not lemma or lemma == "*":
        return surface
    dash = lemma.find("-")
    if dash > 0 and lemma[dash + 1 :].isascii():
        lemma = lemma[:dash]
    return lemma or surface


# rows of words to keep (not punctuation/symbols or whitespace): capture the lemma
_KEEP = re.compile(r"^(?!補助記号\t|空白\t)[^\t\n]*\t([^\t\n]+)$", re.M)
# UniDic glosses of loanwords: 「データ-data」 -> 「データ」
_GLOSS = re.compile(r"(?<=[^\x00-\x7f])-[ -~]+$", re.M)


def _tokenize_line(line: str) -> list[str]:
    """Tokens of one normalized, lower-cased line (no newline inside). Caller holds the lock."""
    tagger = _tagger if _tagger is not None else _make_tagger()
    if _tagger_kind == "formatted":
        out = tagger.parse(line)
        if "-" in out:
            out = _GLOSS.sub("", out)
        # a one-character token that is not a letter, digit or kana/kanji is a symbol
        return [t for t in _KEEP.findall(out) if len(t) > 1 or t.isalnum()]
    toks = []  # pragma: no cover - fallback path
    for node in tagger(line):  # pragma: no cover
        feat = node.feature
        if getattr(feat, "pos1", None) in _DROP_POS or not node.surface.strip():
            continue
        tok = _clean_lemma(node.surface, getattr(feat, "lemma", None) or "")
        if not _NONWORD.fullmatch(tok):
            toks.append(tok)
    return toks


#: texts shorter than this (sentences, queries, chunks) have their terms remembered
CACHE_BELOW_CHARS = 5_000


def _analyse(text: str) -> tuple[str, ...]:
    norm = _text.fold(text)
    result: list[str] = []
    with _tagger_lock:
        for line in norm.splitlines():
            if line and not line.isspace():
                result.extend(_tokenize_line(line))
    return tuple(result)


_cached = lru_cache(maxsize=50_000)(_analyse)


def terms(text: str) -> tuple[str, ...]:
    """The search terms of a text as a tuple (remembered for short texts; shared, so never mutated)."""
    return _cached(text) if len(text) < CACHE_BELOW_CHARS else _analyse(text)


def clear_cache() -> None:
    """Forget the remembered terms (benchmarks measure cold tokenization with it)."""
    _cached.cache_clear()


def tokenize(text: str) -> list[str]:
    """Split Japanese (and mixed) text into search terms with a morphological analyzer.

    >>> tokenize("有給休暇の繰越上限")
    ['有給', '休暇', 'の', '繰り越し', '上限']

    See the module docstring for the choices (lemmas, what is dropped).
    """
    if not isinstance(text, str):
        raise TypeError(f"tokenize() needs a str, got {type(text).__name__}")
    return list(terms(text))


def tokenize_many(texts: Iterable[str]) -> list[list[str]]:
    """Tokenize several texts (same rules as :func:`tokenize`)."""
    return [list(terms(t)) for t in texts]


# ---------------------------------------------------------------- parts of speech

#: UniDic pos1 of function words: particles (の, は, を, って) and auxiliaries (ます, です, たい)
FUNCTION_POS = ("助詞", "助動詞")
#: nouns that ask rather than name (何, いくら, いつ) and formal nouns (とき, こと, もの, ため):
#: not content for :func:`content_nouns`
QUESTION_NOUNS = frozenset({"何", "幾ら", "いつ", "何時", "何日", "何分", "何年", "何回", "どれ", "どこ", "誰",
                            "何故", "幾つ", "どなた", "時", "事", "物", "為", "方", "所", "訳", "場合"})

_RC_POS = (
    "node-format-ctxpos = %f[0]\\t%f[1]\\t%f[7]\\n\n"
    "unk-format-ctxpos = %f[0]\\t%f[1]\\t%m\\n\n"
    "eos-format-ctxpos = \\n\n"
    "bos-format-ctxpos = \n"
)
_POS_ROW = re.compile(r"^([^\t\n]*)\t([^\t\n]*)\t([^\t\n]+)$", re.M)
_pos_tagger: Any = None


def _tag_line(line: str) -> tuple[tuple[str, str, str], ...]:
    """(pos1, pos2, lemma) of each word of one folded line. Caller holds the lock."""
    global _pos_tagger
    if _pos_tagger is None:
        import fugashi
        import unidic_lite

        _pos_tagger = fugashi.GenericTagger(f'-r "{_rc_file(_RC_POS)}" -Octxpos -d "{unidic_lite.DICDIR}"')
    out = _GLOSS.sub("", _pos_tagger.parse(line))
    return tuple((a, b, lemma) for a, b, lemma in _POS_ROW.findall(out)
                 if a not in _DROP_POS and (len(lemma) > 1 or lemma.isalnum()))


@lru_cache(maxsize=50_000)
def _tagged_line(line: str) -> tuple[tuple[str, str, str], ...]:
    with _tagger_lock:
        return _tag_line(line)


def tagged(text: str) -> list[tuple[str, str, str]]:
    """``(pos1, pos2, lemma)`` of each search word of ``text`` (UniDic parts of speech).

    The words and lemmas are those of :func:`tokenize` (same folding, punctuation and whitespace
    dropped), with their part of speech: ``tagged("有給の繰越")`` ->
    ``[('名詞', '普通名詞', '有給'), ('助詞', '格助詞', 'の'), ('名詞', '普通名詞', '繰り越し')]``.
    """
    if not isinstance(text, str):
        raise TypeError(f"tagged() needs a str, got {type(text).__name__}")
    return [w for line in _text.fold(text).splitlines() if line and not line.isspace() for w in _tagged_line(line)]


def content_terms(text: str) -> list[str]:
    """:func:`tokenize` without function words (:data:`FUNCTION_POS`: particles and auxiliaries).

    >>> content_terms("有給休暇の繰越上限は？")
    ['有給', '休暇', '繰り越し', '上限']
    """
    return [lemma for pos1, _, lemma in tagged(text) if pos1 not in FUNCTION_POS]


def content_nouns(text: str) -> list[str]:
    """The distinct common and proper nouns of ``text`` (lemmas), without :data:`QUESTION_NOUNS`.

    >>> content_nouns("社員食堂は何時から使えますか？")
    ['社員', '食堂']
    """
    out = [lemma for pos1, pos2, lemma in tagged(text)
           if pos1 == "名詞" and pos2 in ("普通名詞", "固有名詞") and lemma not in QUESTION_NOUNS]
    return list(dict.fromkeys(out))


def bigram_tokens(text: str) -> list[str]:
    """Character bigrams of each run of letters/digits (a run of one character is kept as is).

    A second tokenization for Japanese that needs no dictionary: 「繰越上限」 ->
    ['繰越', '越上', '上限']. It matches parts of words that the morphological tokenizer
    keeps whole or lemmatizes differently (「支払日」 and 「支払う」 share 「支払」).
    """
    if not isinstance(text, str):
        raise TypeError(f"bigram_tokens() needs a str, got {type(text).__name__}")
    t = _text.fold(text)
    out: list[str] = []
    for run in _NONWORD.split(t):
        if len(run) == 1:
            out.append(run)
        else:
            out.extend(run[i:i + 2] for i in range(len(run) - 1))
    return out


def line_tokens(text: str) -> list[str]:
    """:func:`tokenize` of ``text``, computed line by line.

    The tokenizer works line by line anyway, so the result is the same; each distinct
    line is tokenized once per process and cached, so two chunkings of the same corpus
    (whose chunks share most of their lines) cost little more than one.
    """
    return [t for line in text.splitlines() for t in tokenize(line)]
