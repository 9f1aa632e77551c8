"""The system-call filter of a grading kernel (seccomp, given to bubblewrap with ``--seccomp``).

Built with libseccomp through ``pyseccomp`` (ctypes; libseccomp2 is on every Debian and Ubuntu),
exported as the BPF program bwrap loads before it starts the kernel. What it refuses and why is
in :data:`DENIED_SYSCALLS`; ctxlab/grading/isolation.py passes it to every sandbox.
"""
from __future__ import annotations

import tempfile

_bpf: bytes | None = None

#: system calls the kernel may not make (each fails with EPERM): the keyrings, new namespaces, and
#: new sessions (the scheduler shares CPU between sessions: a kernel keeps all its processes in one,
#: so 30 busy processes of one learner share one session's CPU, not 30 sessions')
DENIED_SYSCALLS = ("keyctl", "add_key", "request_key", "unshare", "setns", "setsid")
#: the only socket families a kernel may open: Unix (its ZeroMQ sockets, ipc transport), IPv4 and IPv6
#: (loopback only: the sandbox has a network namespace of its own) and netlink (the C library's
#: getaddrinfo asks it for the machine's addresses). Every other family, AF_VSOCK above all (vsock
#: reaches the host of a virtual machine and no network namespace isolates it), fails with EAFNOSUPPORT.
ALLOWED_FAMILIES = (1, 2, 10, 16)   # AF_UNIX, AF_INET, AF_INET6, AF_NETLINK
_FAMILIES = 64                      # every family number the kernel knows lies below (AF_MAX is 46 in Linux 6.x)
_NAMESPACE_FLAGS = 0x7E020000   # CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET
SECCOMP_HINT = ("採点のサンドボックスの seccomp フィルターを作れません（libseccomp がありません）: "
                "Debian/Ubuntu なら sudo apt-get install libseccomp2、そのあと make setup")


def seccomp_filter() -> bytes:
    """The compiled (BPF) seccomp filter of a grading kernel: :data:`DENIED_SYSCALLS` and a
    ``clone`` with namespace flags fail with EPERM; ``clone3`` fails with ENOSYS (its flags are
    out of a filter's reach: the C library then falls back to ``clone``); ``socket`` and ``socketpair``
    of a family outside :data:`ALLOWED_FAMILIES` fail with EAFNOSUPPORT (the family compared on its
    low 32 bits, the only ones the kernel reads). Built once per process."""
    global _bpf
    if _bpf is None:
        import errno

        import pyseccomp as sc

        f = sc.SyscallFilter(sc.ALLOW)
        for name in DENIED_SYSCALLS:
            f.add_rule(sc.ERRNO(errno.EPERM), name)
        for bit in range(32):
            if _NAMESPACE_FLAGS & (1 << bit):
                f.add_rule(sc.ERRNO(errno.EPERM), "clone", sc.Arg(0, sc.MASKED_EQ, 1 << bit, 1 << bit))
        f.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
        for family in range(_FAMILIES):
            if family not in ALLOWED_FAMILIES:
                for call in ("socket", "socketpair"):
                    f.add_rule(sc.ERRNO(errno.EAFNOSUPPORT), call, sc.Arg(0, sc.MASKED_EQ, 0xFFFFFFFF, family))
        with tempfile.TemporaryFile() as fh:
            f.export_bpf(fh)
            fh.seek(0)
            _bpf = fh.read()
    return _bpf
