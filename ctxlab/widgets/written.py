"""Feedback on a written answer in self-study: the rubric and a model answer, opened after the learner has written.

::

    from ctxlab.widgets.written import Reveal
    Reveal("api-only")        # the grade_id of the answer cell above; shows a button
    r = Reveal("api-only"); r.open(); r.self_score(1); print(r.as_text())   # the same from code

The button opens the rubric and the model answer only when the learner's own answer, as saved in
the notebook file, has been written (:func:`ctxlab.quiz.written.has_answer`): an unsaved edit or the
stub ``YOUR ANSWER HERE`` gets a one-line request to write and save first. Then the learner picks the
rubric level their answer reaches and sees it as a score (a self-assessment, recorded in the kernel
only). The texts come from the self-study release's ``written_answers.key.yaml``; where it is absent
(the graded release, the graded laptop kit, the site), the widget says the rubric arrives with the
feedback after grading, and shows nothing of it.
"""
from __future__ import annotations

import html
from pathlib import Path

import ipywidgets as w

from ctxlab.quiz import written
from ctxlab.widgets._fallback import TextFallback, how_to

GRADED = "採点される版です。採点基準と解答例は、採点後のフィードバックで届きます（ここには入っていません）。"
WRITE_FIRST = ("まず上のセルに自分の答えを書き、保存（Ctrl+S）してから開いてください"
               "（保存されたノートブックの答えを読みます。{n} 文字以上）。")
NO_NOTEBOOK = "このノートブックのファイルが見つかりません。lesson のフォルダのノートブックから開いてください。"


class Reveal(TextFallback):
    """The rubric and model answer of the written answer ``grade_id``; see the module docstring."""

    def __init__(self, grade_id: str, *, folder: Path | None = None, notebook: Path | None = None):
        self.grade_id = grade_id
        self.folder = Path(folder) if folder is not None else Path.cwd()
        self.item = written.load_key(self.folder).get(grade_id)
        self._notebook = Path(notebook) if notebook is not None else None
        self.opened = False
        #: the learner's own score against the rubric (None until they pick a level)
        self.score: float | None = None
        self.message = GRADED if self.item is None else ""
        self._button = w.Button(description="採点基準と解答例を開く", icon="check",
                                layout=w.Layout(width="16em"), disabled=self.item is None)
        self._button.on_click(lambda _b: self.open())
        self._status = w.HTML()
        self._body = w.HTML()
        self._levels = w.RadioButtons(options=[], value=None, layout=w.Layout(width="auto"))
        self._levels.observe(self._picked, names="value")
        self._score = w.HTML()
        self._scoring = w.VBox([w.HTML("<b>自己採点</b>: 自分の答えが当たる段階を選んでください"),
                                self._levels, self._score], layout=w.Layout(display="none"))
        self.widget = w.VBox([self._button, self._status, self._body, self._scoring],
                             layout=w.Layout(max_width="52em"))
        self._render()

    # -------------------------------------------------------------- actions

    def notebook(self) -> Path | None:
        return self._notebook or written.notebook_path(self.folder)

    def open(self) -> bool:
        """Show the rubric and model answer if the saved answer is written; return whether they are shown."""
        if self.item is None:
            self.message = GRADED
        else:
            nb = self.notebook()
            answer = written.saved_answer(nb, self.grade_id) if nb is not None else None
            if nb is None:
                self.message = NO_NOTEBOOK
            elif not written.has_answer(answer):
                self.message = WRITE_FIRST.format(n=written.MIN_CHARS)
            else:
                self.opened, self.message = True, ""
        self._render()
        return self.opened

    def self_score(self, points: float) -> None:
        """Record the learner's own score (one of the rubric's levels)."""
        if not self.opened:
            raise ValueError("先に open() で採点基準を開いてください（答えを書いて保存してから）")
        allowed = [p for p, _ in self.item.levels()]
        if float(points) not in allowed:
            raise ValueError(f"採点基準の段階は {', '.join(f'{p:g}' for p in allowed)} 点です")
        self.score = float(points)
        self._render()

    def _picked(self, change) -> None:
        if change["new"] is not None and self.opened:
            self.score = float(change["new"])
            self._score.value = self._score_text()

    # -------------------------------------------------------------- display

    def _score_text(self) -> str:
        if self.score is None:
            return ""
        return f"自己採点: <b>{self.score:g} / {self.item.points:g} 点</b>（記録はこのカーネルの中だけです）"

    def _render(self) -> None:
        self._status.value = f"<span>{html.escape(self.message)}</span>" if self.message else ""
        if not self.opened:
            self._body.value = ""
            self._scoring.layout.display = "none"
            return
        it = self.item
        rubric = "".join(f"<li>{html.escape(line.lstrip('-* '))}</li>" for line in it.rubric)
        answer = "<br>".join(html.escape(line) for line in it.model_answer.splitlines())
        self._body.value = (f"<div><b>採点基準</b>（{it.points:g} 点）<ul>{rubric}</ul>"
                            f"<b>解答例</b><blockquote>{answer}</blockquote></div>")
        options = [(line, p) for p, line in it.levels()]
        if [o[1] for o in self._levels.options] != [p for _, p in options]:
            self._levels.options = options
        self._levels.value = self.score
        self._scoring.layout.display = None
        self._score.value = self._score_text()
        self._button.disabled = True

    def as_text(self) -> str:
        """What the widget shows, as text."""
        if not self.opened:
            return self.message or f"{self.grade_id}: 答えを書いて保存してから open() で開けます。"
        it = self.item
        lines = [f"採点基準（{it.points:g} 点）"] + [f"- {line.lstrip('-* ')}" for line in it.rubric]
        lines += ["", "解答例", it.model_answer]
        if self.score is not None:
            lines += ["", f"自己採点: {self.score:g} / {it.points:g} 点"]
        return "\n".join(lines)

    def fallback_text(self) -> str:
        if self.item is None:
            return GRADED
        return self.as_text() + "\n" + how_to("r", ["r.open()", "r.self_score(点数)", "print(r.as_text())"])
