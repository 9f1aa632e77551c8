"""Regenerate the learner release (course/) from the nbgrader source (solutions/).

nbgrader's generate_assignment strips solutions and hidden tests, clears outputs and adds
checksums. It runs in a scratch course root, so the repository's gradebook is not
touched, and a file in course/ is rewritten only when its bytes change. The output is
deterministic: the same solutions/ give byte-identical course/ files.
"""
from __future__ import annotations

import filecmp
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def assignments(root: Path = ROOT) -> list[str]:
    src = root / "solutions"
    return sorted(p.name for p in src.iterdir() if p.is_dir() and any(p.glob("*.ipynb"))) if src.exists() else []


def generate(root: Path, out: Path, names: list[str]) -> None:
    """Run nbgrader generate_assignment for ``names`` with ``root``'s solutions, into ``out``."""
    with tempfile.TemporaryDirectory(prefix="ctxlab-release-") as tmp:
        scratch = Path(tmp)
        shutil.copy(root / "nbgrader_config.py", scratch / "nbgrader_config.py")
        for name in names:
            shutil.copytree(root / "solutions" / name, scratch / "solutions" / name,
                            ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
        nbgrader = [sys.executable, "-m", "nbgrader"]
        for name in names:
            proc = subprocess.run(
                nbgrader + ["generate_assignment", name, "--force", "--no-db",
                            "--log-level=WARN", f"--CourseDirectory.root={scratch}"],
                cwd=scratch, capture_output=True, text=True,
            )
            if proc.returncode != 0:
                raise RuntimeError(f"nbgrader generate_assignment {name} failed:\n{proc.stdout}\n{proc.stderr}")
        for name in names:
            target = out / name
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(scratch / "course" / name, target)


def _differs(a: Path, b: Path) -> bool:
    if not b.exists():
        return True
    cmp = filecmp.dircmp(a, b)
    if cmp.left_only or cmp.right_only or cmp.diff_files or cmp.funny_files:
        return True
    _, mismatch, errors = filecmp.cmpfiles(a, b, cmp.common_files, shallow=False)
    return bool(mismatch or errors) or any(_differs(a / d, b / d) for d in cmp.common_dirs)


def release(root: Path = ROOT, assignments: list[str] | None = None) -> list[str]:
    """Regenerate course/ from solutions/; return the assignments whose release changed."""
    root = Path(root).resolve()
    names = assignments or globals()["assignments"](root)
    unknown = [n for n in names if not (root / "solutions" / n).is_dir()]
    if unknown:
        raise ValueError(f"no such assignment in solutions/: {', '.join(unknown)}")
    with tempfile.TemporaryDirectory(prefix="ctxlab-out-") as tmp:
        out = Path(tmp)
        generate(root, out, names)
        changed = []
        for name in names:
            dest = root / "course" / name
            if _differs(out / name, dest):
                if dest.exists():
                    shutil.rmtree(dest)
                shutil.copytree(out / name, dest)
                changed.append(name)
    return changed


def stale(root: Path = ROOT) -> list[str]:
    """Assignments whose course/ release differs from a fresh generation (nothing is written)."""
    root = Path(root).resolve()
    names = assignments(root)
    with tempfile.TemporaryDirectory(prefix="ctxlab-check-") as tmp:
        out = Path(tmp)
        generate(root, out, names)
        return [n for n in names if _differs(out / n, root / "course" / n)]
