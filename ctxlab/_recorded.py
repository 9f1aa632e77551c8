"""Lessons 02–10 in the graded build: an exercise's library twin as recorded results, not code.

Where a course function computes what an exercise asks for, the graded build of ctxlab (the graded
laptop kit's wheel and every grading kernel: :mod:`ctxlab.grading.graded_build`) replaces its body by
:func:`lookup`: the results for the inputs the lessons' narrative passes, recorded from the real
function when the build is made (``_data/recorded.pkl``, keyed by a hash of the call's arguments),
and a clear error for any other input. So no answer is in the kernel's site-packages in a form that
can be read, copied or run again (``runpy``, ``importlib``). A checkout and the self-study kit never
use this module.

The inventory (22 autograded exercises; ``twin``: the functions the build records instead of code):

==========================  ==============================================  =====================================
exercise                    library function that computes the same         in the graded build
==========================  ==============================================  =====================================
00 choose_path              (none: the rules are the lesson's)              -
00 cheaper_over_range       costs.compare.compare (a tool the lesson uses)  code (see "needs judgment")
01 usage_verdict            (none)                                          -
01 pick_model               (none: pricing.rates is a tool)                 -
02 cheaper_over_hit_range   (none: costs.compare.compare is a tool)         -
02 implied_hit_rate         (none)                                          -
03 diagnose                 (none: usage_dict is a tool)                    -
03 first_paying_call        costs.formulas.first_paying_call,               twin
                            breakeven_reuses
03 choose_placement         labs._agent_loop.shape_costs,                   twin (a lab's run_conversation and
                            compare_placements, format_comparison           run_usd stay: the measuring tools)
04 ttl_from_log             costs.traffic.model_hits, hit_rate (tools)      code (the answer calls them; 05's
                                                                            compare needs the hit-rate loop)
04 ttl_costs                labs.ttl.day_cost, compare_ttls                 twin
05 min_hit_rate_for_long_  (none: a decision; compare.compare,             code (the answer calls them)
   context                  crossover.fits and crossover_tokens are tools)
05 first_line               costs.crossover.crossover_tokens,               code (the answer calls them)
                            max_tokens_for_ttft (tools)
06 my_filter                labs.metadata_filtering.match (a tool)          code (the answer calls it)
06 pick_bundle              (none: corpus.by_file is a tool)                -
07 locate                   (none)                                          -
07 mismatched               (none)                                          -
08 accuracy_by_method       labs.measure.by_method, table,                  twin
                            evaluation.levels.accuracy,
                            evaluation.uncertainty.accuracy_interval
08 decide                   (none: same rules as 00, the learner's own)     -
10 rrf                      retrieval.fusion.rrf                            twin
10 one_minus_recall_at_k    retrieval.metrics.fact_recall, hit_recall,      twin
                            fact_coverage, recall_curve, recall_at_k,
                            mean_recall_at_k
11 choose                   (none)                                          -
11 holds                    (none)                                          -
==========================  ==============================================  =====================================

(09's answers and the written exercises have no library twin.) :data:`EXERCISES` names each twin's
exercise for the error message; ``ctxlab.grading.graded_build.TWINS`` is the list the build uses.
"""
from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
import pickle
from decimal import Decimal
from fractions import Fraction
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path, PurePath
from typing import Any

from ctxlab.errors import CtxlabError

__all__ = ["NotRecorded", "Unkeyable", "key", "lookup", "RECORDED", "EXERCISES"]

#: where the graded build keeps the recorded results (beside data/ and quizzes/)
RECORDED = Path(__file__).resolve().parent / "_data" / "recorded.pkl"

#: what each recorded function is the answer of (for the error message)
EXERCISES = {
    "ctxlab.costs.formulas.first_paying_call": "03_prompt_caching の演習（first_paying_call）",
    "ctxlab.costs.formulas.breakeven_reuses": "03_prompt_caching の演習（first_paying_call）",
    "ctxlab.labs._agent_loop.shape_costs": "03_prompt_caching の演習（choose_placement）",
    "ctxlab.labs._agent_loop.compare_placements": "03_prompt_caching の演習（choose_placement）",
    "ctxlab.labs._agent_loop.format_comparison": "03_prompt_caching の演習（choose_placement）",
    "ctxlab.labs.ttl.day_cost": "04_ttl の演習（ttl_costs）",
    "ctxlab.labs.ttl.compare_ttls": "04_ttl の演習（ttl_costs）",
    "ctxlab.labs.measure.by_method": "08_measure の演習（accuracy_by_method）",
    "ctxlab.labs.measure.table": "08_measure の演習（accuracy_by_method）",
    "ctxlab.evaluation.levels.accuracy": "08_measure の演習（accuracy_by_method）",
    "ctxlab.evaluation.uncertainty.accuracy_interval": "08_measure の演習（accuracy_by_method）",
    "ctxlab.retrieval.fusion.rrf": "10_rag_lab の演習（rrf）",
    "ctxlab.retrieval.metrics.fact_recall": "10_rag_lab の演習（one_minus_recall_at_k）",
    "ctxlab.retrieval.metrics.hit_recall": "10_rag_lab の演習（one_minus_recall_at_k）",
    "ctxlab.retrieval.metrics.fact_coverage": "10_rag_lab の演習（one_minus_recall_at_k）",
    "ctxlab.retrieval.metrics.recall_curve": "10_rag_lab の演習（one_minus_recall_at_k）",
    "ctxlab.retrieval.metrics.recall_at_k": "10_rag_lab の演習（one_minus_recall_at_k）",
    "ctxlab.retrieval.metrics.mean_recall_at_k": "10_rag_lab の演習（one_minus_recall_at_k）",
}


