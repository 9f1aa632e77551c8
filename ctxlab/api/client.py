"""make_client(): the real Anthropic client, or the same SDK talking to the offline sandbox.

Which one you get:

* while ``NBGRADER_EXECUTION`` is set (grading): always the sandbox;
* ``offline=True``, a ``sandbox=`` argument, or env ``CTXLAB_OFFLINE=1``: the sandbox;
* otherwise, when an API key is found: the real API. The key comes from the environment
  (``ANTHROPIC_API_KEY``) or from a git-ignored ``.env`` file in the current directory or
  the repository root (read with python-dotenv); never put it in a notebook cell;
* no key: the sandbox.

An online client meters its own requests against the kernel's budget (``ctxlab.api.budget``):
a request that would take the spend past it is refused before it is sent.

The key is never printed: :func:`mode_line` only says where it came from.
"""
from __future__ import annotations

import os
import threading
import warnings
import weakref
from pathlib import Path

import anthropic
from dotenv import dotenv_values

from ctxlab._paths import REPO_ROOT
from ctxlab.api._metered import MeteredHttpClient, OnlineAnthropic, surface_refusal
from ctxlab.costs import pricing
from ctxlab.sandbox import Sandbox
from ctxlab.sandbox._client import binding, is_sandbox_url

__all__ = ["make_client", "is_offline", "get_sandbox", "mode_line", "default_sandbox", "OFFLINE_LINE"]

KEY_NAME = "ANTHROPIC_API_KEY"
OFFLINE_LINE = "モード: オフライン sandbox（API キー不要・料金は発生しません）"
ONLINE_LINE = "モード: 実 API（{model} など・料金が発生します）"

_default_lock = threading.Lock()
_default: Sandbox | None = None
#: where the key of each online client came from (never the key itself)
_KEY_SOURCES: "weakref.WeakKeyDictionary[anthropic.Anthropic, str]" = weakref.WeakKeyDictionary()


def default_sandbox() -> Sandbox:
    """The process-wide sandbox that ``make_client()`` uses when none is given.

    Every offline client of one kernel shares it, as every client of one workspace shares
    the real API's cache.
    """
    global _default
    with _default_lock:
        if _default is None:
            _default = Sandbox()
        return _default


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in {"1", "true", "yes", "on"}


# ---------------------------------------------------------------- .env


