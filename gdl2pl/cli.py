"""The ``gdl2pl`` command line. Each subcommand is a small function; errors in the game
become one-line messages and an exit status, never a traceback.

Exit status: 0 success, 1 the game has errors (or a match failed), 2 usage or I/O error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

Command = Callable[[argparse.Namespace], int]
_COMMANDS: dict[str, Command] = {}


def _command(name: str) -> Callable[[Command], Command]:
    def register(fn: Command) -> Command:
        _COMMANDS[name] = fn
        return fn

    return register


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gdl2pl", description="GDL reasoner on SWI-Prolog.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    s = sub.add_parser("check", help="parse a game and report static errors and warnings")
    s.add_argument("game", nargs="+", help="game file(s) (.kif or infix .gdl/.hrf)")
    s.add_argument("--syntax", choices=["auto", "kif", "infix"], default="auto")

    s = sub.add_parser("convert", help="print a game in the other syntax")
    s.add_argument("game")
    s.add_argument("--to", choices=["kif", "infix"], required=True)
    s.add_argument("--syntax", choices=["auto", "kif", "infix"], default="auto")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse exits 2 on usage errors, 0 on --help
        return int(e.code or 0)
    try:
        return _COMMANDS[args.command](args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
