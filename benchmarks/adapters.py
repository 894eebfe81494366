"""Speed of the game-AI adapters beside the raw StateMachine step API.

    python benchmarks/adapters.py --out /tmp/adapters.md   # then into RESULTS.md
    python benchmarks/adapters.py --quick            # 1 s per loop, a smoke run

For each game of the 20-game set (``../shared/anchors/this-machine.md``), in one process
and one after the other, with the same warm-up and the same seconds:

- ``raw``: the raw step API loop, the calls of ``loops.python_steps`` (mode ``b``,
  one ``StateMachine.step`` per step);
- ``openspiel``: ``state.legal_actions()`` / ``apply_action`` (``apply_actions`` with one
  action per player in simultaneous games) on a ``gdl2pl.openspiel`` state, ``returns()``
  at the end;
- ``pettingzoo``: the AEC loop of PettingZoo's documentation (``agent_iter``, ``last``,
  a random action under ``action_mask``, ``step``) on ``gdl2pl.pettingzoo.env`` (with
  PettingZoo's wrappers, as users get it), and ``pettingzoo_raw`` the same on ``raw_env``
  (no wrappers: what the wrappers cost);
- ``gymnasium`` (one-role games): ``reset`` / ``step`` with a random action under
  ``info["action_mask"]`` on ``gdl2pl.gymnasium.GdlEnv``.

Every loop plays uniformly random matches from the initial state; "steps" counts game
transitions (next-state calls), so the rates compare. Each adapter loads its own copy of
the game (the load is not timed); its per-state caches start empty before the warm-up.

Then the flagship games without ``input`` or ``base`` (``--flagships``, default chess and
checkers, loaded with default options: chess's goal-less end at move 200 gets the assumed
50, with a ``MissingGoalWarning``): per adapter, the load time and the memory it adds (peak
resident set of a fresh process that loads the game, less that of one that only imports
the adapter), and the raw, OpenSpiel and PettingZoo loops as above.

Then OpenSpiel's random loop (the ``openspiel`` loop above) on GDL tic-tac-toe through
the adapter on each engine (``prolog``, ``compiled``) beside OpenSpiel's native C++
``tic_tac_toe`` in the same run, interleaved rounds as above: steps/s and the ratio of the
native rate to each (issue 34's target: within 2x). ``--ttt-only`` runs only this.

``--engine prolog|compiled|auto`` chooses the engine of every other loop (the raw step
API loads the game with ``gdl2pl.compiled.load_machine``; the adapters take ``engine=``).

Then OpenSpiel's ``MCTSBot`` (UCT c = 2, random-rollout evaluator with one rollout,
``--simulations`` per search) searches from the initial state of GDL tic-tac-toe and of
OpenSpiel's native C++ ``tic_tac_toe``: simulations per second, the first search (cold
caches) and the median of ``--searches`` more.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from loops import Count
from reference import DEFAULT_ANCHORS
from reference import DEFAULT_GAMES_DIR
from reference import game_path
from reference import read_references
from reference import select
from report import markdown_table
from report import rate
from sysinfo import header_markdown
from sysinfo import machine_header

from gdl2pl.bridge import GoalDefinitionError

ADAPTERS = ("openspiel", "pettingzoo", "pettingzoo_raw", "gymnasium")


Steps = Iterator[bool]  # one item per game transition; True when a match ended with it


def raw_steps(sm: Any, rng: random.Random) -> Steps:
    """The raw step API loop, call for call as ``loops.python_steps`` (mode ``b``): one
    ``StateMachine.step`` per step, ``goals`` at the end."""
    choice = rng.choice
    while True:
        s = sm.initial_state
        ended = sm.is_terminal(s)
        legal = [] if ended else sm.all_legal_moves(s)
        while not ended:
            s, ended, legal, _ = sm.step(s, [choice(ms) for ms in legal])
            if ended:
                with contextlib.suppress(GoalDefinitionError):  # a game's bug: still a step
                    sm.goals(s)
            yield ended


def openspiel_steps(game: Any, rng: random.Random) -> Steps:
    import pyspiel

    simultaneous = int(pyspiel.PlayerId.SIMULTANEOUS)
    players = range(game.num_players())
    choice = rng.choice
    while True:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.current_player() == simultaneous:
                state.apply_actions([choice(state.legal_actions(p)) for p in players])
            else:
                state.apply_action(choice(state.legal_actions()))
            ended = state.is_terminal()
            if ended:
                state.returns()
            yield ended


def pettingzoo_steps(env: Any, rng: random.Random) -> Steps:
    import numpy as np

    choice = rng.choice
    raw = env.unwrapped
    while True:
        env.reset()
        for _ in env.agent_iter():
            _, _, terminated, truncated, info = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            before = raw._pos
            env.step(int(choice(np.flatnonzero(info["action_mask"]))))
            if raw._pos is not before:
                yield raw._pos.node.terminal


def gymnasium_steps(env: Any, rng: random.Random) -> Steps:
    import numpy as np

    choice = rng.choice
    while True:
        _, info = env.reset()
        terminated = truncated = False
        while not (terminated or truncated):
            action = int(choice(np.flatnonzero(info["action_mask"])))
            _, _, terminated, truncated, info = env.step(action)
            yield terminated or truncated


def run_for(steps: Steps, seconds: float, count: Count) -> None:
    """Advance ``steps`` for ``seconds`` (checking the clock after every step)."""
    clock = time.perf_counter
    deadline = clock() + seconds
    t0 = clock()
    for ended in steps:
        count.states += 1
        count.playouts += ended
        if clock() >= deadline:
            break
    count.seconds += clock() - t0


def open_loops(
    path: Path, seed: int, engine: str = "prolog"
) -> tuple[dict[str, Steps | str], list[Any]]:
    """Every loop that applies to the game on ``engine`` (an adapter that refuses the
    game: its error message instead), and what to close at the end."""
    from gdl2pl.compiled import load_machine

    loops: dict[str, Steps | str] = {}
    closing: list[Any] = []
    sm = load_machine(path, engine)  # type: ignore[arg-type]
    closing.append(sm)
    loops["raw"] = raw_steps(sm, random.Random(seed))
    for name in ADAPTERS:
        if name == "gymnasium" and len(sm.roles) != 1:
            continue
        try:
            loops[name], gdl = open_adapter(name, path, random.Random(seed), engine=engine)
            closing.append(gdl)
        except Exception as e:  # a game an adapter refuses: its error is the result
            loops[name] = f"{type(e).__name__}: {e}"
    return loops, closing


def open_adapter(
    name: str, path: Path, rng: random.Random, **options: Any
) -> tuple[Steps, Any]:
    if name == "openspiel":
        from gdl2pl.openspiel import load_game

        game = load_game(path, **options)
        return openspiel_steps(game, rng), game.gdl
    if name in ("pettingzoo", "pettingzoo_raw"):
        from gdl2pl.pettingzoo import env
        from gdl2pl.pettingzoo import raw_env

        e = env(path, **options) if name == "pettingzoo" else raw_env(path, **options)
        return pettingzoo_steps(e, rng), e.unwrapped.gdl
    from gdl2pl.gymnasium import GdlEnv

    g = GdlEnv(path, **options)
    return gymnasium_steps(g, rng), g.gdl


def measure_game(
    path: Path, warmup: float, seconds: float, rounds: int, seed: int, engine: str = "prolog"
) -> dict[str, Count | str]:
    """steps/s of every loop on one game: after a warm-up of each, ``rounds`` rounds in
    which every loop runs ``seconds / rounds`` in turn (so a noisy moment of the machine
    hits them all alike); a match in progress carries over to the next round."""
    loops, closing = open_loops(path, seed, engine)
    results: dict[str, Count | str] = {k: v for k, v in loops.items() if isinstance(v, str)}
    live = {k: v for k, v in loops.items() if not isinstance(v, str)}
    counts = {k: Count() for k in live}

    def run(k: str, steps: Steps, seconds: float, count: Count) -> None:
        try:
            run_for(steps, seconds, count)
        except Exception as e:  # a state an adapter cannot represent: its error is the result
            results[k] = f"{type(e).__name__} during the run: {e}"
            del live[k]

    try:
        for k, steps in list(live.items()):
            run(k, steps, warmup, Count())
        for _ in range(rounds):
            for k, steps in list(live.items()):
                run(k, steps, seconds / rounds, counts[k])
        return {**{k: counts[k] for k in live}, **results}
    finally:
        for c in closing:
            c.close()


#: A fresh process loading a game: prints load seconds and peak RSS in KiB (Linux).
_LOAD_PROBE = """
import resource, sys, time
import gdl2pl.{module} as adapter
path, load = sys.argv[1], sys.argv[2] == "1"
t0 = time.perf_counter()
if load:
    {call}
