"""Issue 16: two release modes, no reachable key when graded, a check at the end of every lesson, rubrics.

- the graded release and the installed package hold no correct choice in any recoverable form
  (the search itself is shown to find the key where it is: the instructor's source, self-study);
- the widget records a graded bank's answers without judging them, and judges a check bank
  showing every choice's note;
- lessons 00-08 and 10 end with their own ungraded check (never a graded question), with no
  length or position cue over all the check questions;
- every manually graded answer has a rubric in its solution region that the release does not
  have and the autograded notebook (what formgrader shows) has next to the answer.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import nbformat
import pytest
import yaml
from traitlets.config import Config

import ctxlab
from ctxlab import quiz as qz
from ctxlab._paths import DATA_DIR, QUIZZES_DIR
from ctxlab.widgets._fallback import NO_WIDGETS
from ctxlab.grading import preprocessors as pp
from ctxlab.grading import release
from ctxlab.quiz.graded import key_leaks
from ctxlab.widgets.quiz import RECORDED_NOTE, Quiz
from test_quiz import _AlwaysEqual, cue_scores

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = Path(ctxlab.__file__).resolve().parent
CHECKED = [l for l in qz.LESSONS if l != "09_knowledge_check"]


@pytest.fixture(scope="module")
def key():
    return qz.instructor_bank()


# ------------------------------------------------------------------ no reachable key

def test_installed_package_holds_no_key(key):
    """What a graded learner's environment has: the package and the data and banks it reads."""
    assert key_leaks([PACKAGE, DATA_DIR, QUIZZES_DIR], key) == []


def test_the_search_finds_the_key_where_it_is(key, tmp_path):
    """The search can fail: the instructor's source and the self-study release do hold the key."""
    found = key_leaks([ROOT / "solutions" / "09_knowledge_check"], key)
    assert any("salt" in f for f in found) and any("plain text" in f for f in found)
    assert any("salt" in f for f in key_leaks([ROOT / "course" / "09_knowledge_check"], key))
    # each recoverable form on its own
    q = key.questions[0]
    for n, text in enumerate([f'answers = {{"{q.id}": "{q.correct_id()}"}}', f"{q.id}: {q.correct_id()}",
                              f'assert answers["{q.id}"] == "{q.correct_id()}"', q.key, q.salt,
                              q.choice(q.correct_id()).note]):
        (tmp_path / f"f{n}.py").write_text(text, encoding="utf-8")
        assert key_leaks([tmp_path / f"f{n}.py"], key), text


@pytest.mark.slow   # nbgrader generate_assignment for every lesson
def test_graded_release_holds_no_key_and_no_rubric(key, tmp_path):
    out = tmp_path / "graded"
    assert release.release_graded(out, ROOT) == release.assignments(ROOT)
    assert key_leaks([out], key) == []
    assert sorted(p.name for p in (out / "09_knowledge_check").iterdir()) == ["09_knowledge_check.ipynb"]
    # the notebooks are nbgrader's release, the same as the self-study one (only the key file differs)
    for name in release.assignments(ROOT):
        assert (out / name / f"{name}.ipynb").read_bytes() == (ROOT / "course" / name / f"{name}.ipynb").read_bytes()
    # the self-study key: the instructor's data under a header in Japanese for the learner who opens the file
    learner_key = (ROOT / "course" / "09_knowledge_check" / qz.KEY_FILE).read_text(encoding="utf-8")
    assert learner_key.startswith(release.LEARNER_KEY_HEADER) and "nbgrader" not in learner_key.split("bank:")[0]
    assert yaml.safe_load(learner_key) == yaml.safe_load(qz.INSTRUCTOR_KEY.read_text(encoding="utf-8"))
    assert qz.load(qz.KNOWLEDGE_CHECK, key_file=ROOT / "course" / "09_knowledge_check" / qz.KEY_FILE).graded is False
    _assert_no_rubric(out)


def test_graded_release_refuses_the_self_study_folder():
    with pytest.raises(ctxlab.errors.InputError, match="folder of its own"):
        release.release_graded(ROOT / "course", ROOT)


