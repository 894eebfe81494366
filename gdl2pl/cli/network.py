"""The network subcommands of ``gdl2pl``: ``serve`` (a GGP player) and ``match`` (a game
manager). ``add_subcommands(sub)`` adds them to an argparse subparsers object and returns
their handlers, each taking the parsed arguments and returning an exit status::

    gdl2pl serve [--port 9147] [--host 127.0.0.1] [--player mcts|random|legal] [--name NAME]
    gdl2pl match GAME --player URL [--player URL ...] [--startclock S] [--playclock P]
                 [--scramble] [--out match.json] [--seed N]

``match`` exits 0 when the match completes, 1 when it is aborted (the game has errors, a
question to the game fails, a bug; the record, written all the same, says why in
``abortReason``), 2 on usage or I/O errors.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import sys
from collections.abc import Callable

from gdl2pl.cli.engine_option import add_engine
from gdl2pl.cli.errors import run_guarded
from gdl2pl.load import SYNTAXES
from gdl2pl.shown import shown

Handler = Callable[[argparse.Namespace], int]


def add_subcommands(sub: argparse._SubParsersAction) -> dict[str, Handler]:  # type: ignore[type-arg]
    """Add ``serve`` and ``match`` to ``sub``; return ``{name: handler}``."""
    from gdl2pl.ggp.strategy import STRATEGIES

    s = sub.add_parser("serve", help="run a GGP player (HTTP, ggp-base's match protocol)")
    s.add_argument("--port", type=int, default=9147, help="port to listen on (default 9147)")
    s.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    s.add_argument("--player", choices=STRATEGIES, default="mcts", help="strategy (default mcts)")
    s.add_argument("--name", default=None, help="name given in reply to (info)")
    s.add_argument(
        "--margin", type=float, default=1.0, help="seconds kept before a clock runs out (default 1)"
    )
    s.add_argument(
        "--margin-fraction",
        type=float,
        default=0.1,
        help="or this fraction of the clock, if larger (default 0.1)",
    )
    s.add_argument(
        "--max-clock",
        type=int,
        default=3600,
        help="longest start or play clock taken, s; a longer one is cut to it (default 3600)",
    )
    s.add_argument(
        "--max-nodes",
        type=int,
        default=None,
        help="most nodes in the mcts player's search tree; a full tree is searched, not grown "
        "(default 200000)",
    )
    s.add_argument("--seed", type=int, default=None, help="random seed of the strategy")
    add_engine(
        s,
        "auto: the reasoner at once, the game's ground network as soon as it is grounded "
        "in the background (logged); compiled: the network only (a game it cannot ground "
        "is refused); prolog: the reasoner only",
        default="auto",
    )
    s.add_argument("--no-check", action="store_true", help="do not check the rules received")
    s.add_argument(
        "--ready-at-once",
        action="store_true",
        help="answer (start) as soon as the game is loaded (default: use the start clock: "
        "wait for the network on auto, search the first state)",
    )
    s.add_argument("-v", "--verbose", action="store_true", help="log every message")

    m = sub.add_parser("match", help="run a match between GGP players and record it")
    m.add_argument("game", help="game file (.kif or infix)")
    m.add_argument(
        "--player",
        action="append",
        required=True,
        metavar="URL",
        help="a player's URL (http://host:port/ or host:port), once per role, in role order",
    )
    m.add_argument("--startclock", type=int, default=10, help="start clock, s (default 10)")
    m.add_argument("--playclock", type=int, default=5, help="play clock, s (default 5)")
    m.add_argument("--scramble", action="store_true", help="rename the game's symbols")
    m.add_argument("--out", default=None, help="write the match record (JSON) here")
    m.add_argument("--seed", type=int, default=None, help="seed of the manager's choices")
    m.add_argument("--match-id", default=None, help="match id (default: generated)")
    m.add_argument(
        "--grace",
        type=float,
        default=1.0,
        help="seconds allowed beyond each clock (default 1, as ggp-base)",
    )
    m.add_argument("--syntax", choices=SYNTAXES, default="auto")
    add_engine(
        m,
        "the manager's own engine: prolog (the reasoner), compiled (the game's ground "
        "network) or auto (the reasoner until the network is grounded in the background)",
        default="auto",
    )
    m.add_argument("-v", "--verbose", action="store_true", help="log each step")
    return {"serve": serve, "match": match}


def _logging(verbose: bool, default: int) -> None:
    logging.basicConfig(
        level=logging.DEBUG if verbose else default,
        format="%(asctime)s %(name)s %(levelname)s: %(message)s",
        stream=sys.stderr,
    )


def serve(args: argparse.Namespace) -> int:
    """Serve until interrupted; 2 if the port cannot be opened."""
    from gdl2pl.ggp.player import GamePlayer
    from gdl2pl.ggp.server import PlayerServer
    from gdl2pl.ggp.strategy import make_strategy

    _logging(args.verbose, logging.INFO)
    options = {} if args.max_nodes is None else {"max_nodes": args.max_nodes}
    if options and args.player != "mcts":
        print("gdl2pl serve: --max-nodes is an option of --player mcts", file=sys.stderr)
        return 2
    if args.max_nodes is not None and args.max_nodes < 1:
        print("gdl2pl serve: --max-nodes must be at least 1", file=sys.stderr)
        return 2
    name = re.sub(r"[\s();]+", "-", args.name or f"gdl2pl-{args.player}")
    player = GamePlayer(
        lambda: make_strategy(args.player, args.seed, **options),
        name=name,
        margin=args.margin,
        margin_fraction=args.margin_fraction,
        check=not args.no_check,
        max_clock=args.max_clock,
        engine=args.engine,
        think_at_start=not args.ready_at_once,
    )
    try:
        server = PlayerServer(player, args.host, args.port)
    except OSError as e:
        print(
            f"gdl2pl serve: cannot listen on {args.host}:{args.port}: {e.strerror or e}",
            file=sys.stderr,
        )
        player.close()
        return 2
    logging.getLogger("gdl2pl.server").info(
        "%s (%s) listening on %s", name, args.player, server.url
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        player.close()
    return 0


def match(args: argparse.Namespace) -> int:
    """Run one match, print its summary, write the record if asked. Errors are reported
    as every command's are (``gdl2pl.cli.errors``): 1 for the game, 2 for usage and I/O."""
    return run_guarded(_match, args)


