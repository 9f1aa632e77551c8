"""The quiz widget: one question at a time, immediate feedback (or, graded, answers recorded only), a final screen.

    from ctxlab.widgets.quiz import Quiz
    quiz = Quiz(quiz_bank) # a bank: a lesson's check questions, or the knowledge check
    quiz                   # shows it; quiz.answers holds {question id: chosen choice id}
    answers = quiz.write_answers()   # lesson 09: the cell becomes answers = {...}, what grading re-runs

Two modes, chosen by the bank. A bank with its key (a lesson's check, or the knowledge check in
the self-study release) is *judged*: after 「回答」 the widget says right or wrong and shows
every choice's note, not only the chosen one's, and the explanation. A graded bank without its
key (the knowledge check in the graded release, :attr:`ctxlab.quiz.Bank.graded`) is *recorded*:
the widget keeps the answer, which can be changed until the notebook is submitted, and never
says whether it is right; the hidden tests grade it and the notes come with nbgrader's feedback.

Only standard focusable widgets are used, so the quiz works from the keyboard (checked in
JupyterLab 4 with Chromium): Tab moves from choice to choice (each radio button is its own
stop), Space picks the focused one, Tab moves on to 「回答」 and Enter (or Space) answers;
focus then moves to 「次へ」, and Enter shows the next question with focus back on its first
choice. Shift+Tab goes back. The widget never waits
for input: every step is a callback, so a notebook that shows it runs headless (nbclient,
nbgrader autograde) without blocking. Tests drive it the same way a learner does:
``quiz.select("b"); quiz.submit_button.click(); quiz.next_button.click()``.

Judged, the first answer to a question counts (the choices lock once answered); 「最初から」 on
the final screen asks first (「答えを消して最初から」 or 「やめる」), then clears the answers
(:meth:`Quiz.restart` clears them at once). The final screen names the variable that holds the
widget in the learner's namespace (``check`` in the lessons, ``quiz`` in the knowledge check). The widget checks an answer
with :meth:`ctxlab.quiz.Question.is_correct`, so the bank never holds the key in plain text.
A front end that cannot draw widgets shows :meth:`Quiz.as_text` (the text/plain of the display).

Above a question the widget shows its lesson, never its ``topic`` (topics name the idea the right
choice rests on; they come with the feedback). Grading re-runs lesson 09 in a fresh kernel where
nobody clicks, so :meth:`Quiz.write_answers` writes the clicks into the answer cell itself.
"""
from __future__ import annotations

import html
import json
import re

import ipywidgets as widgets

from ctxlab import quiz as qz
from ctxlab.widgets._fallback import TextFallback, how_to

_CODE = re.compile(r"`([^`]+)`")


def _html(text: str) -> str:
    """Plain text (with `code` spans and blank-line paragraphs) as safe HTML."""
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]
    out = []
    for p in paragraphs:
        p = _CODE.sub(r"<code>\1</code>", html.escape(p))
        out.append("<p style='margin:0.3em 0'>" + p.replace("\n", "") + "</p>")
    return "".join(out)


RECORDED_NOTE = "正誤と解説は、採点のあとフィードバックに出ます（提出するまで答えは変えられます）。"
#: under the choices when they are not shown in a-b-c-d order
ORDER_NOTE = "a〜d は選択肢の名前です。並びは問題ごとに入れ替えてあります（何度開いても同じ並びです）。"
#: where the knowledge check's answers go to be graded (lesson 09, 演習 1)
WRITE_LINE = "answers = quiz.write_answers()"


def shown_topic(q: qz.Question) -> str:
    """What the widget shows above a question before it is answered: the lesson it checks.

    Never the question's ``topic``: topics name the idea the right choice rests on (issue 41), so
    they appear only with the feedback, after answering.
    """
    return f"{q.lesson} の範囲"


def _reordered(order) -> bool:
    ids = [c.id for c in order]
    return ids != sorted(ids)


