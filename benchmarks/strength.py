"""The player's strength: this tree's MCTS against a baseline MCTS (main's, by default) at
equal clocks, both seats, with the iterations each searched a move.

    python benchmarks/strength.py [--games connectFour breakthrough ...] [--seconds 1]
                                  [--pairs 1] [--baseline-rev main] [--max-plies 300]
                                  [--games-dir DIR] [--results FILE]

The baseline is ``gdl2pl/ggp/mcts.py`` as it is at ``--baseline-rev`` (read with ``git
show``, loaded as a module of ``gdl2pl.ggp`` beside this tree's one): the same search
without what issue 51 added (tree reuse past one joint move, the MCTS-solver, the goal
estimate of cut random games). Each game (``DIR/<game>.kif``) is loaded once on the
compiled engine (grounded within ``--ground-seconds``; a game that is not has a row that
says why) and played ``--pairs`` times in each seat, straight through the strategies (no
HTTP, no pondering: both run in this one process, so a strategy thinking on the other's
time would take its CPU): every
role with more than one legal move gets ``select_move`` with a budget of ``--seconds``,
the new strategy hears every state reached (``reached``). A game not over after
``--max-plies`` plies is counted unfinished. The table is printed, and with ``--results``
replaces this benchmark's section of that file (appended when absent).
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from report import markdown_table
from report import section_main
from sysinfo import header_markdown
from sysinfo import machine_header

from gdl2pl.compiled import GroundingBudget
from gdl2pl.compiled.factory import load_machine
from gdl2pl.ggp.mcts import MctsStrategy
from gdl2pl.ggp.strategy import Budget

REPO = Path(__file__).resolve().parent.parent
GAMES = REPO.parent / "shared" / "games" / "ggp-repository"
SECTION = "## Strength: this MCTS against main's (`benchmarks/strength.py`)"


def baseline_module(rev: str) -> ModuleType:
    """``gdl2pl/ggp/mcts.py`` at ``rev``, loaded as ``gdl2pl.ggp._baseline_mcts``."""
    source = subprocess.run(
        ["git", "-C", str(REPO), "show", f"{rev}:gdl2pl/ggp/mcts.py"],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout
    name = "gdl2pl.ggp._baseline_mcts"
    spec = importlib.util.spec_from_loader(name, loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "gdl2pl.ggp"
    sys.modules[name] = module
    exec(compile(source, f"{rev}:gdl2pl/ggp/mcts.py", "exec"), module.__dict__)
    return module


def play(sm: Any, strategies: list[Any], seconds: float, max_plies: int) -> list[int] | None:
    """One game; every role's goal at the end (None if unfinished after ``max_plies``)."""
    for s, role in zip(strategies, sm.roles, strict=True):
        s.metagame(sm, role, Budget.seconds(60))
    state = sm.initial_state
    for _ in range(max_plies):
        if sm.is_terminal(state):
            return sm.goals(state)
        joint = []
        for s, role in zip(strategies, sm.roles, strict=True):
            legal = sm.legal_moves(state, role)
            joint.append(
                legal[0]
                if len(legal) == 1
                else s.select_move(state, legal, Budget.seconds(seconds), lambda m: None)
            )
        state = sm.next_state(state, joint)
        for s in strategies:
            if hasattr(s, "reached"):
                s.reached(state)
    return sm.goals(state) if sm.is_terminal(state) else None


def same_position(
    sm: Any, old_mcts: ModuleType, seconds: float, rounds: int = 3
) -> dict[str, float]:
    """Iterations a second of each MCTS searching one position (8 random plies in, the
    first role with a choice) for ``seconds``, fresh each time, rounds interleaved: the
    median of each. (In a match the two search different positions and trees.)"""
    rng = random.Random(12)
    state = walked = sm.initial_state
    for _ in range(8):  # the last state on the way that is not over
        walked = sm.next_state(walked, [rng.choice(sm.legal_moves(walked, r)) for r in sm.roles])
        if sm.is_terminal(walked):
            break
        state = walked
    choosers = [r for r in sm.roles if len(sm.legal_moves(state, r)) > 1]
    if not choosers:
        return {}
    rates: dict[str, list[float]] = {"new": [], "old": []}  # and "proved": its seconds
    for _ in range(rounds):
        for kind, cls in (("old", old_mcts.MctsStrategy), ("new", MctsStrategy)):
            s = cls(seed=1)
            s.metagame(sm, choosers[0], Budget.seconds(60))
            legal = sm.legal_moves(state, choosers[0])
            s.select_move(state, legal, Budget.seconds(seconds), lambda m: None)
            [taken] = s.take_reports()
            s.finish()
            if kind == "new" and taken.seconds < seconds / 2:  # it proved the root
                rates["proved"] = [taken.seconds]
            rates[kind].append(taken.iterations / taken.seconds if taken.seconds else 0.0)
    return {k: statistics.median(v) for k, v in rates.items()}


