"""What a lesson costs on the real API, the learner's choices for a small budget, and where each figure comes from.

One line in a lesson's first code cell, ``online.show_cost("08_measure", client)``, prints

* what running the lesson top to bottom on the real API costs on the chosen model: the figure of
  the measured table ``data/lesson_costs.json`` (written by ``tools/lesson_costs.py``, which runs
  every solution notebook online against a local HTTP stand-in that serves the sandbox); offline
  it prints what the same run would cost;
* which of the lesson's results mean something only on the real API (:data:`NEEDS_API`), so a
  learner with a small budget spends where it teaches.

A learner with a small budget has two knobs besides ``CTXLAB_BUDGET_USD`` (:mod:`ctxlab.api.budget`),
both read when the kernel starts or in the first cell:

* ``CTXLAB_MODEL``: the model that answers lesson 08's 30 questions (:func:`lesson_model`; default
  the lesson's own). Other lessons keep the model their demonstration is about;
* ``CTXLAB_QUESTIONS=N``: online, each of lesson 08's runs and its position sweep asks at most N
  questions, spread over the categories (:func:`limit_questions`). Offline and while grading all
  questions are asked.

:func:`source_line` and :func:`simulated_note` say where a printed figure comes from (the real API
or the sandbox's simulation), so every table can say its source in one line.
"""
from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass
from typing import Sequence, TypeVar

from ctxlab._paths import DATA_DIR
from ctxlab.api._ledger import LEDGER, usd
from ctxlab.api.client import is_offline, mode_line
from ctxlab.costs import pricing
from ctxlab.sandbox import ANSWER_MARKER

__all__ = ["MODEL_ENV", "LESSON_MODEL", "QUESTIONS_ENV", "price_line", "COSTS_PATH", "NEEDS_API", "LessonCost", "lesson_model", "question_limit",
           "limit_questions", "lesson_costs", "lesson_cost", "cost_line", "show_cost", "source_line", "response_source",
           "simulated_note"]

MODEL_ENV = "CTXLAB_MODEL"
#: the model lessons 06-08 answer their questions with when CTXLAB_MODEL is unset, and the column of the
#: measured cost table a lesson shows by default: the model the lessons price with (pricing.DEFAULT_MODEL).
#: Changing it means measuring the table again (tools/lesson_costs.py).
LESSON_MODEL = pricing.DEFAULT_MODEL
QUESTIONS_ENV = "CTXLAB_QUESTIONS"
COSTS_PATH = DATA_DIR / "lesson_costs.json"
T = TypeVar("T")

#: per lesson: the results that need the real API to mean anything (empty: none)
NEEDS_API = {
    "00_start_here": "なし（数字は価格表と推定のトークン数から計算します）",
    "01_count_tokens": "count_tokens のトークン数（実 API は実際のトークナイザーで数えます。count_tokens は無料）",
    "02_pricing": "なし（料金は価格表から計算します）",
    "03_prompt_caching": "usage の各欄の実際の値（sandbox は公表された規則どおりに数えるシミュレーションです）",
    "04_ttl": "なし（TTL の実験は、API キーがあっても時計を進められる sandbox のシミュレーションです）",
    "05_crossover": "なし（API に送るのは無料の count_tokens だけです）",
    "06_metadata_filtering": "絞り込んだ文書に対するモデルの回答",
    "07_citations": "モデルが書く言い換え（パラフレーズ）と、その引用の位置（sandbox は文を抜き出して返すだけです）",
    "08_measure": "30 問の正答率と、位置の掃引（sandbox の抜粋回答は言葉を生成せず、文書の位置も見ません）",
    "09_knowledge_check": "最後の実演の usage の実際の値（03 と同じく、sandbox は規則どおりに数えるシミュレーションです）",
    "10_rag_lab": "Claude が書くチャンクの文脈と、それを使った再現率（オフラインは決まった手順の見出しです）",
    "11_decide": "自社の文書の count_tokens、待ち時間の実測、3 方式の正答率とモデルの判定（オフラインは推定・シミュレーション・測定の計画です）",
}


def lesson_model(default: str | None = None) -> str:
    """The model of a lesson's many questions: ``CTXLAB_MODEL`` when set (checked), else ``default``
    (:data:`LESSON_MODEL` when not given)."""
    raw = os.environ.get(MODEL_ENV, "").strip()
    if not raw:
        return default or LESSON_MODEL
    known = pricing.models()
    if raw not in known:
        raise ValueError(f"{MODEL_ENV}={raw!r} は価格表にないモデルです。次のどれかにしてください: {', '.join(known)}")
    return raw