def _parse_env_file(path: Path) -> dict[str, str]:
    """The variables of a .env file (python-dotenv's syntax); {} when it cannot be read."""
    try:
        values = dotenv_values(path, encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    return {k: v for k, v in values.items() if v is not None}


#: the file at the top of a learner kit (tools/learner_bundle.py): the kit's root, where its .env goes
ROOT_MARKER = ".ctxlab-course"


def _repo_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` that is a checkout (.git, pyproject.toml) or a learner
    kit (:data:`ROOT_MARKER`): lessons run in course/NN/, and the .env sits at that root."""
    for d in (start, *start.parents):
        if (d / ".git").exists() or (d / "pyproject.toml").exists() or (d / ROOT_MARKER).is_file():
            return d
    return None


def _env_candidates() -> list[Path]:
    cwd = Path.cwd()
    dirs = [cwd]
    root = _repo_root(cwd)
    if root is not None:
        dirs.append(root)
    dirs.append(REPO_ROOT)
    seen, out = set(), []
    for d in dirs:
        p = (d / ".env").resolve()
        if p not in seen:
            seen.add(p)
            out.append(p)
    return out


def _is_git_ignored(path: Path) -> bool:
    """True when a .gitignore from the file's folder up to the repository root lists it."""
    root = _repo_root(path.parent) or path.parent
    names = {".env", "/.env", "*.env", ".env*", "**/.env"}
    for d in (path.parent, *path.parent.parents):
        gi = d / ".gitignore"
        if gi.is_file():
            try:
                if any(line.strip() in names for line in gi.read_text(encoding="utf-8").splitlines()):
                    return True
            except (OSError, UnicodeDecodeError):
                pass
        if d == root:
            break
    return False


def _find_key() -> tuple[str | None, str]:
    """(key, where it came from) without printing it."""
    key = os.environ.get(KEY_NAME, "").strip()
    if key:
        return key, "環境変数 ANTHROPIC_API_KEY"
    for path in _env_candidates():
        if not path.is_file():
            continue
        value = _parse_env_file(path).get(KEY_NAME, "").strip()
        if not value:
            continue
        if not _is_git_ignored(path):
            warnings.warn(
                f"{path} holds {KEY_NAME} but is not listed in .gitignore: add a line '.env' to "
                ".gitignore so the key is never committed.",
                stacklevel=3,
            )
        return value, f".env ({path.parent.name}/.env)"
    return None, ""


# ---------------------------------------------------------------- mode


def _offline_reason(offline: bool | None, sandbox: Sandbox | None) -> str | None:
    """Why the client is offline, or None for the real API."""
    if os.environ.get("NBGRADER_EXECUTION"):
        return "採点中（NBGRADER_EXECUTION）"
    if offline is True:
        return "offline=True"
    if _truthy(os.environ.get("CTXLAB_OFFLINE")):
        return "CTXLAB_OFFLINE=1"
    if sandbox is not None and offline is None:
        return "sandbox を指定"
    if offline is False:
        return None
    key, _ = _find_key()
    return None if key else "API キーなし"


def make_client(offline: bool | None = None, sandbox: Sandbox | None = None) -> anthropic.Anthropic:
    """An ``anthropic.Anthropic`` client: the real API or the offline sandbox (see module doc).

    ``offline=True`` forces the sandbox; ``offline=False`` requires a key (except while
    grading, which is always offline). ``sandbox`` picks the :class:`~ctxlab.sandbox.Sandbox`
    (its cache and clock); by default all offline clients share :func:`default_sandbox`.
    """
    if offline not in (None, True, False):
        raise ValueError(f"offline must be True, False or None, got {offline!r}")
    if sandbox is not None and not isinstance(sandbox, Sandbox):
        raise TypeError(f"sandbox must be a ctxlab.sandbox.Sandbox, got {type(sandbox).__name__}")
    reason = _offline_reason(offline, sandbox)
    if reason is None:
        key, source = _find_key()
        if not key:
            raise RuntimeError(
                "offline=False needs an API key, and none was found. Set ANTHROPIC_API_KEY in the "
                "environment or in a git-ignored .env file at the repository root (ANTHROPIC_API_KEY=...), "
                "or use make_client() / make_client(offline=True) for the offline sandbox."
            )
        # the SDK's defaults (timeouts, retries, connection limits), metered against the kernel's budget
        client = OnlineAnthropic(api_key=key, http_client=MeteredHttpClient(), middleware=[surface_refusal])
        _KEY_SOURCES[client] = source
        return client
    sb = sandbox if sandbox is not None else default_sandbox()
    return sb.client(reason)


def get_sandbox(client) -> Sandbox | None:
    """The sandbox behind an offline client (None for the real API)."""
    b = binding(client)
    return b.sandbox if b is not None else None


def is_offline(client) -> bool:
    """True when ``client`` talks to the offline sandbox."""
    return binding(client) is not None or is_sandbox_url(client)


def mode_line(client=None) -> str:
    """One Japanese line that says which mode a notebook runs in (never shows the key).

    Without a client it describes what ``make_client()`` would return now.
    """
    if client is None:
        reason = _offline_reason(None, None)
        source = _find_key()[1] if reason is None else ""
    elif is_offline(client):
        b = binding(client)
        reason = b.reason if b is not None else "sandbox"
        source = ""
    else:
        reason = None
        source = _KEY_SOURCES.get(client, "")
    if reason is not None:
        line = OFFLINE_LINE
        if reason not in ("API キーなし", "sandbox"):
            line += f" ― {reason}"
        else:
            line += " ― 実 API を使うには ANTHROPIC_API_KEY を環境変数か .env に設定"
        return line
    line = ONLINE_LINE.format(model=pricing.DEFAULT_MODEL)
    if source:
        line += f" ― キーは {source} から"
    return line
