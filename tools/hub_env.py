"""Build the learners' environment of a JupyterHub class: the course without its answers.

``make hub-learner-env PREFIX=/opt/ctxlab-learner`` (this script) makes, in PREFIX:

- ``venv/``: a virtual environment with the learner bundle's requirements (no test or
  authoring tools) and the graded kit's ctxlab wheel (``data/`` and ``quizzes/`` inside the
  package; the graded build, ctxlab/grading/graded_build.py, in which the library functions
  that answer an exercise hold the lessons' recorded results instead of code);
- ``jupyter/learner`` and ``jupyter/common``: the settings of a learner's server and of
  nbgrader (copied from ``deploy/jupyterhub/jupyter/``), which the hub puts on each learner
  server's ``JUPYTER_CONFIG_PATH``.

Nothing of ``solutions/``, ``tests/``, ``tools/`` or the checkout's ``.git`` goes in, and the
learners' servers never import from the checkout: the checkout can be readable by the
grading account alone (docs/instructor.md, section 3). The build checks itself and fails
when ctxlab does not import from PREFIX, when a file holds a solution or hidden-test marker,
or when the knowledge check's key can be recovered from a file (``ctxlab release --graded``'s
search).

``--packages-from VENV`` reuses the third-party packages of an installed venv of the course
(this checkout's ``.venv``) through a ``.pth`` path line instead of downloading them: for a
machine without PyPI, and for tests/hubclass.py. The checkout's own ctxlab (an editable
install) is not reused: the wheel is installed in PREFIX either way.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import learner_bundle

ROOT = learner_bundle.ROOT
DEPLOY = ROOT / "deploy" / "jupyterhub" / "jupyter"
STAMP = ".ctxlab-learner-env"   # marks a PREFIX this script made (and may rebuild)
_PROBE = ("import json, sys, ctxlab, ctxlab._paths as p\n"
          "print(json.dumps({'package': ctxlab.__file__, 'data': str(p.DATA_DIR), 'path': sys.path}))")


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:4])} … failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return proc


def _reuse(venv: Path, packages_from: Path) -> None:
    """Make ``venv`` see ``packages_from``'s packages (not its editable ctxlab), its Jupyter
    settings and extensions, and its console scripts (nbgrader runs ``alembic`` and ``jupyter``)."""
    site = Path(_run([str(packages_from / "bin" / "python"), "-c",
                      "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    inner = next((venv / "lib").glob("python3*/site-packages"))
    # a plain path line: the folder's own .pth files (the editable checkout's) are not run
    (inner / "zz_course_packages.pth").write_text(f"{site}\n", encoding="utf-8")
    for shared in ("etc", "share"):
        if (packages_from / shared).exists():
            (venv / shared).symlink_to(packages_from / shared)
    copy_scripts(packages_from / "bin", venv)


def copy_scripts(bin_dir: Path, venv: Path) -> None:
    """Copy ``bin_dir``'s Python console scripts into ``venv``'s bin, run by ``venv``'s Python
    (those it already has are kept)."""
    python = str(venv / "bin" / "python").encode()
    for script in Path(bin_dir).iterdir():
        target = venv / "bin" / script.name
        if target.exists() or not script.is_file():
            continue
        head, _, body = script.read_bytes().partition(b"\n")
        if head.startswith(b"#!") and b"python" in head:
            target.write_bytes(b"#!" + python + b"\n" + body)
            target.chmod(0o755)


def answers_in(package: Path, settings: Path) -> list[str]:
    """Where the course's files of a learner environment (the installed ctxlab ``package``, its
    data, the server ``settings``) hold an answer: a solution or hidden-test marker, or the
    knowledge check's key in any recoverable form (the learner kits' search,
    :func:`learner_bundle.answers_in`). Also run on an image's files (tools/check_learner_image.py)."""
    return learner_bundle.answers_in(package, package=package) + learner_bundle.answers_in(settings)


def twins_as_code(package: Path) -> list[str]:
    """The exercises' library twins that are still code in the installed ``package`` (the ctxlab folder): in the
    graded build each one's body is a lookup of recorded results."""
    import ast

    from ctxlab.grading.graded_build import TWINS, rel_path

    out = []
    for module, name, _keep in TWINS:
        path = package.parent / rel_path(module)
        tree = ast.parse(path.read_text(encoding="utf-8")) if path.exists() else ast.Module(body=[], type_ignores=[])
        func = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)
        if func is None or "lookup(" not in ast.unparse(func.body[-1]):
            out.append(f"{module}.{name}: the code of an exercise's answer (not the graded build's recorded results)")
    return out


