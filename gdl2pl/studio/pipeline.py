"""The way every POST of the studio goes: ``Pipeline.answer`` admits the request, reads
its JSON body, gives it its turn and runs its work where that kind of work runs, within
``Limits``; then answers JSON, or ``{"error": message, "line": ..., "column": ...}`` with a
4xx/5xx status (503 when a limit stopped the work or the server is busy).

An endpoint says which kind of work it is (``gdl2pl.studio.endpoints``):

- ``@front_end``: work that needs no Prolog (check, convert, translate, graph). The
  endpoint reads the request into a question, which a worker process answers
  (``gdl2pl.studio.pool``), killed at the time limit. One such request at a time per
  session, at most ``Limits.max_front_end`` at once in all.
- ``@reasoner``: work that asks Prolog. It runs in one of the server's threads, whose
  query the ``Watchdog`` interrupts at the time limit. One such request at a time per
  session, at most ``Limits.max_busy`` at once in all.

Each kind has its own ``Admission``: at most ``Limits.session_requests`` requests of a
session (more are refused at once, 429) and ``Limits.max_requests`` in all in flight (more
wait in line, without a thread), so a flood of one kind leaves the other its turn. A
request waits at most ``Limits.wait_seconds`` from its arrival for its place and its turn
(then 503), and then works at most ``Limits.seconds``. A refusal because the server or
the page was busy says so (``"retry": true`` and ``Retry-After``): the page tries again.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.responses import Response

from gdl2pl.bridge import PrologUnavailableError
from gdl2pl.bridge import QueryInterrupted
from gdl2pl.bridge import ReasonerError
from gdl2pl.errors import GdlError
from gdl2pl.ggp.cancel import WorkCancelled
from gdl2pl.shown import shown

from . import api
from . import fields
from .admission import Admission
from .fields import Fields
from .limits import Limits
from .limits import Watchdog
from .pool import WorkerPool
from .sessions import Loaded
from .sessions import Session
from .sessions import Studio
from .sessions import StudioError

#: The cookie that names a browser's session.
COOKIE = "gdl2pl_studio"
#: The headers of every response (no other site may frame, script or embed the page).
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; "
        "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
#: A JSON answer (or a front-end question) as a dictionary.
Answer = dict[str, Any]
log = logging.getLogger("gdl2pl.studio")


@dataclass(frozen=True)
class Call:
    """One request's work: its values, its session, the server's games and limits, and
    the monotonic time by which it must have had its turn."""

    data: Fields
    session: Session
    studio: Studio
    limits: Limits
    end: float = float("inf")

    def game(self) -> AbstractContextManager[Loaded]:
        """The request's game (its ``text``, ``syntax`` and ``name``), loaded in Prolog."""
        lim, d = self.limits, self.data
        return self.studio.game(self.session, fields.text(d, lim), fields.syntax(d), fields.name(d))


@dataclass(frozen=True)
class FrontEndWork:
    """An endpoint whose work needs no Prolog: ``question`` reads the request (before its
    turn) into the question a worker process answers."""

    name: str
    question: Callable[[Call], Answer]

    def admission(self, pipeline: Pipeline) -> Admission:
        return pipeline.front_end_admission

    def run(self, pipeline: Pipeline, call: Call) -> Answer:
        return pipeline.in_worker(call.session, self.question(call), call.end)


@dataclass(frozen=True)
class ReasonerWork:
    """An endpoint whose work asks Prolog: ``answer`` runs, values read and all, in a
    server thread once it has its turn, its query interrupted at the time limit."""

    name: str
    answer: Callable[[Call], Answer]

    def admission(self, pipeline: Pipeline) -> Admission:
        return pipeline.reasoner_admission

    def run(self, pipeline: Pipeline, call: Call) -> Answer:
        return pipeline.in_reasoner(call.session, lambda: self.answer(call), call.end)


Endpoint = FrontEndWork | ReasonerWork


def front_end(question: Callable[[Call], Answer]) -> FrontEndWork:
    """Mark an endpoint as front-end work (named as its function)."""
    return FrontEndWork(question.__name__, question)


def reasoner(answer: Callable[[Call], Answer]) -> ReasonerWork:
    """Mark an endpoint as Prolog work (named as its function)."""
    return ReasonerWork(answer.__name__, answer)


