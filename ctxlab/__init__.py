"""ctxlab: the course library of "RAG か ロングコンテキストか".

Light modules (pricing, tokens) import at once; the client, the sandbox, retrieval and the
widgets load on first use so that ``import ctxlab`` and the CLI start quickly.
"""
from __future__ import annotations

import importlib
import importlib.util

__version__ = "0.1.0"

_LAZY = {
    "make_client": ("ctxlab.api.client", "make_client"),
    "mode_line": ("ctxlab.api.client", "mode_line"),
    "is_offline": ("ctxlab.api.client", "is_offline"),
    "Sandbox": ("ctxlab.sandbox", "Sandbox"),
    "show_cost": ("ctxlab.api.online", "show_cost"),
    "lesson_model": ("ctxlab.api.online", "lesson_model"),
    "source_line": ("ctxlab.api.online", "source_line"),
    "simulated_note": ("ctxlab.api.online", "simulated_note"),
    "Unsolved": ("ctxlab.errors", "Unsolved"),
}


def __getattr__(name: str):
    if name in _LAZY:
        module, attr = _LAZY[name]
        return getattr(importlib.import_module(module), attr)
    if not name.startswith("_") and importlib.util.find_spec(f"ctxlab.{name}") is not None:
        return importlib.import_module(f"ctxlab.{name}")  # any submodule: ctxlab.labs.citations, ...
    raise AttributeError(f"module 'ctxlab' has no attribute {name!r}")


__all__ = list(_LAZY) + ["__version__"]
