"""The reasoner's command-line subcommands (``play``, ``simulate``, ``trace``,
``replay``, ``translate``); argument parsing lives in ``gdl2pl.cli``."""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from typing import TextIO
from typing import cast

from gdl2pl.adapters.game_board import game_geometry
from gdl2pl.board import render_state
from gdl2pl.bridge.errors import GameError
from gdl2pl.bridge.machine import StateMachine
from gdl2pl.cli.errors import reason
from gdl2pl.cli.progress import progress
from gdl2pl.compiled import AutoMachine
from gdl2pl.compiled import load_machine
from gdl2pl.compiled.factory import Engine
from gdl2pl.contract import GameMachine
from gdl2pl.ggp.records import random_match
from gdl2pl.ggp.records import replay
from gdl2pl.jsonline import loads_line
from gdl2pl.load import detect_syntax
from gdl2pl.load import read_text
from gdl2pl.pipeline import compile_game
from gdl2pl.shown import shown
from gdl2pl.standalone import standalone
from gdl2pl.syntax import Term
from gdl2pl.written import term_text


def translate_command(args: argparse.Namespace) -> int:
    """Print (or write to ``--output``) the Prolog module a game translates to, or with
    ``--standalone`` the module that loads in plain SWI-Prolog."""
    module = args.module or "game"
    compiled = compile_game(
        args.game,
        syntax=args.syntax,
        name=_base(args.game),
        module=module,
        translate=not args.standalone,
        answer_syntax=args.answer_syntax,
    )
    if args.standalone:
        text = standalone(compiled.normalized, module, _base(args.game), args.answer_syntax)
    else:
        text = compiled.translation.text
    if args.output is None:
        sys.stdout.write(text)
    else:
        from pathlib import Path

        from gdl2pl.verify.outfiles import write_file

        try:
            write_file(Path(args.output), text)  # replaces a symlink, never writes through
        except OSError as e:
            print(f"{shown(args.output, None)}: error: cannot write: {reason(e)}",
                  file=sys.stderr)
            return 2
    return 0


def play_command(args: argparse.Namespace) -> int:
    """Play one random match, printing each state (as a board when it is a grid), its
    fluents and moves written in the game's syntax."""
    rng = random.Random(args.seed)
    syntax = args.syntax
    if syntax == "auto":
        syntax = detect_syntax(read_text(args.game), args.game)

    def show(t: Term) -> str:
        return term_text(t, syntax)

    with _playable(args) as sm:
        state = sm.initial_state
        roles = [show(r) for r in sm.roles]
        print(f"{_base(args.game)}: roles {', '.join(roles)}")
        geometry = game_geometry(sm)
        for step in range(args.max_steps + 1):
            print(f"\n-- step {step}")
            print(render_state(state, geometry, show))
            if sm.is_terminal(state):
                print(
                    "\nterminal; goals: "
                    + ", ".join(
                        f"{r} {g}" for r, g in zip(roles, _goals_or_none(sm, state), strict=True)
                    )
                )
                return 0
            if step == args.max_steps:
                break
            jm = sm.random_joint_move(state, rng)
            moves = (f"{r} {show(m)}" for r, m in zip(roles, jm, strict=True))
            print("moves: " + ", ".join(moves))
            state = sm.next_state(state, jm)
        print(f"\nstopped after {args.max_steps} steps (not terminal)")
    return 0


def _goals_or_none(sm: GameMachine, state: object) -> list[str]:
    _, _, goals = sm.state_info(state)  # type: ignore[arg-type]
    return [str(vs[0]) if len(vs) == 1 else "none" if not vs else "several" for vs in goals]


