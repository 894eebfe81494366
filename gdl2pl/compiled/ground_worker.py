"""The grounding worker: ``python -m gdl2pl.compiled.ground_worker FOLDER`` grounds the
game that ``FOLDER/request.json`` holds and writes its network into ``FOLDER``
(``network_io``), then prints one line of JSON saying how it went:

- ``{"ok": true}``;
- ``{"refused": MESSAGE, "budget": BOOL}``: the game cannot be compiled (``budget``:
  it went past a budget), MESSAGE saying why;
- ``{"error": MESSAGE}``: anything else that went wrong.

It runs in a process of its own (``compiled/build.py`` starts it with its limits), so
that grounding a big game never holds the player's process, its memory or its GIL.
The request is JSON: the game's name, its rules as the grounder takes them
(``GroundingInput``: numbers, text and lists), the roles as the Prolog engine spells
them, the budget's figures, and the process id of its parent: once that process is gone
(killed, or gone without stopping the build), nobody will read the network, so the
worker removes ``FOLDER`` and ends, within ``PARENT_CHECK`` seconds.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import resource
import shutil
import sys
import threading
import time
from pathlib import Path
from typing import Any

from .errors import CompileRefusedError
from .errors import GroundingBudgetError
from .ground import GroundingBudget
from .ground import GroundingInput
from .ground import ground_network
from .network_io import _raw
from .network_io import write_network

REQUEST = "request.json"


def _limit_memory(limit: int) -> None:
    """Cap this process's address space at ``limit`` bytes: past it, allocation fails
    and the grounding is refused, never the machine."""
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


#: How much lower the worker's priority is than its parent's (``os.nice``): grounding in
#: the background must not slow the player's search, an adapter's analyses or the
#: caller's own work on a machine with few cores.
NICENESS = 10


#: The worker's CPU limit: this many times its budget's seconds (a collector thread may
#: add CPU time to the wall time's), plus ``CPU_SLACK`` seconds.
CPU_SHARE = 2.0
CPU_SLACK = 10.0


def _limit_cpu(seconds: float, slack: float = CPU_SLACK) -> None:
    """Let the kernel end this process (SIGXCPU) after ``CPU_SHARE * seconds + slack``
    seconds of CPU. The parent kills it at the deadline and the grounding stops itself
    there, but a parent killed first (``kill -9``) cannot, and what runs outside
    Prolog's interruptible queries (reading the answer, writing the network) must end
    too."""
    if not math.isfinite(seconds):
        return
    limit = max(1, int(CPU_SHARE * seconds + slack))
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 5))  # then SIGKILL


#: Seconds between two looks of the worker at whether its parent is still there.
PARENT_CHECK = 0.2


def _end_with_parent(parent: int, folder: Path) -> None:
    """Watch, in a thread of its own (Prolog's queries let it run), that ``parent`` is
    still this process's parent; once it is not (it died and the worker was adopted),
    remove ``folder`` and end the process at once."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK)
        for _ in range(10):  # a file the grounding was writing may appear meanwhile
            shutil.rmtree(folder, ignore_errors=True)
            if not folder.exists():
                break
            time.sleep(0.01)
        os._exit(3)

    threading.Thread(target=watch, name="gdl2pl-parent-watch", daemon=True).start()


def _ground(folder: Path, request: dict[str, Any]) -> None:
    with contextlib.suppress(OSError):
        os.nice(NICENESS)
    _limit_cpu(float(request["budget"]["seconds"]))
    _limit_memory(int(request["budget"]["memory"]))
    inp = GroundingInput(**request["input"])
    roles = tuple(_raw(r) for r in request["roles"])
    budget = GroundingBudget(**request["budget"])
    net = ground_network(inp, roles, str(request["name"]), budget)
    write_network(net, folder)


def main(argv: list[str]) -> int:
    folder = Path(argv[1])
    try:
        request = json.loads((folder / REQUEST).read_text(encoding="utf-8"))
        if "parent" in request:
            _end_with_parent(int(request["parent"]), folder)
        _ground(folder, request)
        answer: dict[str, Any] = {"ok": True}
    except GroundingBudgetError as e:
        answer = {"refused": str(e), "budget": True}
    except CompileRefusedError as e:
        answer = {"refused": str(e), "budget": False}
    except MemoryError:
        answer = {"refused": "grounding needs more memory than its budget", "budget": True}
    except RecursionError:
        answer = {"refused": "a term nested too deeply to ground", "budget": False}
    except Exception as e:  # a defect: reported, and the reasoner plays
        answer = {"error": f"{type(e).__name__}: {e}"}
    print(json.dumps(answer), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
