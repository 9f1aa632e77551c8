"""Self-study feedback on written answers: the rubric and model answer open after the learner has written,
and no graded build holds them (issue: a course a learner finishes, item 4)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat
import pytest

from ctxlab.errors import InputError
from ctxlab.grading import release
from ctxlab.quiz import written
from ctxlab.widgets.written import GRADED, Reveal

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "solutions").glob("*/*.ipynb"))


def _items(nb_path: Path) -> list[written.Written]:
    return written.from_notebook(json.loads(nb_path.read_text(encoding="utf-8")))


def test_every_written_answer_has_a_model_answer_and_rubric_levels_from_full_to_zero():
    items = release.written_answers(ROOT)
    assert len(items) >= 10
    for w in items:
        levels = [p for p, _ in w.levels()]
        assert w.model_answer.strip() and "BEGIN" not in w.model_answer and "RUBRIC" not in w.model_answer, w.grade_id
        assert max(levels) == w.points and 0 in levels, (w.grade_id, levels)
        assert w.title.startswith("演習"), (w.grade_id, w.title)


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.parent.name)
def test_each_written_answer_is_followed_by_its_reveal_cell_and_the_self_study_release_carries_its_key(source):
    items = _items(source)
    nb = nbformat.read(source, as_version=4)
    for w in items:
        at = next(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == w.grade_id)
        assert f'Reveal("{w.grade_id}")' in nb.cells[at + 1].source, f"{source.name}: no reveal cell after {w.grade_id}"
    key = ROOT / "course" / source.parent.name / written.KEY_FILE
    assert written.load_key(key.parent) == {w.grade_id: w for w in items}


def _answered(folder: Path, grade_id: str, text: str) -> None:
    path = written.notebook_path(folder)
    nb = json.loads(path.read_text(encoding="utf-8"))
    cell = next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == grade_id)
    cell["source"] = text
    path.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")


def test_the_reveal_opens_only_after_an_answer_is_saved_and_scores_against_the_rubric(tmp_path, monkeypatch):
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    folder = tmp_path / "02_pricing"
    shutil.copytree(ROOT / "course" / "02_pricing", folder)
    item = written.load_key(folder)["api-only"]
    r = Reveal("api-only", folder=folder)
    assert not r.open() and "保存" in r.message and item.rubric[0] not in r.as_text()
    _answered(folder, "api-only", "YOUR ANSWER HERE\n\n短い")       # the stub and a few characters are not an answer
    assert not r.open()
    _answered(folder, "api-only", "DB の月額と、キャッシュのヒット率を入れていないので比べられない。")
    assert r.open() and item.rubric[0].lstrip("- ") in r.as_text() and item.model_answer.splitlines()[0] in r.as_text()
    with pytest.raises(ValueError, match="段階"):
        r.self_score(1.5)
    r.self_score(1)
    assert r.score == 1 and "自己採点: 1 / 2 点" in r.as_text()
    r._levels.value = 2.0                                                    # what a click on the radio button does
    assert r.score == 2.0


def test_jupyters_session_name_finds_a_renamed_notebook(tmp_path, monkeypatch):
    folder = tmp_path / "02_pricing"
    shutil.copytree(ROOT / "course" / "02_pricing", folder)
    renamed = folder / "コピー.ipynb"
    (folder / "02_pricing.ipynb").rename(renamed)
    monkeypatch.setenv("JPY_SESSION_NAME", str(renamed))
    _answered(folder, "api-only", "DB の月額と、キャッシュのヒット率を入れていないので比べられない。")
    assert Reveal("api-only", folder=folder).open()


def test_without_the_key_file_the_reveal_shows_nothing_of_the_rubric(tmp_path):
    folder = tmp_path / "02_pricing"
    shutil.copytree(ROOT / "course" / "02_pricing", folder)
    (folder / written.KEY_FILE).unlink()
    _answered(folder, "api-only", "DB の月額と、キャッシュのヒット率を入れていないので比べられない。")
    r = Reveal("api-only", folder=folder)
    assert not r.open() and r.message == GRADED and repr(r) == GRADED
    data = r._repr_mimebundle_()
    assert GRADED in data["text/plain"]


@pytest.mark.slow
def test_the_graded_release_holds_no_rubric_or_model_answer_and_a_planted_one_stops_it(tmp_path, monkeypatch):
    out = release.release_graded(tmp_path / "graded", ROOT, ["02_pricing"])
    assert out == ["02_pricing"] and not list((tmp_path / "graded").rglob(written.KEY_FILE))
    assert written.leaks([tmp_path / "graded"], release.written_answers(ROOT)) == []
    # positive control: a release that carried the self-study file is refused and nothing is written
    real = release.generate

    def leaky(root, out, names, graded=False):
        real(root, out, names, graded)
        for name in names:
            shutil.copy(ROOT / "course" / name / written.KEY_FILE, Path(out) / name / written.KEY_FILE)

    monkeypatch.setattr(release, "generate", leaky)
    with pytest.raises(InputError, match="rubric"):
        release.release_graded(tmp_path / "graded2", ROOT, ["02_pricing"])
    assert not list((tmp_path / "graded2").rglob("*.ipynb"))
