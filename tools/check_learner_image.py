"""Check a learners' image (deploy/jupyterhub/Dockerfile) before pushing it to the cluster.

    .venv/bin/python tools/check_learner_image.py registry.example.org/ctxlab-learner:2026-12

It fails unless, in the image:

- no file or folder of the checkout's answers is anywhere (``solutions/``, ``*.key.yaml``,
  ``tests/``, a ``.git``), and the course's files hold no solution or hidden-test marker and
  no recoverable form of the knowledge check's key (the search ``make hub-learner-env`` runs,
  :func:`hub_env.answers_in`, on the exported file system);
- ctxlab and its data import from the learner environment, as uid 1000 (jovyan), with no key
  and the offline sandbox answering;
- ``jupyterhub-singleuser`` starts, with the JupyterHub version given by ``--jupyterhub``
  (the chart's hub's major version);
- a learner's server has nbgrader's Assignment List and not the formgrader.

``--engine`` is the container command (default ``docker``; e.g. ``podman``, or
``"podman --runtime runc"`` where crun cannot run).
"""
from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import hub_env

PREFIX = "opt/ctxlab-learner"
FORBIDDEN = ("solutions", "tests", ".git")
_PROBE = """
import json, os, subprocess, sys
import ctxlab, ctxlab._paths as p, jupyterhub
from ctxlab.api.client import is_offline, make_client
c = make_client()
r = c.messages.create(model="claude-haiku-4-5", max_tokens=200,
                      messages=[{"role": "user", "content": "有給休暇は何日繰り越せますか"}])
ext = subprocess.run(["jupyter", "server", "extension", "list"], capture_output=True, text=True)
print(json.dumps({"uid": os.getuid(), "package": ctxlab.__file__, "data": str(p.DATA_DIR),
                  "offline": is_offline(c), "answer": r.content[0].text[:80], "jupyterhub": jupyterhub.__version__,
                  "key": "ANTHROPIC_API_KEY" in os.environ, "extensions": ext.stdout + ext.stderr}))
"""


def engine_run(engine: list[str], *args: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run([*engine, *args], capture_output=True, text=True)
    except FileNotFoundError:
        raise SystemExit(f"{engine[0]} not found: install docker or podman, or name yours with --engine") from None


def files_of(engine: list[str], image: str, dest: Path) -> list[str]:
    """Export the image's file system into ``dest``; return its member names."""
    made = engine_run(engine, "create", image, "true")
    if made.returncode != 0:
        raise SystemExit(f"cannot create a container of {image}: {made.stderr.strip()}")
    cid = made.stdout.strip()
    try:
        tar_path = dest / "image.tar"
        with open(tar_path, "wb") as out:
            subprocess.run([*engine, "export", cid], stdout=out, check=True)
        with tarfile.open(tar_path) as tar:
            names = tar.getnames()
            tar.extractall(dest / "fs", members=[m for m in tar.getmembers()
                                                 if m.name.lstrip("./").startswith(PREFIX) and (m.isfile() or m.isdir())])
        tar_path.unlink()
        return [n.lstrip("./") for n in names]
    finally:
        engine_run(engine, "rm", cid)


def check(image: str, engine: list[str], jupyterhub_major: str | None) -> list[str]:
    """What is wrong with ``image`` (empty when nothing is)."""
    problems = []
    with tempfile.TemporaryDirectory(prefix="ctxlab-image-") as tmp:
        names = files_of(engine, image, Path(tmp))
        for name in names:
            parts = name.split("/")
            system = parts[0] == "usr" or "site-packages" in parts   # third-party packages' own tests/
            hit = next((i for i, p in enumerate(parts) if p in FORBIDDEN), None) if not system else None
            where = name if name.endswith(".key.yaml") else "/".join(parts[:hit + 1]) if hit is not None else None
            if where and f"{where}: the checkout's answers must not be in the image" not in problems:
                problems.append(f"{where}: the checkout's answers must not be in the image")
        package = next((Path(tmp) / "fs").glob(f"{PREFIX}/venv/lib/python3*/site-packages/ctxlab"), None)
        if package is None:
            problems.append(f"no ctxlab package under /{PREFIX}/venv: build the image from deploy/jupyterhub/Dockerfile")
        else:
            problems += hub_env.answers_in(package, Path(tmp) / "fs" / PREFIX / "jupyter")
    run = engine_run(engine, "run", "--rm", "--network", "none", image, "python", "-c", _PROBE)
    if run.returncode != 0:
        return problems + [f"the lesson probe failed in the image:\n{run.stderr[-2000:]}"]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    if got["uid"] != 1000:
        problems.append(f"the image runs as uid {got['uid']}, not 1000 (jovyan, as Zero to JupyterHub expects)")
    for what in ("package", "data"):
        if not got[what].startswith(f"/{PREFIX}/"):
            problems.append(f"ctxlab's {what} is {got[what]}, not in /{PREFIX}")
    if not got["offline"] or got["key"]:
        problems.append("a learner's server is not on the offline sandbox (an API key is in the image's environment)")
    if jupyterhub_major and got["jupyterhub"].split(".")[0] != jupyterhub_major:
        problems.append(f"JupyterHub {got['jupyterhub']} in the image; the hub runs {jupyterhub_major}.x")
    ext = got["extensions"]
    if "nbgrader.server_extensions.assignment_list" not in ext or "formgrader enabled" in ext.replace(
            "nbgrader.server_extensions.formgrader", "formgrader"):
        problems.append(f"a learner's server must have the Assignment List and not the formgrader:\n{ext}")
    single = engine_run(engine, "run", "--rm", "--network", "none", image, "jupyterhub-singleuser", "--version")
    if single.returncode != 0:
        problems.append(f"jupyterhub-singleuser does not start: {single.stderr[-500:]}")
    print(f"{image}: JupyterHub {got['jupyterhub']}, uid {got['uid']}, ctxlab from {Path(got['package']).parent}, "
          f"offline sandbox: {got['answer'][:40]!r}")
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("image")
    ap.add_argument("--engine", default="docker", help="the container command (default docker)")
    ap.add_argument("--jupyterhub", metavar="MAJOR", default="5",
                    help="the hub's JupyterHub major version (default 5: chart 4.4.0); '' to skip")
    args = ap.parse_args(argv)
    problems = check(args.image, shlex.split(args.engine), args.jupyterhub or None)
    for p in problems:
        print(f"  - {p}")
    print("OK: no answer in the image, and a learner's server runs the course offline" if not problems
          else f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
