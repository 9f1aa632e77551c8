"""A local HTTP stand-in for the Messages API: the offline sandbox served over real HTTP on 127.0.0.1.

Online clients (``ANTHROPIC_API_KEY`` set, ``ANTHROPIC_BASE_URL`` pointing here) send their
requests through the real SDK, the metered HTTP client and a real socket, so the whole online
code path runs with no network and no cost. The stand-in

* counts what it receives (``received``: method, path, status; ``messages()``: the billable ones);
* answers a queued error status first (``fail``: e.g. ``[429, 529]``; ``fail_at``: by the number of
  the messages request), as the API does when busy;
* writes an access log (``log_path``: one line per request, the way a server logs) and keeps the
  credentials it was sent apart (``keys_seen``) so a test can check that the key reached the
  API and nowhere else;
* bills what the sandbox bills (``billed_usd()``: actual usage priced with data/pricing.json) and
  what the same requests would cost with every answer at ``max_tokens`` (``ceiling_usd()``).

Used by tests/test_budget.py, tests/test_online.py and tools/lesson_costs.py.
"""
from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx2

from ctxlab.costs import pricing
from ctxlab.sandbox import Sandbox

ERROR_TYPES = {429: "rate_limit_error", 529: "overloaded_error", 500: "api_error", 503: "api_error"}


@dataclass
class Received:
    method: str
    path: str
    status: int
    model: str | None = None
    max_tokens: int | None = None
    cost_usd: float = 0.0          #: what the sandbox billed for it (0 for an error)
    ceiling_usd: float = 0.0       #: the same with the answer max_tokens long
    body: dict | None = None       #: the request's JSON body as it arrived (for tests of a request's shape)


class StandIn:
    """The sandbox over HTTP on a free port of 127.0.0.1; use it as a context manager."""

    def __init__(self, log_dir: Path | None = None):
        self.sandbox = Sandbox(time_scale=0)
        self.received: list[Received] = []
        self.keys_seen: set[str] = set()
        self.fail: list[int] = []
        self.fail_at: dict[int, int] = {}  #: the n-th POST /v1/messages (0-based) -> the error status it gets
        self.lock = threading.Lock()
        self.serving = threading.Lock()
        self._own_dir = None if log_dir is not None else tempfile.TemporaryDirectory(prefix="standin-")
        self.log_path = Path(log_dir if log_dir is not None else self._own_dir.name) / "standin-access.log"
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format, *args):  # noqa: A002 - the server's access log goes to log_path
                with stand_in.lock, stand_in.log_path.open("a", encoding="utf-8") as f:
                    f.write(f"{self.address_string()} {format % args}\n")

            def _serve(self):
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                with stand_in.lock:
                    for name in ("x-api-key", "authorization"):
                        if self.headers.get(name):
                            stand_in.keys_seen.add(self.headers[name].removeprefix("Bearer ").strip())
                    n_messages = sum(1 for r in stand_in.received if r.path == "/v1/messages")
                    status = stand_in.fail.pop(0) if stand_in.fail else None
                    if status is None and self.path.split("?")[0] == "/v1/messages":
                        status = stand_in.fail_at.pop(n_messages, None)
                try:
                    parsed = json.loads(body) if body else {}
                except ValueError:
                    parsed = {}
                parsed = parsed if isinstance(parsed, dict) else {}
                entry = None
                if status is not None:
                    data = json.dumps({"type": "error", "error": {"type": ERROR_TYPES.get(status, "api_error"),
                                                                  "message": f"stand-in {status}"}}).encode()
                    headers = {"content-type": "application/json", "retry-after-ms": "1"}
                else:
                    req = httpx2.Request(self.command, f"http://stand-in{self.path}",
                                         headers=dict(self.headers.items()), content=body)
                    with stand_in.serving:  # one at a time, so the sandbox's log entry is this request's
                        n = len(stand_in.sandbox.log)
                        resp = stand_in.sandbox.handle(req)
                        status, data, headers = resp.status_code, resp.read(), resp.headers
                        entry = stand_in.sandbox.log[n] if len(stand_in.sandbox.log) > n else None
                record = Received(self.command, self.path.split("?")[0], status, parsed.get("model"),
                                  parsed.get("max_tokens"), body=parsed)
                if status == 200 and entry is not None and entry.endpoint == "messages":
                    record.cost_usd = record.ceiling_usd = entry.cost_usd
                    out = (entry.usage or {}).get("output_tokens", 0)
                    if isinstance(record.max_tokens, int) and record.max_tokens > out:
                        record.ceiling_usd += (record.max_tokens - out) * pricing.get_model(entry.model).output_per_token
                with stand_in.lock:
                    stand_in.received.append(record)
                self.send_response(status)
                for k, v in headers.items():
                    if k.lower() not in ("content-length", "transfer-encoding", "connection"):
                        self.send_header(k, v)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _serve

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def messages(self) -> int:
        """How many POST /v1/messages (the billable requests) arrived, errors included."""
        with self.lock:
            return sum(1 for r in self.received if r.method == "POST" and r.path == "/v1/messages")

    def billed_usd(self) -> float:
        """What the sandbox billed for the messages it answered (its own prices, not the meter's)."""
        with self.lock:
            return sum(r.cost_usd for r in self.received)

    def ceiling_usd(self) -> float:
        """The same requests with every answer ``max_tokens`` long (the sandbox's answers are short)."""
        with self.lock:
            return sum(r.ceiling_usd for r in self.received)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
        if self._own_dir is not None:
            self._own_dir.cleanup()


