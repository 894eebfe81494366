"""Command-line subcommands of this package, added to ``gdl2pl``'s parser.

``add_subcommands(sub)`` adds them to an argparse subparsers object and returns
``{name: handler}``; a handler takes the parsed arguments and returns an exit status.
Only the standard library is imported here; each handler imports what it needs.

``verify``: 0 when every game agrees (or is skipped), 1 on any divergence, engine error,
timeout or gdl2pl error, 2 on usage and I/O errors. ``trace-all``: 0, or 1 if a game could
not be traced, 2 on usage errors.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable

Handler = Callable[[argparse.Namespace], int]


def _run_options(s: argparse.ArgumentParser) -> None:
    s.add_argument("games", nargs="+", metavar="GAME_OR_DIR", help="game files or folders")
    s.add_argument("--seed", type=int, default=0, help="seed of the random matches (per game)")
    s.add_argument("--max-steps", type=int, default=1000, help="steps per match at most")
    s.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        help="worker processes (default: all cores; 1 runs in this process)",
    )
    s.add_argument(
        "--ray",
        nargs="?",
        const="",
        default=None,
        metavar="ADDRESS",
        help="run as Ray tasks on the cluster at ADDRESS (host:port or auto; a local Ray "
        "without one)",
    )
    s.add_argument("--task-timeout", type=float, default=900.0, help="Ray: seconds per task")
    s.add_argument("--memory", type=int, metavar="MB", help="Ray: memory reserved per task")
    s.add_argument("--retries", type=int, default=2, help="Ray: retries of a crashed worker")
    s.add_argument(
        "--case-sensitive", action="store_true", help="keep symbols differing in case apart"
    )


def add_subcommands(sub: argparse._SubParsersAction) -> dict[str, Handler]:  # type: ignore[type-arg]
    """Add this package's subcommands to ``sub``; return their handlers by name."""
    s = sub.add_parser(
        "verify",
        help="cross-check another engine (or recorded traces) against gdl2pl, game by game",
        description=(
            "Plays seeded random matches and compares every step (fluents, legal moves, "
            "terminal, goals) with the engine's records. A report names the first divergence "
            "of each game: match, step, the moves leading there, and per differing field the "
            "facts only one side has, in the game's spelling (a symbol the game lacks as the "
            "engine wrote it), with gdl2pl's reason (rule, file:line, bindings) and a "
            "replay file. A fact the engine lists twice is a divergence of kind duplicate, a "
            "list out of order (the format sorts by lower-case text) of kind unsorted. With "
            "--keep-going it reports every divergence and counts them by kind. --json "
            "gives gdl2pl's reasons as text (why) and as proof trees (why_details)."
        ),
    )
    _run_options(s)
    source = s.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--engine",
        metavar="COMMAND",
        help=(
            "engine command speaking gdl2pl replay's protocol; {game} becomes the path of a"
            " private copy of the game named game.EXT (also in $GDL2PL_GAME), appended as"
            " the last argument when the command has no {game}"
        ),
    )
    source.add_argument("--against", metavar="DIR", help="compare with recorded trace files")
    s.add_argument("--matches", type=int, default=2, help="random matches per game")
    s.add_argument(
        "--keep-going",
        action="store_true",
        help="go on past a divergence to the end of every match and report them all, "
        "counted by kind; after one, each step is judged from the state the engine "
        "reported before it, so a bug is reported once, where it happens; a line of "
        "the engine's output that is no record is skipped as a protocol fault",
    )
    s.add_argument(
        "--timeout",
        type=float,
        default=300.0,
        help="seconds per game for the engine, on the clock; then it and all it started are killed",
    )
    s.add_argument("--json", action="store_true", help="one JSON object per game")
    s.add_argument("--out", metavar="FILE", help="save results here (JSON lines) as they arrive")
    s.add_argument("--resume", action="store_true", help="skip the games already in --out")
    s.add_argument(
        "--repro-dir",
        default="verify-repro",
        metavar="DIR",
        help="where each divergence's move prefix is written (default: verify-repro)",
    )

    t = sub.add_parser("trace-all", help="random-match traces of many games, one file each")
    _run_options(t)
    t.add_argument("--out-dir", required=True, metavar="DIR", help="one <game>.jsonl per game")
    t.add_argument("--matches", type=int, default=5, help="random matches per game")
    t.add_argument("--resume", action="store_true", help="skip games whose trace file exists")
    return {"verify": _verify, "trace-all": _trace_all}


def _verify(args: argparse.Namespace) -> int:
    from .main import verify_main

    return verify_main(args)


def _trace_all(args: argparse.Namespace) -> int:
    from .main import trace_all_main

    return trace_all_main(args)
