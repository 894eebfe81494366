"""How many requests of the studio are in flight: ``Admission`` counts them (waiting for
their turn or running), per session and overall, before a request takes one of the
server's threads.

Past the session's share a request is refused at once (429: that page is sending more than
it waits for). Past the overall cap it waits in line, first come first served, without a
thread, until one of those in flight ends or its time to wait is over (then 503); a class
whose 80 pages ask at the same moment is answered in turn, not refused. Both refusals say
the page may try again (``StudioError.retry``).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from .sessions import StudioError


class Admission:
    """The requests in flight, per session and overall (see ``Limits``), and the line of
    those waiting for a place."""

    def __init__(self, per_session: int, overall: int) -> None:
        self.per_session = per_session
        self.overall = overall
        self._lock = threading.Lock()  # an app may serve from more than one event loop
        self._sessions: dict[str, int] = {}
        self._total = 0
        self._line: deque[asyncio.Future[None]] = deque()
        #: places given to a request of the line, whose loop may not have told it yet
        self._given: set[asyncio.Future[None]] = set()

    @asynccontextmanager
    async def enter(self, session: str, end: float) -> AsyncIterator[None]:
        """Count a request of ``session`` for the block, once it has a place (by the
        monotonic time ``end``). ``StudioError``: 429 at once past the session's share,
        503 when no place came by ``end``."""
        with self._lock:
            mine = self._sessions.get(session, 0)
            if mine >= self.per_session:
                raise StudioError(
                    f"this page has {mine} requests running already: wait for their answers",
                    429,
                    retry=True,
                )
            self._sessions[session] = mine + 1
            place = None
            if self._total < self.overall and not self._line:
                self._total += 1
            else:
                place = asyncio.get_running_loop().create_future()
                self._line.append(place)
        try:
            if place is not None:
                await self._wait(place, end)
            try:
                yield
            finally:
                with self._lock:
                    self._total -= 1
                    self._admit()
        finally:
            with self._lock:
                self._sessions[session] -= 1
                if not self._sessions[session]:
                    del self._sessions[session]

    async def _wait(self, place: asyncio.Future[None], end: float) -> None:
        """Wait for ``place`` in the line until ``end``: 503 if it did not come (or the
        request was cancelled meanwhile), the place given back if it came too late."""
        try:
            await asyncio.wait_for(asyncio.shield(place), max(0.0, end - time.monotonic()))
        except (TimeoutError, asyncio.CancelledError) as e:
            with self._lock:
                given = place in self._given
                if not given:
                    place.cancel()  # ``_admit`` passes over it
                self._given.discard(place)
            if isinstance(e, asyncio.CancelledError):
                if given:
                    with self._lock:
                        self._total -= 1
                        self._admit()
                raise
            if not given:
                raise StudioError(
                    "the server is busy: try again in a moment", 503, retry=True
                ) from None
            return
        with self._lock:
            self._given.discard(place)

    def _admit(self) -> None:
        """Give the free places to the first in line (called locked)."""
        while self._line and self._total < self.overall:
            place = self._line.popleft()
            if place.cancelled():
                continue
            self._total += 1
            self._given.add(place)
            place.get_loop().call_soon_threadsafe(_give, place)

    def in_flight(self) -> int:
        """How many requests are in flight now (admitted, waiting for their turn or
        running)."""
        return self._total

    def waiting(self) -> int:
        """How many requests wait in line for a place."""
        return sum(not p.cancelled() for p in self._line)


def _give(place: asyncio.Future[None]) -> None:
    """Hand ``place`` its result, unless it was given up meanwhile (in its own loop)."""
    if not place.done():
        place.set_result(None)