def simulate_command(args: argparse.Namespace) -> int:
    """Run N random playouts inside the engine (Prolog, or the compiled network); print
    playouts/s, states/s and mean goals. Playouts are asked in parts and only their
    sums are kept, so any N runs in bounded memory (and Ctrl-C stops it)."""
    with _playable(args) as sm:
        if args.seed is not None:
            sm.seed(args.seed)
        start = time.perf_counter()
        goal_sums = [0] * len(sm.roles)
        goal_counts = [0] * len(sm.roles)
        steps = capped = 0
        chunk = min(max(1, args.n // 50), 100_000)  # one engine call per part
        with progress(args.n, "playouts") as bar:
            for first in range(0, args.n, chunk):
                count = min(chunk, args.n - first)
                part, part_steps = sm.playouts(sm.initial_state, count, args.max_depth)
                for r, values in enumerate(part):
                    valid = [v for v, _ in values if v >= 0]
                    goal_sums[r] += sum(valid)
                    goal_counts[r] += len(valid)
                if part:
                    capped += sum(1 for _, depth in part[0] if depth >= args.max_depth)
                steps += part_steps
                bar.update(count)
        elapsed = time.perf_counter() - start
        print(f"{_base(args.game)}: {args.n} playouts, {steps} states in {elapsed:.3f} s")
        print(
            f"playouts/s {args.n / elapsed:,.1f}   states/s {steps / elapsed:,.0f}   "
            f"mean depth {steps / max(args.n, 1):.1f}"
        )
        for role, total, n in zip(sm.roles, goal_sums, goal_counts, strict=True):
            mean = total / n if n else float("nan")
            print(f"  {role}: mean goal {mean:.1f}")
        if capped:
            print(
                f"note: {capped} of {args.n} playouts reached the depth cap of "
                f"{args.max_depth:,} steps without a terminal state (--max-depth)"
            )
    return 0


def trace_command(args: argparse.Namespace) -> int:
    """Print N random matches in the reference engine's JSON-lines format."""
    rng = random.Random(args.seed)
    with _playable(args) as sm, progress(args.n, "matches") as bar:
        for m in range(args.n):
            for rec in random_match(sm, rng, m, args.max_steps):
                _emit(rec, sys.stdout)
            bar.update(1)
    return 0


def replay_command(args: argparse.Namespace, stdin: TextIO | None = None) -> int:
    """Read one match per line (``{"moves": [[...], ...]}``) and print its records."""
    source = stdin or sys.stdin
    with _playable(args) as sm, progress(None, "matches") as bar:
        for m, line in enumerate(source):
            bar.update(1)
            if not line.strip():
                continue
            try:
                msg = loads_line(line)
                moves = msg["moves"]
                if not isinstance(moves, list) or not all(
                    isinstance(jm, list) and all(isinstance(x, str) for x in jm) for jm in moves
                ):
                    raise ValueError("'moves' must be a list of lists of KIF strings")
            except (ValueError, KeyError, TypeError) as e:
                _emit({"match": m, "step": 0, "error": f"bad input line: {e}"}, sys.stdout)
                continue
            for rec in replay(sm, moves, m):
                _emit(rec, sys.stdout)
    return 0


def _playable(args: argparse.Namespace) -> GameMachine:
    """The game of ``args``, loaded on its ``--engine`` (the one chosen said on stderr
    unless it is the default); ``GameError`` if it cannot be played at all (no role), so
    that a command says so instead of printing empty records."""
    engine = getattr(args, "engine", "prolog")
    sm: GameMachine
    if engine == "prolog":
        sm = StateMachine.from_file(args.game, args.syntax)
    else:
        sm = load_machine(args.game, cast(Engine, engine), syntax=args.syntax)
        if isinstance(sm, AutoMachine):
            # a batch of playouts or replays: the network (if it comes) within its
            # budget, so that one engine answers the whole run (and a seed repeats it)
            sm.wait_for_engine()
        print(f"{shown(_base(args.game), None)}: {shown(str(sm.engine_choice), None)}",
              file=sys.stderr)
    if not sm.roles:
        sm.close()
        raise GameError(
            f"{_base(args.game)}: the game has no role (no 'role' fact): nobody can play"
        )
    return sm


def _emit(rec: dict[str, object], out: TextIO) -> None:
    out.write(json.dumps(rec, separators=(",", ":")) + "\n")


def _base(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]
