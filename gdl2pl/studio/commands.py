"""The ``gdl2pl studio`` subcommand, added to ``gdl2pl``'s parser (see
``gdl2pl.analysis.commands`` for the contract). Only the standard library is imported
here; the handler imports the server (Starlette, uvicorn) when run."""

from __future__ import annotations

import argparse
from collections.abc import Callable

Handler = Callable[[argparse.Namespace], int]


def add_subcommands(sub: argparse._SubParsersAction) -> dict[str, Handler]:  # type: ignore[type-arg]
    """Add ``studio`` to ``sub``; return its handler."""
    s = sub.add_parser("studio", help="a web playground for GDL on this machine (needs [studio])")
    s.add_argument(
        "game",
        nargs="?",
        help="a game file to open in the page (read once), or an exercise (*.json: starter "
        "text and the properties the answer must have; docs/studio.md)",
    )
    s.add_argument("--port", type=int, default=8080, help="port (default 8080; 0: any free)")
    s.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1: this machine only)",
    )
    s.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="another name the server answers to (a DNS name of this machine; repeatable)",
    )
    s.add_argument("--open", action="store_true", help="open the page in a web browser")
    # the defaults are Limits' (gdl2pl.studio.limits), chosen for a class of about 80
    # students on a two-core machine (docs/studio.md)
    s.add_argument(
        "--max-games",
        type=int,
        default=None,
        metavar="N",
        help="games held loaded at once, over all students (default 100: one or two a "
        "student of a class of 80; the least recently used is unloaded past it)",
    )
    s.add_argument(
        "--prolog-workers",
        type=int,
        default=None,
        metavar="N",
        help="requests running Prolog at once (default 4)",
    )
    s.add_argument(
        "--front-end-workers",
        type=int,
        default=None,
        metavar="N",
        help="worker processes for check, convert, translate and graph (default 2)",
    )
    s.add_argument(
        "--max-requests",
        type=int,
        default=None,
        metavar="N",
        help="requests of each kind (Prolog, front end) in flight at once; more wait in "
        "line (default 16)",
    )
    s.add_argument(
        "--wait-seconds",
        type=float,
        default=None,
        metavar="S",
        help="the longest a request waits in line and for its turn before the server says "
        "it is busy (default 15)",
    )
    return {"studio": _run}


#: Each option that sets a limit, by the ``Limits`` field it sets.
LIMIT_OPTIONS = {
    "max_games": "max_games",
    "prolog_workers": "max_busy",
    "front_end_workers": "max_front_end",
    "max_requests": "max_requests",
    "wait_seconds": "wait_seconds",
}


def _run(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from .limits import Limits
    from .serve import serve

    chosen = {}
    for option, field in LIMIT_OPTIONS.items():
        value = getattr(args, option)
        if value is None:
            continue
        if value <= 0:  # a count at least 1, the wait more than 0 seconds
            flag = "--" + option.replace("_", "-")
            raise ValueError(f"{flag} must be more than 0, not {value}")
        chosen[field] = value
    return serve(
        args.host,
        args.port,
        args.game,
        open_browser=args.open,
        allow_hosts=args.allow_host,
        limits=replace(Limits(), **chosen),
    )


_run.error_status = 2  # type: ignore[attr-defined]
