"""A widget for a person to grade answers: one at a time, three buttons, agreement with the machine.

::

    from ctxlab.widgets.grader import Grader
    g = Grader(graded)        # graded: the Graded records of ctxlab.labs.measure.run()
    g                         # shows the widget (the last expression of a cell)
    g.human                   # {(question_id, method): "correct" | "partial" | "wrong"}
    g.agreement()             # ctxlab.labs.measure.Agreement with the automatic grades

The person sees the question, the reference answer and the answer, and grades it before
the automatic grade of that answer is shown (so the machine does not anchor the person);
with ``blind=True`` (default) the method that wrote the answer is hidden until then too.
A grade reveals both on the same answer; 「次へ →」 then moves to the next answer not yet graded.
The grades live in the kernel (``g.human``); nothing blocks, so a notebook with this widget
runs headless and under nbgrader. :meth:`Grader.grade` does what a button does, for code
and tests.
"""
from __future__ import annotations

import dataclasses
import html
from typing import Iterable

import ipywidgets as w

from ctxlab.evaluation import LEVELS, Agreement, Graded, agreement
from ctxlab.widgets._fallback import TextFallback, how_to

LABELS = {"correct": "正しい", "partial": "惜しい", "wrong": "違う"}
STYLES = {"correct": "success", "partial": "warning", "wrong": "danger"}


class Grader(TextFallback):
    """Grade ``graded`` answers by hand; see the module docstring."""

    def __init__(self, graded: Iterable[Graded], *, human: dict | None = None, blind: bool = True):
        self.items: list[Graded] = list(graded)
        #: hide which method wrote an answer until the person has graded it
        self.blind = blind
        if not self.items:
            raise ValueError("nothing to grade: pass the Graded records of ctxlab.labs.measure.run()")
        keys = [self.key(g) for g in self.items]
        if len(set(keys)) != len(keys):
            raise ValueError("two answers share (question id, method): grade one run at a time")
        #: the person's grades, by (question id, method)
        self.human: dict[tuple[str, str], str] = dict(human or {})
        self.index = 0
        self._last = ""

        self._header = w.HTML()
        self._question = w.HTML()
        self._answer = w.HTML()
        self._buttons = {lv: w.Button(description=LABELS[lv], button_style=STYLES[lv],
                                      layout=w.Layout(width="7em")) for lv in LEVELS}
        for lv, b in self._buttons.items():
            b.on_click(lambda _b, lv=lv: self.grade(lv))
        self._prev = w.Button(description="← 前へ", layout=w.Layout(width="6em"))
        self._next = w.Button(description="次へ →", layout=w.Layout(width="6em"))
        self._prev.on_click(lambda _b: self.go(self.index - 1))
        self._next.on_click(lambda _b: self.go(self._next_ungraded(self.index) if self.current_graded
                                                else self.index + 1))
        self._feedback = w.HTML()
        self._summary = w.HTML()
        self.widget = w.VBox([
            self._header, self._question, self._answer,
            w.HBox([*self._buttons.values(), w.HTML("&nbsp;&nbsp;"), self._prev, self._next]),
            self._feedback, self._summary,
        ], layout=w.Layout(max_width="52em"))
        self._render()

    # -------------------------------------------------------------- state

    @staticmethod
    def key(g: Graded) -> tuple[str, str]:
        return (g.question.id, g.method)

    @property
    def current(self) -> Graded:
        return self.items[self.index]

    @property
    def current_graded(self) -> bool:
        return self.key(self.current) in self.human

    def grade(self, level: str) -> None:
        """Record ``level`` for the current answer and reveal, on that answer, the machine's grade and the method
        (the person reads them before moving on with 「次へ →」)."""
        if level not in LEVELS:
            raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
        g = self.current
        self.human[self.key(g)] = level
        same = "一致" if level == g.level else "不一致"
        self._last = (f"{g.question.id}（{g.method}）: あなた「{LABELS[level]}」・自動「{LABELS[g.level]}」→ {same}"
                      "　次の回答は「次へ →」")
        self._render()

    def go(self, index: int) -> None:
        """Show answer ``index`` (clamped to the list)."""
        self.index = max(0, min(len(self.items) - 1, index))
        self._render()

    def _next_ungraded(self, start: int) -> int:
        n = len(self.items)
        for step in range(1, n + 1):
            i = (start + step) % n
            if self.key(self.items[i]) not in self.human:
                return i
        return min(start + 1, n - 1)

    def agreement(self) -> Agreement:
        """Agreement of the person's grades with the automatic ones (graded answers only)."""
        return agreement(self.items, self.human)

    def human_graded(self) -> list[Graded]:
        """The answers the person graded, with the person's level (for ctxlab.labs.measure.format_table)."""
        return [dataclasses.replace(g, level=self.human[self.key(g)]) for g in self.items if self.key(g) in self.human]

    # -------------------------------------------------------------- view

    def _render(self) -> None:
        g = self.current
        q = g.question
        done = sum(1 for it in self.items if self.key(it) in self.human)
        mine = self.human.get(self.key(g))
        method = "（採点後に表示）" if self.blind and mine is None else f"<code>{html.escape(g.method)}</code>"
        self._header.value = (f"<b>{self.index + 1} / {len(self.items)}</b>　採点済み {done} 件　"
                              f"<code>{html.escape(q.id)}</code>（{html.escape(q.category)}）・方式 {method}")
        ref = html.escape(q.answer)
        self._question.value = (f"<div><b>質問</b> {html.escape(q.question)}</div>"
                                f"<div style='color:#555'><b>模範解答</b> {ref}</div>")
        self._answer.value = ("<div style='white-space:pre-wrap;border:1px solid #ccc;padding:6px;"
                              f"max-height:16em;overflow:auto'>{html.escape(g.answer)}</div>")
        for lv, b in self._buttons.items():
            b.icon = "check" if mine == lv else ""
        self._prev.disabled = self.index == 0
        self._next.disabled = self.index == len(self.items) - 1 and not (mine and self._next_ungraded(self.index)
                                                                          != self.index)
        self._feedback.value = html.escape(self._last)
        self._summary.value = html.escape(str(self.agreement()))

    def fallback_text(self) -> str:
        """What a front end without widgets shows: the answer on screen and how to grade from code."""
        g = self.current
        mine = self.human.get(self.key(g))
        method = "（採点後に表示）" if self.blind and mine is None else g.method
        done = sum(1 for it in self.items if self.key(it) in self.human)
        lines = [f"{self.index + 1} / {len(self.items)}  採点済み {done} 件  {g.question.id}（{g.question.category}）"
                 f"・方式 {method}", f"質問: {g.question.question}", f"模範解答: {g.question.answer}",
                 f"回答: {g.answer}"]
        if self._last:
            lines.append(self._last)
        return "\n".join(lines) + "\n\n" + how_to("grader", [
            'grader.grade("correct")   # 正しい（惜しい: "partial"、違う: "wrong"）。次の未採点へ進む',
            "grader.go(0)              # 0 番目の回答を表示",
            "print(grader)             # いまの回答",
            "grader.agreement()        # 自動採点との一致"])


__all__ = ["Grader", "LABELS"]
