"""Inferences per step of in-Prolog playouts on the 20-game set: a measure of the
reasoner's work that does not move with the machine's load, for judging a change to
the translator or the runtime (states/s on these machines varies by 10-40 % between
runs).

    python benchmarks/inferences.py [--games G ...] [--playouts 50] [--seed 1]
                                    [--out FILE.md]

Each game's playouts start from the initial state with SWI-Prolog's random generator
seeded, so two revisions that answer alike play the same moves and their counts
compare step for step. The table gives inferences per step (SWI's ``statistics/2``
``inferences``: calls and redos of Prolog predicates, not assert, erase, findall or
sort inside C), CPU microseconds per step, and the steps played.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from reference import DEFAULT_ANCHORS
from reference import DEFAULT_GAMES_DIR
from reference import game_path
from reference import read_references
from reference import select as select_games
from report import markdown_table

from gdl2pl.bridge import StateMachine
from gdl2pl.bridge.swipl import runtime


def measure(path: Path, playouts: int, seed: int) -> tuple[float, float, int]:
    """(inferences per step, CPU µs per step, steps) of ``playouts`` seeded playouts."""
    sm = StateMachine.from_file(path)
    try:
        janus = runtime()
        sm.seed(seed)
        before = janus.query_once("statistics(inferences, I), statistics(cputime, T)")
        _, steps = sm.playouts(sm.initial_state, playouts)
        after = janus.query_once("statistics(inferences, I), statistics(cputime, T)")
    finally:
        sm.close()
    n = max(steps, 1)
    return (after["I"] - before["I"]) / n, (after["T"] - before["T"]) * 1e6 / n, steps


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", nargs="*", help="game names (default: the 20-game set)")
    p.add_argument("--games-dir", type=Path, default=DEFAULT_GAMES_DIR)
    p.add_argument("--playouts", type=int, default=50)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", type=Path, help="also write the table to this Markdown file")
    args = p.parse_args(argv)
    refs = select_games(read_references(DEFAULT_ANCHORS), args.games)
    rows = []
    started = time.time()
    for ref in refs:
        path = game_path(ref.game, args.games_dir)
        infer, micros, steps = measure(path, args.playouts, args.seed)
        rows.append([ref.game, f"{infer:,.0f}", f"{micros:,.1f}", f"{steps:,}"])
        print(f"{ref.game}: {infer:,.0f} inferences/step, {micros:,.1f} µs/step", file=sys.stderr)
    table = markdown_table(["game", "inferences/step", "CPU µs/step", "steps"], rows)
    print(table)
    if args.out:
        args.out.write_text(table + "\n")
    print(f"({time.time() - started:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