def answers_source(bank: qz.Bank, answers: dict) -> str:
    """The Python source of lesson 09's answer cell holding ``answers`` (question id -> choice id).

    Only the bank's question ids and each question's own choice ids are written, in the bank's order;
    anything else in ``answers`` is left out (the cell is code the grader runs).
    """
    rows = [f"    {json.dumps(q.id)}: {json.dumps(answers[q.id])},\n" for q in bank
            if isinstance(answers.get(q.id), str) and answers[q.id] in q.choice_ids]
    return ("# クイズの答え（quiz.write_answers() が書き込みました）。保存してから提出します。\n"
            f"# 答えを足したり変えたりしたら、このセルを {WRITE_LINE} の 1 行に戻して実行し直します（手で直しても構いません）。\n"
            + ("answers = {\n" + "".join(rows) + "}\n" if rows else "answers = {}\n"))


def progress_text(position: int, total: int) -> str:
    """'01 / 09' for the first of nine questions."""
    width = max(2, len(str(total)))
    return f"{position + 1:0{width}d} / {total:0{width}d}"


class Quiz(TextFallback):
    """A multiple-choice quiz over a :class:`ctxlab.quiz.Bank` (default: the knowledge check).

    State kept in the kernel: :attr:`answers` (question id -> chosen choice id, first
    answer counts), :attr:`position` (index of the question shown, ``len(bank)`` on the
    final screen), :meth:`score`.
    """

    def __init__(self, bank: qz.Bank | str | None = None):
        if bank is None:   # the knowledge check, with its key when one sits beside the notebook (self-study)
            bank = qz.load(qz.KNOWLEDGE_CHECK, key_file=qz.KEY_FILE)
        elif isinstance(bank, str):
            bank = qz.load(bank)
        if not len(bank):
            raise qz.QuizError(f"bank {bank.id} has no questions")
        self.bank = bank
        self.recording = bank.graded        # no key here: record answers, never judge them
        self.answers: dict[str, str] = {}
        self.position = 0

        self.title = widgets.HTML(f"<b>{html.escape(bank.title)}</b>")
        self.progress = widgets.HTML()
        self.prompt = widgets.HTML(layout=widgets.Layout(width="100%"))
        self.choice_list = widgets.HTML(layout=widgets.Layout(width="100%"))
        # Labels are the choice ids only (the full texts are in choice_list above): radio
        # labels have a fixed height and would clip long Japanese sentences.
        self.choices = widgets.RadioButtons(options=[], index=None, description="答え",
                                            orientation="horizontal", layout=widgets.Layout(width="auto"))
        self.submit_button = widgets.Button(description="回答", button_style="primary",
                                            tooltip="選んだ選択肢で答える（Enter）")
        self.next_button = widgets.Button(description="次へ", tooltip="次の問題へ（Enter）")
        self.restart_button = widgets.Button(description="最初から", tooltip="答えを消して 1 問目から（確認します）")
        self.confirm_button = widgets.Button(description="答えを消して最初から", button_style="danger",
                                             tooltip="記録した答えをすべて消します")
        self.cancel_button = widgets.Button(description="やめる", tooltip="答えはそのまま")
        self.feedback = widgets.HTML(layout=widgets.Layout(width="100%"))

        self.submit_button.on_click(lambda _: self.submit())
        self.next_button.on_click(lambda _: self.next())
        self.restart_button.on_click(lambda _: self.ask_restart())
        self.confirm_button.on_click(lambda _: self.restart())
        self.cancel_button.on_click(lambda _: self._show())
        self.choices.observe(self._on_select, names="value")

        self.buttons = widgets.HBox([self.submit_button, self.next_button])
        self.widget = widgets.VBox([self.title, self.progress, self.prompt, self.choice_list, self.choices,
                                    self.buttons, self.feedback],
                                   layout=widgets.Layout(width="100%", max_width="860px"))
        self._show()

    # -- display ------------------------------------------------------------
    def fallback_text(self) -> str:
        """What a front end without widgets shows: the screen as text and how to answer from code."""
        return self.as_text() + "\n\n" + how_to("quiz", [
            'quiz.select("b")    # 選択肢を選ぶ（id は上の a), b), …）',
            "quiz.submit()       # 回答する（自習版は正解なら True、採点版は記録だけで None）",
            "quiz.next()         # 次の問題へ",
            "print(quiz.as_text())  # いまの画面"])

    @property
    def question(self) -> qz.Question | None:
        """The question on screen (None on the final screen)."""
        return self.bank.questions[self.position] if self.position < len(self.bank) else None

    def _show(self) -> None:
        q = self.question
        if q is None:
            self._show_final()
            return
        self.progress.value = (f"<span style='font-family:monospace;font-size:1.1em'>"
                               f"{progress_text(self.position, len(self.bank))}</span>"
                               f"　<span style='color:#666'>{html.escape(shown_topic(q))}</span>")
        self.prompt.value = _html(q.text)
        order = q.shuffled()
        items = "".join(f"<li style='margin:0.2em 0'><b>{c.id}</b>　{html.escape(c.text)}</li>" for c in order)
        self.choice_list.value = (f"<ul style='list-style:none;padding-left:0.5em;margin:0.3em 0'>{items}</ul>"
                                  + (f"<p style='color:#666;font-size:0.9em;margin:0.2em 0'>{ORDER_NOTE}</p>"
                                     if _reordered(order) else ""))
        self.choices.layout.display = None
        self.choices.unobserve(self._on_select, names="value")
        self.choices.options = [(c.id, c.id) for c in order]
        self.choices.index = None
        self.choices.observe(self._on_select, names="value")
        answered = self.answers.get(q.id)
        if answered is not None:
            self.choices.value = answered
        self.choices.disabled = answered is not None and not self.recording
        self.submit_button.disabled = True
        self.next_button.disabled = answered is None
        self.next_button.description = "結果を見る" if self.position == len(self.bank) - 1 else "次へ"
        self.buttons.children = (self.submit_button, self.next_button)
        self.feedback.value = self._feedback(q, answered) if answered is not None else (
            "<span style='color:#666'>選択肢を 1 つ選んで「回答」を押してください"
            "（キーボードでは Tab で移動、Space で選択、Enter で押す）。</span>")

    def _on_select(self, change) -> None:
        q = self.question
        locked = q is not None and q.id in self.answers and not self.recording
        self.submit_button.disabled = q is None or locked or change["new"] is None or (
            self.answers.get(q.id) == change["new"])

    def _feedback(self, q: qz.Question, chosen: str) -> str:
        box = "<div role='status' style='border-left:4px solid #ccc;padding-left:0.6em'>{}</div>"
        if self.recording:
            return box.format(f"<p style='margin:0.3em 0'><b>記録しました</b>（{chosen}）。{RECORDED_NOTE}</p>")
        right = q.correct_id()
        if q.is_correct(chosen):
            head = f"<p style='color:#1b7f3b;margin:0.3em 0'><b>正解</b>（{chosen}）</p>"
        else:
            head = (f"<p style='color:#b00020;margin:0.3em 0'><b>不正解</b>: あなたの答えは {chosen}。"
                    f"正解は <b>{right}</b> です。</p>")
        # every choice's note, in the order shown: why each one holds or does not
        notes = "".join(
            f"<li style='margin:0.2em 0'><b>{c.id}</b>{'（正解）' if c.id == right else ''}"
            f"{'（あなたの答え）' if c.id == chosen and c.id != right else ''}　{html.escape(c.note)}</li>"
            for c in q.shuffled())
        return box.format(f"{head}<p style='color:#666;margin:0.3em 0'>この問の要点: {html.escape(q.topic)}</p>"
                          f"<ul style='list-style:none;padding-left:0.5em;margin:0.3em 0'>{notes}</ul>"
                          f"<p style='margin:0.3em 0'><b>なぜ</b>　</p>{_html(q.explanation)}")

    def _show_final(self) -> None:
        total = len(self.bank)
        self.progress.value = (f"<span style='font-family:monospace;font-size:1.1em'>"
                               f"{progress_text(total - 1, total)}</span>　結果")
        if self.recording:
            self._show_recorded()
            return
        s = self.score()
        self.prompt.value = f"<p style='font-size:1.2em'><b>{html.escape(str(s))}</b></p>"
        rows = []
        for lesson in qz.LESSONS:
            if lesson in s.by_lesson:
                ok, n = s.by_lesson[lesson]
                mark = "" if ok == n else "　← 見直す"
                rows.append(f"<li>{lesson}: {ok} / {n}{mark}</li>")
        self.choice_list.value = "<ul style='margin:0.3em 0'>" + "".join(rows) + "</ul>"
        self._hide_choices()
        self.feedback.value = (f"<p style='margin:0.3em 0'>{self._where_answers_go()}"
                               "正解の数より、なぜそう判断できるかを自分の言葉で説明できることが合格の条件です。</p>")

    def _show_recorded(self) -> None:
        self.prompt.value = f"<p style='font-size:1.2em'><b>{html.escape(self._recorded_text())}</b></p>"
        rows = "".join(f"<li>{q.id}: {html.escape(self.answers.get(q.id, '（未回答）'))}</li>" for q in self.bank)
        self.choice_list.value = f"<ul style='margin:0.3em 0'>{rows}</ul>"
        self._hide_choices()
        self.feedback.value = f"<p style='margin:0.3em 0'>{self._where_answers_go()}{RECORDED_NOTE}</p>"

    def _hide_choices(self) -> None:
        """The final screen: no radio buttons (their 「答え」 label would stand alone), only 「最初から」."""
        self.choices.options = []
        self.choices.disabled = True
        self.choices.layout.display = "none"
        self.buttons.children = (self.restart_button,)

    def _where_answers_go(self) -> str:
        """The final screen's sentence on the answers: lesson 09's are written into 演習 1's cell to be graded."""
        name = self._answers_name()
        if self.bank.id != qz.KNOWLEDGE_CHECK:
            return f"答えは <code>{html.escape(name)}</code> に入っています。"
        line = WRITE_LINE.replace("quiz.", name.removesuffix("answers")) if name.endswith(".answers") else WRITE_LINE
        return (f"採点されるのは演習 1 のセルの <code>answers</code> です。そのセルで <code>{html.escape(line)}</code> を実行すると、"
                "答えがそのセルに書き込まれます（保存してから提出）。")

    def _answers_name(self) -> str:
        """``<variable>.answers``, with the name this widget has in the learner's namespace."""
        try:
            from IPython import get_ipython
            namespace = get_ipython().user_ns
        except Exception:  # no IPython (tests, scripts)
            namespace = {}
        names = sorted(n for n, v in list(namespace.items()) if v is self and not n.startswith("_"))
        return f"{names[0]}.answers" if names else "answers（このクイズの変数の .answers）"

    def _recorded_text(self) -> str:
        return f"{len(self.bank)} 問中 {sum(q.id in self.answers for q in self.bank)} 問に回答（記録のみ）"

    @staticmethod
    def _focus(widget) -> None:
        try:
            widget.focus()
        except Exception:  # no front end (headless): focus is only a convenience
            pass

    # -- actions (what the buttons do) ----------------------------------------
    def select(self, choice_id: str) -> None:
        """Pick a choice of the question on screen (what clicking a radio button does)."""
        q = self.question
        if q is None:
            raise qz.QuizError("the quiz is finished; restart() to answer again")
        if choice_id not in q.choice_ids:
            raise qz.QuizError(f"question {q.id} has no choice {choice_id!r} (choices: {', '.join(q.choice_ids)})")
        self.choices.value = choice_id

    def submit(self) -> bool | None:
        """Answer the question on screen with the selected choice; return whether it was right.

        Does nothing (returns None) when no choice is selected or the question is already answered.
        Recording (a graded bank without its key), the answer replaces the earlier one and None is returned.
        """
        q = self.question
        chosen = self.choices.value
        if q is None or chosen is None or (q.id in self.answers and not self.recording):
            return None
        self.answers[q.id] = chosen
        self.choices.disabled = not self.recording
        self.submit_button.disabled = True
        self.next_button.disabled = False
        self.feedback.value = self._feedback(q, chosen)
        self._focus(self.next_button)
        return None if self.recording else q.is_correct(chosen)

    def next(self) -> None:
        """Show the next question (after the last one: the final score)."""
        if self.position < len(self.bank):
            self.position += 1
        self._show()
        self._focus(self.restart_button if self.question is None else self.choices)

    def go(self, position: int) -> None:
        """Show question ``position`` (0-based); answered questions show their feedback."""
        if not 0 <= position <= len(self.bank):
            raise IndexError(f"position must be between 0 and {len(self.bank)}")
        self.position = position
        self._show()

    def ask_restart(self) -> None:
        """What 「最初から」 does: ask before the recorded answers are cleared."""
        n = len(self.answers)
        if not n:
            self.restart()
            return
        self.feedback.value = (f"<div role='alert' style='border-left:4px solid #b00020;padding-left:0.6em'>"
                               f"<p style='margin:0.3em 0'>記録した {n} 問の答えを消して 1 問目に戻ります。よろしいですか？</p></div>")
        self.buttons.children = (self.confirm_button, self.cancel_button)
        self._focus(self.cancel_button)

    def restart(self) -> None:
        """Clear the answers and show the first question (no question asked: the buttons ask first)."""
        self.answers.clear()
        self.position = 0
        self._show()
        self._focus(self.choices)

    def write_answers(self) -> dict[str, str]:
        """Lesson 09's submission: write :attr:`answers` into the cell that runs this, and return them.

        A grader re-runs the notebook in a fresh kernel where nobody clicks, so the answers must be
        in the notebook itself. Run in JupyterLab (or the classic notebook), the cell's text is
        replaced by ``answers = {...}`` (IPython's ``set_next_input(..., replace=True)``, what ``%load``
        uses); the learner saves and submits, and the grader runs that dict. Elsewhere (a front end
        that ignores the request, nbclient, nbgrader) only the return value counts, and the text to
        paste is printed. With no answer yet nothing is written and ``{}`` is returned.
        """
        answered = {q.id: self.answers[q.id] for q in self.bank
                    if isinstance(self.answers.get(q.id), str) and self.answers[q.id] in q.choice_ids}
        if not answered:
            print(f"クイズにまだ答えていません（{len(self.bank)} 問とも未回答）。上のクイズで答えてから、このセルを実行し直してください。")
            return {}
        text = answers_source(self.bank, answered)
        try:
            from IPython import get_ipython
            shell = get_ipython()
        except Exception:  # no IPython
            shell = None
        if shell is not None:
            shell.set_next_input(text, replace=True)
        left = len(self.bank) - len(answered)
        print(f"{len(answered)} 問の答えをこのセルに書き込みました（{'未回答 ' + str(left) + ' 問。' if left else ''}"
              "JupyterLab ではこのセルが answers = {...} に変わります）。保存（Ctrl+S）してから提出してください。\n"
              "セルが変わらない画面では、次の行をこのセルに貼り付けてください:\n"
              + "answers = " + json.dumps(answered, ensure_ascii=False))
        return answered

    def as_text(self) -> str:
        """The screen as plain text (question and choices in display order, or the result).

        For a front end that cannot draw widgets, or a screen reader: the same content. The
        notes appear only once the question is answered (before, they would give the answer
        away), and never when recording.
        """
        q = self.question
        if q is None:
            return f"{self.bank.title}: {self._recorded_text() if self.recording else self.score()}"
        lines = [f"{progress_text(self.position, len(self.bank))}  {shown_topic(q)}", q.text, ""]
        lines += [f"  {c.id}) {c.text}" for c in q.shuffled()]
        chosen = self.answers.get(q.id)
        if chosen is None:
            lines += ["", "答え方: quiz.select(\"選択肢の id\") → quiz.submit() → quiz.next()"]
        elif self.recording:
            lines += ["", f"記録済み: {chosen}。{RECORDED_NOTE}"]
        else:
            right = q.correct_id()
            lines += ["", f"回答済み: {chosen}（{'正解' if chosen == right else f'不正解。正解は {right}'}）"]
            lines += [f"この問の要点: {q.topic}"] + [f"  {c.id}) {c.note}" for c in q.shuffled()]
            lines += ["なぜ: " + " ".join(q.explanation.split())]
        return "\n".join(lines)

    def score(self) -> qz.Score:
        """The score of :attr:`answers` so far (a :class:`QuizError` when recording: the key is not here)."""
        return qz.score(self.bank, self.answers)

    @property
    def finished(self) -> bool:
        return self.position >= len(self.bank)
