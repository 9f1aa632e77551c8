"""Regenerate a learner release from the nbgrader source (solutions/): self-study (course/) or graded.

nbgrader's generate_assignment strips solutions and hidden tests, clears outputs and adds
checksums. It runs in a scratch course root (:func:`~ctxlab.grading._nbgrader.build_course_root`
without gradebook, one nbgrader process for all the assignments), so the repository's
gradebook is not touched, and a file in course/ is rewritten only when its bytes change.
The output is deterministic: the same solutions/ give byte-identical files.

Two modes, chosen by the instructor at release time (the notebooks are the same; what ships
beside them differs):

- *self-study* (:func:`release`, ``ctxlab release``, the default ``course/``): each graded
  bank's key file (``solutions/NN/*.key.yaml``) is copied beside its notebook, so the quiz
  widget of lesson 09 judges every answer at once and shows every choice's note, and each
  lesson with written answers gets their rubrics and model answers
  (:data:`ctxlab.quiz.written.KEY_FILE`), which the learner opens after writing their own;
- *graded* (:func:`release_graded`, ``ctxlab release --graded OUT``, for a workshop): nothing
  but nbgrader's own output. nbgrader never copies a key file (nbgrader_config.py ignores
  ``*.key.yaml``), so the widget only records answers, the hidden tests grade them and the
  notes reach the learner in the feedback. Before it returns, the release is searched for the
  key in every recoverable form (:func:`ctxlab.quiz.graded.key_leaks`); a hit is an error.
"""
from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from ctxlab import quiz
from ctxlab._paths import REPO_ROOT
from ctxlab.errors import InputError
from ctxlab.grading._nbgrader import RELEASE_DIR, SOURCE_DIR, build_course_root, same_tree
from ctxlab.quiz import written
from ctxlab.quiz.graded import key_leaks

#: what only the self-study release carries beside a notebook (nbgrader_config.py ignores it)
SELF_STUDY_ONLY = "*.key.yaml"


def assignments(root: Path = REPO_ROOT) -> list[str]:
    """The assignment ids of a course: the folders of solutions/ that hold a notebook."""
    src = Path(root) / SOURCE_DIR
    return sorted(p.name for p in src.iterdir() if p.is_dir() and any(p.glob("*.ipynb"))) if src.exists() else []


def generate(root: Path, out: Path, names: list[str], graded: bool = False) -> None:
    """Run nbgrader generate_assignment for ``names`` with ``root``'s solutions, into ``out``
    (self-study: with each graded bank's key file beside its notebook)."""
    with tempfile.TemporaryDirectory(prefix="ctxlab-release-") as tmp:
        scratch = build_course_root(Path(tmp), names, root, db=False)
        for name in names:
            target = Path(out) / name
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(scratch / RELEASE_DIR / name, target)
            if not graded:
                for key in sorted((Path(root) / SOURCE_DIR / name).glob(SELF_STUDY_ONLY)):
                    learner_key(key, target / key.name)
                for source in sorted((Path(root) / SOURCE_DIR / name).glob("*.ipynb")):
                    written.write_key(source, target)


#: the self-study key file's first lines, in place of the instructor's (English, about nbgrader)
LEARNER_KEY_HEADER = """\
# 確認問題（09）の正解と解説です。自習版にだけ入っていて、クイズが答え合わせに使います。
# 答える前に開くと練習になりません。消すとクイズは答えを記録するだけになります（正誤と解説が出なくなります）。
"""


def learner_key(key: Path, target: Path) -> None:
    """Copy a key file for the self-study release: the instructor's comment header becomes a learner's one."""
    lines = key.read_text(encoding="utf-8").splitlines(keepends=True)
    body = lines[next((i for i, line in enumerate(lines) if not line.startswith("#")), len(lines)):]
    target.write_text(LEARNER_KEY_HEADER + "".join(body), encoding="utf-8")


def _names(root: Path, names: list[str] | None) -> list[str]:
    names = names or assignments(root)
    unknown = [n for n in names if not (root / SOURCE_DIR / n).is_dir()]
    if unknown:
        raise InputError(f"no such assignment in solutions/: {', '.join(unknown)}")
    return names


def _write(out: Path, dest_root: Path, names: list[str]) -> list[str]:
    changed = []
    for name in names:
        dest = dest_root / name
        if not same_tree(out / name, dest):
            if dest.exists():
                shutil.rmtree(dest)
            shutil.copytree(out / name, dest)
            changed.append(name)
    return changed


