"""The studio as an ASGI application (Starlette): the page, its static files, and the
JSON endpoints of ``docs/studio.md`` (``gdl2pl.studio.endpoints``), each answered through
the server's ``Pipeline`` (``gdl2pl.studio.pipeline``: admission, turns, limits, and where
the work runs).

Every POST takes a JSON object (``Content-Type: application/json``, so that no page of
another site can post to it without the browser asking first, and none is allowed). Its
values are checked (``gdl2pl.studio.fields``: types, sizes, the syntax and player names)
before anything runs; the game text reaches Prolog only as text to parse and translate,
moves and atoms only as terms. Requests are answered only for the host names the server
is bound to (``HostsOnly``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Coroutine
from collections.abc import Sequence
from contextlib import asynccontextmanager
from dataclasses import asdict
from dataclasses import dataclass
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp
from starlette.types import Receive
from starlette.types import Scope
from starlette.types import Send

from . import api
from .endpoints import ENDPOINTS
from .limits import Limits
from .pipeline import Endpoint
from .pipeline import FrontEndWork
from .pipeline import Pipeline
from .pipeline import secured
from .sessions import Studio

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
FRONT_END = frozenset(e.name for e in ENDPOINTS if isinstance(e, FrontEndWork))


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
    exercise: dict[str, Any] | None = None,
) -> Starlette:
    """The studio application. ``allowed_hosts`` are the host names it answers to
    (None: any, which ``gdl2pl studio`` never asks for: see ``serve.host_names``);
    ``game`` or ``exercise`` (``gdl2pl.studio.exercise.read_exercise``) is what the page
    opens with."""
    lim = limits or Limits()
    pipeline = Pipeline(lim, Studio(lim))

    async def info(request: Request) -> Response:
        return secured(
            JSONResponse(
                {
                    "game": asdict(game) if game else None,
                    "exercise": exercise,
                    "examples": [
                        {"name": e.name, "title": e.title, "kind": e.kind} for e in EXAMPLES
                    ],
                    "players": list(api.PLAYERS),
                    "limits": asdict(lim),
                }
            )
        )

    routes = [
        Route("/", index),
        Route("/static/{name}", static),
        Route("/api/info", info),
        Route("/api/examples/{name}", example),
        *(Route(f"/api/{e.name}", _post(pipeline, e), methods=["POST"]) for e in ENDPOINTS),
    ]
    middleware = []
    if allowed_hosts is not None:
        middleware.append(Middleware(HostsOnly, hosts=frozenset(allowed_hosts)))

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        import anyio.to_thread

        # a thread for every request in flight (Limits.max_requests of each kind)
        limiter = anyio.to_thread.current_default_thread_limiter()
        limiter.total_tokens = max(limiter.total_tokens, lim.server_threads)
        pipeline.open()
        yield
        pipeline.close()

    app = Starlette(routes=routes, middleware=middleware, lifespan=lifespan)
    app.state.pipeline = pipeline
    app.state.studio = pipeline.studio
    app.state.workers = pipeline.workers
    return app


def _post(
    pipeline: Pipeline, endpoint: Endpoint
) -> Callable[[Request], Coroutine[Any, Any, Response]]:
    """The handler of ``endpoint``'s route: the request through ``pipeline``."""

    async def handle(request: Request) -> Response:
        return await pipeline.answer(request, endpoint)

    return handle


# -- the page and what it reads ------------------------------------------------------------


async def index(request: Request) -> Response:
    html = (resources.files("gdl2pl.studio") / "static" / "index.html").read_text("utf-8")
    return secured(Response(html, media_type="text/html; charset=utf-8"))


async def static(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in STATIC:
        return secured(JSONResponse({"error": "no such file"}, 404))
    text = (resources.files("gdl2pl.studio") / "static" / name).read_text("utf-8")
    return secured(Response(text, media_type=STATIC[name]))


async def example(request: Request) -> Response:
    name = request.path_params["name"]
    found = next((e for e in EXAMPLES if e.name == name), None)
    if found is None:
        return secured(JSONResponse({"error": f"no example named {name!r}"}, 404))
    return secured(JSONResponse({"name": name, "text": example_text(found)}))


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
