"""How many requests of the studio are in flight: ``Admission`` counts them (waiting for
their turn or running), per session and overall, and refuses one past either cap at once
(429, 503) before it takes one of the server's threads: a page that sends 45 requests
gets 41 refusals, not 45 threads that everyone else waits behind.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from .sessions import StudioError


class Admission:
    """The requests in flight, per session and overall (see ``Limits``)."""

    def __init__(self, per_session: int, overall: int) -> None:
        self.per_session = per_session
        self.overall = overall
        self._lock = threading.Lock()
        self._sessions: dict[str, int] = {}
        self._total = 0

    @contextmanager
    def enter(self, session: str) -> Iterator[None]:
        """Count a request of ``session`` for the block; ``StudioError`` at once (429:
        too many of this session; 503: too many overall) instead of waiting."""
        with self._lock:
            mine = self._sessions.get(session, 0)
            if mine >= self.per_session:
                raise StudioError(
                    f"this page has {mine} requests running already: wait for their answers", 429
                )
            if self._total >= self.overall:
                raise StudioError("the server is busy: try again in a moment", 503)
            self._sessions[session] = mine + 1
            self._total += 1
        try:
            yield
        finally:
            with self._lock:
                self._total -= 1
                self._sessions[session] -= 1
                if not self._sessions[session]:
                    del self._sessions[session]

    def in_flight(self) -> int:
        """How many requests are in flight now."""
        return self._total
