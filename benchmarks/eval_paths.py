"""The C evaluator's ways of evaluating a network, each against the others, counted in
instructions: the measurement that decides which ways the evaluator keeps.

    python benchmarks/eval_paths.py [--games G ...] [--batch-games G ...] [--jobs 2]
                                    [--results benchmarks/RESULTS.md]

Each figure is the instructions callgrind (``valgrind --tool=callgrind``) counts inside
one C function of ``gdl2pl.compiled._network``, in a process of its own that builds
the game's network from the arrays this script wrote (no Prolog under valgrind):

- **one game** (``Network.playouts``, per step): random playouts from the initial
  state, the same seed on every path, so the same games are played: the network
  untuned (``every rule``: every rule of every atom at every step), tuned and by
  watched rules (``watched``: a rule looked at once the atom it watches holds), and
  tuned by events (``events``: only the atoms a true atom's watch made a candidate;
  where the programs list their atoms in ascending order, else ``-``);
- **batches** (``Batch.step``, per game step, over random legal actions drawn by
  ``Batch.sample``, not counted): N = 1 and 64, bit-sliced (``solo`` 0) or one game at
  a time (``solo`` 256: each game by the network's tuned evaluation); N = 128 and 1024
  in groups of 1, 2 or 4 words an atom (64, 128 or 256 games a group).

Instructions are not time (a cache miss costs more than an instruction), but they do
not depend on the machine's load: on a shared machine they are the figure that repeats.
So each path is timed too, in this process, the paths of a game in interleaved rounds
(steps per second, median of ``--rounds``): the ratios of one run, where memory shows
(a bit-sliced group walks the network once for 64 to 256 games).
The Markdown report is printed, and with ``--results`` replaces this benchmark's
section in that file (appended when absent).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from array import array
from collections.abc import Callable
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

SECTION = "## The evaluation paths (`benchmarks/eval_paths.py`)"
GAMES = ["ticTacToe", "connectFour", "breakthrough", "knightThrough", "checkers", "reversi",
         "speedChess", "chess_200", "pentago", "hex", "nineBoardTicTacToe", "amazons_10x10",
         "sudokuGrade1", "3pConnectFour", "eightPuzzle", "hanoi", "pacman3p",
         "connectFourSimultaneous", "skirmish", "dotsAndBoxes"]
BATCH_GAMES = ["ticTacToe", "connectFour", "breakthrough", "checkers", "reversi"]
PATHS = ("every rule", "watched", "events")
#: (label, n, solo, width) of each batch measurement
BATCHES = [("N=1 one by one", 1, 256, 0), ("N=1 bit-sliced", 1, 0, 0),
           ("N=64 bit-sliced", 64, 0, 0), ("N=64 one by one", 64, 256, 0),
           ("N=128 1 word", 128, 0, 1), ("N=128 2 words", 128, 0, 2),
           ("N=128 4 words", 128, 0, 4), ("N=1024 1 word", 1024, 0, 1),
           ("N=1024 2 words", 1024, 0, 2), ("N=1024 4 words", 1024, 0, 4)]


# -- in the worker (under valgrind): the extension alone, loaded from its file ----------

def load_extension(path: str) -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("gdl2pl.compiled._network", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build_network(ext: Any, spec: dict[str, Any]) -> Any:
    a = spec["network"]
    return ext.Network(*a[:3], *(array("i", x) for x in a[3:8]),
                       [[tuple(p) for p in ms] for ms in a[8]], [tuple(p) for p in a[9]],
                       a[10], [[tuple(p) for p in vs] for vs in a[11]],
                       [[tuple(p) for p in ps] for ps in a[12]])


def path_network(ext: Any, spec: dict[str, Any], path: str) -> Any | None:
    """The game's network evaluating by ``path``, or None where it cannot."""
    net = build_network(ext, spec)
    if path != "every rule":
        net.tune(bytes(spec["init"]), spec["tune_steps"], 200)
        if path == "watched":
            net._evaluation("watched")
    return net if net._evaluation() == path else None


