"""The one progress bar of the course: a text tqdm bar that renders everywhere.

``tqdm.auto`` draws an ipywidgets bar in a notebook, which shows as ``0%| 0/90`` wherever
widgets do not render (nbconvert, nbgrader feedback, a kernel without a frontend). A text bar
on stdout updates in place in JupyterLab (carriage returns), in a terminal and in a log.
"""
from __future__ import annotations

import sys
from typing import Iterable, TypeVar

from tqdm.std import tqdm

T = TypeVar("T")


def progress(iterable: Iterable[T] | None = None, *, total: int | None = None, desc: str = "",
             unit: str = "it", enabled: bool = True, leave: bool = True) -> tqdm:
    """A tqdm bar over ``iterable`` (or a manual one with ``total``); ``enabled=False`` shows nothing."""
    return tqdm(iterable, total=total, desc=desc, unit=unit, disable=not enabled, leave=leave,
                file=sys.stdout, dynamic_ncols=True, mininterval=0.5)