def test_nbgrader_never_copies_a_key_file():
    config = (ROOT / "nbgrader_config.py").read_text(encoding="utf-8")
    assert '"*.key.yaml"' in config and release.SELF_STUDY_ONLY == "*.key.yaml"


def test_without_the_key_file_the_library_twin_cannot_answer(tmp_path, monkeypatch):
    """At autograde the folder has no key file: asking the library for the answers raises."""
    monkeypatch.chdir(tmp_path)
    bank = qz.load(qz.KNOWLEDGE_CHECK, key_file=qz.KEY_FILE)
    assert bank.graded
    with pytest.raises(qz.QuizError):
        {q.id: q.correct_id() for q in bank}
    with pytest.raises(qz.QuizError):
        qz.score(bank, {q.id: "a" for q in bank})


def test_an_always_equal_answers_object_scores_zero(key):
    source = nbformat.read(ROOT / "solutions" / "09_knowledge_check" / "09_knowledge_check.ipynb", as_version=4)
    cells = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source for c in source.cells}

    class Everything(dict):
        def __getitem__(self, k):
            return _AlwaysEqual()

    for q in key:
        hidden = cells[f"{q.id}-tests"].split("### BEGIN HIDDEN TESTS")[1].split("### END HIDDEN TESTS")[0]
        with pytest.raises(AssertionError):
            exec(hidden, {"answers": Everything(), "print": lambda *a: None})


# ------------------------------------------------------------------ the widget in its two modes

def test_graded_widget_records_without_judging(key):
    quiz = Quiz(qz.load())
    assert quiz.recording
    q = quiz.question
    right, wrong = q.choice_ids[0], q.choice_ids[1]
    quiz.select(right)
    assert quiz.submit() is None and quiz.answers == {q.id: right}
    shown = quiz.feedback.value + quiz.as_text()
    assert "記録" in shown and RECORDED_NOTE in shown and "正解" not in shown.replace("正誤", "")
    assert not any(c.note[:40] in shown for c in key.question(q.id).choices)
    # the answer can be changed until submission
    quiz.select(wrong)
    assert not quiz.submit_button.disabled
    quiz.submit_button.click()
    assert quiz.answers == {q.id: wrong}
    quiz.go(len(quiz.bank))
    assert "9 問中 1 問に回答（記録のみ）" in quiz.prompt.value and "正解" not in quiz.prompt.value
    with pytest.raises(qz.QuizError):
        quiz.score()


def test_judged_widget_shows_every_choice_note(key):
    check = Quiz(qz.quiz_for("03_prompt_caching"))
    q = check.question
    wrong = next(c for c in q.choice_ids if not q.is_correct(c))
    check.select(wrong)
    assert check.submit() is False
    for c in q.choices:
        assert c.note in check.feedback.value.replace("&quot;", '"').replace("&#x27;", "'") or \
            c.note[:20] in check.feedback.value
        assert c.note in check.as_text()
    assert "不正解" in check.feedback.value and f"正解は <b>{q.correct_id()}</b>" in check.feedback.value


def test_text_fallback_is_in_the_display():
    check = Quiz(qz.quiz_for("00_start_here"))
    bundle = check._repr_mimebundle_()
    text = bundle["text/plain"]
    assert text.startswith(check.as_text()) and "check.select" not in text
    assert "quiz.select" in text and NO_WIDGETS in text   # the screen, then how to answer from code


# ------------------------------------------------------------------ a check at the end of every lesson's core

OPTIONAL = "（任意）"  # tools/learner_time.py's mark of an optional part

