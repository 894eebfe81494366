"""Stopping pure-Python work in another thread: the compilation of a game a stranger sent,
and a match's own loops (``check_cancel``).

SWI-Prolog queries are interrupted by a signal to their engine (``bridge.swipl.interrupt``);
the Python front end (reading, checking and translating a game of megabytes) has no such
hook. ``CancellableWork.running()`` marks the region of a thread that may be stopped, and
``cancel()`` from another thread raises ``WorkCancelled`` in it at its next Python
instruction (CPython's asynchronous exception), never outside that region.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class WorkCancelled(Exception):
    """The work was cancelled from another thread."""


class CancellableWork:
    """A region of one thread's work that another thread may cancel."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._thread: int | None = None
        self.cancelled = False

    @contextmanager
    def running(self) -> Iterator[None]:
        """Run the body cancellably; raises ``WorkCancelled`` if ``cancel()`` came before
        or during it."""
        with self._lock:
            if self.cancelled:
                raise WorkCancelled("cancelled before it began")
            self._thread = threading.get_ident()
        try:
            yield
        finally:
            with self._lock:
                self._thread = None  # from here on no exception is sent to this thread
                cancelled = self.cancelled
            if cancelled:
                _absorb_pending()
        if cancelled:
            raise WorkCancelled("cancelled")

    def cancel(self) -> None:
        """Stop the region if it is running now (else make it refuse to start)."""
        with self._lock:
            self.cancelled = True
            if self._thread is not None:
                ctypes.pythonapi.PyThreadState_SetAsyncExc(
                    ctypes.c_ulong(self._thread), ctypes.py_object(WorkCancelled)
                )


def check_cancel(cancel: threading.Event | None) -> None:
    """Raise ``WorkCancelled`` if ``cancel`` is set: what a loop of a match's work asks at
    each turn, so that work of a match that was stopped or aborted ends at once."""
    if cancel is not None and cancel.is_set():
        raise WorkCancelled("the match was stopped")


def _absorb_pending() -> None:
    """Let an asynchronous ``WorkCancelled`` sent just before the region ended arrive here
    (CPython raises it at its next check, within a few instructions), not in the caller."""
    for _ in range(3):
        try:
            for _ in range(100):
                pass
            return
        except WorkCancelled:
            continue


def give_memory_back() -> None:
    """Collect garbage and return freed heap pages to the system (glibc's malloc_trim),
    so a large game that was dropped does not keep the process big."""
    gc.collect()
    name = ctypes.util.find_library("c")
    if name:
        with contextlib.suppress(OSError, AttributeError):  # not glibc: nothing to trim
            ctypes.CDLL(name).malloc_trim(0)
