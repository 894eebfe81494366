"""Command-line subcommands of this package, added to ``gdl2pl``'s parser.

``add_subcommands(sub)`` adds them to an argparse subparsers object and returns
``{name: handler}``; a handler takes the parsed arguments and returns an exit status.
Only the standard library and the small ``gdl2pl.command_checks`` are imported here;
each handler imports what it needs.

Exit status of every command: 2 for usage and input errors (unreadable file, syntax
error, unknown relation, ill-formed atom or move), each as one line on stderr
(``gdl2pl.cli.errors`` writes it).
"""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Callable

from gdl2pl.command_checks import add_accept_errors
from gdl2pl.load import SYNTAXES

from .definitions import DEFINITIONS
from .definitions import READING

Handler = Callable[[argparse.Namespace], int]


def _definitions_text() -> str:
    """The notes' definitions, for ``analyze --help``."""
    parts = [
        textwrap.fill(f"{name.replace('_', ' ')}: {text}", 78, subsequent_indent="  ")
        for name, text in DEFINITIONS.items()
    ]
    parts.append(textwrap.fill(READING, 78))
    return "definitions (the course notes):\n\n" + "\n".join(parts)


def add_subcommands(sub: argparse._SubParsersAction) -> dict[str, Handler]:  # type: ignore[type-arg]
    """Add this package's subcommands to ``sub``; return their handlers by name."""
    s = sub.add_parser(
        "analyze",
        help="well-formedness: termination, playability, goals, winnability",
        description="Decide, on the reachable state graph, the properties the course notes "
        "define (quoted below): proved, refuted with a counterexample (joint moves from the "
        "initial state) or unknown. Exit status 1 if termination, playability, goal "
        "definition or weak winnability is refuted (what GGP asks of every game; strong "
        "winnability too for one role); monotonicity, part of well-formedness, is reported "
        "but not asked (the notes expect most games not to have it). Before searching, "
        "termination and playability are sought in the shape of the rules (a step counter "
        "that ends the game; a move each role has in every state); the search is "
        "breadth-first (shortest counterexamples) and stops at the first budget reached "
        "(states, seconds, memory), which the unknown verdicts name; the seconds bound the "
        "whole command, the random matches and the checks after the search included.",
        epilog=_definitions_text(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    # Alike on purpose: each option one ``add_argument`` call, as in ``gdl2pl.cli.main``
    # (``duplicates`` pairs the two parsers' declarations by shape).
    s.add_argument("game")
    s.add_argument("--max-states", type=int, default=200_000, help="search budget (states)")
    s.add_argument(
        "--seconds",
        type=float,
        default=60.0,
        help="time budget of the whole command (seconds; default 60): loading the game, the "
        "search, the random matches and the checks after them; what it leaves undecided "
        "is reported unknown",
    )
    s.add_argument(
        "--max-memory",
        type=int,
        default=512,
        metavar="MIB",
        help="search budget (MiB of resident memory the analysis may add to the process, "
        "the checks after the search included; default 512): the search stops when it is "
        "reached and what is not decided is reported unknown",
    )
    s.add_argument(
        "--progress",
        action="store_true",
        help="show the search's progress on stderr (default: only when stderr is a terminal)",
    )
    s.add_argument("--walks", type=int, default=200, help="random matches beyond the budget")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.add_argument(
        "--definitions",
        action="store_true",
        help="quote under each verdict the course notes' definition it decides",
    )
    _add_game_reading(s)

    s = sub.add_parser("explain", help="why a ground atom holds in a state, or why not")
    s.add_argument("game")
    s.add_argument(
        "atom",
        help='a ground atom in KIF, e.g. "(legal xplayer (mark 1 1))", or in infix for a '
        'game written in infix, e.g. "legal(xplayer,mark(1,1))"',
    )
    add_state_choice(
        s,
        "JSON lines of joint moves (or {'moves': [...]}); the state they reach (atoms "
        "that depend on does: the state before the last, and the last joint move)",
        'the state as KIF fluents, e.g. "((cell 1 1 x) ...)", or in infix, e.g. '
        '"cell(1,1,x) control(oplayer)"',
    )
    s.add_argument("--depth", type=int, default=3, help="how deep to explain failures")
    s.add_argument(
        "--format",
        choices=["text", "dot", "mermaid", "svg"],
        default="text",
        help="the proof tree as text, or as a picture (svg needs Graphviz's dot)",
    )
    _add_game_reading(s)

    s = sub.add_parser("graph", help="the dependency graph of the relations")
    s.add_argument("game")
    s.add_argument("--format", choices=["dot", "mermaid", "svg"], default="dot")
    s.add_argument("--syntax", choices=SYNTAXES, default="auto")

    s = sub.add_parser(
        "model",
        help="the minimal model of a logic program (or its output); the well-founded "
        "model (true, undefined, false) when its negation is not stratified",
    )
    s.add_argument("file")
    s.add_argument("--input", help="a file of facts: the input model of an open program")
    s.add_argument("--inputs", help="input relations, comma-separated (default: undefined)")
    s.add_argument("--herbrand", action="store_true", help="the Herbrand universe and base")
    s.add_argument("--json", action="store_true")
    add_state_choice(
        s,
        "for a game: JSON lines of joint moves; true is the state before the last one, "
        "does the last one",
        'for a game: the state (true) as KIF fluents, "((cell 1 1 x) ...)", or in infix, '
        '"cell(1,1,x) control(oplayer)"',
    )
    s.add_argument("--syntax", choices=SYNTAXES, default="auto")
    add_answer_syntax(s)
    return {
        "analyze": _guarded("analyze"),
        "explain": _guarded("explain"),
        "graph": _guarded("graph"),
        "model": _guarded("model"),
    }


def _add_game_reading(parser: argparse.ArgumentParser) -> None:
    """The options of a command that reads a game and answers about it: the game's
    syntax, the syntax of the answers, and whether its static errors are let through."""
    parser.add_argument("--syntax", choices=SYNTAXES, default="auto")
    add_answer_syntax(parser)
    add_accept_errors(parser)


def add_state_choice(parser: argparse.ArgumentParser, moves: str, state: str) -> None:
    """``--moves`` or ``--state`` (one at most): where a question is asked, as the moves
    that lead there or as the state itself (``moves``, ``state``: their help)."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--moves", help=moves)
    where.add_argument("--state", help=state)


def add_answer_syntax(parser: argparse.ArgumentParser) -> None:
    """The ``--answer-syntax`` option: the syntax atoms and rules are printed in."""
    parser.add_argument(
        "--answer-syntax",
        choices=["kif", "infix"],
        help="print atoms and rules in this syntax (default: the one the input is written in)",
    )


def _guarded(name: str) -> Handler:
    """The handler of ``name``: imports ``gdl2pl.analysis.cli`` when run. Errors in the
    input exit 2 (``error_status``); the command line reports them."""

    def run(args: argparse.Namespace) -> int:
        from . import cli

        return int(getattr(cli, name)(args))

    run.error_status = 2  # type: ignore[attr-defined]
    return run
