"""What one request of the studio may use: the caps on its input, its time and how many
requests run at once.

``Limits`` holds the numbers (``gdl2pl.studio.admission`` enforces the counts).
``Watchdog`` enforces the time: ``with watchdog.deadline(s):`` around a request's work
interrupts the calling thread's Prolog query (``gdl2pl.bridge.swipl.interrupt``, which
raises ``QueryInterrupted``) when it runs past ``s`` seconds, and cancels its Python work
inside ``python_work()`` (compiling a game to load: ``WorkCancelled``). One watchdog thread
serves every request. (Front-end work runs in worker processes, ``gdl2pl.studio.pool``,
stopped at the same limit.)

So every request is answered within ``wait_seconds`` (its turn) plus ``seconds`` (its
work, loading its game included) plus the moment it takes to stop, whatever else the
server is doing.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from contextlib import contextmanager
from contextlib import nullcontext
from dataclasses import dataclass

from gdl2pl.bridge.swipl import interrupt
from gdl2pl.bridge.swipl import prolog_thread_id
from gdl2pl.bridge.swipl import runtime
from gdl2pl.ggp.cancel import CancellableWork


# Alike on purpose: a record of numbers with their defaults, as ``analysis.analyze.Budget``
# (whose states, seconds and matches the studio caps smaller): ``duplicates`` pairs the
# two by shape.
@dataclass(frozen=True)
class Limits:
    """The caps of a studio server. The defaults serve a class of about 80 students on a
    two-core machine (``benchmarks/studio_class.py`` measures it); ``gdl2pl studio``
    sets the counts of games, workers and requests, and the wait, on its command line."""

    #: Characters of game (or program, or input) text in one request.
    max_text: int = 100_000
    #: Games loaded in Prolog at once, over all sessions; the least recently used is
    #: unloaded to make room. Each student's page loads its own game (about 0.1 MB and
    #: 50 ms for tic-tac-toe): one or two a student of a class of 80, so that a play does
    #: not load its game again.
    max_games: int = 100
    #: Sessions (browsers) remembered; the least recently seen is forgotten.
    max_sessions: int = 500
    #: Requests running Prolog at once, over all sessions.
    max_busy: int = 4
    #: Front-end requests (check, convert, translate, graph) running at once, over all
    #: sessions: each runs in a worker process of its own.
    max_front_end: int = 2
    #: Memory of one front-end worker process (its address space), in megabytes.
    front_end_megabytes: int = 1_024
    #: Requests of each kind in flight (waiting for their turn or running) of one session;
    #: past it, 429.
    session_requests: int = 4
    #: Requests of each kind (Prolog, front end) in flight over all sessions: past it a
    #: request waits in line, without a thread, for one of them to end. The server keeps
    #: a thread for each request in flight of both kinds (``server_threads``), and a flood
    #: of one kind leaves the other its turn.
    max_requests: int = 16
    #: The most a request waits, from its arrival, for a place in flight and its turn (the
    #: session's previous request, a free Prolog or worker slot); past it, 429 or 503.
    #: Longer than ``seconds``: a request queued behind others that run to their limit
    #: still gets its turn.
    wait_seconds: float = 15.0
    #: Joint moves in a match's history.
    max_moves: int = 1_000
    #: Wall-clock seconds of work (Prolog or front end) in one request.
    seconds: float = 10.0
    #: Seconds Graphviz may take to draw a dependency graph (within ``seconds``).
    dot_seconds: float = 4.0
    #: Inferences of one query of a loaded game (the reasoner's own limit).
    inference_limit: int = 20_000_000
    #: The most an MCTS opponent may think per move, in seconds.
    mcts_seconds: float = 2.0
    #: ``analyze``'s budget: states searched, seconds, random matches.
    analyze_states: int = 20_000
    analyze_seconds: float = 6.0
    analyze_walks: int = 50
    #: Memory a well-founded model may add to the server while it is computed (megabytes).
    model_megabytes: int = 512
    #: How deep ``explain`` explains failures.
    max_depth: int = 6

    @property
    def server_threads(self) -> int:
        """The threads the server runs requests in: one for each request in flight of
        both kinds, and a few for the rest (at least Starlette's default of 40)."""
        return max(40, 2 * self.max_requests + 8)


_work = threading.local()


def python_work() -> AbstractContextManager[None]:
    """The region of this thread's Python work that its deadline may cancel (it then
    raises ``WorkCancelled``); outside a ``Watchdog.deadline``, nothing is cancelled."""
    work: CancellableWork | None = getattr(_work, "current", None)
    return work.running() if work is not None else nullcontext()


#: Seconds between cancellations of a request's Python work past its deadline.
RECANCEL = 0.1


class Watchdog:
    """Interrupts the Prolog query of a thread past its deadline (see the module doc)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, int]] = []  # (deadline, token, prolog thread)
        self._live: dict[int, CancellableWork] = {}
        self._fired: set[int] = set()
        self._tokens = itertools.count()
        self._thread: threading.Thread | None = None

    @contextmanager
    def deadline(self, seconds: float) -> Iterator[None]:
        """Run the block with the calling thread's Prolog queries interrupted after
        ``seconds`` (they raise ``QueryInterrupted``)."""
        tid = prolog_thread_id()
        work = CancellableWork()
        with self._cond:
            token = next(self._tokens)
            self._live[token] = work
            heapq.heappush(self._heap, (time.monotonic() + seconds, token, tid))
            self._start()
            self._cond.notify()
        _work.current = work
        try:
            yield
        finally:
            _work.current = None
            with self._cond:
                del self._live[token]
                fired = token in self._fired
                self._fired.discard(token)
            if fired:  # a signal may still be queued: let this idle engine take it now
                runtime().query_once("true")

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="studio-watchdog", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._heap or self._heap[0][0] > time.monotonic():
                    wait = self._heap[0][0] - time.monotonic() if self._heap else None
                    self._cond.wait(wait)
                _, token, tid = heapq.heappop(self._heap)
                work = self._live.get(token)
                if work is None:
                    continue
                again = token in self._fired
                self._fired.add(token)
                # Python may swallow the cancellation (it lands in a finalizer that runs
                # meanwhile): send it again until the block ends
                heapq.heappush(self._heap, (time.monotonic() + RECANCEL, token, tid))
            work.cancel()
            if not again:
                interrupt(tid)