def make_batch(ext: Any, spec: dict[str, Any], n: int, solo: int,
               width: int) -> tuple[Any, array]:
    """A batch of ``n`` games on the tuned network, and a buffer for its actions."""
    net = build_network(ext, spec)
    init = bytes(spec["init"])
    net.tune(init, spec["tune_steps"], 200)
    t, roles = spec["batch"], len(spec["network"][8])
    outs = (bytearray(n * len(init)), bytearray(n * roles * t["n_actions"]),
            array("d", bytes(8 * n * roles)), bytearray(n), array("i", bytes(4 * n)),
            bytearray(n))
    batch = ext.Batch(net, n, init, t["move_action"], t["n_actions"],
                      list(range(len(init) + 1)), list(range(len(init))), len(init),
                      t["goal_returns"], 0.0, *outs, width=width)
    batch.solo = solo
    batch.seed(1)
    return batch, array("i", bytes(4 * n * roles))


def worker(args: argparse.Namespace) -> None:
    ext = load_extension(args.extension)
    spec = json.loads(Path(args.spec).read_text(encoding="utf-8"))
    if args.kind == "playouts":
        net = path_network(ext, spec, args.path)
        if net is None:
            print("n/a")
            return
        net.seed(1)
        result = net.playouts(bytes(spec["init"]), args.count, 100_000)
        print(result[2] if result[0] == "playouts" else "stuck")
        return
    batch, actions = make_batch(ext, spec, args.count, args.solo, args.width)
    for _ in range(args.steps):
        batch.sample(actions)
        batch.step(actions)
    print(args.count * args.steps)


# -- in the parent: the games' networks written, the workers run under valgrind ---------

def write_spec(game: str, games_dir: Path, folder: Path, budget: float) -> dict[str, Any]:
    """Load ``game`` on the compiled engine and write what a worker needs; its sizes and
    average playout depth (for choosing how many playouts make a measurement)."""
    from reference import game_path

    from gdl2pl.compiled import load_machine
    from gdl2pl.compiled.ground import GroundingBudget
    from gdl2pl.compiled.machine import TUNE_STEPS
    from gdl2pl.compiled.machine import _numeric

    with load_machine(game_path(game, games_dir), "compiled",
                      budget=GroundingBudget(seconds=budget)) as sm:
        n = sm.network
        goals = [[(a, _numeric(v)) for a, v in vs] for vs in n.goals]
        move_action = [-1] * n.n_moves
        for ms in n.legal:
            for k, (_, m) in enumerate(ms):
                move_action[m] = k
        init = list(sm.state_bits(sm.initial_state))
        spec = {
            "network": [n.n_atoms, n.n_fluents, n.n_moves, list(n.rule_start),
                        list(n.lit_start), list(n.lits), list(n.state_program),
                        list(n.move_program), n.legal, n.next, n.terminal, goals,
                        [[(a, k) for k, (a, _) in enumerate(ps)] for ps in n.sees]],
            "init": init,
            "tune_steps": TUNE_STEPS,
            "batch": {"move_action": move_action,
                      "n_actions": max(1, max(len(ms) for ms in n.legal)),
                      "goal_returns": [float(g) if g >= 0 else float("nan")
                                       for vs in goals for _, g in vs]},
        }
        (folder / f"{game}.json").write_text(json.dumps(spec), encoding="utf-8")
        sm.evaluator.seed(1)
        result = sm.evaluator.playouts(sm.state_bits(sm.initial_state), 20, 100_000)
        depth = result[2] / 20 if result[0] == "playouts" else 50.0
        return {"rules": n.n_rules, "atoms": n.n_atoms, "depth": max(1.0, depth)}


def instructions(out: Path) -> int:
    text = out.read_text(encoding="utf-8", errors="replace")
    found = re.search(r"^(?:summary|totals):\s*(\d+)", text, re.M)
    if not found:
        raise RuntimeError(f"no instruction count in {out}")
    return int(found.group(1))


def measure(folder: Path, extension: str, game: str, function: str,
            options: Sequence[str]) -> tuple[int, str]:
    """Instructions inside ``function`` and the worker's answer, for one worker run."""
    out = Path(tempfile.mkstemp(dir=folder, suffix=".callgrind")[1])
    command = ["valgrind", "--tool=callgrind", "--collect-atstart=no",
               f"--toggle-collect={function}", f"--callgrind-out-file={out}",
               sys.executable, "-P", __file__, "--worker", "--extension", extension,
               "--spec", str(folder / f"{game}.json"), *options]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{game}: the worker failed: {done.stderr[-500:]}")
    return instructions(out), done.stdout.strip()