print(time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""
_LOAD_CALLS = {
    "openspiel": "adapter.load_game(path)",
    "pettingzoo": "adapter.env(path).reset(seed=0)",
}


def load_cost(path: Path, adapter: str) -> tuple[float, float]:
    """Seconds to load ``path`` through ``adapter`` and the MiB of peak memory that adds,
    each in a fresh process."""
    import subprocess

    code = _LOAD_PROBE.format(module=adapter, call=_LOAD_CALLS[adapter])
    out = {}
    for load in ("0", "1"):
        done = subprocess.run(
            [sys.executable, "-c", code, str(path), load],
            capture_output=True, text=True, check=True, timeout=600,
        )
        seconds, kib = done.stdout.split()
        out[load] = (float(seconds), int(kib))
    return out["1"][0], (out["1"][1] - out["0"][1]) / 1024


def flagship_rows(
    names: list[str], games_dir: Path, seconds: float, seed: int, engine: str = "prolog"
) -> list[list[str]]:
    """Per flagship game: load seconds and added MiB per adapter, and loop steps/s (raw
    step API, OpenSpiel, PettingZoo)."""
    import warnings

    from gdl2pl.adapters.errors import MissingGoalWarning
    from gdl2pl.compiled import load_machine

    warnings.simplefilter("ignore", MissingGoalWarning)  # chess's is expected, once a load
    rows = []
    for name in names:
        print(f"{name} ...", file=sys.stderr, flush=True)
        path = game_path(name, games_dir)
        cells = [name]
        for adapter in ("openspiel", "pettingzoo"):
            t, mib = load_cost(path, adapter)
            cells.append(f"{t:.1f} s, {mib:.0f} MiB")
        with load_machine(path, engine) as sm:  # type: ignore[arg-type]
            count = Count()
            run_for(raw_steps(sm, random.Random(seed)), seconds, count)
            cells.append(rate(count.states_per_s))
        for adapter in ("openspiel", "pettingzoo"):
            steps, gdl = open_adapter(adapter, path, random.Random(seed), engine=engine)
            count = Count()
            try:
                run_for(steps, seconds, count)
            finally:
                gdl.close()
            cells.append(rate(count.states_per_s))
        rows.append(cells)
    return rows


def mcts_rates(
    game: Any, simulations: int, searches: int, seed: int
) -> tuple[float, float]:
    """Simulations/s of the first MCTS search from the initial state, and the median
    over ``searches`` more."""
    import numpy as np
    from open_spiel.python.algorithms import mcts

    rs = np.random.RandomState(seed)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rs)
    bot = mcts.MCTSBot(game, 2, simulations, evaluator, random_state=rs)
    rates = []
    for _ in range(searches + 1):
        state = game.new_initial_state()
        t0 = time.perf_counter()
        bot.mcts_search(state)
        rates.append(simulations / (time.perf_counter() - t0))
    return rates[0], statistics.median(rates[1:])