def question_limit() -> int | None:
    """``CTXLAB_QUESTIONS`` as a positive int, or None when it is not set."""
    raw = os.environ.get(QUESTIONS_ENV, "").strip()
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"{QUESTIONS_ENV} は 1 以上の整数（1 回に聞く質問の数）にしてください。いまの値: {raw!r}")
    return value


def limit_questions(questions: Sequence[T], client, *, category=lambda q: getattr(q, "category", "")) -> list[T]:
    """Online with ``CTXLAB_QUESTIONS=N``: at most N questions, taken in turn from each category.

    The order of the questions is kept. Offline (and while grading) every question is kept:
    the sandbox costs nothing. Prints one line when it drops questions.
    """
    questions = list(questions)
    limit = question_limit()
    if limit is None or is_offline(client) or len(questions) <= limit:
        return questions
    groups: dict[str, list[int]] = {}
    for i, q in enumerate(questions):
        groups.setdefault(str(category(q)), []).append(i)
    chosen: list[int] = []
    while len(chosen) < limit:
        for members in groups.values():
            if members and len(chosen) < limit:
                chosen.append(members.pop(0))
    kept = [questions[i] for i in sorted(chosen)]
    print(f"{QUESTIONS_ENV}={limit}: 実 API の料金を抑えるため、{len(questions)} 問のうち {len(kept)} 問（種類ごとに順に選択）"
          "だけを聞きます。全問を測るには、この変数を外してカーネルを起動し直してください。")
    return kept


# ---------------------------------------------------------------- the measured table


@dataclass(frozen=True)
class LessonCost:
    """One cell of the table: a lesson run online top to bottom on one model."""

    lesson: str
    model: str
    usd: float            #: what the stand-in billed (the sandbox's usage priced with data/pricing.json)
    ceiling_usd: float    #: the same requests with every answer max_tokens long
    requests: int         #: billable requests sent
    models_sent: tuple[str, ...] = ()  #: the models the requests named (a lesson may keep its own)
    questions: int | None = None  #: CTXLAB_QUESTIONS of the run (None: all)


@functools.lru_cache(maxsize=1)
def lesson_costs() -> dict:
    """The measured table (``data/lesson_costs.json``)."""
    try:
        return json.loads(COSTS_PATH.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"{COSTS_PATH} がありません。python tools/lesson_costs.py で作ってください。") from None


def lesson_cost(lesson: str, model: str | None = None, questions: int | None = None) -> LessonCost:
    """The measured cost of ``lesson`` on ``model`` (default: ``CTXLAB_MODEL``, else the table's default model).

    With ``questions`` (default: ``CTXLAB_QUESTIONS``), the run measured with that limit when the
    table has one for the lesson (else the full run).
    """
    table = lesson_costs()
    if lesson not in table["lessons"]:
        raise KeyError(f"{COSTS_PATH.name} has no lesson {lesson!r}: it has {', '.join(table['lessons'])}")
    row = table["lessons"][lesson]
    model = model or os.environ.get(MODEL_ENV, "").strip() or table["default_model"]
    if model not in table["models"]:
        raise ValueError(f"{MODEL_ENV}={model!r} は表にないモデルです。次のどれかにしてください: {', '.join(table['models'])}")
    questions = question_limit() if questions is None else questions
    runs = row["runs"]
    key = f"{model}@{questions}" if questions is not None and f"{model}@{questions}" in runs else model
    cell = runs[key]
    return LessonCost(lesson, model, cell["usd"], cell["ceiling_usd"], cell["requests"],
                      tuple(cell.get("models_sent", ())), questions if "@" in key else None)