def _match(args: argparse.Namespace) -> int:
    from pathlib import Path

    from gdl2pl.check import format_finding
    from gdl2pl.check import has_errors
    from gdl2pl.ggp.manager import run_match
    from gdl2pl.ggp.manager import summary
    from gdl2pl.pipeline import compile_game
    from gdl2pl.verify.outfiles import write_file

    _logging(args.verbose, logging.WARNING)
    path = args.game
    compiled = compile_game(path, syntax=args.syntax, name=path, check=True, translate=False)
    if has_errors(compiled.findings):
        for f in compiled.findings:
            if f.is_error:
                print(shown(format_finding(f, path), None), file=sys.stderr)
        return 1
    if args.startclock < 1 or args.playclock < 1:
        raise ValueError("the clocks must be at least 1 s")
    record = run_match(
        compiled.description,
        args.player,
        game_name=Path(path).name,
        start_clock=args.startclock,
        play_clock=args.playclock,
        scramble=args.scramble,
        seed=args.seed,
        match_id=args.match_id,
        grace=args.grace,
        engine=args.engine,
    )
    if args.out:
        try:
            write_file(Path(args.out), json.dumps(record, indent=1) + "\n")
        except OSError as e:
            print(f"{shown(args.out, None)}: error: cannot write: {e.strerror or e}",
                  file=sys.stderr)
            return 2
    print(summary(record))
    if record.get("isAborted"):
        reason = shown(str(record.get("abortReason")), None)
        print(f"gdl2pl match: aborted: {reason}", file=sys.stderr)
    return 0 if record["isCompleted"] else 1