NATIVE = "OpenSpiel native tic_tac_toe (C++)"


def native_ttt_rows(
    games_dir: Path, warmup: float, seconds: float, rounds: int, seed: int
) -> list[list[str]]:
    """OpenSpiel's random loop on native ``tic_tac_toe`` and on GDL tic-tac-toe through
    the adapter on each engine, in interleaved rounds: steps/s, playouts/s, and how many
    times faster the native game runs."""
    import pyspiel

    from gdl2pl.openspiel import load_game

    ttt = game_path("ticTacToe", games_dir)
    loops = {NATIVE: openspiel_steps(pyspiel.load_game("tic_tac_toe"), random.Random(seed))}
    games = []
    for engine in ("prolog", "compiled"):
        game = load_game(ttt, engine=engine)
        assert game.gdl.engine_choice.engine == engine, game.gdl.engine_choice
        games.append(game)
        loops[f"GDL ticTacToe.kif, {engine} engine"] = openspiel_steps(game, random.Random(seed))
    counts = {k: Count() for k in loops}
    try:
        for steps in loops.values():
            run_for(steps, warmup, Count())
        for _ in range(rounds):
            for k, steps in loops.items():
                run_for(steps, seconds / rounds, counts[k])
    finally:
        for g in games:
            g.gdl.close()
    native = counts[NATIVE].states_per_s
    return [
        [k, rate(c.states_per_s), rate(c.playouts_per_s),
         "1x" if k == NATIVE else f"{native / c.states_per_s:.2f}x"]
        for k, c in counts.items()
    ]  # fmt: skip


