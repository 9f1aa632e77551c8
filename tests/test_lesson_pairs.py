"""Lesson pairs in solutions/ (NN.ipynb <-> NN.py) and tools/sync_lessons.py (`make notebooks`).

The pair tests read the files with nbformat and jupytext directly, not through the sync
script, so a bug in the script cannot hide a drifted pair.
"""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jupytext
import nbformat
import pytest

import sync_lessons
from ctxlab import quiz as qz

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted(p.parent.name for p in (ROOT / "solutions").glob("*/*.ipynb"))
COMMITTED_NOTEBOOKS = sorted((ROOT / "solutions").glob("*/*.ipynb")) + sorted((ROOT / "course").glob("*/*.ipynb"))
LESSON = "03_prompt_caching"
FLAGS = ("grade", "solution", "locked", "task")


def pair(root: Path, lesson: str) -> tuple[Path, Path]:
    folder = root / "solutions" / lesson
    return folder / f"{lesson}.ipynb", folder / f"{lesson}.py"


def cell_list(nb) -> list[tuple]:
    return [(c.cell_type, c.source, c.metadata.get("nbgrader"), c.metadata.get("tags")) for c in nb.cells]


def test_every_lesson_is_a_pair():
    assert LESSONS, "solutions/ holds no lesson notebook"
    scripts = sorted(p.parent.name for p in (ROOT / "solutions").glob("*/*.py"))
    assert scripts == LESSONS, "each solutions/NN_name/ holds NN_name.ipynb and NN_name.py: run `make notebooks`"


@pytest.mark.parametrize("lesson", LESSONS)
def test_pair_has_the_same_cells(lesson):
    ipynb, py = pair(ROOT, lesson)
    nb, text = nbformat.read(ipynb, as_version=4), jupytext.read(py)
    a, b = cell_list(nb), cell_list(text)
    first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    assert a == b, (f"{ipynb.name} ({len(a)} cells) and {py.name} ({len(b)} cells) differ from cell {first} on "
                    f"(type, source, nbgrader metadata or tags): run `make notebooks`")


def test_sync_has_nothing_to_write_in_this_checkout():
    """Byte for byte what the sync writes: a committed pair that only looks alike fails here."""
    assert sync_lessons.sync(ROOT, check=True) == [], "run `make notebooks` and commit the result"


# -- nbgrader metadata -------------------------------------------------------------------------

def metadata_problems(nb) -> list[str]:
    """What is wrong with a source notebook's nbgrader metadata (nbgrader schema 3, this course's rules)."""
    out, seen = [], {}
    for i, c in enumerate(nb.cells):
        where = f"cell {i} ({c.cell_type}, id {c.get('id')})"
        m = c.metadata.get("nbgrader")
        has_solution = "### BEGIN SOLUTION" in c.source
        has_hidden = "### BEGIN HIDDEN TESTS" in c.source
        if m is None:
            if has_solution or has_hidden:
                out.append(f"{where}: has a solution or hidden-test region but no nbgrader metadata")
            continue
        if m.get("schema_version") != 3:
            out.append(f"{where}: schema_version must be 3, not {m.get('schema_version')!r}")
        gid = m.get("grade_id")
        if not isinstance(gid, str) or not re.fullmatch(r"[A-Za-z0-9_-]+", gid):
            out.append(f"{where}: grade_id {gid!r} must be letters, digits, - or _")
        elif gid in seen:
            out.append(f"{where}: grade_id {gid!r} is also used by cell {seen[gid]}")
        else:
            seen[gid] = i
        missing = [f for f in FLAGS if not isinstance(m.get(f), bool)]
        if missing:
            out.append(f"{where}: needs true/false for {', '.join(missing)}")
            continue
        if m["task"]:
            out.append(f"{where}: task cells are not used in this course")
        if m["grade"]:
            pts = m.get("points")
            if isinstance(pts, bool) or not isinstance(pts, (int, float)) or pts <= 0:
                out.append(f"{where}: a graded cell needs points > 0, not {pts!r}")
        elif "points" in m:
            out.append(f"{where}: points on a cell that is not graded")
        if m["solution"]:
            if m["locked"]:
                out.append(f"{where}: an answer cell (solution) cannot be locked")
            if not (has_solution and "### END SOLUTION" in c.source):
                out.append(f"{where}: an answer cell needs ### BEGIN SOLUTION ... ### END SOLUTION")
        elif has_solution:
            out.append(f"{where}: has ### BEGIN SOLUTION but solution is false")
        if m["grade"] and not m["solution"]:  # autograder tests
            if c.cell_type != "code":
                out.append(f"{where}: autograder tests must be a code cell")
            if not m["locked"]:
                out.append(f"{where}: a test cell must be locked")
            if not (has_hidden and "### END HIDDEN TESTS" in c.source):
                out.append(f"{where}: a test cell needs ### BEGIN HIDDEN TESTS ... ### END HIDDEN TESTS")
        elif has_hidden:
            out.append(f"{where}: has hidden tests but is not a test cell (grade true, solution false)")
        if not m["grade"] and not m["solution"] and not m["locked"]:
            out.append(f"{where}: nbgrader metadata on an ordinary cell: drop it, or make it read-only (locked)")
    return out


