"""What a command does before it runs on a game file: the checks ``gdl2pl check`` runs,
so that every command refuses a game with errors the same way (``GameCheckError``, exit
status 1), unless its user asks with ``--accept-errors`` to run anyway."""

from __future__ import annotations

import argparse
import sys

from gdl2pl.shown import shown


def checked_game(args: argparse.Namespace, shows_errors: str = "") -> None:
    """Run ``gdl2pl check``'s checks on ``args.game`` before a command uses it: a game
    with errors is refused (``GameCheckError``), or with ``args.accept_errors`` a warning
    says it runs anyway. A command made to show such games (``graph``) passes
    ``shows_errors``, what it does with one, and always runs with that warning."""
    from gdl2pl.pipeline import accepted_errors_warning  # the front end, when it runs
    from gdl2pl.pipeline import require_checked

    accept = bool(shows_errors) or bool(getattr(args, "accept_errors", False))
    errors = require_checked(args.game, args.syntax, accept_errors=accept)
    if errors and shows_errors:  # (the file's name escaped: shown)
        print(shown(accepted_errors_warning(errors, args.game, shows_errors), None),
              file=sys.stderr)
    elif errors:
        print(shown(accepted_errors_warning(errors, args.game), None), file=sys.stderr)


def add_accept_errors(parser: argparse.ArgumentParser) -> None:
    """The ``--accept-errors`` option of a command that checks its game first."""
    parser.add_argument(
        "--accept-errors",
        action="store_true",
        help="run even if gdl2pl check finds errors in the game (a warning says so); "
        "by default such a game is refused as check refuses it (exit 1)",
    )
