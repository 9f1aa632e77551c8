"""Issue 42 item 4: what a grading kernel can take of the machine (memory-backed files, socket
families) and what the feedback page may load. Each test runs a real sandboxed kernel."""
from __future__ import annotations

import os
import re
from pathlib import Path

import nbformat
import pytest

from ctxlab.grading import isolation
import attacks

sandboxed = pytest.mark.skipif(isolation.unavailable_reason() is not None, reason="bubblewrap is not usable here")
class _NonRootOs:
    """``os`` as isolation.py sees it when the grader is an ordinary account (a hub's grader
    account): the sandbox is then built in a user namespace, where the kernel owns its /dev."""

    def __getattr__(self, name):
        return getattr(os, name)

    @staticmethod
    def geteuid() -> int:
        return 1000


def _run_as_grader(tmp_path: Path, code: str, non_root: bool, monkeypatch) -> str:
    """What one cell prints in a sandboxed kernel built as a root grader or (``non_root``) an
    ordinary one builds it. A root test process builds the non-root sandbox (isolation.py told
    it is not root: a user namespace, no uid change, the kernel owning /dev); the test's
    interpreter under /root is out of an ordinary account's reach, so it cannot run as one."""
    from test_attacks import _run_in_kernel

    if non_root and os.geteuid() == 0:
        monkeypatch.setattr(isolation, "os", _NonRootOs())
    elif not non_root and os.geteuid() != 0:
        pytest.skip("grading as root needs root")
    return _run_in_kernel(tmp_path, code, isolate=True)


@sandboxed
@pytest.mark.parametrize("non_root", [True, False], ids=["non-root grader", "root grader"])
def test_dev_shm_and_dev_are_small_and_per_kernel(tmp_path, non_root, monkeypatch):
    """A non-root kernel wrote 3 GB into /dev/shm and /dev (bwrap's /dev: a tmpfs of half the host's
    memory, owned by the kernel's uid). Now /dev/shm is a tmpfs of Limits.shm_mb and /dev is read-only,
    for a grader that is root or not; a semaphore (multiprocessing.Lock) still works."""
    out = _run_as_grader(tmp_path, attacks.SHM.replace("{mark}", attacks.MARK), non_root, monkeypatch)
    shm = re.search(r"ATTACK /dev/shm stopped at (\d+) MB: \[Errno 28\] No space left on device", out)
    assert shm and int(shm.group(1)) <= isolation.Limits.shm_mb, out
    assert re.search(r"ATTACK /dev stopped at 0 MB: \[Errno (30\] Read-only file system|13\] Permission denied)", out), out
    assert "HONEST semaphore ok" in out, out


@sandboxed
def test_socket_families_a_kernel_has_no_use_for_are_refused(tmp_path):
    """AF_VSOCK sockets could be created in the sandbox (vsock is not isolated by the network
    namespace). The seccomp filter refuses every family but Unix, IPv4/6 and netlink, also when
    the family's unused high bits are set; the kernel's own families still work."""
    from test_attacks import _run_in_kernel

    out = _run_in_kernel(tmp_path, attacks.SOCKETS, isolate=True)
    for name in ("AF_VSOCK", "AF_PACKET", "AF_ALG", "AF_KEY", "AF_TIPC", "AF_CAN", "AF_BLUETOOTH", "AF_RDS"):
        assert f"ATTACK {name} [Errno 97] Address family not supported by protocol" in out, out
    assert "ATTACK AF_VSOCK+high bits errno 97" in out, out
    for name in ("AF_UNIX", "AF_INET", "AF_INET6", "AF_NETLINK"):
        assert f"HONEST {name} ok" in out, out
    assert "HONEST socketpair ok" in out, out


def test_the_filter_refuses_vsock_and_keeps_the_kernels_families():
    """The filter's rules, without a kernel: vsock and packet sockets are in, the allowed families are not."""
    from ctxlab.grading import _seccomp

    assert {1, 2, 10, 16} == set(_seccomp.ALLOWED_FAMILIES)
    assert 40 not in _seccomp.ALLOWED_FAMILIES and 40 < _seccomp._FAMILIES
    assert _seccomp.seccomp_filter()   # builds


def test_feedback_html_carries_a_policy_that_blocks_external_loads(tmp_path):
    """Feedback HTML kept a learner's <img src="https://…"> with no Content-Security-Policy: opened
    from the LMS it loaded from another host. The feedback exporter puts a policy meta first in <head>."""
    from nbgrader.converters import GenerateFeedback
    from traitlets.config import Config

    from ctxlab.grading import safe_html

    config = Config()
    exec(compile((Path(__file__).parents[1] / "nbgrader_config.py").read_text(encoding="utf-8"), "nbgrader_config.py",
                 "exec"), {"get_config": lambda: config})
    converter = GenerateFeedback(config=config)
    assert converter.exporter_class is safe_html.FeedbackHTMLExporter
    exporter = converter.exporter_class(config=config)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell('<img src="https://tracker.example/p.gif">')])
    html, _ = exporter.from_notebook_node(nb, resources={"nbgrader": {"notebook": "x"}})
    head = html[html.index("<head"):html.index("</head>")]
    meta = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', head)
    assert meta and head.index(meta.group(0)) < head.index("<style"), head[:500]
    policy = dict(p.strip().split(" ", 1) for p in meta.group(1).split(";"))
    assert policy["default-src"] == "'none'" and policy["img-src"] == "data:"
    assert "script-src" not in policy   # default-src 'none' covers scripts: none runs