@pytest.mark.parametrize("lesson", LESSONS)
def test_graded_cells_have_complete_nbgrader_metadata(lesson):
    ipynb, _ = pair(ROOT, lesson)
    nb = nbformat.read(ipynb, as_version=4)
    assert metadata_problems(nb) == []
    kinds = {(m["grade"], m["solution"]) for c in nb.cells if (m := c.metadata.get("nbgrader"))}
    assert (False, True) in kinds or (True, True) in kinds, f"{ipynb.name} has no answer cell"


def _nb(*cells):
    return nbformat.v4.new_notebook(cells=list(cells))


def _md(grade_id, **flags):
    return {"nbgrader": {"schema_version": 3, "grade_id": grade_id, "grade": False, "solution": False,
                         "locked": True, "task": False, **flags}}


@pytest.mark.parametrize("cell,expected", [
    (nbformat.v4.new_code_cell("### BEGIN SOLUTION\nx = 1\n### END SOLUTION"), "no nbgrader metadata"),
    (nbformat.v4.new_code_cell("assert x\n### BEGIN HIDDEN TESTS\nassert x\n### END HIDDEN TESTS"),
     "no nbgrader metadata"),
    (nbformat.v4.new_code_cell("x = 1", metadata=_md("a", solution=True, locked=False)), "### BEGIN SOLUTION"),
    (nbformat.v4.new_code_cell("assert x", metadata=_md("t", grade=True, points=1)), "HIDDEN TESTS"),
    (nbformat.v4.new_code_cell("### BEGIN HIDDEN TESTS\n### END HIDDEN TESTS", metadata=_md("t", grade=True)),
     "points > 0"),
    (nbformat.v4.new_code_cell("### BEGIN HIDDEN TESTS\n### END HIDDEN TESTS",
                               metadata=_md("t", grade=True, points=1, locked=False)), "must be locked"),
    (nbformat.v4.new_markdown_cell("x", metadata=_md("p", schema_version=2)), "schema_version"),
    (nbformat.v4.new_markdown_cell("x", metadata=_md("has space")), "grade_id"),
    (nbformat.v4.new_markdown_cell("x", metadata={"nbgrader": {"schema_version": 3, "grade_id": "p"}}),
     "needs true/false"),
])
def test_metadata_check_catches(cell, expected):
    problems = metadata_problems(_nb(cell))
    assert any(expected in p for p in problems), problems


def test_metadata_check_catches_a_duplicate_grade_id():
    cells = [nbformat.v4.new_markdown_cell("x", metadata=_md("same")) for _ in range(2)]
    assert metadata_problems(_nb(*cells)) == ["cell 1 (markdown, id %s): grade_id 'same' is also used by cell 0"
                                              % cells[1].id]


# -- committed notebooks are clean -------------------------------------------------------------