def release(root: Path = REPO_ROOT, assignments: list[str] | None = None) -> list[str]:
    """Regenerate the self-study course/ from solutions/; return the assignments whose release changed."""
    root = Path(root).resolve()
    names = _names(root, assignments)
    with tempfile.TemporaryDirectory(prefix="ctxlab-out-") as tmp:
        generate(root, Path(tmp), names)
        return _write(Path(tmp), root / RELEASE_DIR, names)


#: what course/ holds beside the lessons, written by hand (not generated from solutions/)
COURSE_README = "README.md"
COURSE_GLOSSARY = "glossary.md"
COURSE_FILES = (COURSE_README, COURSE_GLOSSARY)


def committed_file(root: Path, name: str) -> str:
    """course/``name`` as committed (``git show HEAD:course/NAME``): a learner who worked in
    ``course/`` may have edited the file on disk. Outside a git checkout, the file on disk."""
    root = Path(root)
    proc = subprocess.run(["git", "show", f"HEAD:{RELEASE_DIR}/{name}"], cwd=root,
                          capture_output=True) if (root / ".git").exists() else None
    if proc is not None and proc.returncode == 0:
        return proc.stdout.decode("utf-8")
    return (root / RELEASE_DIR / name).read_text(encoding="utf-8")


def committed_readme(root: Path) -> str:
    """course/README.md as committed (:func:`committed_file`)."""
    return committed_file(root, COURSE_README)


def fresh_release(out: Path, root: Path = REPO_ROOT, graded: bool = False) -> list[str]:
    """A learner release generated now from ``root``'s solutions/ into ``out`` (a new folder), with
    the committed course/README.md and glossary.md: what kits and the site are built from. ``course/`` itself is the
    folder ``make lab`` opens for work, so whatever a learner left there (answers, outputs, files) is
    never read."""
    root, out = Path(root).resolve(), Path(out).resolve()
    if out in (root / RELEASE_DIR, root / SOURCE_DIR) or out == root:
        raise InputError(f"write a fresh release to a folder of its own, not {out}")
    if graded:
        names = release_graded(out, root)
    else:
        names = _names(root, None)
        generate(root, out, names)
    for name in COURSE_FILES:
        (out / name).write_text(committed_file(root, name), encoding="utf-8")
    return names


def graded_bank(root: Path) -> quiz.Bank | None:
    """The knowledge check with its key, from ``root``'s source (None when ``root`` has no key file)."""
    key = Path(root) / SOURCE_DIR / "09_knowledge_check" / quiz.KEY_FILE
    return quiz.load(quiz.KNOWLEDGE_CHECK, key_file=key) if key.exists() else None


def written_answers(root: Path = REPO_ROOT) -> list[written.Written]:
    """Every written answer's rubric and model answer in ``root``'s source notebooks (what a graded build never holds)."""
    import json

    return [w for nb in sorted((Path(root) / SOURCE_DIR).glob("*/*.ipynb"))
            for w in written.from_notebook(json.loads(nb.read_text(encoding="utf-8")))]


def release_graded(out: Path, root: Path = REPO_ROOT, assignments: list[str] | None = None) -> list[str]:
    """Write the graded release of ``root``'s solutions/ into ``out``; return the assignments written.

    Raises :class:`InputError` when ``out`` is ``root``'s own course/ or solutions/ (the
    self-study release and the source stay as they are), and when the search finds a key.
    """
    root, out = Path(root).resolve(), Path(out).resolve()
    if out in (root / RELEASE_DIR, root / SOURCE_DIR) or out == root:
        raise InputError(f"write the graded release to a folder of its own, not {out} (e.g. ctxlab release --graded graded/)")
    names = _names(root, assignments)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ctxlab-out-") as tmp:
        generate(root, Path(tmp), names, graded=True)
        bank = graded_bank(root)
        leaks = key_leaks([Path(tmp)], bank) if bank is not None else []
        leaks += written.leaks([Path(tmp)], written_answers(root))
        if leaks:
            raise InputError("the graded release would hold the knowledge check's key or a written answer's rubric "
                             "or model answer; nothing was written:\n  - " + "\n  - ".join(leaks))
        _write(Path(tmp), out, names)
    return names


def stale(root: Path = REPO_ROOT) -> list[str]:
    """Assignments whose course/ release differs from a fresh generation (nothing is written)."""
    root = Path(root).resolve()
    names = assignments(root)
    with tempfile.TemporaryDirectory(prefix="ctxlab-check-") as tmp:
        out = Path(tmp)
        generate(root, out, names)
        return [n for n in names if not same_tree(out / n, root / RELEASE_DIR / n)]