@pytest.mark.parametrize("lesson", CHECKED)
def test_every_lesson_ends_with_its_check(lesson):
    """The core ends with まとめ and the check; only optional parts (a level-2 heading with （任意）) follow."""
    nb = nbformat.read(ROOT / "solutions" / lesson / f"{lesson}.ipynb", as_version=4)
    at = [i for i, c in enumerate(nb.cells) if c.cell_type == "markdown" and c.source.startswith("## 確認問題")]
    assert len(at) == 1, f"{lesson}: one 「## 確認問題」 heading"
    heading, code = nb.cells[at[0]], nb.cells[at[0] + 1]
    assert code.source == ("from ctxlab import quiz\nfrom ctxlab.widgets.quiz import Quiz\n\n"
                           f'check = Quiz(quiz.quiz_for("{lesson}"))\ncheck')
    assert "## まとめ" in nb.cells[at[0] - 1].source, "the check comes right after the summary"
    after = [line for c in nb.cells[at[0] + 2:] if c.cell_type == "markdown"
             for line in c.source.splitlines() if line.startswith("## ")]
    assert all(OPTIONAL in line for line in after), f"{lesson}: only optional parts follow the check: {after}"
    bank = qz.quiz_for(lesson)
    assert 2 <= len(bank) <= 3 and not bank.graded
    # released the same way (the check is not an exercise)
    released = nbformat.read(ROOT / "course" / lesson / f"{lesson}.ipynb", as_version=4)
    assert code.source in [c.source for c in released.cells]


def test_no_graded_question_is_reused_as_a_check(key):
    graded_ids = set(key.ids)
    graded_texts = {c.text for q in key for c in q.choices} | {q.text for q in key}
    for lesson in CHECKED:
        for q in qz.quiz_for(lesson):
            assert q.id not in graded_ids and q.lesson == lesson
            assert q.text not in graded_texts and not {c.text for c in q.choices} & graded_texts
    for lesson in qz.LESSONS:
        nb = (ROOT / "solutions" / lesson / f"{lesson}.ipynb").read_text(encoding="utf-8")
        if lesson != "09_knowledge_check":
            assert "knowledge_check" not in nb and "KNOWLEDGE_CHECK" not in nb


def _check_bank():
    questions = tuple(q for lesson in CHECKED for q in qz.quiz_for(lesson))
    return qz.Bank("checks", "all check questions", questions)


def test_check_questions_have_notes_and_no_cue():
    bank = _check_bank()
    n = len(bank)
    limit = math.ceil(n / 3)
    scores = cue_scores(bank)
    print(f"\ncue scores of the {n} check questions (limit {limit}): "
          + ", ".join(f"{rule} {v}/{n}" for rule, v in scores.items()))
    assert all(v <= limit for v in scores.values()), scores
    for q in bank:
        assert 3 <= len(q.choices) <= 4 and all(len(c.note) >= 40 for c in q.choices), q.id
        lengths = [len(c.text) for c in q.choices]
        assert max(lengths) <= 1.35 * min(lengths), f"{q.id}: choice lengths {lengths}"
        assert len(q.explanation) >= 80


def test_lesson_03_asks_about_automatic_caching():
    texts = [q.text + q.explanation for q in qz.quiz_for("03_prompt_caching")]
    auto = [t for t in texts if "最上位" in t and "自動キャッシュ" in t]
    assert auto and "最後のキャッシュできるブロック" in auto[0] and "書き込み" in auto[0]


# ------------------------------------------------------------------ rubrics

def _written(nb):
    return [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")
            and c.metadata["nbgrader"].get("solution")]


def _assert_no_rubric(folder: Path):
    rubric_lines = {line.strip() for lesson in qz.LESSONS
                    for text, _ in pp.rubrics(nbformat.read(ROOT / "solutions" / lesson / f"{lesson}.ipynb", 4)).values()
                    for line in text.splitlines() if len(line.strip()) > 12}
    for path in sorted(folder.glob("*/*.ipynb")):
        text = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells)
        assert pp.RUBRIC_BEGIN.strip("# ") not in text
        leaked = [line for line in rubric_lines if line in text]
        assert not leaked, f"{path}: rubric lines in the release: {leaked[:2]}"


@pytest.mark.parametrize("lesson", qz.LESSONS)
def test_every_written_answer_has_a_rubric(lesson):
    nb = nbformat.read(ROOT / "solutions" / lesson / f"{lesson}.ipynb", as_version=4)
    found = pp.rubrics(nb)
    written = _written(nb)
    assert written and set(found) == {c.metadata["nbgrader"]["grade_id"] for c in written}
    for text, points in found.values():
        assert "満点" in text and "半分" in text and "0 点" in text
        assert f"{points:g} 点（満点）" in text


