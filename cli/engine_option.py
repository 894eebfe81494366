"""The ``--engine`` option of the commands that play a game (one definition for all)."""

from __future__ import annotations

import argparse

from gdl2pl.compiled.factory import ENGINES

#: What ``--engine`` says for a command that loads a game from its file.
LOADING = (
    "prolog (the reasoner, default), compiled (the game's ground network, in C) or auto "
    "(compiled when grounding fits its budget; says which on stderr)"
)


def add_engine(parser: argparse.ArgumentParser, help: str = LOADING) -> None:
    """Add ``--engine prolog|compiled|auto`` (default prolog) to ``parser``."""
    parser.add_argument("--engine", choices=ENGINES, default="prolog", help=help)
