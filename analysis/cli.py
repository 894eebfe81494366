"""The handlers of ``gdl2pl analyze | explain | graph | model`` (wired in ``commands``).

Each returns the exit status; input errors are raised as ``InputError`` (or the front
end's ``GdlError``), which ``commands`` prints as one line with status 2.
"""

from __future__ import annotations

import argparse
import json
import sys

from gdl2pl.errors import GdlError


class InputError(GdlError):
    """Bad input on the command line: says what and where."""


def analyze(args: argparse.Namespace) -> int:
    from gdl2pl.bridge import StateMachine

    from .analyze import Budget, exit_status, format_report
    from .analyze import analyze as run

    if args.max_states < 1 or args.seconds <= 0 or args.walks < 0:
        raise InputError("--max-states and --seconds must be positive, --walks not negative")
    budget = Budget(args.max_states, args.seconds, walks=args.walks, seed=args.seed)
    with StateMachine.from_file(args.game, syntax=args.syntax) as sm:
        report = run(sm, budget)
    if args.json:
        print(json.dumps(report))
    else:
        print(format_report(report))
    return exit_status(report)


def _write(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