def test_self_study_release_has_no_rubric():
    _assert_no_rubric(ROOT / "course")


def _course_root(tmp_path, source_cells):
    nb = nbformat.v4.new_notebook(cells=source_cells)
    (tmp_path / "source" / "a1").mkdir(parents=True)
    nbformat.write(nb, tmp_path / "source" / "a1" / "a1.ipynb")
    return Config({"CourseDirectory": {"root": str(tmp_path)}})


def _answer(source, grade_id="essay", points=2):
    cell = nbformat.v4.new_markdown_cell(source)
    cell.metadata["nbgrader"] = {"grade": True, "solution": True, "locked": False, "points": points,
                                 "grade_id": grade_id, "schema_version": 3, "task": False}
    return cell


def test_insert_rubrics_puts_the_source_rubric_after_the_answer(tmp_path):
    rubric = "- 2 点（満点）: 理由と数字\n- 1 点（半分）: 片方\n- 0 点: どちらもない"
    config = _course_root(tmp_path, [
        nbformat.v4.new_markdown_cell("問い"),
        _answer(f"### BEGIN SOLUTION\n模範解答\n{pp.RUBRIC_BEGIN}\n{rubric}\n{pp.RUBRIC_END}\n### END SOLUTION")])
    learner = _answer("わたしの答え")
    forged = nbformat.v4.new_markdown_cell("偽の採点基準")
    forged.metadata[pp.RUBRIC_KEY] = "essay"
    submitted = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("問い"), learner, forged])
    resources = {"nbgrader": {"assignment": "a1", "notebook": "a1", "student": "s"}}
    out, _ = pp.InsertRubrics(config=config).preprocess(submitted, resources)
    assert [c.source for c in out.cells[:2]] == ["問い", "わたしの答え"]
    assert len(out.cells) == 3 and out.cells[2].metadata[pp.RUBRIC_KEY] == "essay"
    assert out.cells[2].source.endswith(rubric) and "2 点" in out.cells[2].source
    assert out.cells[2].metadata["editable"] is False and "偽の採点基準" not in json.dumps(out.cells)
    nbformat.validate(out)
    dropped, _ = pp.DropRubrics().preprocess(out, resources)
    assert [c.source for c in dropped.cells] == ["問い", "わたしの答え"]


def test_insert_rubrics_without_a_source_notebook_changes_nothing(tmp_path):
    config = Config({"CourseDirectory": {"root": str(tmp_path)}})
    nb = nbformat.v4.new_notebook(cells=[_answer("答え")])
    resources = {"nbgrader": {"assignment": "a1", "notebook": "a1", "student": "s"}}
    out, _ = pp.InsertRubrics(config=config).preprocess(nb, resources)
    assert [c.source for c in out.cells] == ["答え"]


def test_rubric_needs_its_end_marker():
    with pytest.raises(ValueError, match="END RUBRIC"):
        pp.rubric_of(f"{pp.RUBRIC_BEGIN}\nno end")


@pytest.mark.slow
def test_formgrader_view_has_the_rubric_and_feedback_too(graded_class):
    """The autograded notebook (what formgrader shows) holds each rubric right after the answer;
    the feedback keeps it (the criteria explain the written mark, see docs/instructor.md)."""
    root = graded_class["root"]
    for name in ("00_start_here", "09_knowledge_check"):
        src = nbformat.read(ROOT / "solutions" / name / f"{name}.ipynb", as_version=4)
        rubric = pp.rubrics(src)
        nb = nbformat.read(root / "autograded" / "untouched" / name / f"{name}.ipynb", as_version=4)
        for i, c in enumerate(nb.cells):
            gid = c.metadata.get("nbgrader", {}).get("grade_id")
            if gid in rubric:
                assert nb.cells[i + 1].metadata.get(pp.RUBRIC_KEY) == gid
                assert rubric[gid][0] in nb.cells[i + 1].source
        html = (root / "feedback" / "untouched" / name / f"{name}.html").read_text(encoding="utf-8")
        assert "記述問題の採点基準" in html and "講師用" not in html  # learners read it