def per(count: int, answer: str) -> float | None:
    return None if not answer.isdigit() or int(answer) == 0 else count / int(answer)


def ratio(x: float | None, best: float) -> str:
    return "-" if x is None else f"{x / best:.2f}x"


def figure(x: float | None) -> str:
    return "-" if x is None else f"{x:,.0f}"


def timed(loops: dict[Any, Callable[[], int]], seconds: float,
          rounds: int) -> dict[Any, float]:
    """Each loop's work (what a call returns) per second: the median of ``rounds``
    interleaved rounds of ``seconds`` each, so that every loop meets the same load."""
    rates: dict[Any, list[float]] = {k: [] for k in loops}
    for _ in range(rounds):
        for k, loop in loops.items():
            done, start = 0, time.perf_counter()
            while (took := time.perf_counter() - start) < seconds:
                done += loop()
            rates[k].append(done / took)
    return {k: statistics.median(v) for k, v in rates.items()}


def playout_loop(net: Any, init: bytes) -> Callable[[], int]:
    net.seed(1)

    def loop() -> int:
        result = net.playouts(init, 1, 100_000)
        return int(result[2]) if result[0] == "playouts" else 0
    return loop


def batch_loop(batch: Any, actions: array, n: int) -> Callable[[], int]:
    def loop() -> int:
        batch.sample(actions)
        batch.step(actions)
        return n
    return loop


def timings(args: argparse.Namespace, ext: Any, folder: Path,
            games: Sequence[str], batch_games: Sequence[str]) -> dict[Any, float | None]:
    """Steps per second of every path, same run: per game, its paths interleaved."""
    out: dict[Any, float | None] = {}
    for g in games:
        spec = json.loads((folder / f"{g}.json").read_text(encoding="utf-8"))
        nets = {p: path_network(ext, spec, p) for p in PATHS}
        init = bytes(spec["init"])
        loops = {(g, p): playout_loop(net, init) for p, net in nets.items() if net is not None}
        out.update({(g, p): None for p in PATHS})
        out.update(timed(loops, args.seconds, args.rounds))
    for g in batch_games:
        spec = json.loads((folder / f"{g}.json").read_text(encoding="utf-8"))
        loops = {}
        for label, n, solo, width in BATCHES:
            batch, actions = make_batch(ext, spec, n, solo, width)
            loops[(g, label)] = batch_loop(batch, actions, n)
        out.update(timed(loops, args.seconds, args.rounds))
    return out


