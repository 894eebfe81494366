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
    s.add_argument("game", nargs="?", help="a game file to open in the page (read once)")
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
    return {"studio": _run}


def _run(args: argparse.Namespace) -> int:
    from .serve import serve

    return serve(
        args.host, args.port, args.game, open_browser=args.open, allow_hosts=args.allow_host
    )


_run.error_status = 2  # type: ignore[attr-defined]
