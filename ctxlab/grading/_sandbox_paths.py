"""What a grading kernel may see of the machine: the folders bound read-only into its sandbox.

:func:`readable_paths` lists them (the interpreter, its packages, ctxlab and its data);
:func:`interpreter_links` finds the symbolic links on the way to the interpreter that lie outside
them; :func:`ancestors` the folders the sandbox must create so that they can be bound.
:mod:`ctxlab.grading.isolation` builds the bwrap command line from these.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

from ctxlab._paths import DATA_DIR, PACKAGE_DIR, QUIZZES_DIR


def ancestors(paths: list[Path]) -> list[str]:
    """Every folder above ``paths`` (not ``/``), outermost first, each once."""
    out: list[str] = []
    for p in paths:
        for a in reversed(p.parents):
            if str(a) != "/" and str(a) not in out:
                out.append(str(a))
    return out


def readable_paths() -> list[Path]:
    """What a grading kernel may read: the interpreter, its packages, ctxlab and its data."""
    usr = Path("/usr")
    prefixes = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(), Path(sys.exec_prefix).resolve()}
    # a venv whose packages come from another venv's site-packages (a .pth): those too, and only
    # site-packages folders, never a checkout that an editable install put on sys.path
    sites = {Path(p).resolve() for p in sys.path if Path(p).name == "site-packages" and Path(p).is_dir()}
    out = [usr] + sorted(p for p in prefixes if usr not in (p, *p.parents))
    out += sorted(p for p in sites if not any(q in (p, *p.parents) for q in out))
    for p in (PACKAGE_DIR, DATA_DIR, QUIZZES_DIR):
        if p.exists() and not any(q in (p, *p.parents) for q in out):
            out.append(p)
    return out


def interpreter_links(ro: list[Path]) -> list[tuple[str, str]]:
    """The symbolic links on the way from ``sys.executable`` to the interpreter that lie outside
    the read-only folders ``ro``, as ``(link, target)``: a venv made by a ``python3`` found
    through a folder of links (``~/bin/python3 -> /usr/bin/python3``) points at that folder,
    which the sandbox does not show. Each such link is recreated inside, and nothing else of
    its folder is."""
    out: list[tuple[str, str]] = []
    path = Path(os.path.abspath(sys.executable))
    for _ in range(40):   # the kernel's own limit on a chain of links
        if not path.is_symlink():
            break
        target = os.readlink(path)
        if not any(q == path.parent or q in path.parents for q in ro):
            out.append((str(path), target))
        path = Path(os.path.normpath(path.parent / target))
    return out
