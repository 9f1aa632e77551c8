"""A copy of the checkout whose course/ holds a learner's work (issue 39, item 2).

``make lab`` opens course/ for work: a learner who solved lessons there leaves answers, outputs and files.
:func:`dirty_checkout` copies the committed files into a scratch git repository (committed once, clean),
then plants such work in its course/; kits (tools/learner_bundle.py) and the site (tools/build_site.py)
built from that copy must hold none of :data:`PLANTED`.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
TAG = "PLANTED-7f3a"
#: what the learner left, each a string no build may carry
PLANTED = {
    "solution": f"first_paying_call_by_learner = 2  # {TAG} a learner's answer",
    "output": f"学習者の出力 {TAG}",
    "written": f"学習者の記述 {TAG}: 58% は前提を超えるので絞り込みにする",
    "file": f"学習者のメモ {TAG}",
    "readme": f"学習者が README に書いた行 {TAG}",
}


def dirty_checkout(dest: Path) -> Path:
    """The committed files of this checkout in ``dest`` (a git repository, committed), then a learner's
    work planted in ``dest/course``: an answer and an output in 03, a written answer in 00, a notes
    file and a ``.env`` in course/, a line in course/README.md. Returns ``dest``."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for rel in filter(None, files.decode("utf-8").split("\0")):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q"], cwd=dest, check=True)
    subprocess.run(git + ["add", "-A"], cwd=dest, check=True)
    subprocess.run(git + ["commit", "-q", "-m", "clean"], cwd=dest, check=True)

    course = dest / "course"
    path = course / "03_prompt_caching" / "03_prompt_caching.ipynb"
    nb = nbformat.read(path, as_version=4)
    answer = next(c for c in nb.cells if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution"))
    answer.source = PLANTED["solution"]
    answer.outputs = [nbformat.v4.new_output("stream", name="stdout", text=PLANTED["output"] + "\n")]
    nbformat.write(nb, path)
    path = course / "00_start_here" / "00_start_here.ipynb"
    nb = nbformat.read(path, as_version=4)
    written = next(c for c in nb.cells if c.cell_type == "markdown" and c.metadata.get("nbgrader", {}).get("solution"))
    written.source = PLANTED["written"]
    nbformat.write(nb, path)
    (course / "my_notes.txt").write_text(PLANTED["file"] + "\n", encoding="utf-8")
    (course / ".env").write_text(f"ANTHROPIC_API_KEY=sk-ant-{TAG}\n", encoding="utf-8")
    readme = course / "README.md"
    readme.write_text(readme.read_text(encoding="utf-8") + "\n" + PLANTED["readme"] + "\n", encoding="utf-8")
    return dest


def planted_in(texts: dict[str, str]) -> list[str]:
    """Which of ``texts`` (name -> content) hold a planted string."""
    return sorted(name for name, text in texts.items() if TAG in text)