def report(args: argparse.Namespace) -> str:
    from report import markdown_table
    from report import rate
    from sysinfo import header_markdown
    from sysinfo import machine_header

    import gdl2pl.compiled._network as ext

    games = list(dict.fromkeys(args.games + args.batch_games))
    with tempfile.TemporaryDirectory(prefix="eval_paths_") as tmp:
        folder = Path(tmp)
        sizes, failed = {}, {}
        for g in games:
            try:
                sizes[g] = write_spec(g, args.games_dir, folder, args.budget)
            except Exception as e:  # a game that does not compile: said in its row
                failed[g] = f"{type(e).__name__}: {str(e)[:120]}"
        jobs: dict[tuple[str, str], Any] = {}
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for g in args.games:
                if g not in sizes:
                    continue
                steps = args.steps if sizes[g]["rules"] < 5000 else args.steps // 8
                playouts = str(max(2, round(steps / sizes[g]["depth"])))
                for p in PATHS:
                    jobs[(g, p)] = pool.submit(
                        measure, folder, ext.__file__, g, "Network_playouts",
                        ["--kind", "playouts", "--path", p, "--count", playouts])
            for g in args.batch_games:
                if g not in sizes:
                    continue
                small = sizes[g]["rules"] < 5000
                for label, n, solo, width in BATCHES:
                    steps = max(1, (40 if small else 8) * (8 if n == 1 else 1)
                                // (4 if n == 1024 else 1))
                    jobs[(g, label)] = pool.submit(
                        measure, folder, ext.__file__, g, "Batch_step",
                        ["--kind", "batch", "--count", str(n), "--solo", str(solo),
                         "--width", str(width), "--steps", str(steps)])
        result = {k: per(*f.result()) for k, f in jobs.items()}
        # the raw figures first, on stderr: a run takes an hour
        print(json.dumps({" / ".join(k): v for k, v in result.items()}), file=sys.stderr)
        rates = timings(args, ext, folder, [g for g in args.games if g in sizes],
                        [g for g in args.batch_games if g in sizes])
    rows = []
    for g in args.games:
        if g in failed:
            rows.append([g, "", "", "-", "-", "-", failed[g], "", "", "", ""])
            continue
        figures = [result[(g, p)] for p in PATHS]
        best = min(x for x in figures if x is not None)
        speeds = [rates[(g, p)] for p in PATHS]
        fastest = max(x for x in speeds if x is not None)
        rows.append([g, f"{sizes[g]['rules']:,}", f"{sizes[g]['atoms']:,}",
                     *map(figure, figures), PATHS[figures.index(best)],
                     *(ratio(x, fastest) for x in speeds), PATHS[speeds.index(fastest)]])
    single = markdown_table(["game", "ground rules", "atoms", "every rule", "watched",
                             "events", "fewest", "every rule (time)", "watched (time)",
                             "events (time)", "fastest"], rows)
    batch_rows, batch_times = [], []
    for g in args.batch_games:
        if g in failed:
            batch_rows.append([g, *["-"] * len(BATCHES)])
            continue
        batch_rows.append([g, *(figure(result[(g, b[0])]) for b in BATCHES)])
        speeds = [rates[(g, b[0])] for b in BATCHES]
        batch_times.append([g, *(rate(x) for x in speeds)])
    batches = markdown_table(["game", *(b[0] for b in BATCHES)], batch_rows)
    batch_speeds = markdown_table(["game", *(b[0] for b in BATCHES)], batch_times)
    return "\n".join([
        SECTION, "",
        header_markdown(machine_header()), "",
        "`python benchmarks/eval_paths.py` (see its docstring): instructions "
        "(callgrind) per step of a random playout in `Network_playouts`, the same seed on "
        "every path (`-`: the programs do not allow evaluation by events), and the path "
        "with the fewest; then each path's steps per second against the fastest path's, "
        f"same run (median of {args.rounds} interleaved rounds of {args.seconds:g} s, "
        "the machine's load whatever it was: read the ratios).", "",
        single, "",
        "Batches: instructions per game step in `Batch_step` (`one by one`: "
        "`solo` 256, each game by the network's tuned evaluation; `bit-sliced`: `solo` "
        "0; N = 128 and 1024 bit-sliced in groups of 1, 2 or 4 words an atom; the default "
        "is `solo` 4 and the least width that holds N up to 4 words).", "",
        batches, "",
        "The same batches in time: game steps per second (`Batch.sample` and "
        f"`Batch.step`, median of {args.rounds} interleaved rounds of {args.seconds:g} s "
        "per game).", "",
        batch_speeds, "",
    ])


def main() -> int:
    from reference import DEFAULT_GAMES_DIR
    from report import section_main

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", nargs="+", default=GAMES, help="games for the one-game paths")
    ap.add_argument("--batch-games", nargs="+", default=BATCH_GAMES,
                    help="games for the batch paths")
    ap.add_argument("--steps", type=int, default=3000,
                    help="playout steps per measurement (an eighth for networks of 5,000 "
                         "rules or more)")
    ap.add_argument("--games-dir", type=Path, default=DEFAULT_GAMES_DIR, help="KIF files")
    ap.add_argument("--budget", type=float, default=120.0, help="grounding budget, seconds")
    ap.add_argument("--jobs", type=int, default=1, help="valgrind runs at a time")
    ap.add_argument("--seconds", type=float, default=0.5, help="one timed round of a path")
    ap.add_argument("--rounds", type=int, default=5, help="timed rounds per path")
    return section_main(ap, report, SECTION)


if __name__ == "__main__":
    if "--worker" in sys.argv:
        wp = argparse.ArgumentParser()
        wp.add_argument("--worker", action="store_true")
        wp.add_argument("--extension", required=True)
        wp.add_argument("--spec", required=True)
        wp.add_argument("--kind", choices=("playouts", "batch"), required=True)
        wp.add_argument("--path", default="events")
        wp.add_argument("--count", type=int, default=1)
        wp.add_argument("--solo", type=int, default=4)
        wp.add_argument("--width", type=int, default=0)
        wp.add_argument("--steps", type=int, default=1)
        worker(wp.parse_args())
    else:
        sys.exit(main())
