"""Regenerate the learner release (course/) from the nbgrader source (solutions/).

nbgrader's generate_assignment strips solutions and hidden tests, clears outputs and adds
checksums. It runs in a scratch course root (:func:`~ctxlab.grading._nbgrader.build_course_root`
without gradebook, one nbgrader process for all the assignments), so the repository's
gradebook is not touched, and a file in course/ is rewritten only when its bytes change.
The output is deterministic: the same solutions/ give byte-identical course/ files.
"""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from ctxlab._paths import REPO_ROOT
from ctxlab.errors import InputError
from ctxlab.grading._nbgrader import RELEASE_DIR, SOURCE_DIR, build_course_root, same_tree


def assignments(root: Path = REPO_ROOT) -> list[str]:
    """The assignment ids of a course: the folders of solutions/ that hold a notebook."""
    src = Path(root) / SOURCE_DIR
    return sorted(p.name for p in src.iterdir() if p.is_dir() and any(p.glob("*.ipynb"))) if src.exists() else []


def generate(root: Path, out: Path, names: list[str]) -> None:
    """Run nbgrader generate_assignment for ``names`` with ``root``'s solutions, into ``out``."""
    with tempfile.TemporaryDirectory(prefix="ctxlab-release-") as tmp:
        scratch = build_course_root(Path(tmp), names, root, db=False)
        for name in names:
            target = Path(out) / name
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(scratch / RELEASE_DIR / name, target)


def release(root: Path = REPO_ROOT, assignments: list[str] | None = None) -> list[str]:
    """Regenerate course/ from solutions/; return the assignments whose release changed."""
    root = Path(root).resolve()
    names = assignments or globals()["assignments"](root)
    unknown = [n for n in names if not (root / SOURCE_DIR / n).is_dir()]
    if unknown:
        raise InputError(f"no such assignment in solutions/: {', '.join(unknown)}")
    with tempfile.TemporaryDirectory(prefix="ctxlab-out-") as tmp:
        out = Path(tmp)
        generate(root, out, names)
        changed = []
        for name in names:
            dest = root / RELEASE_DIR / name
            if not same_tree(out / name, dest):
                if dest.exists():
                    shutil.rmtree(dest)
                shutil.copytree(out / name, dest)
                changed.append(name)
    return changed


def stale(root: Path = REPO_ROOT) -> list[str]:
    """Assignments whose course/ release differs from a fresh generation (nothing is written)."""
    root = Path(root).resolve()
    names = assignments(root)
    with tempfile.TemporaryDirectory(prefix="ctxlab-check-") as tmp:
        out = Path(tmp)
        generate(root, out, names)
        return [n for n in names if not same_tree(out / n, root / RELEASE_DIR / n)]