def report(args: argparse.Namespace) -> str:
    old_mcts = baseline_module(args.baseline_rev)
    rows = []
    decided = won = 0
    for game in args.games:
        path = Path(args.games_dir) / f"{game}.kif"
        if not path.is_file():
            rows.append([game, "not in the games directory", *[""] * 9])
            continue
        began = time.monotonic()
        try:
            budget = GroundingBudget(seconds=args.ground_seconds)
            sm = load_machine(path, engine=args.engine, budget=budget)
        except Exception as e:  # e.g. not grounded within its budget: say so, go on
            rows.append([game, f"not loaded: {str(e)[:200]}", *[""] * 9])
            continue
        load = time.monotonic() - began
        tally = {"new": 0, "old": 0, "draw": 0, "unfinished": 0}
        its: dict[str, list[int]] = {"new": [], "old": []}
        secs: dict[str, float] = {"new": 0.0, "old": 0.0}
        try:
            rates = same_position(sm, old_mcts, args.seconds)
            for pair in range(args.pairs):
                for seat in range(len(sm.roles)):
                    kinds = ["new" if r == seat else "old" for r in range(len(sm.roles))]
                    strategies = [
                        MctsStrategy(seed=pair * 7 + r)
                        if k == "new"
                        else old_mcts.MctsStrategy(seed=pair * 7 + r)
                        for r, k in enumerate(kinds)
                    ]
                    goals = play(sm, strategies, args.seconds, args.max_plies)
                    for s, k in zip(strategies, kinds, strict=True):
                        taken = s.take_reports()
                        its[k] += [r.iterations for r in taken]
                        secs[k] += sum(r.seconds for r in taken)
                        s.finish()
                    if goals is None:
                        tally["unfinished"] += 1
                    else:
                        new = max(g for g, k in zip(goals, kinds, strict=True) if k == "new")
                        old = max(g for g, k in zip(goals, kinds, strict=True) if k == "old")
                        tally["new" if new > old else "old" if old > new else "draw"] += 1
                    print(game, kinds, goals, flush=True)
        finally:
            sm.close()
        ended = tally["new"] + tally["old"] + tally["draw"]
        decided += ended
        won += tally["new"]
        rows.append(
            [
                game,
                f"{sm.engine_choice.engine} (loaded in {load:.1f} s)",
                str(tally["new"]),
                str(tally["old"]),
                str(tally["draw"]),
                str(tally["unfinished"]),
                f"{statistics.median(its['new']):,.0f}" if its["new"] else "-",
                f"{statistics.median(its['old']):,.0f}" if its["old"] else "-",
                f"{sum(its['new']) / secs['new']:,.0f}" if secs["new"] else "-",
                f"{sum(its['old']) / secs['old']:,.0f}" if secs["old"] else "-",
                (
                    f"new proved it in {1000 * rates['proved']:.1f} ms / {rates['old']:,.0f}"
                    if "proved" in rates
                    else f"{rates['new']:,.0f} / {rates['old']:,.0f}"
                )
                if rates
                else "-",
            ]
        )
    table = markdown_table(
        [
            "game",
            "engine",
            "new won",
            "old won",
            "drawn",
            "unfinished",
            "new: iterations a move (median)",
            "old: iterations a move (median)",
            "new: iterations a second searched",
            "old: iterations a second searched",
            "one position: iterations a second, new / old",
        ],
        rows,
    )
    share = f"{100 * won / decided:.0f} %" if decided else "-"
    return (
        f"{SECTION}\n\n{header_markdown(machine_header())}\n\n"
        f"Baseline: `gdl2pl/ggp/mcts.py` at `{args.baseline_rev}`; {args.seconds:g} s a "
        f"move for both; {args.pairs} game(s) in each seat; at most {args.max_plies} plies. "
        f"The new one won {won} of the {decided} games that ended ({share}). A search that "
        f"proves its root stops (fewer iterations a move, not a slower search); in a match the "
        f"two search different positions, and a reused tree is deeper (an iteration walks "
        f"further): the last column compares them on one position (8 random plies in, "
        f"median of 3 interleaved searches of {args.seconds:g} s).\n\n{table}\n"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--games", nargs="+", default=["connectFour", "breakthrough", "checkers", "chess_200"]
    )
    ap.add_argument("--seconds", type=float, default=1.0, help="budget of a move, s")
    ap.add_argument("--pairs", type=int, default=1, help="games in each seat")
    ap.add_argument("--baseline-rev", default="main", help="git revision of the baseline")
    ap.add_argument("--max-plies", type=int, default=300)
    ap.add_argument("--engine", default="compiled", choices=["compiled", "auto", "prolog"])
    ap.add_argument("--games-dir", default=str(GAMES))
    ap.add_argument("--ground-seconds", type=float, default=180, help="grounding budget, s")
    return section_main(ap, report, SECTION)


if __name__ == "__main__":
    sys.exit(main())
