"""Command-line subcommands of this package, added to ``gdl2pl``'s parser.

``add_subcommands(sub)`` adds them to an argparse subparsers object and returns
``{name: handler}``; a handler takes the parsed arguments and returns an exit status.
Only the standard library is imported here; each handler imports what it needs.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

Handler = Callable[[argparse.Namespace], int]


def add_subcommands(sub: argparse._SubParsersAction) -> dict[str, Handler]:  # type: ignore[type-arg]
    """Add this package's subcommands to ``sub``; return their handlers by name."""
    return {}