# ---------------------------------------------------------------- a lesson, online, against a stand-in

FAKE_KEY = "-".join(["sk", "ant", "test", "0000", "not", "a", "real", "key", "7f3c9a"])  # built, not a literal
PROBE = ("print()\nimport json as _json\nfrom ctxlab.api import budget as _budget\n"
         "print(_json.dumps(_budget.state().__dict__))")


def online_env(stand_in: StandIn, budget_usd: float, **extra: str) -> dict[str, str]:
    """The environment of a learner's kernel with a (fake) key, pointed at ``stand_in``."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("CTXLAB_OFFLINE", "NBGRADER_EXECUTION", "CTXLAB_MODEL", "CTXLAB_QUESTIONS")}
    env.update(ANTHROPIC_API_KEY=FAKE_KEY, ANTHROPIC_BASE_URL=stand_in.url, CTXLAB_BUDGET_USD=str(budget_usd),
               CTXLAB_TIME_SCALE="0", MPLBACKEND="Agg", **extra)
    return env


@dataclass
class Run:
    """A lesson run online: the executed notebook, the kernel's ledger at the end, and what arrived when."""

    notebook: object
    ledger: dict
    received_after: list[int]  #: billable requests the stand-in had received after each cell


def run_online(path: Path, env: dict[str, str], *, stand_in: StandIn | None = None, allow_errors: bool = False,
               kernel_log: Path | None = None, timeout: int = 600) -> Run:
    """Execute a lesson notebook top to bottom in a kernel with ``env``.

    The ledger is read by one extra cell run after the lesson (not kept in the notebook); the
    kernel's own stdout and stderr go to ``kernel_log`` when given.
    """
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=allow_errors,
                            resources={"metadata": {"path": str(path.parent)}})
    received_after = []
    with contextlib.ExitStack() as stack:
        streams = {}
        if kernel_log is not None:
            log = stack.enter_context(kernel_log.open("ab"))
            streams = {"stdout": log, "stderr": log}
        stack.enter_context(client.setup_kernel(env=env, **streams))
        for i, cell in enumerate(nb.cells):
            client.execute_cell(cell, i)
            received_after.append(stand_in.messages() if stand_in is not None else 0)
        probe = nbformat.v4.new_code_cell(PROBE)
        nb.cells.append(probe)  # nbclient stores each executed cell back into the notebook
        client.execute_cell(probe, len(nb.cells) - 1)
        probe = nb.cells.pop()
    text = "".join(o.get("text", "") for o in probe.outputs if o.get("name") == "stdout")
    return Run(nb, json.loads([line for line in text.splitlines() if line.startswith("{")][-1]), received_after)