def cost_line(lesson: str, client) -> str:
    """Four Japanese lines: the lesson's online cost on the chosen model, its source, what needs the API,
    and the date of the price table every dollar figure of the lesson is computed with."""
    try:
        c = lesson_cost(lesson)
    except (FileNotFoundError, KeyError, ValueError) as e:  # not measured yet (tools/lesson_costs.py runs the lessons)
        return f"このレッスンの料金はまだ測っていません（{e}）。python tools/lesson_costs.py で表を作れます。"
    if c.requests == 0:
        head = "実 API での料金: なし（料金のかかるリクエストを送りません）"
    else:
        models = sorted(c.models_sent, key=lambda m: m != c.model) or [c.model]  # the chosen model first
        scope = f"（{QUESTIONS_ENV}={c.questions}）" if c.questions else ""
        head = (f"実 API での料金の目安{scope}: 約 {usd(c.usd)}（{'・'.join(models)}、{c.requests} 回の呼び出し。"
                f"回答がどれも max_tokens いっぱいなら最大 {usd(c.ceiling_usd)}）")
        if is_offline(client):
            head += " ― オフラインなので料金は発生しません"
        elif c.ceiling_usd > LEDGER.budget():
            head += (f" ― いまの予算 {usd(LEDGER.budget())} では途中で止まり、その先は送りません"
                     "（予算は CTXLAB_BUDGET_USD か budget.set_budget(...) で設定）")
    return (f"{head}\n  出典: {lesson_costs()['source_short']}\n"
            f"実 API でないと意味を持たない結果: {NEEDS_API.get(lesson, 'なし')}\n"
            f"{price_line()}")


def price_line() -> str:
    """The price table the lesson's dollars come from, with its date and the default model."""
    return (f"料金の計算: 価格表 data/pricing.json（{pricing.price_table_date()} 時点。"
            f"既定のモデル {pricing.get_model(pricing.DEFAULT_MODEL).display_name}）")


def banner_line(lesson: str, client) -> str:
    """The one line a lesson opens with: the mode, and what the lesson costs (or would cost) on the real API."""
    try:
        c = lesson_cost(lesson)
    except (FileNotFoundError, KeyError, ValueError):
        c = None
    if is_offline(client):
        line = "モード: オフライン sandbox（料金は発生しません）"
        if c is not None:
            line += ("・このレッスンは実 API でも料金なし" if c.requests == 0
                     else f"・実 API なら約 {usd(c.usd)}（{c.requests} 回の呼び出し）")
        return line
    line = f"モード: 実 API（{pricing.get_model(pricing.DEFAULT_MODEL).display_name} など）"
    if c is not None:
        line += ("・このレッスンは料金のかかるリクエストを送りません" if c.requests == 0
                 else f"・このレッスンの料金の目安 約 {usd(c.usd)}（最大 {usd(c.ceiling_usd)}）")
        if c.requests and c.ceiling_usd > LEDGER.budget():
            line += f" ― 予算 {usd(LEDGER.budget())} を超える分は送りません"
    return line


class Banner:
    """A lesson's opening line; the rest (the mode in full, the cost's source, what needs the API, the price
    table) folded under it in a notebook, printed under it as text."""

    def __init__(self, line: str, details: Sequence[str]):
        self.line, self.details = line, list(details)

    def __str__(self) -> str:
        return "\n".join([self.line] + [f"  {d}" for d in self.details])

    __repr__ = __str__

    def _repr_html_(self) -> str:
        import html

        items = "".join(f"<li>{html.escape(d)}</li>" for d in self.details)
        # mathjax_ignore / tex2jax_ignore: two "$" in the line would be typeset as math
        return (f'<details class="ctxlab-banner mathjax_ignore tex2jax_ignore"><summary>{html.escape(self.line)}'
                f'</summary><ul style="margin:0.2em 0">{items}</ul></details>')


def show_cost(lesson: str, client) -> None:
    """Show a lesson's opening :class:`Banner`: one line (:func:`banner_line`) over the folded details
    (:func:`ctxlab.api.client.mode_line` and :func:`cost_line`)."""
    banner = Banner(banner_line(lesson, client), [mode_line(client)] + cost_line(lesson, client).splitlines())
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # pragma: no cover - IPython comes with the course's requirements
        get_ipython = None
    if get_ipython is not None and get_ipython() is not None:
        display(banner)
    else:
        print(banner)


# ---------------------------------------------------------------- where a figure comes from


def _from_sandbox(item) -> bool | None:
    """True for the sandbox's response or answer, False for the API's, None when ``item`` cannot tell."""
    extra = getattr(item, "model_extra", None)
    if isinstance(extra, dict) and getattr(item, "usage", None) is not None:
        return "sandbox" in extra  # the sandbox adds a ``sandbox`` field to every message it answers
    answer = getattr(item, "answer", None)
    if isinstance(answer, str):
        return answer.startswith(ANSWER_MARKER)
    return None


