"""Lessons 03 and 10 in the graded learner kit: an exercise's library twin as recorded results, not code.

Lesson 03's exercise asks for ``first_paying_call`` and lesson 10's for ``rrf``; the course's own
functions (:func:`ctxlab.costs.formulas.first_paying_call`, :func:`ctxlab.retrieval.rrf`) compute the
same answers, and cells of the lessons use them. In the graded kit's wheel (tools/learner_bundle.py)
their code is replaced by :func:`lookup`: the results for the inputs the lessons pass, recorded from
the real functions when the wheel is built (``_data/recorded.json``, keyed by a hash of the inputs),
and a clear error for any other input. So the answer is not in the learner's site-packages in a form
that can be read or copied. A checkout and the self-study kit never use this module.
"""
from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from ctxlab.errors import CtxlabError

__all__ = ["NotRecorded", "key", "lookup", "RECORDED"]

#: where the graded wheel keeps the recorded results (beside data/ and quizzes/)
RECORDED = Path(__file__).resolve().parent / "_data" / "recorded.json"

#: what each recorded function is the answer of (for the error message)
EXERCISES = {
    "ctxlab.costs.formulas.first_paying_call": "03_prompt_caching の演習 2（first_paying_call）",
    "ctxlab.retrieval.fusion.rrf": "10_rag_lab の演習（rrf）",
}


class NotRecorded(CtxlabError, LookupError):
    """The graded kit's stand-in for an exercise's answer was called with inputs no lesson uses."""


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) or (hasattr(value, "__iter__") and not isinstance(value, (str, bytes))):
        return [_plain(v) for v in value]
    if hasattr(value, "item"):   # a numpy scalar
        return value.item()
    return value


def key(name: str, *args: Any) -> str:
    """The key of a call: a hash of the function's name and its inputs as JSON."""
    text = json.dumps([name, _plain(args)], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    if not RECORDED.exists():
        raise NotRecorded(f"{RECORDED} がありません: 採点つきの講座の一式（make learner-bundle）から入れ直してください")
    return json.loads(RECORDED.read_text(encoding="utf-8"))


def lookup(name: str, *args: Any) -> Any:
    """The recorded result of ``name(*args)``; :class:`NotRecorded` when no lesson passed these inputs."""
    table = _table()
    k = key(name, *args)
    if k not in table:
        raise NotRecorded(
            f"{name.rsplit('.', 1)[-1]} は {EXERCISES.get(name, '演習')} の答えなので、採点つきの講座の ctxlab には"
            " コードではなく、レッスンが使う入力の結果だけが入っています。この入力の結果はありません。"
            " 演習で書いた自分の関数を使ってください。")
    return table[k]
