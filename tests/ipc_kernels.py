"""Kernels the tests start talk over ZeroMQ ``ipc`` sockets in a private folder, not TCP ports.

jupyter_client picks a kernel's five TCP ports by binding port 0 and closing it again; the kernel
binds them a moment later. Two test workers (``make test TEST_WORKERS=2``) that start kernels at
the same moment can be handed the same port, and one kernel dies with "Address already in use".
Sockets in a folder of their own cannot collide. :func:`install` puts :class:`IpcNotebookClient`
(a NotebookClient whose default kernel manager is :class:`IpcKernelManager`) in the place of
``nbclient.NotebookClient`` before the test modules import it; a client given its own manager (the
grading sandbox's ``IsolatedKernelManager`` already uses ``ipc``) is not touched.
"""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from nbclient import client as _nbclient
from traitlets import default


class IpcKernelManager(AsyncKernelManager):
    """An AsyncKernelManager whose sockets live in a fresh folder under /tmp, removed at shutdown."""

    _ipc_dir: Path | None = None

    async def _async_pre_start_kernel(self, **kw):
        if self._ipc_dir is None:
            # short path: an ipc socket name must fit in 107 bytes
            self._ipc_dir = Path(tempfile.mkdtemp(prefix="ctxlab-t-", dir="/tmp"))
            self.transport = "ipc"
            self.ip = str(self._ipc_dir / "k")
        return await super()._async_pre_start_kernel(**kw)

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart=restart)
        if self._ipc_dir is not None and not restart:
            shutil.rmtree(self._ipc_dir, ignore_errors=True)
            self._ipc_dir = None


class IpcNotebookClient(_nbclient.NotebookClient):
    """nbclient's NotebookClient with :class:`IpcKernelManager` as its default kernel manager."""

    @default("kernel_manager_class")
    def _kernel_manager_class_default(self):
        return IpcKernelManager


def install() -> None:
    """Make every ``from nbclient import NotebookClient`` after this get :class:`IpcNotebookClient`."""
    import nbclient

    nbclient.NotebookClient = _nbclient.NotebookClient = IpcNotebookClient