class NotRecorded(CtxlabError, LookupError):
    """The graded build's stand-in for an exercise's answer was called with inputs no lesson uses."""


class Unkeyable(CtxlabError, TypeError):
    """A call's argument has no stable form to key a recorded result by (e.g. an object shown by address)."""


def _plain(value: Any, depth: int = 0) -> Any:
    """A JSON form of an argument that is the same in every process for the same value."""
    if depth > 40:
        raise Unkeyable("arguments nested too deeply")
    d = depth + 1
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return ["float", value.hex()]
    if isinstance(value, (Fraction, Decimal)):
        return ["num", type(value).__name__, str(value)]
    if isinstance(value, enum.Enum):
        return ["enum", type(value).__qualname__, _plain(value.value, d)]
    if isinstance(value, PurePath):
        return ["path", str(value)]
    if isinstance(value, dict):
        items = [[_plain(k, d), _plain(v, d)] for k, v in value.items()]   # in any order (a set may have built it)
        return ["dict", sorted(items, key=lambda kv: json.dumps(kv, sort_keys=True))]
    if isinstance(value, (set, frozenset)):
        return ["set", sorted(json.dumps(_plain(v, d), sort_keys=True) for v in value)]
    if isinstance(value, (list, tuple)):
        return [_plain(v, d) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return ["dc", type(value).__qualname__, {f.name: _plain(getattr(value, f.name), d)
                                                  for f in dataclasses.fields(value)}]
    if hasattr(value, "model_dump"):   # an SDK (pydantic) object, e.g. a response's usage
        return ["model", type(value).__qualname__, _plain(value.model_dump(), d)]
    if hasattr(value, "tolist"):       # numpy arrays and scalars
        return _plain(value.tolist(), d)
    if hasattr(value, "item"):
        return _plain(value.item(), d)
    if hasattr(value, "__dict__") and not callable(value):
        return ["obj", type(value).__qualname__, _plain(vars(value), d)]
    raise Unkeyable(f"{type(value).__name__} has no stable form to key a recorded result by")


#: arguments a twin's key leaves out: 03's shape_costs runs each shape on a fresh sandbox of the ``lab`` it is
#: given (a fresh tag, its own clock), so the result depends on the shape, the documents and the model, not on
#: the lab object (which holds a client and has no stable form)
UNKEYED = {"ctxlab.labs._agent_loop.shape_costs": ("lab",)}


def key(name: str, arguments: dict[str, Any]) -> str:
    """The key of a call: a hash of the function's name and its bound arguments (defaults applied)."""
    arguments = {k: list(v) if isinstance(v, Iterator) else v for k, v in arguments.items()
                 if k not in UNKEYED.get(name, ())}  # an iterator is read once, here
    text = json.dumps([name, _plain(arguments)], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@lru_cache(maxsize=1)
def _table() -> dict[str, bytes]:
    if not RECORDED.exists():
        raise NotRecorded(f"{RECORDED} がありません: 採点つきの講座の一式（make learner-bundle）から入れ直してください")
    with RECORDED.open("rb") as fh:
        return pickle.load(fh)


def _refuse(name: str) -> NotRecorded:
    return NotRecorded(
        f"{name.rsplit('.', 1)[-1]} は {EXERCISES.get(name, '演習')} の答えなので、採点つきの講座の ctxlab には"
        " コードではなく、レッスンが使う入力の結果だけが入っています。この入力の結果はありません。"
        " 演習で書いた自分の関数を使ってください。")


def lookup(name: str, arguments: dict[str, Any]) -> Any:
    """The recorded result of ``name(**arguments)`` (a fresh copy; a recorded error is raised again);
    :class:`NotRecorded` when no lesson passed these inputs."""
    try:
        k = key(name, arguments)
    except Unkeyable:
        raise _refuse(name) from None
    table = _table()
    if k not in table:
        raise _refuse(name)
    kind, value = pickle.loads(table[k])
    if kind == "raise":
        raise value
    return iter(value) if kind == "iter" else value
