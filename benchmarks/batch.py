"""Env-steps per second of the batched engine (issue 45), side by side in one run.

    python benchmarks/batch.py --out /tmp/batch.md       # then into RESULTS.md
    python benchmarks/batch.py --quick --games ticTacToe # a smoke run
    python benchmarks/batch.py --cpu 1                   # pinned to one core

For each game (default tic-tac-toe, connectFour, breakthrough, checkers, reversi), in one
process, pinned to one core with ``--cpu``, each loop measured for ``--seconds`` in
``--rounds`` interleaved rounds after a warm-up (the median round is reported):

- ``playouts``: the network's own random playouts in C (``Network.playouts``): states/s,
  the figure the batch is held to (issue 45: >= 80 % of it at N = 1024);
- ``batch N``: ``GdlBatch`` of N games (N = 1, 64, 1024 by default): per call
  ``sample_actions`` (uniform random legal actions, drawn in C) then ``step``, every
  game's observation (the board planes, int8) and legal-action masks written by C.
  Counted: game transitions, as the others count them (a game restarting by auto-reset
  is not a transition, so it is not counted);
- ``native``: OpenSpiel's C++ game of the same name (tic_tac_toe, connect_four,
  breakthrough, checkers, othello) driven from Python one state at a time by the same
  random policy: ``legal_actions()``, ``random.choice``, ``apply_action``; and
  ``native+obs`` with the observation tensor and the legal-action mask asked at every
  step too, as the batch writes them;
- ``per-state``: the adapters' per-state path on the compiled engine: PettingZoo's AEC
  loop on ``gdl2pl.pettingzoo.raw_env`` (observation, board and mask at every step).

The rules of OpenSpiel's games are not always GDL's (checkers: OpenSpiel's draws after
40 moves without capture, GDL's game ends at a step count; othello is GDL's reversi):
per-step cost is compared, not games. Nothing here is asserted; the summary says which
of the issue's targets this run meets.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # numpy's threads off the core

from reference import DEFAULT_GAMES_DIR
from reference import game_path
from report import markdown_table
from report import publish
from report import rate
from sysinfo import header_markdown
from sysinfo import machine_header

GAMES = ["ticTacToe", "connectFour", "breakthrough", "checkers", "reversi"]
NATIVE = {"ticTacToe": "tic_tac_toe", "connectFour": "connect_four",
          "breakthrough": "breakthrough", "checkers": "checkers", "reversi": "othello"}
#: issue 45's targets: batch at N = 1024 over native, per game
NATIVE_TARGETS = {"ticTacToe": 3.0, "connectFour": 3.0, "breakthrough": 1.5}
#: ... and over the network's own playouts, every game
PLAYOUT_TARGET = 0.8

#: A loop: called with the seconds to run, returns the transitions it made.
Loop = Callable[[float], int]


def playout_loop(batch: Any) -> Loop:
    net = batch.sm.evaluator
    start = batch.sm.state_bits(batch.sm.initial_state)

    def run(seconds: float) -> int:
        steps, k = 0, 1
        deadline = time.perf_counter() + seconds
        while True:
            t = time.perf_counter()
            if t >= deadline:
                return steps
            result = net.playouts(start, k, 100_000)
            steps += result[2] if result[0] == "playouts" else 0
            took = time.perf_counter() - t
            k = max(1, min(k * 2, int(k * 0.05 / took) if took > 0 else k * 2))

    return run


def batch_loop(batch: Any) -> Loop:
    joint = batch._joint  # the batch's own buffer of joint actions

    def run(seconds: float) -> int:
        steps = 0
        n = batch.num_games
        deadline = time.perf_counter() + seconds
        terminated = batch.terminated
        while time.perf_counter() < deadline:
            for _ in range(max(1, 64 // n)):
                restarting = int(terminated.sum())
                batch.sample_actions(joint)
                batch.step(joint)
                steps += n - restarting
        return steps

    return run


def native_loop(name: str, observe: bool, seed: int) -> Loop:
    import pyspiel

    game = pyspiel.load_game(name)
    rng = random.Random(seed)
    state = game.new_initial_state()

    def run(seconds: float) -> int:
        nonlocal state
        steps = 0
        choice = rng.choice
        deadline = time.perf_counter() + seconds
        while True:
            for _ in range(64):
                if state.is_terminal():
                    state.returns()
                    state = game.new_initial_state()
                if observe:
                    player = state.current_player()
                    state.observation_tensor(player)
                    state.legal_actions_mask(player)
                state.apply_action(choice(state.legal_actions()))
                steps += 1
            if time.perf_counter() >= deadline:
                return steps

    return run


def per_state_loop(path: Path, seed: int, budget: Any) -> tuple[Loop, Any]:
    from adapters import pettingzoo_steps

    from gdl2pl.pettingzoo import raw_env

    env = raw_env(path, engine="compiled", grounding_budget=budget)
    transitions = pettingzoo_steps(env, random.Random(seed))

    def run(seconds: float) -> int:
        steps = 0
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            next(transitions)
            steps += 1
        return steps

    return run, env.gdl


def measure(loops: dict[str, Loop], warmup: float, seconds: float, rounds: int
            ) -> dict[str, float]:
    """Each loop's median rate over ``rounds`` interleaved rounds."""
    for loop in loops.values():
        loop(warmup)
    rates: dict[str, list[float]] = {name: [] for name in loops}
    for _ in range(rounds):
        for name, loop in loops.items():
            t = time.perf_counter()
            steps = loop(seconds)
            rates[name].append(steps / (time.perf_counter() - t))
    return {name: statistics.median(r) for name, r in rates.items()}