def native_ttt_table(rows: list[list[str]]) -> str:
    return markdown_table(
        ["loop", "steps/s", "playouts/s", "native steps/s ÷ this (target ≤ 2x)"], rows
    )


def ratio_cell(adapter: Count | str | None, raw: Count) -> tuple[str, float | None]:
    if adapter is None:
        return "", None
    if isinstance(adapter, str):
        return "error", None
    r = adapter.states_per_s / raw.states_per_s if raw.states_per_s else 0.0
    return f"{rate(adapter.states_per_s)} ({r:.0%})", r


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--anchors", type=Path, default=DEFAULT_ANCHORS)
    ap.add_argument("--games-dir", type=Path, default=DEFAULT_GAMES_DIR)
    ap.add_argument("--games", nargs="*", help="a subset of the set (default: all 20)")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--warmup", type=float, default=1.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--simulations", type=int, default=1000)
    ap.add_argument("--searches", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--flagships", nargs="*", default=["chess", "checkers"],
                    help="games without input/base: load cost and loops")
    ap.add_argument("--quick", action="store_true", help="1 s per loop, no warm-up")
    ap.add_argument("--out", type=Path, help="write the Markdown report here")
    ap.add_argument("--engine", choices=("prolog", "compiled", "auto"), default="prolog",
                    help="the engine of the loops (default: the Prolog reasoner)")
    ap.add_argument("--ttt-only", action="store_true",
                    help="only the native tic_tac_toe comparison")
    args = ap.parse_args(argv)
    if args.quick:
        args.seconds, args.warmup, args.searches, args.rounds = 1.0, 0.0, 2, 1
    native_rows = native_ttt_rows(
        args.games_dir, args.warmup, args.seconds, args.rounds, args.seed
    )
    if args.ttt_only:
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
        report = "\n\n".join([
            header_markdown(machine_header()),
            f"OpenSpiel random loop, {args.warmup:g} s warm-up each, then {args.seconds:g} s "
            f"each in {args.rounds} interleaved rounds, seed {args.seed}. Load average at "
            f"the end: {load}.",
            native_ttt_table(native_rows),
        ])  # fmt: skip
        print(report)
        if args.out:
            args.out.write_text(report + "\n", encoding="utf-8")
        return 0

    refs = select(read_references(args.anchors), args.games)
    rows, errors = [], []
    ratios: dict[str, list[float]] = {a: [] for a in ADAPTERS}
    for ref in refs:
        path = game_path(ref.game, args.games_dir)
        print(f"{ref.game} ...", file=sys.stderr, flush=True)
        result = measure_game(
            path, args.warmup, args.seconds, args.rounds, args.seed, args.engine
        )
        raw = result["raw"]
        if isinstance(raw, str):  # the raw machine cannot play the game: no comparison
            errors.append(f"- {ref.game}, raw step API: {raw}")
            rows.append([ref.game, "error", "", "", "", ""])
            continue
        cells = [ref.game, rate(raw.states_per_s)]
        for a in ADAPTERS:
            text, r = ratio_cell(result.get(a), raw)
            cells.append(text)
            if r is not None:
                ratios[a].append(r)
            if isinstance(result.get(a), str):
                errors.append(f"- {ref.game}, {a}: {result[a]}")
        rows.append(cells)
    medians = [
        f"{statistics.median(ratios[a]):.0%} ({len(ratios[a])} games, lowest "
        f"{min(ratios[a]):.0%})" if ratios[a] else "" for a in ADAPTERS
    ]
    rows.append(["**median ratio**", "", *medians])
    table = markdown_table(
        ["game", "raw step API steps/s", "OpenSpiel steps/s (ratio)",
         "PettingZoo AEC `env` steps/s (ratio)", "PettingZoo `raw_env` (ratio)",
         "Gymnasium steps/s (ratio)"],
        rows,
    )

    flagship_table = markdown_table(
        ["game", "OpenSpiel load (time, memory)", "PettingZoo load (time, memory)",
         "raw step API steps/s", "OpenSpiel steps/s", "PettingZoo AEC `env` steps/s"],
        flagship_rows(args.flagships, args.games_dir, args.seconds, args.seed, args.engine),
    )

    import pyspiel

    from gdl2pl.openspiel import load_game

    ttt = game_path("ticTacToe", args.games_dir)
    gdl_game = load_game(ttt, engine=args.engine)
    gdl_first, gdl_rate = mcts_rates(gdl_game, args.simulations, args.searches, args.seed)
    gdl_game.gdl.close()
    nat_first, nat_rate = mcts_rates(
        pyspiel.load_game("tic_tac_toe"), args.simulations, args.searches, args.seed
    )
    mcts_table = markdown_table(
        ["game", "first search sims/s", f"median of {args.searches} more sims/s"],
        [
            ["GDL ticTacToe.kif (gdl2pl.openspiel)", rate(gdl_first), rate(gdl_rate)],
            ["OpenSpiel native tic_tac_toe (C++)", rate(nat_first), rate(nat_rate)],
            ["GDL / native", f"{gdl_first / nat_first:.0%}", f"{gdl_rate / nat_rate:.0%}"],
        ],
    )
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    report = "\n\n".join(
        [
            "## Run",
            header_markdown(machine_header()),
            f"Loops: {args.warmup:g} s warm-up each, then {args.seconds:g} s each in "
            f"{args.rounds} interleaved rounds, seed "
            f"{args.seed}; MCTS: {args.simulations} simulations per search, UCT c = 2, "
            f"one random rollout per simulation. Engine: {args.engine}. Load average at "
            f"the end: {load}.",
            "## Steps per second through each adapter (ratio to the raw step API)",
            table,
            "\n".join(["Errors (a game or state an adapter refuses):", *errors])
            if errors
            else "",
            "## Games without input or base: load cost and loops",
            flagship_table,
            "## OpenSpiel's random loop: GDL tic-tac-toe on each engine beside native",
            native_ttt_table(native_rows),
            "## OpenSpiel MCTSBot on tic-tac-toe",
            mcts_table,
        ]
    )
    print(report)
    if args.out:
        args.out.write_text(report + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