class Pipeline:
    """Admission, turns and limits of the requests of one server, and where their work
    runs (see the module doc)."""

    def __init__(self, limits: Limits, studio: Studio) -> None:
        self.limits = limits
        self.studio = studio
        self.workers = WorkerPool(
            limits.max_front_end, limits.front_end_megabytes, limits.dot_seconds
        )
        self.watchdog = Watchdog()
        self.front_end_admission = Admission(limits.session_requests, limits.max_requests)
        self.reasoner_admission = Admission(limits.session_requests, limits.max_requests)
        self._front_end_slots = threading.BoundedSemaphore(limits.max_front_end)

    async def answer(self, request: Request, endpoint: Endpoint) -> Response:
        """The response to ``request`` for ``endpoint``: every error a JSON answer with a
        status, never an exception (a bug is logged and answered 500)."""
        end = time.monotonic() + self.limits.wait_seconds
        session, new = self.studio.session(request.cookies.get(COOKIE))
        try:
            async with endpoint.admission(self).enter(session.id, end):
                data = await fields.json_body(request, self.limits)
                call = Call(data, session, self.studio, self.limits, end)
                result = await run_in_threadpool(endpoint.run, self, call)
            response: Response = JSONResponse(result)
        except StudioError as e:
            if e.status >= 500 and e.status != 503:
                log.error("studio: %s", shown(e.message, 300))
            response = error_response(e)
        except PrologUnavailableError as e:
            response = error_response(StudioError(f"SWI-Prolog is not usable: {e}", 500))
        except Exception as e:  # a bug: answer in one line, log the traceback
            log.exception("studio: internal error")
            response = error_response(StudioError(f"internal error: {type(e).__name__}: {e}", 500))
        if new:
            response.set_cookie(COOKIE, session.id, httponly=True, samesite="strict")
        return secured(response)

    def in_worker(self, session: Session, question: Answer, end: float) -> Answer:
        """A worker process's answer to ``question``, once this session's previous
        front-end request is done and a worker slot is free (by the monotonic time
        ``end``, else 429 or 503)."""
        _take_turn(session.front_end, end, _previous())
        try:
            _take_turn(self._front_end_slots, end, _busy())
            try:
                return self.workers.ask(question, self.limits.seconds)
            finally:
                self._front_end_slots.release()
        finally:
            session.front_end.release()

    def in_reasoner(self, session: Session, work: Callable[[], Answer], end: float) -> Answer:
        """``work()`` in this thread, once this session's previous Prolog request is done
        and a Prolog slot is free (by the monotonic time ``end``, else 429 or 503), its
        query interrupted past ``Limits.seconds``; what the reasoner raises is answered
        as a ``StudioError``."""
        lim = self.limits
        _take_turn(session.lock, end, _previous())
        try:
            _take_turn(self.studio.busy, end, _busy())
            try:
                with self.watchdog.deadline(lim.seconds):
                    return work()
            finally:
                self.studio.busy.release()
        except (QueryInterrupted, WorkCancelled):
            raise StudioError(
                f"stopped: the question took longer than the server's limit of "
                f"{lim.seconds:g} seconds",
                503,
            ) from None
        except ReasonerError as e:
            raise StudioError(f"the reasoner gave up: {e}", 422) from None
        except StudioError:
            raise
        except GdlError as e:
            raise api.game_error(e) from None
        finally:
            session.lock.release()

    def open(self) -> None:
        """Start taking work (the server starts)."""
        self.workers.open()

    def close(self) -> None:
        """Stop the workers and unload the games (the server stops)."""
        self.workers.close()
        self.studio.close()


def _take_turn(
    lock: threading.Lock | threading.Semaphore, end: float, refusal: StudioError
) -> None:
    """Acquire ``lock`` by the monotonic time ``end``, else raise ``refusal``."""
    if not lock.acquire(timeout=max(0.0, end - time.monotonic())):
        raise refusal


def _previous() -> StudioError:
    return StudioError("a previous request of this page is still running", 429, retry=True)


def _busy() -> StudioError:
    return StudioError("the server is busy: try again in a moment", 503, retry=True)


#: The seconds a refusal for a busy server or page asks the page to wait before it tries
#: again (``Retry-After``).
RETRY_AFTER = 1


def error_response(e: StudioError) -> Response:
    """``e`` as a JSON answer with its status (and its line and column when it has them;
    ``"retry": true`` and ``Retry-After`` when the page may try again)."""
    body: dict[str, Any] = {"error": e.message}
    if e.line is not None:
        body["line"], body["column"] = e.line, e.column
    if e.retry:
        body["retry"] = True
        return JSONResponse(body, e.status, headers={"Retry-After": str(RETRY_AFTER)})
    return JSONResponse(body, e.status)


def secured(response: Response) -> Response:
    """``response`` with the ``HEADERS`` every answer carries."""
    for k, v in HEADERS.items():
        response.headers.setdefault(k, v)
    return response
