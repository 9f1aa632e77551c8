"""Where widgets cannot render, a widget's display says what it shows and how to use it from code.

A front end without a widget manager shows ``text/plain``; for an ipywidgets box that would
be ``VBox(children=(...))``. IPython's own display formatter (what a kernel sends) must
carry each course widget's text instead, and the calls it names must work.
"""
from __future__ import annotations

import re

import pytest
from IPython.core.formatters import DisplayFormatter

from ctxlab import quiz as qz
from ctxlab.corpus import Question
from ctxlab.labs.measure import Graded
from ctxlab.widgets import crossover
from ctxlab.widgets._fallback import NO_WIDGETS, html_to_text
from ctxlab.widgets.citation_viewer import CitationViewer
from ctxlab.widgets.grader import Grader
from ctxlab.widgets.quiz import Quiz

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def shown(obj) -> tuple[str, dict]:
    """text/plain and the whole bundle, as a kernel would send them."""
    data, _meta = DisplayFormatter().format(obj)
    return data["text/plain"], data


def test_quiz_text_fallback_names_the_calls_and_they_work():
    quiz = Quiz(qz.quiz_for("00_start_here"))   # a self-study check: submit() judges (True/False)
    text, data = shown(quiz)
    assert WIDGET_VIEW in data, "JupyterLab still gets the live widget"
    assert "VBox(" not in text and NO_WIDGETS in text
    assert quiz.question.text in text
    for call in ('quiz.select("', "quiz.submit()", "quiz.next()"):
        assert call in text
    first = re.search(r"^\s+(\w+)\) ", text, re.M).group(1)  # the first choice as the text shows it
    quiz.select(first)
    assert quiz.submit() is not None
    quiz.next()
    assert quiz.position == 1 and quiz.question.text in shown(quiz)[0]


def test_grader_text_fallback_shows_the_answer_and_how_to_grade():
    q = Question("t1", "有給休暇は何日？", "10 日", ("10日",), ("hr_yukyu_2025.txt",), "single")
    gr = Grader([Graded(q, "rag", "10 日です", "correct"), Graded(q, "lc", "わかりません", "wrong")])
    text, data = shown(gr)
    assert WIDGET_VIEW in data and "VBox(" not in text
    assert "有給休暇は何日？" in text and "10 日です" in text and 'grader.grade("correct")' in text
    assert "rag" not in text.split("\n\n")[0], "blind: the method stays hidden before grading"
    gr.grade("correct")
    assert "一致" in shown(gr)[0]


def test_crossover_and_citation_viewer_fall_back_to_text():
    sim = crossover.CrossoverSimulator()
    text, data = shown(sim)
    assert WIDGET_VIEW in data and "VBox(" not in text and "sim.set(" in text
    assert "月額" in text and "<" not in text.split("\n\n")[0]
    empty = CitationViewer([], [])
    assert "引用はありません" in shown(empty)[0] and "viewer.select(" in shown(empty)[0]


@pytest.mark.parametrize("markup, text", [
    ("a<br>b", "a\nb"), ("<table><tr><td>x</td><td>1</td></tr></table>", "x  1"), ("&lt;ok&gt;", "<ok>"),
])
def test_html_to_text(markup, text):
    assert html_to_text(markup) == text


def test_a_widgets_html_stand_in_is_not_typeset_as_math():
    """The simulator's stand-in holds two dollar amounts in a line (「…ならロングコンテキスト $127」「…: $417」); JupyterLab
    typesets an HTML output, so without mathjax_ignore the words between them turned into italic math (seen in the
    executed lesson at 1280 px)."""
    sim = crossover.CrossoverSimulator()
    data = DisplayFormatter().format(sim)[0]
    html = data["text/html"]
    assert html.count("$") >= 2
    assert re.match(r'<div class="mathjax_ignore tex2jax_ignore">', html)
