"""A game's network built in a process of its own: ``NetworkBuild``.

Grounding a big game takes seconds and memory that the process playing it cannot
spare: a grounding in the player's own process held its GIL, grew its heap and could
not be stopped cleanly. So the reasoner's grounder runs in a worker process
(``python -m gdl2pl.compiled.ground_worker``) with the build's limits set by the
operating system: it caps its own address space at the budget's memory before
anything else (a limit set between fork and exec would not be safe in a process with
threads), and at the
budget's deadline it is killed (with its process group). The network comes back as
files (``network_io``: raw ints and JSON, never a pickle) in a private temporary
folder that is removed afterwards. Nothing outlives the process that started a build:
when it exits with builds under way (no ``close()``), they are stopped and their folders
removed; when it dies (``kill -9``), its workers see it within a second
(``ground_worker``), remove their folders and end.

``start()`` returns at once; ``wait()`` gives the ``Network`` or raises
``GroundingBudgetError`` / ``CompileRefusedError`` saying why; ``cancel()`` stops it.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from typing import NoReturn

from gdl2pl.flatten import FlatRule
from gdl2pl.flatten import flatten_rules
from gdl2pl.pipeline import normalized
from gdl2pl.syntax import Description

from .errors import CompileRefusedError
from .errors import GroundingBudgetError
from .ground import GroundingBudget
from .ground import grounding_input
from .ground_worker import REQUEST
from .network import Network
from .network_io import _json_raw
from .network_io import read_network


class NetworkBuild:
    """The network of the game ``d`` (loaded by the Prolog engine as ``name`` with the
    raw ``roles``), grounded by a worker process within ``budget``: its seconds bound
    the whole build (starting the worker, grounding, handing the network back), its
    memory the worker's address space. ``d`` is the game's description, or its flat
    rules as the reasoner loaded them (``StateMachine.flat_rules``: the normalized game
    flattened), which are then not made a second time. A game that has no network at
    all (see ``grounding_input``) is refused here, before any process starts."""

    def __init__(
        self,
        d: Description | Sequence[FlatRule],
        name: str,
        roles: tuple[Any, ...],
        case_sensitive: bool = False,
        budget: GroundingBudget | None = None,
    ) -> None:
        self.name = name
        self.budget = budget or GroundingBudget()
        rules = flatten_rules(normalized(d, case_sensitive)[0]) if isinstance(
            d, Description) else list(d)
        inp = grounding_input(rules, name)  # refusals come here, at once
        self._request = {
            "name": name,
            "input": {
                "rules": inp.rules,
                "relations": inp.relations,
                "keywords": inp.keywords,
                "names": inp.names,
                "sources": inp.sources,
                "demand": inp.demand,
            },
            "roles": [_json_raw(r) for r in roles],
        }
        self._process: subprocess.Popen[str] | None = None
        self._folder: Path | None = None
        self._owner = 0  # the process that started the worker
        self._cancelled = threading.Event()
        self._lock = threading.Lock()
        self.started = 0.0
        self.deadline = 0.0

    def start(self) -> NetworkBuild:
        """Start the worker (at most once); the budget's seconds count from now."""
        with self._lock:
            if self._process is not None or self._cancelled.is_set():
                return self
            self.started = time.monotonic()
            self.deadline = self.started + self.budget.seconds
            folder = Path(tempfile.mkdtemp(prefix="gdl2pl-ground-"))
            self._folder, self._owner = folder, os.getpid()
            _UNDER_WAY.add(self)
            b = self.budget
            request: dict[str, Any] = dict(self._request)
            request["parent"] = self._owner  # gone, the worker ends (ground_worker)
            request["budget"] = {
                "seconds": b.seconds,
                "rules": b.rules,
                "depth": b.depth,
                "memory": b.memory,
            }
            try:
                (folder / REQUEST).write_text(json.dumps(request), encoding="utf-8")
                # -P: the worker imports this installation, never a gdl2pl folder that
                # happens to be in the working directory
                self._process = subprocess.Popen(
                    [sys.executable, "-P", "-m", "gdl2pl.compiled.ground_worker", str(folder)],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                    start_new_session=True,  # its own process group: killed as one
                )
            except BaseException:
                self._cleanup()
                raise
        return self

    def cancel(self) -> None:
        """Stop the build (the worker is killed); ``wait`` then raises."""
        self._cancelled.set()
        self._kill()

    def _kill(self) -> None:
        p = self._process
        if p is not None and p.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(p.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(timeout=5)

    def _cleanup(self) -> None:
        folder, self._folder = self._folder, None
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
        _UNDER_WAY.discard(self)

    def wait(self) -> Network:
        """The network, once the worker is done (``start`` first, or it starts now);
        ``GroundingBudgetError`` past a budget (the message says which),
        ``CompileRefusedError`` when the game cannot be compiled."""
        self.start()
        p = self._process
        assert p is not None
        try:
            try:
                out, err = p.communicate(timeout=max(0.0, self.deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self._kill()
                raise GroundingBudgetError(
                    f"{self.name}: grounding took more than its budget of "
                    f"{self.budget.seconds:g} s"
                ) from None
            if self._cancelled.is_set():
                if _EXITING.is_set():
                    _park()  # stopped by the process's exit: nobody is left to tell
                raise CompileRefusedError(f"{self.name}: grounding was cancelled")
            answer = self._answer(out, err, p.returncode)
            if "refused" in answer:
                error = GroundingBudgetError if answer.get("budget") else CompileRefusedError
                raise error(str(answer["refused"]))
            if "error" in answer:
                raise CompileRefusedError(f"{self.name}: grounding failed: {answer['error']}")
            assert self._folder is not None
            return read_network(self._folder)
        finally:
            self._cleanup()

    def _answer(self, out: str, err: str, code: int) -> dict[str, Any]:
        lines = [line for line in out.splitlines() if line.strip()]
        if code == 0 and lines:
            with contextlib.suppress(ValueError):
                answer = json.loads(lines[-1])
                if isinstance(answer, dict):
                    return answer
        if code < 0 and -code == signal.SIGKILL:
            why = "was killed (out of memory, or by another process)"
        elif code < 0:
            why = f"died of signal {-code}"
        else:
            why = f"ended with code {code}"
        tail = " ".join(err.strip().splitlines()[-2:])[:300]
        if "MemoryError" in err or ("memory" in err.lower() and code != 0):
            return {
                "refused": f"{self.name}: grounding needs more memory than its budget of "
                f"{self.budget.memory / 2**30:g} GiB",
                "budget": True,
            }
        return {"error": f"the grounding worker {why}" + (f": {tail}" if tail else "")}


#: The builds started in this process and not yet cleaned up (``_stop_at_exit``).
_UNDER_WAY: weakref.WeakSet[NetworkBuild] = weakref.WeakSet()
#: Set once the process exits (``_stop_at_exit``).
_EXITING = threading.Event()


@atexit.register
def _stop_at_exit() -> None:
    """At the exit of the process that started them (a forked child inherits the set, not
    the builds), the builds under way are stopped and their folders removed: a caller that
    never called ``close()`` leaves nothing behind. Their waiters (background threads)
    are left waiting, never told of a failure nobody asked about."""
    _EXITING.set()
    for build in list(_UNDER_WAY):
        if build._owner == os.getpid():
            build.cancel()
            build._cleanup()


def _park() -> NoReturn:
    """Wait for ever: the thread is a waiter of a build the process's exit stopped."""
    while True:
        threading.Event().wait()
