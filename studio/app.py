"""The studio as an ASGI application (Starlette): the page, its static files, and the
JSON endpoints of ``docs/studio.md``, each a thin wrapper of ``gdl2pl.studio.api``.

Every POST takes a JSON object (``Content-Type: application/json``, so that no page of
another site can post to it without the browser asking first, and none is allowed). Its
values are checked here (types, sizes, the syntax and player names) before anything runs;
the game text reaches Prolog only as text to parse and translate, moves and atoms only as
terms. Of each kind (Prolog, front end), at most ``Limits.session_requests`` requests of a
session and ``Limits.max_requests`` in all are in flight (more are refused at once); each
waits at most ``Limits.wait_seconds`` for its turn (one Prolog and one front-end request at
a time per session, at most ``Limits.max_busy`` and ``Limits.max_front_end`` at once in
all) and then works at most ``Limits.seconds``: Prolog work in a thread whose query is
interrupted, front-end work (check, convert, translate, graph) in a worker process that
is killed. Errors are answered as ``{"error": message, "line": ..., "column": ...}`` with
a 4xx/5xx status (503 when a limit stopped the work or the server is busy).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Sequence
from contextlib import asynccontextmanager
from dataclasses import asdict
from dataclasses import dataclass
from importlib import resources
from typing import Any
from typing import cast

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp
from starlette.types import Receive
from starlette.types import Scope
from starlette.types import Send

from gdl2pl.bridge import PrologUnavailableError
from gdl2pl.bridge import QueryInterrupted
from gdl2pl.bridge import ReasonerError
from gdl2pl.errors import GdlError
from gdl2pl.ggp.cancel import WorkCancelled
from gdl2pl.load import SYNTAXES
from gdl2pl.load import Syntax
from gdl2pl.written import ANSWER_SYNTAXES

from . import api
from .admission import Admission
from .limits import Limits
from .limits import Watchdog
from .pool import WorkerPool
from .sessions import GAME_NAME
from .sessions import NAME_PATTERN
from .sessions import Session
from .sessions import Studio
from .sessions import StudioError
from .why import why

COOKIE = "gdl2pl_studio"
#: The host names a server bound to this machine only answers to (a page of another site
#: that renames itself 127.0.0.1 through DNS is refused).
LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]", "testserver")
#: The page's files (name -> media type); nothing else is served.
STATIC = {
    "studio.css": "text/css; charset=utf-8",
    "studio.js": "text/javascript; charset=utf-8",
}
#: The endpoints that need no Prolog: their work runs in a worker process (``gdl2pl.studio.
#: pool``), under the same time limit, at most ``Limits.max_front_end`` at once.
FRONT_END = frozenset({"check", "convert", "translate", "graph"})
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; "
        "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
log = logging.getLogger("gdl2pl.studio")


@dataclass(frozen=True)
class Example:
    """A game or program the page offers: its file in a package, title and kind."""

    name: str
    package: str
    path: str
    title: str
    kind: str  # "game" or "program"


EXAMPLES = (
    Example("ticTacToe.kif", "gdl2pl", "examples/ticTacToe.kif", "Tic-tac-toe (KIF)", "game"),
    Example("ticTacToe.gdl", "gdl2pl", "examples/ticTacToe.gdl", "Tic-tac-toe (infix)", "game"),
    Example("buttons.kif", "gdl2pl", "examples/buttons.kif", "Buttons and lights (KIF)", "game"),
    Example("buttons.gdl", "gdl2pl", "examples/buttons.gdl", "Buttons and lights (infix)", "game"),
    Example(
        "matchingPennies.kif",
        "gdl2pl",
        "examples/matchingPennies.kif",
        "Matching pennies (simultaneous moves)",
        "game",
    ),
    Example("paths.kif", "gdl2pl.studio", "examples/paths.kif", "Paths in a graph", "program"),
    Example(
        "open_program.kif",
        "gdl2pl.studio",
        "examples/open_program.kif",
        "An open program (give it an input model)",
        "program",
    ),
)


@dataclass(frozen=True)
class StartGame:
    """The game named on the command line, read once when the server starts."""

    name: str
    text: str


def example_text(e: Example) -> str:
    return (resources.files(e.package) / e.path).read_text(encoding="utf-8")


def create_app(
    limits: Limits | None = None,
    game: StartGame | None = None,
    allowed_hosts: Sequence[str] | None = LOCAL_HOSTS,
) -> Starlette:
    """The studio application. ``allowed_hosts`` are the host names it answers to
    (None: any, which ``gdl2pl studio`` never asks for: see ``serve.host_names``)."""
    lim = limits or Limits()
    studio = Studio(lim)
    watchdog = Watchdog()
    # one count for each kind: a flood of front-end requests leaves Prolog its turn
    admission = {kind: Admission(lim.session_requests, lim.max_requests) for kind in (True, False)}
    workers = WorkerPool(lim.max_front_end, lim.front_end_megabytes, lim.dot_seconds)
    front_end_slots = threading.BoundedSemaphore(lim.max_front_end)

    def take_turn(
        lock: threading.Lock | threading.Semaphore, end: float, refusal: StudioError
    ) -> None:
        """Acquire ``lock`` by the monotonic time ``end``, else raise ``refusal``."""
        if not lock.acquire(timeout=max(0.0, end - time.monotonic())):
            raise refusal

    def run(
        request_data: dict[str, Any],
        session: Session,
        work: Callable[..., dict[str, Any]],
        prolog: bool,
    ) -> dict[str, Any]:
        end = time.monotonic() + lim.wait_seconds
        previous = StudioError("a previous request of this page is still running", 429)
        busy = StudioError("the server is busy: try again in a moment", 503)
        if not prolog:  # the front end: a question for a worker process
            question = work(request_data, session)
            take_turn(session.front_end, end, previous)
            try:
                take_turn(front_end_slots, end, busy)
                try:
                    return workers.ask(question, lim.seconds)
                finally:
                    front_end_slots.release()
            finally:
                session.front_end.release()
        take_turn(session.lock, end, previous)
        try:
            take_turn(studio.busy, end, busy)
            try:
                with watchdog.deadline(lim.seconds):
                    return work(request_data, session)
            finally:
                studio.busy.release()
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

    def endpoint(
        work: Callable[..., dict[str, Any]], prolog: bool = True
    ) -> Callable[[Request], Any]:
        async def handle(request: Request) -> Response:
            session, new = studio.session(request.cookies.get(COOKIE))
            try:
                with admission[prolog].enter(session.id):
                    data = await _json_body(request, lim)
                    result = await run_in_threadpool(run, data, session, work, prolog)
                response: Response = JSONResponse(result)
            except StudioError as e:
                if e.status >= 500 and e.status != 503:
                    log.error("studio: %s", e.message)
                response = _error(e)
            except PrologUnavailableError as e:
                response = _error(StudioError(f"SWI-Prolog is not usable: {e}", 500))
            except Exception as e:  # a bug: answer in one line, log the traceback
                log.exception("studio: internal error")
                response = _error(StudioError(f"internal error: {type(e).__name__}: {e}", 500))
            if new:
                response.set_cookie(COOKIE, session.id, httponly=True, samesite="strict")
            return _secured(response)

        return handle

    # -- the endpoints' work (in a worker thread) ----------------------------------------------

    def check(d: dict[str, Any], s: Session) -> dict[str, Any]:
        return {"op": "check", **_game_fields(d, lim)}

    def convert(d: dict[str, Any], s: Session) -> dict[str, Any]:
        to = d.get("to")
        if to not in ("kif", "infix"):
            raise StudioError('\'to\' must be "kif" or "infix"')
        return {"op": "convert", "text": _text(d, lim), "syntax": _syntax(d), "to": to}

    def translate(d: dict[str, Any], s: Session) -> dict[str, Any]:
        standalone = d.get("standalone", False)
        if not isinstance(standalone, bool):
            raise StudioError("'standalone' must be true or false")
        return {"op": "translate", **_game_fields(d, lim), "standalone": standalone}

    def graph(d: dict[str, Any], s: Session) -> dict[str, Any]:
        return {"op": "graph", **_game_fields(d, lim)}

    def play(d: dict[str, Any], s: Session) -> dict[str, Any]:
        answers = _answer_syntax(d)
        with studio.game(s, _text(d, lim), _syntax(d), _name(d)) as g:
            return api.view(g, _moves(d, lim), answers)

    def step(d: dict[str, Any], s: Session) -> dict[str, Any]:
        chosen = _names(d, "chosen")
        players = _names(d, "players")
        for role, kind in players.items():
            if kind not in api.PLAYERS:
                raise StudioError(f"players: {role}: expected one of {', '.join(api.PLAYERS)}")
        moves = _moves(d, lim)
        if len(moves) >= lim.max_moves:
            raise StudioError(f"the history is full ({lim.max_moves} moves)", 422)
        answers = _answer_syntax(d)
        with studio.game(s, _text(d, lim), _syntax(d), _name(d)) as g:
            return api.step(g, moves, chosen, players, lim, answer_syntax=answers)

    def explain(d: dict[str, Any], s: Session) -> dict[str, Any]:
        atom = _string(d, "atom", 2_000)
        depth = d.get("depth", 3)
        if not isinstance(depth, int) or isinstance(depth, bool) or depth < 0:
            raise StudioError("'depth' must be a whole number >= 0")
        answers = _answer_syntax(d)
        with studio.game(s, _text(d, lim), _syntax(d), _name(d)) as g:
            moves = _moves(d, lim)
            states = g.replay(moves)
            depth = min(depth, lim.max_depth)
            return why(g.sm, states, moves, atom, depth, api.answers_in(g, answers))

    def analyze(d: dict[str, Any], s: Session) -> dict[str, Any]:
        started = time.monotonic()  # loading the game counts against the budget
        answers = _answer_syntax(d)
        with studio.game(s, _text(d, lim), _syntax(d), _name(d)) as g:
            return api.analyze(g, lim, started=started, answer_syntax=answers)

    def model(d: dict[str, Any], s: Session) -> dict[str, Any]:
        inputs = d.get("inputs", [])
        if not isinstance(inputs, list) or not all(
            isinstance(x, str) and len(x) < 200 for x in inputs
        ):
            raise StudioError("'inputs' must be a list of relation names")
        text = _text(d, lim)
        given = d.get("input", "")
        if not isinstance(given, str) or len(given) > lim.max_text:
            raise StudioError(f"'input' must be a text of at most {lim.max_text} characters")
        return api.model(text, _syntax(d), given, inputs, lim, _answer_syntax(d))

    # -- the page and what it reads ------------------------------------------------------------

    async def index(request: Request) -> Response:
        html = (resources.files("gdl2pl.studio") / "static" / "index.html").read_text("utf-8")
        return _secured(Response(html, media_type="text/html; charset=utf-8"))

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC:
            return _secured(JSONResponse({"error": "no such file"}, 404))
        text = (resources.files("gdl2pl.studio") / "static" / name).read_text("utf-8")
        return _secured(Response(text, media_type=STATIC[name]))

    async def info(request: Request) -> Response:
        return _secured(
            JSONResponse(
                {
                    "game": asdict(game) if game else None,
                    "examples": [
                        {"name": e.name, "title": e.title, "kind": e.kind} for e in EXAMPLES
                    ],
                    "players": list(api.PLAYERS),
                    "limits": asdict(lim),
                }
            )
        )

    async def example(request: Request) -> Response:
        name = request.path_params["name"]
        found = next((e for e in EXAMPLES if e.name == name), None)
        if found is None:
            return _secured(JSONResponse({"error": f"no example named {name!r}"}, 404))
        return _secured(JSONResponse({"name": name, "text": example_text(found)}))

    posts = {
        "check": check,
        "convert": convert,
        "translate": translate,
        "graph": graph,
        "play": play,
        "step": step,
        "explain": explain,
        "analyze": analyze,
        "model": model,
    }
    routes = [
        Route("/", index),
        Route("/static/{name}", static),
        Route("/api/info", info),
        Route("/api/examples/{name}", example),
        *(
            Route(f"/api/{n}", endpoint(w, prolog=n not in FRONT_END), methods=["POST"])
            for n, w in posts.items()
        ),
    ]
    middleware = []
    if allowed_hosts is not None:
        middleware.append(Middleware(HostsOnly, hosts=frozenset(allowed_hosts)))

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        workers.open()
        yield
        workers.close()
        studio.close()

    app = Starlette(routes=routes, middleware=middleware, lifespan=lifespan)
    app.state.studio = studio
    app.state.workers = workers
    app.state.admission = admission
    return app


class HostsOnly:
    """ASGI middleware: answer only requests whose ``Host`` header names one of ``hosts``
    (any port; an IPv6 address in brackets), else 400."""

    def __init__(self, app: ASGIApp, hosts: frozenset[str]) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            host = ""
            for key, value in scope["headers"]:
                if key == b"host":
                    host = value.decode("latin-1")
            name = host[: host.find("]") + 1] if host.startswith("[") else host.split(":")[0]
            if name.lower() not in self.hosts:
                response = JSONResponse({"error": f"unknown host {host!r}"}, 400)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


# -- reading a request ----------------------------------------------------------------------


async def _json_body(request: Request, lim: Limits) -> dict[str, Any]:
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise StudioError("send JSON (Content-Type: application/json)", 415)
    cap = 4 * lim.max_text + 100_000  # texts, moves and JSON escapes
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > cap:
            raise StudioError(f"the request is larger than {cap} bytes", 413)
    try:
        data = json.loads(body)
    except ValueError as e:
        raise StudioError(f"not JSON: {e}") from None
    except RecursionError:
        raise StudioError("the JSON is nested too deeply") from None
    if not isinstance(data, dict):
        raise StudioError("expected a JSON object")
    return cast(dict[str, Any], data)


def _string(d: dict[str, Any], key: str, cap: int) -> str:
    value = d.get(key)
    if not isinstance(value, str):
        raise StudioError(f"'{key}' must be a string")
    if len(value) > cap:
        raise StudioError(f"'{key}' is longer than {cap} characters", 413)
    return value


def _text(d: dict[str, Any], lim: Limits) -> str:
    return _string(d, "text", lim.max_text)


def _syntax(d: dict[str, Any]) -> Syntax:
    syntax = d.get("syntax", "auto")
    if syntax not in SYNTAXES:
        raise StudioError(f"'syntax' must be one of {', '.join(SYNTAXES)}")
    return cast(Syntax, syntax)


def _answer_syntax(d: dict[str, Any]) -> str | None:
    """The syntax a student reads answers in (``answer_syntax``: ``kif``, ``infix``, or
    ``auto`` or none for the game's own)."""
    chosen = d.get("answer_syntax", "auto")
    if chosen not in ("auto", *ANSWER_SYNTAXES):
        raise StudioError(f"'answer_syntax' must be one of auto, {', '.join(ANSWER_SYNTAXES)}")
    return None if chosen == "auto" else str(chosen)


def _game_fields(d: dict[str, Any], lim: Limits) -> dict[str, Any]:
    """What a front-end question about the game text carries: the text, its syntax and
    name, and the answer syntax."""
    return {
        "text": _text(d, lim),
        "syntax": _syntax(d),
        "name": _name(d),
        "answer_syntax": _answer_syntax(d),
    }


def _name(d: dict[str, Any]) -> str:
    """The name of the game's file or example, which the page sends (``GAME_NAME`` when
    it sends none): messages, the Prolog header and the analysis report say it."""
    name = d.get("name")
    if name is None:
        return GAME_NAME
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise StudioError(
            "'name' must be a file name of at most 100 letters, digits, '.', '_', '-' "
            "and spaces, starting with a letter or digit"
        )
    return name


def _moves(d: dict[str, Any], lim: Limits) -> list[list[str]]:
    moves = d.get("moves", [])
    if not isinstance(moves, list) or not all(
        isinstance(jm, list) and all(isinstance(m, str) and len(m) <= 1_000 for m in jm)
        for jm in moves
    ):
        raise StudioError("'moves' must be a list of joint moves, each a list of KIF strings")
    if len(moves) > lim.max_moves:
        raise StudioError(f"'moves' holds more than {lim.max_moves} joint moves", 413)
    return moves


def _names(d: dict[str, Any], key: str) -> dict[str, str]:
    value = d.get(key, {})
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and len(k) + len(v) < 2_000
        for k, v in value.items()
    ):
        raise StudioError(f"'{key}' must map role names to strings")
    return cast(dict[str, str], value)


# -- answering ------------------------------------------------------------------------------


def _error(e: StudioError) -> Response:
    body: dict[str, Any] = {"error": e.message}
    if e.line is not None:
        body["line"], body["column"] = e.line, e.column
    return JSONResponse(body, e.status)


def _secured(response: Response) -> Response:
    for k, v in HEADERS.items():
        response.headers.setdefault(k, v)
    return response
