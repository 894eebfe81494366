"""A batch's functional step beside its stateful one (issue 52, item 7), in one run.

    python benchmarks/functional_step.py [--games ticTacToe,connectFour,breakthrough]
                                         [--n 1024] [--seconds 2] [--rounds 3]
                                         [--results benchmarks/RESULTS.md]

For each game, a ``GdlBatch`` of ``--n`` games (compiled engine, board planes, int8) and
four loops, each measured for ``--seconds`` in ``--rounds`` interleaved rounds (the
median round is reported), every call preceded by ``sample_actions`` (random legal
actions drawn in C):

- ``step``: the stateful step, ``batch.step(actions)``: the baseline;
- ``transition``: the functional step given back the states it gave,
  ``states = batch.transition(states, actions).states``, as a learner's loop does;
- ``transition, other states``: the functional step given states the batch is not in
  (two saved sets of states in turn, with actions drawn once for each: every game is
  loaded, then stepped; no ``sample_actions`` in this loop);
- ``set/step/states``: the functional step written with the stateful calls
  (``set_states``, ``step``, ``states()``), the only way before ``transition``;
- ``step, 2 threads``: ``step`` on a batch made with ``threads=2`` (its groups of games
  on two threads); below 1.00 it runs faster than on one.

Counted: game transitions a second (a game restarting by auto-reset is not counted), and
each loop's time per call over ``step``'s (1.00: as fast). The Markdown section is
printed, and with ``--results`` replaces this benchmark's section in that file.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from collections.abc import Callable
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # numpy's threads off the core

from reference import DEFAULT_GAMES_DIR
from reference import game_path
from report import markdown_table
from report import rate
from report import section_main
from sysinfo import header_markdown
from sysinfo import machine_header

SECTION = "## A batch's functional step (issue 52, item 7)"
GAMES = ["ticTacToe", "connectFour", "breakthrough"]

#: A loop: called with the seconds to run, returns (transitions, calls).
Loop = Callable[[float], tuple[int, int]]


def loops(batch: Any, threaded: Any) -> dict[str, Loop]:
    import numpy as np

    actions = np.zeros((batch.num_games, batch.num_roles), np.int64)
    for _ in range(10):  # two sets of states the loops did not make
        batch.step(batch.sample_actions())
    first = batch.states()
    for _ in range(3):
        batch.step(batch.sample_actions())
    second = batch.states()
    held = {"states": batch.states()}

    def timed(call: Callable[[], None], prepare: Callable[[], None] | None = None,
              on: Any = batch) -> Loop:
        def run(seconds: float) -> tuple[int, int]:
            if prepare is not None:
                prepare()  # not timed
            moves = calls = 0
            deadline = time.perf_counter() + seconds
            while time.perf_counter() < deadline:
                ended = on.terminated.copy()  # restarted at this call: not counted
                call()
                moves += on.num_games - int(ended.sum())
                calls += 1
            return moves, calls
        return run

    def step() -> None:
        batch.sample_actions(actions)
        batch.step(actions)

    def step_threads() -> None:
        threaded.sample_actions(actions)
        threaded.step(actions)

    def transition() -> None:
        batch.sample_actions(actions)
        held["states"] = batch.transition(held["states"], actions).states

    # actions legal in each saved set, drawn once (on the batch, put there for it)
    batch.set_states(first)
    first_actions = batch.sample_actions().astype(np.int64)
    batch.set_states(second)
    second_actions = batch.sample_actions().astype(np.int64)
    turn = [0]

    def other() -> None:
        turn[0] ^= 1  # never the states the batch is in: every game loaded, then stepped
        if turn[0]:
            batch.transition(first, first_actions)
        else:
            batch.transition(second, second_actions)

    def composed() -> None:
        batch.set_states(held["states"])
        batch.sample_actions(actions)
        batch.step(actions)
        held["states"] = batch.states()

    def now_held() -> None:  # the states the batch is in (the loop before moved it)
        held["states"] = batch.states()

    return {"step": timed(step), "transition": timed(transition, now_held),
            "transition, other states": timed(other), "set/step/states": timed(composed),
            "step, 2 threads": timed(step_threads, on=threaded)}


def measure(name: str, args: argparse.Namespace) -> dict[str, tuple[float, float]]:
    from gdl2pl.adapters import GdlGame
    from gdl2pl.adapters.batch import GdlBatch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        game = GdlGame(game_path(name, DEFAULT_GAMES_DIR), engine="compiled")
    try:
        batch = GdlBatch(game, args.n, seed=1)
        threaded = GdlBatch(game, args.n, seed=1, threads=2)
        runs = loops(batch, threaded)
        for loop in runs.values():
            loop(0.3)  # warm-up
        rounds: dict[str, list[tuple[float, float]]] = {k: [] for k in runs}
        for _ in range(args.rounds):
            for key, loop in runs.items():
                t = time.perf_counter()
                moves, calls = loop(args.seconds)
                took = time.perf_counter() - t
                rounds[key].append((moves / took, took / calls))
        return {k: sorted(v)[len(v) // 2] for k, v in rounds.items()}
    finally:
        game.close()


def report(args: argparse.Namespace) -> str:
    header = machine_header()
    games = args.games.split(",")
    rows = []
    for name in games:
        got = measure(name, args)
        base = got["step"][1]
        cells = [f"{rate(got[k][0])} ({got[k][1] / base:.2f})" for k in got]
        rows.append([name, *cells])
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return "\n".join([
        SECTION,
        "",
        f"`python benchmarks/functional_step.py --n {args.n} --seconds {args.seconds:g} "
        f"--rounds {args.rounds}`: game transitions a second of a `GdlBatch` of {args.n:,} "
        "games (median of interleaved rounds), and in parentheses each loop's time per "
        "call over the stateful `step`'s, measured in the same run (1.00: as fast). "
        "The script's docstring says what each loop does.",
        "",
        header_markdown(header),
        "",
        markdown_table(["game", "step", "transition", "transition, other states",
                        "set/step/states", "step, 2 threads"], rows),
        "",
        f"Load average at the end: {load}.",
        "",
    ])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", default=",".join(GAMES))
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--rounds", type=int, default=3)
    return section_main(ap, report, SECTION)


if __name__ == "__main__":
    raise SystemExit(main())