@pytest.mark.parametrize("path", COMMITTED_NOTEBOOKS, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}")
def test_committed_notebook_has_no_outputs_and_a_kernelspec(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    assert nb["metadata"].get("kernelspec", {}).get("name") == "python3", \
        f"{path}: kernelspec must be python3 (JupyterLab would ask for a kernel): run `make notebooks`"
    ids = [c.get("id") for c in nb["cells"]]
    assert all(ids) and len(ids) == len(set(ids)), f"{path}: every cell needs its own id"
    dirty = [c["id"] for c in nb["cells"] if c["cell_type"] == "code"
             and (c.get("outputs") or c.get("execution_count") is not None)]
    assert dirty == [], f"{path}: cells {dirty} have outputs or an execution count: run `make notebooks`"


# -- the sync ----------------------------------------------------------------------------------

def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


@pytest.fixture
def scratch(tmp_path) -> Path:
    """A committed copy of the course's solutions/ and nbgrader config, in a git repository of its own."""
    root = tmp_path / "course-root"
    shutil.copytree(ROOT / "solutions", root / "solutions",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    for name in ("nbgrader_config.py", ".gitignore"):
        shutil.copy(ROOT / name, root / name)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "course")
    return root


def status(root: Path) -> str:
    return git(root, "status", "--porcelain")


def save_as_jupyterlab(path: Path, index: int, new_source: str) -> list[str]:
    """Change one cell the way JupyterLab saves a notebook that was run; return the cell ids before."""
    nb = nbformat.read(path, as_version=4)
    ids = [c.id for c in nb.cells]
    nb.cells[index].source = new_source
    nb.cells[index].metadata["tags"] = ["edited"]
    for n, c in enumerate(c for c in nb.cells if c.cell_type == "code"):
        c.execution_count = n + 1
        c.outputs = [nbformat.v4.new_output("stream", name="stdout", text="ran\n")]
        c.metadata["scrolled"] = True
    nb.metadata["language_info"] = {"name": "python", "version": "3.11.9", "mimetype": "text/x-python"}
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    nbformat.write(nb, path)
    return ids


def first_cell(nb, cell_type: str) -> int:
    return next(i for i, c in enumerate(nb.cells) if c.cell_type == cell_type and "nbgrader" not in c.metadata)


def assert_clean_notebook(path: Path, ids: list[str]):
    nb = nbformat.read(path, as_version=4)
    assert [c.id for c in nb.cells] == ids, "cell ids changed"
    assert nb.metadata == {"kernelspec": sync_lessons.KERNELSPEC, "language_info": sync_lessons.LANGUAGE_INFO}
    for c in nb.cells:
        if c.cell_type == "code":
            assert c.outputs == [] and c.execution_count is None, f"cell {c.id} kept its outputs"
        assert set(c.metadata) <= {"nbgrader", "tags"}, f"cell {c.id} kept {sorted(c.metadata)}"
    return nb


def test_sync_of_a_fresh_clone_changes_nothing_whatever_the_mtimes(scratch):
    ipynb, py = pair(scratch, LESSON)
    os.utime(py, (1_000_000, 1_000_000))  # the notebook looks newer ...
    other_ipynb, other_py = pair(scratch, LESSONS[0])
    os.utime(other_ipynb, (1_000_000, 1_000_000))  # ... and here the script does
    assert sync_lessons.sync(scratch) == []
    assert sync_lessons.sync(scratch) == []
    assert status(scratch) == ""


def test_notebook_edit_reaches_the_script_with_ids_kept_and_outputs_cleared(scratch):
    ipynb, py = pair(scratch, LESSON)
    index = first_cell(nbformat.read(ipynb, as_version=4), "code")
    old = nbformat.read(ipynb, as_version=4).cells[index].source
    ids = save_as_jupyterlab(ipynb, index, old + "\nprint('edited in JupyterLab')")
    os.utime(py, None)  # the script looks newer than the edit: mtimes must not decide
    assert sync_lessons.sync(scratch) == [f"solutions/{LESSON}/{LESSON}.py", f"solutions/{LESSON}/{LESSON}.ipynb"]
    assert "print('edited in JupyterLab')" in py.read_text(encoding="utf-8")
    assert '# %% tags=["edited"]' in py.read_text(encoding="utf-8"), "a tag set in JupyterLab was dropped"
    nb = assert_clean_notebook(ipynb, ids)
    assert nb.cells[index].source == old + "\nprint('edited in JupyterLab')"
    assert nb.cells[index].metadata == {"tags": ["edited"]}
    assert sorted(status(scratch).split()) == ["M", "M", f"solutions/{LESSON}/{LESSON}.ipynb",
                                               f"solutions/{LESSON}/{LESSON}.py"]
    assert sync_lessons.sync(scratch) == [], "a second sync must change nothing"


def test_script_edit_reaches_the_notebook_with_ids_kept(scratch):
    ipynb, py = pair(scratch, LESSON)
    ids = [c.id for c in nbformat.read(ipynb, as_version=4).cells]
    text = py.read_text(encoding="utf-8")
    py.write_text(text.replace("# %% [markdown]\n# ## ", "# %% [markdown]\n# ## (edited) ", 1), encoding="utf-8")
    os.utime(ipynb, None)  # the notebook looks newer than the edit
    assert sync_lessons.sync(scratch) == [f"solutions/{LESSON}/{LESSON}.ipynb"]
    nb = assert_clean_notebook(ipynb, ids)
    assert sum("## (edited) " in c.source for c in nb.cells) == 1


def test_new_and_deleted_cells_in_the_script_keep_the_other_ids(scratch):
    ipynb, py = pair(scratch, LESSON)
    before = nbformat.read(ipynb, as_version=4)
    chunks = re.split(r"(?m)^(?=# %%)", py.read_text(encoding="utf-8"))
    assert chunks[0] == "" and chunks[1].startswith("# %% [markdown]")
    first_code = next(i for i, ch in enumerate(chunks) if ch.startswith("# %%\n"))
    chunks.insert(first_code + 1, "# %%\nprint('new cell')\n\n")
    del chunks[1]  # the lesson's first (markdown) cell
    py.write_text("".join(chunks), encoding="utf-8")
    sync_lessons.sync(scratch)
    after = nbformat.read(ipynb, as_version=4)
    new = [c for c in after.cells if c.source == "print('new cell')"]
    assert len(new) == 1 and new[0].id not in {c.id for c in before.cells}
    assert [c.id for c in after.cells if c is not new[0]] == [c.id for c in before.cells[1:]]


def test_both_sides_edited_is_refused_and_writes_nothing(scratch):
    ipynb, py = pair(scratch, LESSON)
    index = first_cell(nbformat.read(ipynb, as_version=4), "markdown")
    save_as_jupyterlab(ipynb, index, "# notebook edit")
    py.write_text(py.read_text(encoding="utf-8") + "\n# %%\nprint('script edit')\n", encoding="utf-8")
    nb_bytes, py_bytes = ipynb.read_bytes(), py.read_bytes()
    with pytest.raises(sync_lessons.SyncError) as err:
        sync_lessons.sync(scratch)
    message = str(err.value)
    assert f"{LESSON}.ipynb and {LESSON}.py" in message and "both files were edited" in message
    assert f"make notebooks KEEP=solutions/{LESSON}/{LESSON}.py" in message
    assert (ipynb.read_bytes(), py.read_bytes()) == (nb_bytes, py_bytes), "a refused sync wrote a file"
    # the instructor chooses
    sync_lessons.sync(scratch, keep=[f"solutions/{LESSON}/{LESSON}.ipynb"])
    assert "# notebook edit" in py.read_text(encoding="utf-8")
    assert "script edit" not in ipynb.read_text(encoding="utf-8")


def test_a_committed_drift_is_refused(scratch):
    ipynb, py = pair(scratch, LESSON)
    py.write_text(py.read_text(encoding="utf-8") + "\n# %%\nprint('committed without a sync')\n", encoding="utf-8")
    git(scratch, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qam", "drift")
    with pytest.raises(sync_lessons.SyncError, match="neither file changed"):
        sync_lessons.sync(scratch)
    assert status(scratch) == ""


def test_edit_sync_edit_without_a_commit_follows_the_last_edit(scratch):
    """After a sync both files differ from HEAD; the record of the last sync says which one moved since."""
    ipynb, py = pair(scratch, LESSON)
    py.write_text(py.read_text(encoding="utf-8") + "\n# %%\nprint('first')\n", encoding="utf-8")
    sync_lessons.sync(scratch)
    index = len(nbformat.read(ipynb, as_version=4).cells) - 1
    save_as_jupyterlab(ipynb, index, "print('second')")
    sync_lessons.sync(scratch)
    assert py.read_text(encoding="utf-8").endswith('# %% tags=["edited"]\nprint(\'second\')\n')
    assert "print('first')" not in py.read_text(encoding="utf-8")


def test_cli_refuses_with_a_message_and_an_exit_status(scratch):
    ipynb, py = pair(scratch, LESSON)
    save_as_jupyterlab(ipynb, 0, "# notebook edit")
    py.write_text(py.read_text(encoding="utf-8").replace("# %%", "# %%\n# script edit", 1), encoding="utf-8")
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "sync_lessons.py"), "--root", str(scratch)],
                          capture_output=True, text=True)
    assert proc.returncode == 1
    assert "KEEP=" in proc.stderr and f"{LESSON}.ipynb" in proc.stderr
    bad = subprocess.run([sys.executable, str(ROOT / "tools" / "sync_lessons.py"), "--root", str(scratch),
                          "--keep", "README.md"], capture_output=True, text=True)
    assert bad.returncode == 1 and "not a lesson file" in bad.stderr


