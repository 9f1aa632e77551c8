"""The tests' notebook kernels use ipc sockets in a folder of their own (tests/ipc_kernels.py)."""
from __future__ import annotations

import json
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def test_a_notebook_kernel_talks_over_ipc_and_leaves_no_socket_folder(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
        "import json\nfrom ipykernel.connect import get_connection_info\n"
        "info = json.loads(get_connection_info())\nprint(json.dumps({'transport': info['transport'], 'ip': info['ip']}))")]
    client = NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    assert client.kernel_manager_class.__name__ == "IpcKernelManager"   # tests/conftest.py installed it
    client.execute()
    info = json.loads(nb.cells[0].outputs[0]["text"])
    assert info["transport"] == "ipc" and info["ip"].startswith("/tmp/ctxlab-t-")
    assert not Path(info["ip"]).parent.exists()          # its socket folder is removed at shutdown
