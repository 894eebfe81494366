"""Chess through OpenSpiel, as a researcher meets it: load time, random steps per second
once the network is in, and the time of one MCTS move.

    python benchmarks/openspiel_chess.py [--games chess_200 chess] [--seconds 10]
                                         [--simulations 100] [--moves 3] [--results FILE]

For each game (``../shared/games/ggp-repository/<game>.kif``): ``gdl2pl.openspiel.
load_game(path)`` with the default ``engine="auto"`` (the reasoner at once, the network
once a background grounding has it), timed to the game object; then the wait for the
network (or the reason the reasoner stays); random play-throughs through the pyspiel
state (``legal_actions``, a uniformly random action, ``apply_action``) for ``--seconds``;
then OpenSpiel's own ``MCTSBot`` (random rollouts, ``--simulations`` a move) choosing
``--moves`` moves from the initial state, timed per move. The table is printed, and with
``--results`` replaces this benchmark's section of that file (appended when absent).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

from report import markdown_table
from report import section_main
from sysinfo import header_markdown
from sysinfo import machine_header

import gdl2pl.openspiel  # noqa: F401  (registers the "gdl" game with pyspiel first)
from gdl2pl.openspiel import load_game

REPO = Path(__file__).resolve().parent.parent
GAMES = REPO.parent / "shared" / "games" / "ggp-repository"
SECTION = "## Chess through OpenSpiel (`benchmarks/openspiel_chess.py`)"


def random_steps(game, seconds: float, seed: int) -> tuple[float, int]:
    """Random play-throughs for ``seconds``: steps per second, and steps."""
    rng = random.Random(seed)
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = game.new_initial_state()
        while not state.is_terminal() and time.perf_counter() - start < seconds:
            state.apply_action(rng.choice(state.legal_actions()))
            steps += 1
    return steps / (time.perf_counter() - start), steps


def mcts_move_seconds(game, simulations: int, moves: int, seed: int) -> list[float]:
    """Seconds of each of ``moves`` MCTS moves (random rollouts) from the start."""
    import numpy as np
    from open_spiel.python.algorithms import mcts

    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=np.random.RandomState(seed))
    bot = mcts.MCTSBot(game, 2.0, simulations, evaluator, random_state=np.random.RandomState(seed))
    state = game.new_initial_state()
    times = []
    for _ in range(moves):
        if state.is_terminal():
            break
        start = time.perf_counter()
        action = bot.step(state)
        times.append(time.perf_counter() - start)
        state.apply_action(action)
    return times


def measure(name: str, args: argparse.Namespace) -> list[str]:
    path = GAMES / f"{name}.kif"
    start = time.perf_counter()
    game = load_game(path)
    loaded = time.perf_counter() - start
    choice = game.gdl.sm.wait_for_engine()
    in_after = time.perf_counter() - start
    rate, _ = random_steps(game, args.seconds, args.seed)
    times = mcts_move_seconds(game, args.simulations, args.moves, args.seed)
    game.gdl.close()
    mean = sum(times) / len(times) if times else float("nan")
    return [
        name,
        f"{loaded:.1f}",
        f"{choice.engine} ({in_after:.1f} s)" if choice.engine == "compiled" else
        f"prolog: {choice.reason[:80]}",
        f"{rate:,.0f}",
        f"{mean:.2f} ({', '.join(f'{t:.2f}' for t in times)})",
    ]


def report(args: argparse.Namespace) -> str:
    rows = [measure(g, args) for g in args.games]
    return "\n".join([
        SECTION,
        "",
        header_markdown(machine_header()),
        "",
        markdown_table(
            ["game", "load s", "engine (network in after)", "random steps/s",
             f"MCTS move s, {args.simulations} simulations (each)"],
            rows,
        ),
        "",
    ])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", nargs="+", default=["chess_200", "chess"])
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--simulations", type=int, default=100)
    ap.add_argument("--moves", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    return section_main(ap, report, SECTION)


if __name__ == "__main__":
    sys.exit(main())