def test_make_notebooks_syncs_then_releases():
    proc = subprocess.run(["make", "-n", "notebooks", "KEEP=x.py"], cwd=ROOT, capture_output=True, text=True)
    lines = [line for line in proc.stdout.splitlines() if "sync_lessons.py" in line or "ctxlab release" in line]
    assert len(lines) == 2 and "sync_lessons.py" in lines[0] and '--keep "x.py"' in lines[0], proc.stdout
    assert "ctxlab release" in lines[1]


@pytest.mark.slow
@pytest.mark.parametrize("edited", ["ipynb", "py"])
def test_round_trip_edit_sync_release(scratch, edited):
    """The issue's acceptance: edit a cell of lesson 03, `make notebooks` keeps it and updates course/."""
    ipynb, py = pair(scratch, LESSON)
    nb = nbformat.read(ipynb, as_version=4)
    index = first_cell(nb, "markdown")
    marker = f"編集の確認（{edited}）"
    if edited == "ipynb":
        ids = save_as_jupyterlab(ipynb, index, nb.cells[index].source + "\n\n" + marker)
    else:
        ids = [c.id for c in nb.cells]
        text = py.read_text(encoding="utf-8")
        first_md_end = text.index("\n\n# %%")
        py.write_text(text[:first_md_end] + "\n#\n# " + marker + text[first_md_end:], encoding="utf-8")
    # the two commands of `make notebooks`
    sync = subprocess.run([sys.executable, str(ROOT / "tools" / "sync_lessons.py"), "--root", str(scratch)],
                          capture_output=True, text=True)
    assert sync.returncode == 0, sync.stderr
    ctxlab = Path(sys.executable).with_name("ctxlab")
    release = subprocess.run([str(ctxlab), "release", "--root", str(scratch), LESSON],
                             capture_output=True, text=True, cwd=scratch)
    assert release.returncode == 0, release.stderr
    assert marker in py.read_text(encoding="utf-8")
    synced = assert_clean_notebook(ipynb, ids)
    assert marker in synced.cells[index].source
    released = nbformat.read(scratch / "course" / LESSON / f"{LESSON}.ipynb", as_version=4)
    assert marker in released.cells[index].source
    assert not (scratch / "course" / LESSON / f"{LESSON}.py").exists(), "the solution twin reached course/"


