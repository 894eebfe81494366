"""GDL-II on both engines, in one run: CFR on Kuhn poker and a player's belief search.

    python benchmarks/gdl2_speed.py [--iterations 60] [--matches 20] [--seed 1]
                                    [--results FILE]

1. **CFR+** (OpenSpiel's ``CFRPlusSolver``) for ``--iterations`` iterations on the GDL
   Kuhn poker (``gdl2pl/examples/kuhnPoker.kif``) through the imperfect-information
   adapter, on the reasoner and on the compiled engine (where ``sees`` is compiled
   into the network like ``next``), beside OpenSpiel's native ``kuhn_poker`` for
   scale; each with the exploitability of its average policy, so that speed is never
   bought with a wrong game.
2. **Belief search**: the GDL-II player's ``BeliefTracker`` follows every player's
   history along ``--matches`` random matches of Monty Hall and Kuhn poker (each turn
   but the last, which a player learns with ``stop``: the states consistent with the
   move played and the percepts seen, all of them expanded), on both engines; the
   table gives the turns taken in per second and the states held, which must be the
   same on both engines.

The Markdown table is printed, and with ``--results`` replaces this benchmark's section
in that file (appended when absent).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Any

from report import markdown_table
from report import section_main
from sysinfo import header_markdown
from sysinfo import machine_header

from gdl2pl.compiled import load_machine
from gdl2pl.ggp.belief_tracker import BeliefTracker
from gdl2pl.information import Turn

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "gdl2pl" / "examples"
SECTION = "## GDL-II on both engines (`benchmarks/gdl2_speed.py`)"
ENGINES = ("prolog", "compiled")


def cfr_rows(iterations: int) -> list[list[str]]:
    """CFR+ on Kuhn poker: seconds and exploitability per engine, and native."""
    import pyspiel
    from open_spiel.python.algorithms import cfr
    from open_spiel.python.algorithms import exploitability

    from gdl2pl.openspiel.imperfect import load_imperfect_game

    rows = []
    seconds: dict[str, float] = {}
    games: list[tuple[str, Any]] = [
        (engine, load_imperfect_game(EXAMPLES / "kuhnPoker.kif", engine=engine))
        for engine in ENGINES
    ]
    games.append(("OpenSpiel native kuhn_poker", pyspiel.load_game("kuhn_poker")))
    for name, game in games:
        if name in ENGINES:
            choice = game.tables.sm.engine_choice
            assert choice.engine == name, choice
        start = time.perf_counter()
        solver = cfr.CFRPlusSolver(game)
        for _ in range(iterations):
            solver.evaluate_and_update_policy()
        seconds[name] = time.perf_counter() - start
        exp = exploitability.exploitability(game, solver.average_policy())
        rows.append([name, f"{seconds[name]:.2f}", f"{exp:.5f}"])
    for row in rows:
        row.append(f"{seconds['prolog'] / seconds[row[0]]:.1f}x")
    return rows


def belief_rows(matches: int, seed: int) -> list[list[str]]:
    """The belief search along random matches, on each engine."""
    rows = []
    for game in ("montyHall.kif", "kuhnPoker.kif"):
        held: dict[str, list[int]] = {}
        for engine in ENGINES:
            with load_machine(EXAMPLES / game, engine) as sm:  # type: ignore[arg-type]
                assert sm.engine_choice.engine == engine, sm.engine_choice
                turns, sizes = 0, []
                rng = random.Random(seed)
                start = time.perf_counter()
                for _ in range(matches):
                    trackers = {
                        r: BeliefTracker(sm, r, random.Random(seed)) for r in sm.players
                    }
                    state = sm.initial_state
                    while not sm.is_terminal(state):
                        joint = sm.random_joint_move(state, rng)
                        after = sm.next_state(state, joint)
                        # a player takes in the turns of a game that goes on (the last
                        # one comes with stop, and a belief keeps no terminal state)
                        for role, tracker in trackers.items() if not sm.is_terminal(after) else ():
                            i = sm.role_index(role)
                            seen = sm.percepts(state, joint, role)
                            tracker.update(Turn(joint[i], seen), time.monotonic() + 60)
                            sizes.append(len(tracker.states))
                            turns += 1
                        state = after
                seconds = time.perf_counter() - start
            held[engine] = sizes
            rows.append(
                [game, engine, str(turns), f"{seconds:.2f}", f"{turns / seconds:,.0f}",
                 f"{max(sizes) if sizes else 0}"]
            )
        if held["prolog"] != held["compiled"]:
            raise AssertionError(f"{game}: the engines' beliefs differ")
    return rows


def report(args: argparse.Namespace) -> str:
    cfr_table = markdown_table(
        ["Kuhn poker", "seconds", "exploitability", "vs the reasoner"], cfr_rows(args.iterations)
    )
    belief_table = markdown_table(
        ["game", "engine", "turns taken in", "seconds", "turns/s", "most states held"],
        belief_rows(args.matches, args.seed),
    )
    return "\n".join([
        SECTION,
        "",
        header_markdown(machine_header()),
        "",
        f"CFR+, {args.iterations} iterations (OpenSpiel's solver through `gdl_ii`):",
        "",
        cfr_table,
        "",
        f"The belief search of every player along {args.matches} random matches "
        f"(seed {args.seed}), every turn but the last (which a player learns with `stop`); "
        "the states held are the same on both engines:",
        "",
        belief_table,
        "",
    ])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iterations", type=int, default=60)
    ap.add_argument("--matches", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    return section_main(ap, report, SECTION)


if __name__ == "__main__":
    sys.exit(main())
