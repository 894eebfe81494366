"""Exhaustive state-graph search (``gdl2pl analyze``): speed on tic-tac-toe, and the
reachable-state counts of corpus games whose graph fits the budget.

    python benchmarks/analysis_states.py --out /tmp/analysis.md   # then into RESULTS.md
    python benchmarks/analysis_states.py --laptop connectFour breakthroughSmall

Tic-tac-toe is analysed ``--repeats`` times in one process (median wall time of
``analyze``, the game already loaded), next to a plain Python breadth-first search through
``StateMachine.next_states``. Then each corpus game (the 20-game benchmark set, and every
``--every``-th file of the repository in name order) is searched with ``--max-states``
and ``--seconds``; no random matches are played. Games that fail to load are listed.

``--laptop GAME...`` runs only ``gdl2pl analyze GAME`` with its default budgets (states,
seconds, memory, random matches), each in its own process: wall time, the process's peak
resident memory (``os.wait4``), what stopped the search, and the verdicts.

``--budget SECONDS GAME...`` runs only ``gdl2pl analyze GAME --seconds SECONDS --walks
WALKS``, each in its own process (``--python``: the interpreter whose gdl2pl runs, to
compare two installs): the process's wall time against the budget (Python's and
SWI-Prolog's start included), what the time cut, and the termination and playability
verdicts.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from reference import DEFAULT_ANCHORS
from reference import DEFAULT_GAMES_DIR
from reference import game_path
from reference import read_references
from sysinfo import cpu_model
from sysinfo import prolog_version

REPO = Path(__file__).resolve().parents[1]
TICTACTOE = REPO / "gdl2pl" / "examples" / "ticTacToe.kif"


def python_bfs_seconds(sm) -> tuple[float, int]:
    start = time.perf_counter()
    seen = {sm.initial_state}
    todo = [sm.initial_state]
    while todo:
        s = todo.pop()
        if sm.is_terminal(s):
            continue
        for n in sm.next_states(s):
            if n not in seen:
                seen.add(n)
                todo.append(n)
    return time.perf_counter() - start, len(seen)


def tictactoe_rows(repeats: int) -> list[str]:
    from gdl2pl.analysis.analyze import Budget
    from gdl2pl.analysis.analyze import analyze
    from gdl2pl.analysis.statespace import search_runtime
    from gdl2pl.bridge import StateMachine

    search_runtime()
    with StateMachine.from_file(TICTACTOE) as sm:
        times, cpu, search = [], [], []
        for _ in range(repeats):
            gc.collect()
            start, start_cpu = time.perf_counter(), time.process_time()
            report = analyze(sm, Budget(walks=0), progress=False)
            times.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
            search.append(report["explored"]["seconds"])
        start_cpu = time.process_time()
        bfs, count = python_bfs_seconds(sm)
        bfs_cpu = time.process_time() - start_cpu
    return [
        "| what | states | wall time (median) | CPU time (median) |",
        "| --- | --- | --- | --- |",
        f"| `analyze`: all five properties, {repeats} runs (wall {min(times):.3f} to "
        f"{max(times):.3f} s) | {report['reachable_states']:,} "
        f"({report['terminal_states']} terminal) | {statistics.median(times):.3f} s "
        f"| {statistics.median(cpu):.3f} s |",
        f"| of which the breadth-first search in Prolog | | {statistics.median(search):.3f} s | |",
        f"| plain Python BFS through `next_states` (one run) | {count:,} | {bfs:.3f} s "
        f"| {bfs_cpu:.3f} s |",
        "",
        f"Load average when measured: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
        f"on {os.cpu_count()} cores (wall times grow with the load of other processes; "
        "CPU time is this process's own).",
    ]


def corpus_games(games_dir: Path, every: int) -> list[Path]:
    chosen: dict[Path, None] = {}
    for ref in read_references(DEFAULT_ANCHORS):
        p = game_path(ref.game, games_dir)
        if p.exists():
            chosen[p] = None
    files = sorted(games_dir.glob("*.kif"))
    for p in files[::every]:
        chosen[p] = None
    return list(chosen)


def corpus_rows(paths: list[Path], max_states: int, seconds: float) -> list[str]:
    from gdl2pl.analysis.analyze import Budget
    from gdl2pl.analysis.analyze import analyze
    from gdl2pl.bridge import StateMachine

    rows = [
        "| game | reachable | terminal | time | depth | termination | playability "
        "| goals | weak | strong |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    failed: list[str] = []
    for i, path in enumerate(paths, 1):
        print(f"[{i}/{len(paths)}] {path.name}", file=sys.stderr, flush=True)
        try:
            with StateMachine.from_file(path) as sm:
                start = time.perf_counter()
                r = analyze(sm, Budget(max_states, seconds, walks=0), progress=False)
                took = time.perf_counter() - start
        except Exception as e:  # a game that does not load: listed, not fatal
            failed.append(f"{path.name} ({type(e).__name__})")
            continue
        gc.collect()
        p = r["properties"]
        if r["exhaustive"]:
            d = r["depth"]
            depth = f"{d['min']}..{d['max'] if d['max'] is not None else 'inf'}" if d else "-"
            reach, term = f"{r['reachable_states']:,}", f"{r['terminal_states']:,}"
        else:
            depth = "-"
            reach = f"> {r['explored']['discovered_states']:,}"
            term = "?"
        verdicts = [p[k]["verdict"] for k in ("termination", "playability", "goal_definition")] + [
            "/".join(v[0] for v in p[k]["roles"].values())
            for k in ("weak_winnability", "strong_winnability")
        ]
        rows.append(
            f"| {path.stem} | {reach} | {term} | {took:.2f} s | {depth} | "
            + " | ".join(verdicts)
            + " |"
        )
    if failed:
        rows.append("")
        rows.append("Did not load: " + ", ".join(failed) + ".")
    return rows


def laptop_rows(names: list[str], games_dir: Path) -> list[str]:
    """One row per game: ``gdl2pl analyze`` with its defaults, in a child process."""
    rows = [
        "| game | wall time | peak memory (RSS) | search stopped by | expanded / discovered "
        "| termination | playability | monotonicity | weak | strong |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name in names:
        path = game_path(name, games_dir)
        start = time.perf_counter()
        child = subprocess.Popen(
            [sys.executable, "-m", "gdl2pl.cli", "analyze", str(path), "--json"],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert child.stdout is not None
        out = child.stdout.read()
        _, status, usage = os.wait4(child.pid, 0)  # the child's own peak memory
        took = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        child.stdout.close()
        r = json.loads(out)
        p, ex = r["properties"], r["explored"]
        verdicts = [p[k]["verdict"] for k in ("termination", "playability", "monotonicity")]
        verdicts += [p[k]["verdict"] for k in ("weak_winnability", "strong_winnability")]
        rows.append(
            f"| {name} | {took:.1f} s | {usage.ru_maxrss / 1024:.0f} MiB "
            f"| {ex.get('stopped_by') or 'nothing (exhaustive)'} "
            f"| {ex['expanded_states']:,} / {ex['discovered_states']:,} | "
            + " | ".join(verdicts)
            + " |"
        )
    return rows


def budget_rows(
    names: list[str], games_dir: Path, seconds: float, walks: int, python: str
) -> list[str]:
    """One row per game: ``gdl2pl analyze --seconds`` in a child process, timed whole."""
    rows = [
        "| game | wall time (budget) | cut by the time | termination | playability |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name in names:
        path = game_path(name, games_dir)
        argv = [python, "-m", "gdl2pl.cli", "analyze", str(path), "--json"]
        argv += ["--seconds", f"{seconds:g}", "--walks", str(walks)]
        start = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        took = time.perf_counter() - start
        r = json.loads(done.stdout)
        p = r["properties"]
        cut = ", ".join(r["time"]["cut"]) if "time" in r else "(not reported)"
        rows.append(
            f"| {name} | {took:.1f} s ({seconds:g} s) | {cut or 'nothing'} "
            f"| {p['termination']['verdict']} | {p['playability']['verdict']} |"
        )
    return rows


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, help="write the Markdown here (default: stdout)")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--games-dir", type=Path, default=DEFAULT_GAMES_DIR)
    p.add_argument("--every", type=int, default=7, help="every n-th corpus file (0: none)")
    p.add_argument("--max-states", type=int, default=1_000_000)
    p.add_argument("--seconds", type=float, default=60.0, help="per game")
    p.add_argument("--laptop", nargs="+", metavar="GAME", help="only: analyze with defaults")
    p.add_argument("--budget", type=float, metavar="SECONDS", help="only: analyze --seconds")
    p.add_argument("games", nargs="*", metavar="GAME", help="the games of --budget")
    p.add_argument("--walks", type=int, default=10, help="random matches of --budget")
    p.add_argument("--python", default=sys.executable, help="the interpreter of --budget")
    args = p.parse_args()
    if args.budget:
        text = "\n".join(
            [
                f"Machine: {cpu_model()}; SWI-Prolog {prolog_version()}; load average "
                f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; `python "
                f"benchmarks/analysis_states.py --budget {args.budget:g} --walks {args.walks} "
                f"{' '.join(args.games)}`.",
                "",
                *budget_rows(args.games, args.games_dir, args.budget, args.walks, args.python),
            ]
        )
        print(text)
        return 0
    if args.laptop:
        text = "\n".join(
            [
                f"Machine: {cpu_model()}; SWI-Prolog {prolog_version()}; load average "
                f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
                f"`python benchmarks/analysis_states.py --laptop {' '.join(args.laptop)}`.",
                "",
                *laptop_rows(args.laptop, args.games_dir),
            ]
        )
        if args.out:
            args.out.write_text(text + "\n", encoding="utf-8")
        else:
            print(text)
        return 0
    lines = [
        "# Analysis: exhaustive search of the reachable state graph",
        "",
        f"Machine: {cpu_model()}; SWI-Prolog {prolog_version()}; "
        f"`python benchmarks/analysis_states.py --every {args.every} "
        f"--max-states {args.max_states} --seconds {args.seconds:g}`.",
        "",
        "## Tic-tac-toe",
        "",
        *tictactoe_rows(args.repeats),
        "",
        "## Which search, and why",
        "",
        "The search runs in Prolog (`gdl2pl/analysis/gdl_search.pl`, on the runtime's term-level "
        "`state_install/2`, `state_legal/3`, `state_next/3`, ...): each state (a sorted "
        "fluent list) is stored once, packed, and found by its hash to get its number, and "
        "Python receives, per expanded state, only "
        "numbers: terminal flag, goal values, legal-move counts and successor numbers in "
        "joint-move order. Joint moves are turned back into KIF only for the few states on a "
        "counterexample or witness path. The verdicts (cycle search, shortest paths, the "
        "AND-OR attractor for strong winnability by a strategy, the search over sets of "
        "states for the notes' sequence of moves, longest match) are then computed in Python "
        "on that integer graph, which costs a small fraction of the search.",
        "",
        "A breadth-first search through `StateMachine.next_states` pays, for every edge, the "
        "conversion of a joint move and of a fluent difference between Prolog and Python, and "
        "the hashing of a `MachineState`; a cache of `next_state` results cannot help an "
        "exhaustive search, which computes the successors of each state exactly once anyway. "
        "In Prolog the remaining cost is the game's own rules: on tic-tac-toe, of about "
        "0.35 s of CPU for the search, roughly 0.1 s installs the 5,478 states, 0.05 s "
        "answers terminal/legal and 0.2 s computes the 16,167 successors (measured with "
        "SWI's profiler and `statistics(cputime)` outside Python).",
        "",
    ]
    paths = corpus_games(args.games_dir, args.every) if args.every else []
    if paths:
        lines += [
            "## Corpus games",
            "",
            f"The 20-game benchmark set and every {args.every}th game of the repository "
            f"(name order), {len(paths)} games, each searched up to {args.max_states:,} "
            f"states or {args.seconds:g} s. Verdicts: p proved, r refuted, u unknown "
            "(weak/strong winnability per role, in role order; strong as the notes define "
            "it, by a sequence of the role's own moves). `> N`: the search stopped "
            "at the budget after discovering N states.",
            "",
            *corpus_rows(paths, args.max_states, args.seconds),
            "",
        ]
    text = "\n".join(lines)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
