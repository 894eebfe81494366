"""The studio's front-end workers: ``WorkerPool.ask`` has one of at most ``size`` worker
processes (``gdl2pl.studio.worker``) answer a question within a deadline; past it the
worker is killed (with any ``dot`` it started) and replaced, and the question answered
503. Workers start when first needed and are kept for the next questions; each is capped
in memory. Only JSON crosses between the server and a worker.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from typing import Any

from .sessions import StudioError


class _Worker:
    """One worker process and the bytes of its answer read so far."""

    def __init__(self, megabytes: int, dot_seconds: float) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-P", "-m", "gdl2pl.studio.worker", str(megabytes),
             f"{dot_seconds:g}"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            start_new_session=True,  # its own group: killing it kills its dot too
        )

    def ask(self, request: dict[str, Any], deadline: float) -> dict[str, Any] | None:
        """The worker's answer, or None when the deadline passed first."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request).encode() + b"\n")
        self.proc.stdin.flush()
        fd = self.proc.stdout.fileno()
        chunks: list[bytes] = []
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    return None
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    raise OSError("the worker ended")
                chunks.append(chunk)
                if chunk.endswith(b"\n"):
                    answer: dict[str, Any] = json.loads(b"".join(chunks))
                    return answer

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()


class WorkerPool:
    """At most ``size`` workers, each capped at ``megabytes`` of memory, drawing graphs
    within ``dot_seconds``. The caller bounds how many ask at once (at most ``size``)."""

    def __init__(self, size: int, megabytes: int, dot_seconds: float) -> None:
        self.size = size
        self.megabytes = megabytes
        self.dot_seconds = dot_seconds
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []
        self._closed = False

    def ask(self, request: dict[str, Any], seconds: float) -> dict[str, Any]:
        """A worker's answer to ``request`` within ``seconds`` (``StudioError``: the error
        it answered, or 503 when it took longer)."""
        with self._lock:
            if self._closed:
                raise StudioError("the server is stopping", 503)
            worker = self._idle.pop() if self._idle else None
        if worker is None:
            worker = _Worker(self.megabytes, self.dot_seconds)
        try:
            got = worker.ask(request, time.monotonic() + seconds)
        except (OSError, ValueError):  # it died (or wrote nonsense): never reuse it
            worker.kill()
            raise StudioError("the text could not be processed (its worker stopped)", 422) from None
        if got is None:
            worker.kill()
            raise StudioError(
                f"stopped: the question took longer than the server's limit of {seconds:g} seconds",
                503,
            )
        with self._lock:
            keep = not self._closed and len(self._idle) < self.size
            if keep:
                self._idle.append(worker)
        if not keep:
            worker.kill()
        if "error" in got:
            status, line, column = got.get("status", 500), got.get("line"), got.get("column")
            raise StudioError(got["error"], status, line, column)
        answer: dict[str, Any] = got["answer"]
        return answer

    def open(self) -> None:
        """Take questions again after ``close`` (a server started anew)."""
        with self._lock:
            self._closed = False

    def close(self) -> None:
        """Stop the idle workers (a busy one ends when its question does) and refuse
        questions until ``open``."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for w in idle:
            w.kill()