def game_row(name: str, args: argparse.Namespace) -> tuple[list[str], dict[str, float], str]:
    from gdl2pl.adapters import GdlGame
    from gdl2pl.adapters.batch import GdlBatch
    from gdl2pl.compiled import GroundingBudget

    path = game_path(name, args.games_dir)
    budget = GroundingBudget(seconds=args.grounding_seconds)
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        game = GdlGame(path, engine="compiled", dynamics="simultaneous",
                       grounding_budget=budget)
    load = time.perf_counter() - t
    loops: dict[str, Loop] = {}
    closing: list[Any] = [game]
    batches = {n: GdlBatch(game, n, seed=args.seed) for n in args.sizes}
    loops["playouts"] = playout_loop(batches[args.sizes[-1]])
    for n, b in batches.items():
        loops[f"batch {n}"] = batch_loop(b)
    if name in NATIVE and not args.no_openspiel:
        loops["native"] = native_loop(NATIVE[name], False, args.seed)
        loops["native+obs"] = native_loop(NATIVE[name], True, args.seed)
    if not args.no_per_state:
        loop, gdl = per_state_loop(path, args.seed, budget)
        loops["per-state"] = loop
        closing.append(gdl)
    try:
        rates = measure(loops, args.warmup, args.seconds, args.rounds)
    finally:
        for c in closing:
            c.close()
    big = batches[args.sizes[-1]]
    net = big.sm.network
    note = (f"load {load:.1f} s; {net.n_rules:,} rules, {net.n_atoms:,} atoms; "
            f"{big.memory_per_game:,} B a game; obs {big.observation_shape}")
    cells = [name] + [rate(rates[k]) if k in rates else "-" for k in columns(args)] + [note]
    return cells, rates, note


def columns(args: argparse.Namespace) -> list[str]:
    return (["playouts"] + [f"batch {n}" for n in args.sizes]
            + ["native", "native+obs", "per-state"])


def verdicts(name: str, rates: dict[str, float], largest: int) -> list[str]:
    out = []
    batch = rates.get(f"batch {largest}")
    if batch is None:
        return out
    share = batch / rates["playouts"]
    out.append(f"{name}: batch {largest} / playouts = {share:.2f} (target >= "
               f"{PLAYOUT_TARGET}) {'PASS' if share >= PLAYOUT_TARGET else 'FAIL'}")
    if name in NATIVE_TARGETS and "native" in rates:
        over = batch / rates["native"]
        want = NATIVE_TARGETS[name]
        out.append(f"{name}: batch {largest} / native = {over:.2f}x (target >= {want}x) "
                   f"{'PASS' if over >= want else 'FAIL'}")
    if "native+obs" in rates:
        out.append(f"{name}: batch {largest} / native+obs = "
                   f"{batch / rates['native+obs']:.2f}x (no target)")
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--games", nargs="+", default=GAMES)
    p.add_argument("--games-dir", type=Path, default=DEFAULT_GAMES_DIR)
    p.add_argument("--sizes", type=int, nargs="+", default=[1, 64, 1024])
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--warmup", type=float, default=0.5)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--cpu", type=int, default=None, help="pin the process to this core")
    p.add_argument("--grounding-seconds", type=float, default=300.0)
    p.add_argument("--no-openspiel", action="store_true")
    p.add_argument("--no-per-state", action="store_true")
    p.add_argument("--quick", action="store_true", help="0.3 s loops, one round")
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    if args.quick:
        args.seconds, args.warmup, args.rounds = 0.3, 0.05, 1
    args.sizes = sorted(set(args.sizes))
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
    header = machine_header()
    rows, lines = [], []
    for name in args.games:
        try:
            cells, rates, _ = game_row(name, args)
        except Exception as e:  # a game that fails to load or run: its error is the row
            rows.append([name] + ["-"] * len(columns(args)) + [f"{type(e).__name__}: {e}"])
            continue
        rows.append(cells)
        lines += verdicts(name, rates, args.sizes[-1])
        print(" | ".join(cells), file=sys.stderr, flush=True)
    pinned = "" if args.cpu is None else f", pinned to core {args.cpu}"
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    text = "\n\n".join([
        header_markdown(header),
        f"Env-steps (game transitions) per second, median of {args.rounds} interleaved "
        f"rounds of {args.seconds:g} s after {args.warmup:g} s of warm-up, seed {args.seed}"
        f"{pinned}. Load average at the end: {load}.",
        markdown_table(["game", *columns(args), "note"], rows),
        "\n".join(f"- {line}" for line in lines),
    ]) + "\n"
    publish(text, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
