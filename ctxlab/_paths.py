"""Where the course's files are: the one place that knows the checkout's layout.

``data/`` and ``quizzes/`` sit beside the package in the repository. Every module that
reads them asks here, so moving them (e.g. into package data) changes one file.
"""
from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_ROOT = PACKAGE_DIR.parent
DATA_DIR = REPO_ROOT / "data"
QUIZZES_DIR = REPO_ROOT / "quizzes"