def source_line(source, model: str | None = None) -> str:
    """``出典: ...`` for a printed table: the real API or the sandbox's simulation.

    ``source`` is the client that made the figures, or what came back: a message, graded
    answers (``.answer``), or a list of them. Responses say themselves where they came from
    (the sandbox marks its messages and answers), so a table built from them is labelled right
    even when the client has changed (e.g. a run that fell back to the sandbox).
    """
    items = source if isinstance(source, (list, tuple)) else [source]
    kinds = {_from_sandbox(x) for x in items} - {None}
    if not kinds:  # a client
        kinds = {is_offline(source)}
    return _label(kinds, model)


def response_source(response, model: str | None = None) -> str | None:
    """:func:`source_line` of a response (message) when it says where it came from, else None."""
    kind = _from_sandbox(response)
    return None if kind is None else _label({kind}, model)


def _label(kinds: set, model: str | None) -> str:
    if kinds == {True}:
        return "出典: オフライン sandbox のシミュレーション（実 API の値ではありません）"
    api = f"実 API（{model}）" if model else "実 API"
    if kinds == {False}:
        return f"出典: {api}の応答"
    return f"出典: {api}の応答と、sandbox のシミュレーション（予算を超えた分）が混在"


def simulated_note(what: str, why: str) -> str:
    """A line for something simulated even with a key: ``{what}は API キーがあってもシミュレーションです（{why}）``."""
    return f"{what}は、API キーがあっても sandbox のシミュレーションです（{why}）。"


# ---------------------------------------------------------------- the table of README and the instructor guide

TABLE_START = "<!-- lesson-costs:start (tools/lesson_costs.py writes this table) -->"
TABLE_END = "<!-- lesson-costs:end -->"


def _cell(run: dict) -> str:
    return "—" if not run["requests"] else f"{usd(run['usd'])}（最大 {usd(run['ceiling_usd'])}）"


def _models_sent(cells: list[dict]) -> str:
    """The models a lesson's runs sent: the fixed ones by name, the column's as CTXLAB_MODEL."""
    sets = [set(c["models_sent"]) for c in cells]
    fixed = set.intersection(*sets) if sets else set()
    varying = bool(set.union(*sets) - fixed) if sets else False
    names = (["CTXLAB_MODEL"] if varying else []) + sorted(fixed)
    return "・".join(names) or "—"


def markdown_table() -> str:
    """Lesson x course model, from :func:`lesson_costs`: cost (ceiling), requests, the models sent."""
    t = lesson_costs()
    models, small = t["models"], t.get("small_questions")
    names = [pricing.get_model(m).display_name for m in models]
    lines = ["| レッスン | " + " | ".join(f"CTXLAB_MODEL={m}" for m in models) + " | 呼び出し | 送ったモデル |",
             "|---|" + "---:|" * len(models) + "---:|---|"]
    totals = [0.0] * len(models)
    for lesson, row in t["lessons"].items():
        runs = row["runs"]
        for key in [None] + ([small] if f"{models[0]}@{small}" in runs else []):
            cells = [runs[m if key is None else f"{m}@{key}"] for m in models]
            if key is None:
                totals = [a + c["usd"] for a, c in zip(totals, cells)]
            label = lesson if key is None else f"{lesson}（{QUESTIONS_ENV}={key}）"
            lines.append(f"| {label} | " + " | ".join(_cell(c) for c in cells)
                         + f" | {cells[0]['requests']} | {_models_sent(cells)} |")
    lines.append("| **全レッスン** | " + " | ".join(f"**{usd(x)}**" for x in totals) + " | | |")
    note = (f"\n出典: {t['source_short']}。測った日 {t['date']}（詳しくは data/lesson_costs.json の source）。"
            f"列は {'、'.join(names)}。「最大」はどの回答も max_tokens いっぱいのときです。"
            "— はお金のかかるリクエストを送らないレッスン（count_tokens は無料）です。")
    return "\n".join(lines) + "\n" + note


def replace_table(text: str) -> str:
    """``text`` with the block between :data:`TABLE_START` and :data:`TABLE_END` set to :func:`markdown_table`."""
    if TABLE_START not in text or TABLE_END not in text:
        raise ValueError(f"the document has no {TABLE_START!r} ... {TABLE_END!r} block")
    head, rest = text.split(TABLE_START, 1)
    _, tail = rest.split(TABLE_END, 1)
    return f"{head}{TABLE_START}\n{markdown_table()}\n{TABLE_END}{tail}"
