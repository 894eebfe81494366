"""Command-line subcommands of this package, added to ``gdl2pl``'s parser.

``add_subcommands(sub)`` adds them to an argparse subparsers object and returns
``{name: handler}``; a handler takes the parsed arguments and returns an exit status.
Only the standard library is imported here; each handler imports what it needs.

Exit status of every command: 2 for usage and input errors (unreadable file, syntax
error, unknown relation, ill-formed atom or move), each as one line on stderr.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

Handler = Callable[[argparse.Namespace], int]


def add_subcommands(sub: argparse._SubParsersAction) -> dict[str, Handler]:  # type: ignore[type-arg]
    """Add this package's subcommands to ``sub``; return their handlers by name."""
    s = sub.add_parser(
        "analyze", help="well-formedness: termination, playability, goals, winnability"
    )
    s.add_argument("game")
    s.add_argument("--max-states", type=int, default=200_000, help="search budget (states)")
    s.add_argument("--seconds", type=float, default=60.0, help="search budget (seconds)")
    s.add_argument("--walks", type=int, default=200, help="random matches beyond the budget")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.add_argument("--syntax", choices=["auto", "kif", "infix"], default="auto")

    s = sub.add_parser("explain", help="why a ground atom holds in a state, or why not")
    s.add_argument("game")
    s.add_argument("atom", help='a ground atom in KIF, e.g. "(legal xplayer (mark 1 1))"')
    where = s.add_mutually_exclusive_group()
    where.add_argument(
        "--moves",
        help="JSON lines of joint moves (or {'moves': [...]}); the state they reach (atoms "
        "that depend on does: the state before the last, and the last joint move)",
    )
    where.add_argument("--state", help='the state as KIF fluents, e.g. "((cell 1 1 x) ...)"')
    s.add_argument("--depth", type=int, default=3, help="how deep to explain failures")
    s.add_argument("--syntax", choices=["auto", "kif", "infix"], default="auto")

    s = sub.add_parser("graph", help="the dependency graph of the relations")
    s.add_argument("game")
    s.add_argument("--format", choices=["dot", "mermaid", "svg"], default="dot")
    s.add_argument("--syntax", choices=["auto", "kif", "infix"], default="auto")

    s = sub.add_parser("model", help="the minimal model of a logic program (or its output)")
    s.add_argument("file")
    s.add_argument("--input", help="a file of facts: the input model of an open program")
    s.add_argument("--inputs", help="input relations, comma-separated (default: undefined)")
    s.add_argument("--herbrand", action="store_true", help="the Herbrand universe and base")
    s.add_argument("--json", action="store_true")
    where = s.add_mutually_exclusive_group()
    where.add_argument(
        "--moves",
        help="for a game: JSON lines of joint moves; true is the state before the last one, "
        "does the last one",
    )
    where.add_argument("--state", help="for a game: the state (true) as KIF fluents")
    s.add_argument("--syntax", choices=["auto", "kif", "infix"], default="auto")
    return {
        "analyze": _guarded("analyze"),
        "explain": _guarded("explain"),
        "graph": _guarded("graph"),
        "model": _guarded("model"),
    }


def _guarded(name: str) -> Handler:
    """A handler that imports ``gdl2pl.analysis.cli_<name>`` when run and turns input
    errors into one line and exit status 2 (never a traceback)."""

    def run(args: argparse.Namespace) -> int:
        from gdl2pl.errors import GdlError, GdlSyntaxError

        from . import cli

        path = getattr(args, "game", None) or getattr(args, "file", "")
        try:
            return int(getattr(cli, name)(args))
        except cli.InputError as e:
            print(f"gdl2pl {name}: error: {e}", file=sys.stderr)
            return 2
        except GdlSyntaxError as e:
            where = e.pos if e.pos.file else f"{path}:{e.pos.line}:{e.pos.column}"
            print(f"{where}: error: {e.message}", file=sys.stderr)
            return 2
        except GdlError as e:
            print(f"{path}: error: {e}", file=sys.stderr)
            return 2
        except BrokenPipeError:
            raise
        except OSError as e:
            print(f"{path}: error: cannot read: {e.strerror or e}", file=sys.stderr)
            return 2
        except RuntimeError as e:  # SWI-Prolog unavailable, and the like
            print(f"gdl2pl: {e}", file=sys.stderr)
            return 2
        except Exception as e:  # a bug: one line, never a traceback
            print(f"{path}: internal error: {type(e).__name__}: {e}", file=sys.stderr)
            return 2

    return run
