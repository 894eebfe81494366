"""The ``--engine`` option of the commands that play a game (one definition for all)."""

from __future__ import annotations

import argparse

from gdl2pl.compiled.factory import ENGINES

#: What ``--engine`` says for a command that loads a game from its file.
LOADING = (
    "prolog (the reasoner), compiled (the game's ground network, in C) or auto (the "
    "network once grounded within its budget, else the reasoner; says which on stderr)"
)


def add_engine(
    parser: argparse.ArgumentParser, help: str = LOADING, default: str = "prolog"
) -> None:
    """Add ``--engine prolog|compiled|auto`` to ``parser``: ``default`` is "auto" for
    the commands that want speed (serve, match, simulate), "prolog" for those that
    define or teach a game's meaning."""
    parser.add_argument(
        "--engine", choices=ENGINES, default=default, help=f"{help} (default {default})"
    )
