"""Python's garbage collection kept off a search's clock.

A full collection scans every container object the process holds, and a search tree
is made of hundreds of thousands of them: measured on connectFour (two trees of about
20,000 nodes), collections that freed nothing took 100-450 ms each and came in the
middle of searches, which then overran their budget by as much. A collection also
holds the interpreter lock, so while it runs no thread answers the manager either.

``paused()`` runs a search with automatic collection off; when the last search running
(in any thread) ends, everything alive is frozen (``gc.freeze``) so that the
collections between searches skip it. The tree is made of no reference cycles, so
reference counting frees its nodes without the collector; what freezing costs is that
cyclic garbage already made when a search ends waits for ``Hold.release`` (the match
is over) to be collected. A strategy holds a ``Hold`` from its first search until its
``finish``; when the last hold is released, the frozen objects are given back to the
collector (``gc.unfreeze``), unless something else froze objects before the first hold,
which are then left as they were. A hold that is dropped without ``release`` releases
itself when it is collected.

Collection is the process's, not a thread's: a search pauses it for every thread, and
the counts below are shared under a lock.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_lock = threading.RLock()  # an RLock: a hold may be collected (``__del__``) while held
_searching = 0  # searches running now, in any thread
_disabled_by_us = False  # automatic collection was on when the first of them began
_holds = 0  # strategies holding frozen objects
_frozen_before = False  # something else had frozen objects before the first hold
_frozen_by_us = False  # a search froze objects since the first hold


class Hold:
    """A strategy's claim on the frozen objects (see the module doc)."""

    def __init__(self) -> None:
        global _holds, _frozen_before
        with _lock:
            if _holds == 0:
                _frozen_before = gc.get_freeze_count() > 0
            _holds += 1
        self._held = True

    def release(self) -> None:
        """The match is over: when no other hold is left, unfreeze (idempotent)."""
        global _holds, _frozen_by_us
        with _lock:
            if not self._held:
                return
            self._held = False
            _holds -= 1
            if _holds == 0 and _frozen_by_us:
                _frozen_by_us = False
                if not _frozen_before:
                    gc.unfreeze()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # at exit the module may be half gone
            self.release()


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """Run the block without automatic garbage collection; freeze what is alive when
    the last block running ends (see the module doc). Blocks nest and may run in
    several threads at once; automatic collection is turned back on only if it was on."""
    global _searching, _disabled_by_us, _frozen_by_us
    with _lock:
        if _searching == 0:
            _disabled_by_us = gc.isenabled()
            gc.disable()
        _searching += 1
    try:
        yield
    finally:
        with _lock:
            _searching -= 1
            if _searching == 0:
                if _holds > 0:
                    gc.freeze()
                    _frozen_by_us = True
                if _disabled_by_us:
                    gc.enable()
