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
folder that is removed afterwards.

``start()`` returns at once; ``wait()`` gives the ``Network`` or raises
``GroundingBudgetError`` / ``CompileRefusedError`` saying why; ``cancel()`` stops it.
"""

from __future__ import annotations

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
from pathlib import Path
from typing import Any

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
    memory the worker's address space. A game that has no network at all (see
    ``grounding_input``) is refused here, before any process starts."""

    def __init__(
        self,
        d: Description,
        name: str,
        roles: tuple[Any, ...],
        case_sensitive: bool = False,
        budget: GroundingBudget | None = None,
    ) -> None:
        self.name = name
        self.budget = budget or GroundingBudget()
        n, _ = normalized(d, case_sensitive)
        inp = grounding_input(flatten_rules(n), name)  # refusals come here, at once
        self._request = {
            "name": name,
            "input": {
                "rules": inp.rules,
                "relations": inp.relations,
                "keywords": inp.keywords,
                "names": inp.names,
                "sources": inp.sources,
            },
            "roles": [_json_raw(r) for r in roles],
        }
        self._process: subprocess.Popen[str] | None = None
        self._folder: Path | None = None
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
            self._folder = folder
            b = self.budget
            request = dict(self._request)
            request["budget"] = {
                "seconds": b.seconds,
                "inferences": b.inferences,
                "rules": b.rules,
                "depth": b.depth,
                "memory": b.memory,
            }
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
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None

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