def check(prefix: Path) -> dict:
    """What PREFIX's Python imports; fails unless ctxlab and its data come from PREFIX, and when
    the course's files in PREFIX (the package, its data, the settings) hold an answer."""
    probe = json.loads(_run([str(prefix / "venv" / "bin" / "python"), "-c", _PROBE], cwd="/",
                            env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"}).stdout)
    real = prefix.resolve()
    for what in ("package", "data"):
        if not Path(probe[what]).resolve().is_relative_to(real):
            raise SystemExit(f"{prefix}: ctxlab's {what} comes from {probe[what]}, not from the learner environment")
    answers = answers_in(Path(probe["package"]).parent, prefix / "jupyter") + twins_as_code(Path(probe["package"]).parent)
    if answers:
        raise SystemExit("the learner environment holds answers:\n  - " + "\n  - ".join(answers))
    return probe


def requirements(pins: list[str] | None = None) -> str:
    """The learner bundle's requirements, with ``pins`` (``name==version``) in place of the
    course's pin of the same package (e.g. the JupyterHub of a Kubernetes chart's hub)."""
    lines = learner_bundle.learner_requirements(hub=True).splitlines()
    for pin in pins or []:
        name = pin.split("==")[0].strip().lower()
        if "==" not in pin or not name:
            raise SystemExit(f"--pin {pin!r}: write it as name==version, e.g. jupyterhub==5.5.0")
        hits = [i for i, line in enumerate(lines) if line.split("==")[0].strip().lower() == name]
        if not hits:
            raise SystemExit(f"--pin {pin!r}: {name} is not among the learner requirements (requirements.txt)")
        lines[hits[0]] = pin.strip()
    return "\n".join(lines) + "\n"


def build(prefix: Path, python: str, packages_from: Path | None = None, pins: list[str] | None = None) -> dict:
    prefix = Path(prefix).absolute()
    if pins and packages_from:   # checked before anything is removed or made
        raise SystemExit("--pin needs packages from PyPI: it cannot be used with --packages-from")
    if prefix.resolve().is_relative_to(ROOT.resolve()):
        raise SystemExit(f"{prefix} is inside the checkout ({ROOT}): learners could reach it; choose e.g. /opt/ctxlab-learner")
    if prefix.exists() and any(prefix.iterdir()) and not (prefix / STAMP).exists():
        raise SystemExit(f"{prefix} exists and was not made by this script: choose an empty or new folder")
    for part in ("venv", "jupyter"):
        shutil.rmtree(prefix / part, ignore_errors=True)
    prefix.mkdir(parents=True, exist_ok=True)
    (prefix / STAMP).write_text(f"made by {Path(__file__).name} from {ROOT}\n", encoding="utf-8")
    venv = prefix / "venv"
    _run([python, "-m", "venv", *(["--without-pip"] if packages_from else []), str(venv)])
    with tempfile.TemporaryDirectory(prefix="ctxlab-hubenv-") as tmp:
        wheel = learner_bundle.build_wheel(Path(tmp), answers=False)   # the graded build: a class is graded
        if packages_from:
            _reuse(venv, Path(packages_from).absolute())
            _run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--quiet",
                  "--no-deps", "--no-index", str(wheel)])
        else:
            reqs = Path(tmp) / "requirements.txt"
            reqs.write_text(requirements(pins), encoding="utf-8")
            _run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "-r", str(reqs), str(wheel)])
    for part in ("learner", "common"):
        shutil.copytree(DEPLOY / part, prefix / "jupyter" / part)
    for dirpath, dirnames, filenames in os.walk(prefix):   # every account reads and runs it
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            if not p.is_symlink():
                mode = p.stat().st_mode
                p.chmod(mode | 0o044 | (0o011 if p.is_dir() or mode & 0o100 else 0))
    prefix.chmod(0o755)
    return check(prefix)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--prefix", type=Path, default=Path("/opt/ctxlab-learner"),
                    help="where to build it (default /opt/ctxlab-learner); every account must be able to read it")
    ap.add_argument("--python", default=shutil.which("python3") or sys.executable,
                    help="the interpreter of the venv (default: python3 on PATH); one every account can run")
    ap.add_argument("--packages-from", type=Path, metavar="VENV",
                    help="reuse this venv's third-party packages instead of downloading them (no network)")
    ap.add_argument("--pin", action="append", metavar="NAME==VERSION",
                    help="install this version instead of requirements.txt's (repeatable), e.g. jupyterhub==5.5.0 "
                         "for a Kubernetes hub of JupyterHub 5 (deploy/jupyterhub/Dockerfile)")
    args = ap.parse_args(argv)
    probe = build(args.prefix, args.python, args.packages_from, args.pin)
    print(f"learner environment: {args.prefix}")
    print(f"  python:  {args.prefix / 'venv' / 'bin' / 'python'} (ctxlab from {Path(probe['package']).parent})")
    print(f"  config:  {args.prefix / 'jupyter' / 'learner'}, {args.prefix / 'jupyter' / 'common'}")
    print("  checked: no solution, hidden test or knowledge-check key in it")
    print(f"set learner_env: {args.prefix} in the class file (deploy/jupyterhub/class.example.yaml)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
