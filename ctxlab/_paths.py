"""Where the course's files are: the one place that knows the layout, checked out or installed.

In a checkout, ``data/`` and ``quizzes/`` sit beside the package (the repository's top
level). In the learner bundle's wheel (``make learner-bundle``) they are package data,
``ctxlab/_data/data`` and ``ctxlab/_data/quizzes``. Every module that reads them asks
here. :data:`REPO_ROOT` is the checkout; for an installed package it is the folder above
the package, which holds no ``solutions/``: release and grading then ask for ``--course``.
"""
from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
#: package data of an installed wheel (absent in a checkout)
BUNDLED_DIR = PACKAGE_DIR / "_data"
INSTALLED = (BUNDLED_DIR / "data").is_dir()
_BASE = BUNDLED_DIR if INSTALLED else PACKAGE_DIR.parent
DATA_DIR = _BASE / "data"
QUIZZES_DIR = _BASE / "quizzes"
#: the checkout the package runs from (the folder with solutions/, course/, data/); in an
#: installed wheel the folder above the package, which holds none of them
REPO_ROOT = PACKAGE_DIR.parent
