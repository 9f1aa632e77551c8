"""One grading worker: an nbgrader process that grades the submissions it is handed, one at a time.

:func:`~ctxlab.grading.parallel.grade_parallel` hands submissions out from one queue, so a
worker grades one submission per request. Starting ``nbgrader autograde`` and ``nbgrader
generate_feedback`` for each would cost about 3 s of CPU each (their imports), as much as
grading the submission itself; instead :class:`Worker` keeps one Python process per worker
course root (``python -m ctxlab.grading._worker``) that runs nbgrader's own ``AutogradeApp``
and ``GenerateFeedbackApp`` with the same arguments and log format as the commands, once per
request. The process is stopped (its process group killed: its sandboxes die with it) when a
submission runs past its deadline, and after a run that failed; the next request starts a fresh one.

The request goes in on the process's stdin (one JSON line); the reply comes back as one JSON
line on a pipe of its own (kernels and nbgrader write to stdout and stderr, which go to the log).
"""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from ctxlab.grading._nbgrader import grading_env


def _run(app_class, argv: list[str], log) -> int:
    """One nbgrader app, as its command would run it, logging to ``log``; its exit code."""
    import traceback

    sys.stderr = log   # the apps' log handler writes to sys.stderr as configured at initialize
    app = app_class()
    try:
        app.initialize(argv)
        app.start()
        return 0
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    except Exception:  # noqa: BLE001 (the command would exit non-zero with a traceback)
        log.write(traceback.format_exc())
        return 1
    finally:
        log.flush()
        app_class.clear_instance()
        sys.stderr = sys.__stderr__


def main(argv: list[str]) -> int:
    """The worker process: ``ROOT REPLY_FD NBGRADER_ARGS...``; one request per stdin line."""
    from nbgrader.apps import AutogradeApp, GenerateFeedbackApp

    root, reply = Path(argv[0]), os.fdopen(int(argv[1]), "w", encoding="utf-8")
    extra = [*argv[2:], f"--CourseDirectory.root={root}"]
    for line in sys.stdin:
        job = json.loads(line)
        with open(root / "autograde.log", "a", encoding="utf-8") as log:
            rc = _run(AutogradeApp, ["*", "--force", "--create", "--log-level=INFO", *extra], log)
            log.write(f"\n[ctxlab] nbgrader autograde exited with {rc}\n")
        fb = None
        if job.get("feedback"):
            with open(root / "feedback.log", "a", encoding="utf-8") as log:
                fb = _run(GenerateFeedbackApp, ["*", "--force", "--log-level=WARN", *extra], log)
                log.write(f"\n[ctxlab] nbgrader generate_feedback exited with {fb}\n")
        reply.write(json.dumps({"autograde": rc, "feedback": fb}) + "\n")
        reply.flush()
    return 0


class Worker:
    """The client side: a worker process for the course root ``wroot`` (started when needed)."""

    def __init__(self, wroot: Path, config_args: list[str]):
        self.wroot, self.config_args = Path(wroot), list(config_args)
        self.proc: subprocess.Popen | None = None
        self._reply = -1
        self._buffer = b""

    def _start(self) -> None:
        read_end, write_end = os.pipe()
        with open(self.wroot / "autograde.log", "a", encoding="utf-8") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "ctxlab.grading._worker", str(self.wroot), str(write_end), *self.config_args],
                cwd=self.wroot, env=grading_env(), stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT,
                pass_fds=(write_end,), start_new_session=True, text=True, encoding="utf-8")
        os.close(write_end)
        self._reply, self._buffer = read_end, b""

    def grade(self, feedback: bool, deadline: float | None) -> dict | None:
        """Autograde (and make feedback for) what is in the worker root's ``submitted/`` now; the
        exit codes (``{"autograde": rc, "feedback": rc or None}``), or None when ``deadline``
        (monotonic) passed first (the process is stopped then)."""
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps({"feedback": feedback}) + "\n")
            self.proc.stdin.flush()
        except OSError:
            pass   # it died: read_reply sees the end of its pipe
        while b"\n" not in self._buffer:
            wait = None if deadline is None else deadline - time.monotonic()
            if wait is not None and wait <= 0:
                self.stop()
                return None
            ready, _, _ = select.select([self._reply], [], [], wait)
            if not ready:
                continue
            chunk = os.read(self._reply, 65536)
            if not chunk:   # the process ended without a reply
                self.stop()
                return {"autograde": 1, "feedback": None}
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    def stop(self) -> None:
        """Kill the worker process and everything in its process group; the next request starts another."""
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
            self.proc.wait()
            if self.proc.stdin is not None:
                try:
                    self.proc.stdin.close()
                except OSError:
                    pass
            self.proc = None
        if self._reply >= 0:
            os.close(self._reply)
            self._reply = -1

    def close(self) -> None:
        """End the worker process (it has no work left): it ends when its stdin does, else it is stopped."""
        if self.proc is not None and self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=60)
                self.proc = None
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.stop()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
