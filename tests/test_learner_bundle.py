"""The learner bundle (``make learner-bundle``): a lesson runs from the bundle alone, and no answer is in it.

The bundle is built once; the wheel is installed into a fresh venv (offline, ``--no-index``;
its third-party dependencies come from this checkout's venv through a ``.pth`` line, so the
test takes seconds, not a full install); the bundle is unzipped into a folder with no
checkout around it; a released lesson, with its exercises answered as a learner would,
runs top to bottom in a kernel of the fresh venv, which reads data/ and quizzes/ from the
installed package. Then the solution and hidden-test regions of solutions/ are looked for in
every file of the bundle and of the wheel.
"""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import nbformat
import pytest

import learner_bundle  # tools/ (conftest puts it on sys.path)

ROOT = Path(__file__).resolve().parent.parent
LESSONS = ["00_start_here", "09_knowledge_check"]

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
    tmp = tmp_path_factory.mktemp("bundle")
    zip_path, wheel = learner_bundle.build(tmp / "dist")
    return zip_path, wheel, tmp


@pytest.fixture(scope="module")
def learner(bundle):
    """The bundle unzipped, and a fresh venv with the wheel installed (PATH, env for it)."""
    zip_path, wheel, tmp = bundle
    home = tmp / "learner"
    with zipfile.ZipFile(zip_path) as zf:
        zf.extractall(home)
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--quiet", "--no-deps",
                    "--no-index", str(home / wheel.name)], check=True, capture_output=True)
    site = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    (site / "zz_course_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "ANTHROPIC_API_KEY")}
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}", JUPYTER_DATA_DIR=str(tmp / "jupyter"),
               CTXLAB_OFFLINE="1", CTXLAB_TIME_SCALE="0", MPLBACKEND="Agg")
    subprocess.run([str(py), "-m", "ipykernel", "install", "--sys-prefix", "--name", "python3"], check=True,
                   capture_output=True, env=env)
    return home, venv, py, env


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
@pytest.mark.parametrize("name", LESSONS)
def test_a_released_lesson_runs_from_the_bundle_alone(learner, name):
    home, venv, py, env = learner
    folder = home / "course" / name
    path = folder / f"{name}.solved.ipynb"
    nbformat.write(solved(folder / f"{name}.ipynb", name), path)
    proc = subprocess.run([str(py), "-c", _RUN, str(path), str(folder)], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=600)
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
def test_the_bundle_holds_no_solution_hidden_test_or_lesson_source(bundle):
    zip_path, _wheel, _tmp = bundle
    with zipfile.ZipFile(zip_path) as zf:
        names = zf.namelist()
        files = dict(_members(zf, zip_path.name))
    assert any(n.startswith("course/") for n in names) and any(n.endswith(".whl") for n in names)
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
            held = [ln for ln in lines if ln in text]
            if (kind == "hidden test" and held) or len(held) * 3 >= len(lines) * 2:
                leaks.append((lesson, kind, where.rsplit("/", 1)[-1], held))
    assert not leaks, leaks
