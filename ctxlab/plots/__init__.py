"""Plots of the course: matplotlib with a Japanese font (matplotlib-fontja).

Importing ``ctxlab.plots`` (or any of its modules) selects the Japanese font. One module per
family of figures; every plot function takes plain data (numbers, lists, the lab's result
objects read by attribute) and an optional ``ax``, and returns the axes. Figures from papers
say so in their title, never presenting a published figure as a measurement.
"""
from __future__ import annotations

import matplotlib_fontja  # noqa: F401  (registers and selects a Japanese font)