# -- lesson 09: the knowledge check is built from the quiz bank -------------------------------

def test_knowledge_check_matches_the_quiz_bank():
    """The answer key, one test cell per question and the question count come from quizzes/knowledge_check.yaml
    and its key file (solutions/09_knowledge_check/knowledge_check.key.yaml).

    The notebook is a static copy: change it with the bank (the messages give the cell to paste).
    """
    bank = qz.instructor_bank()
    n = len(bank)
    nb = nbformat.read(pair(ROOT, "09_knowledge_check")[0], as_version=4)
    by_id = {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells if "nbgrader" in c.metadata}

    # the solution clicks the key through the widget (in bank order), then runs the released line
    clicks = by_id["answers"].source.split("### BEGIN SOLUTION")[1].split("### END SOLUTION")[0]
    key = {q.id: q.correct_id() for q in bank}
    expected = f"for choice in {tuple(key.values())!r}:".replace("'", '"')
    assert expected in clicks, f"09's solution (cell answers) does not click the bank's key; it should read:\n{expected}"

    tests = [gid for gid in by_id if gid.endswith("-tests")]
    assert tests == [f"{q.id}-tests" for q in bank], "09 needs one test cell per bank question, in bank order"
    for q in bank:
        want = qz.hidden_test(q)   # the form check, then (hidden) the feedback text and the grade
        cell = by_id[f"{q.id}-tests"]
        assert cell.source == want, f"09's cell {q.id}-tests is stale; it should read:\n{want}"
        assert cell.metadata["nbgrader"]["points"] == 1

    phrases = {"cell-000": f"相談の形で {n} 問にしました", "answers-task": f"演習 1（{n} 点・1 問 1 点）",
               "why-prompt": f"{n} 問から 1 問を選び"}
    cells = {c.id: c.source for c in nb.cells}
    stale = {cid: p for cid, p in phrases.items() if p not in cells.get(cid, "")}
    assert not stale, f"09 names a question count other than the bank's {n} in cells {stale}"
    assert f'"q{n}"' in cells["answers-task"] and f"{n} 問ぶんの辞書" in cells["answers-task"]
