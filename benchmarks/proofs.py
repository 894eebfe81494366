"""What the rules prove about each game of a folder, and random matches against it.

    python benchmarks/proofs.py [--games-dir DIR] [--games NAME ...] [--matches 20]
        [--timeout 180] [--results FILE]

For every ``*.kif`` of ``--games-dir`` (``../shared/games/ggp-repository``, ``__v1``
variants left out), in a process of its own (killed after ``--timeout`` seconds):

1. the reachability analysis' supersets (``gdl2pl.adapters.reach``), then the proofs the
   adapters tell a library: a step counter (``rule_shapes.step_counter_bound``), a
   measure every step moves (``length_bound.prove_length_bound``), the goal sum of goal
   rules of one body (``rule_shapes.goal_sum``) or of the terminal and goal rules together
   (``sum_proof.prove_goal_sum``, a role without a goal counted as 50, the adapters'
   default); the CPU seconds each proof took;
2. ``--matches`` random matches on the reasoner, each cut one step past the proved bound
   (or at 2,000 steps): a match longer than the bound, or an end whose goals (each role
   exactly one, or 50 for none) sum otherwise than proved, is a **violation**.

The table lists the games with a proof (the others are counted under it); with
``--results`` it replaces this benchmark's section of that file. A proof is sound only
if the violations column is empty everywhere; random matches can refute a proof, never
confirm one. The folder is others' data: only names are copied into the table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from report import markdown_table
from report import replace_section
from sysinfo import header_markdown
from sysinfo import machine_header

REPO = Path(__file__).resolve().parent.parent
DEFAULT_GAMES = REPO.parent / "shared" / "games" / "ggp-repository"
SECTION = "## Proofs told to libraries, against random matches (`benchmarks/proofs.py`)"
#: The goal a role without one gets at an end (the adapters' default, ``missing_goal``).
MISSING = 50
#: Where a match is cut when no bound is proved.
UNBOUNDED = 2_000


def one_game(path: Path, matches: int) -> dict[str, Any]:
    """The proofs for one game and the random matches against them (run in a child)."""
    import random

    from gdl2pl.adapters.reach import reachable_domains
    from gdl2pl.bridge import StateMachine
    from gdl2pl.errors import GdlError
    from gdl2pl.length_bound import prove_length_bound
    from gdl2pl.load import read_game
    from gdl2pl.rule_shapes import goal_sum
    from gdl2pl.rule_shapes import step_counter_bound
    from gdl2pl.sum_proof import prove_goal_sum

    out: dict[str, Any] = {"game": path.stem}
    d = read_game(path)
    with StateMachine.from_file(path) as sm:
        clock = time.process_time()
        counter = step_counter_bound(d)
        out["counter"] = counter[0] if counter else None
        try:
            reach = reachable_domains(d, sm.roles, path.stem, 100_000)
        except GdlError as e:
            out["reach"] = str(e)[:80]
            reach = None
        out["reach_s"] = time.process_time() - clock
        clock = time.process_time()
        measure = prove_length_bound(d, reach.fluents, reach.moves) if reach else None
        out["measure"] = measure.steps if measure else None
        out["measure_how"] = (measure.reason.split(":")[0][:60] if measure else "")
        out["measure_s"] = time.process_time() - clock
        clock = time.process_time()
        simple = goal_sum(d)
        if simple is not None and simple == MISSING * len(sm.roles):
            out["sum"], out["sum_how"] = simple, "goal rules of one body"
        else:
            proof = prove_goal_sum(
                d, MISSING, reach.fluents if reach else None, reach.moves if reach else None
            )
            out["sum"] = proof.total if proof else None
            out["sum_how"] = (
                "" if proof is None
                else "terminal and goal rules, one step" if "no step reaches" in proof.reason
                else "terminal and goal rules"
            )
        out["sum_s"] = time.process_time() - clock
        bounds = [b for b in (out["counter"], out["measure"]) if b is not None]
        bound = min(bounds) if bounds else None
        out["bound"] = bound
        cut = bound + 1 if bound is not None else UNBOUNDED
        rng = random.Random(7)
        longest, sums, bad = 0, set(), []
        for _ in range(matches):
            state, steps = sm.initial_state, 0
            try:
                while steps < cut:
                    terminal, legal, goals = sm.state_info(state)
                    if terminal:
                        break
                    if not all(legal):
                        out["play"] = "a role without a legal move (a defect of the game)"
                        break
                    state = sm.next_state(state, [rng.choice(ms) for ms in legal])
                    steps += 1
                else:
                    terminal, _, goals = sm.state_info(state)
            except GdlError as e:
                out["play"] = str(e)[:80]
                break
            longest = max(longest, steps)
            if bound is not None and steps > bound:
                bad.append(f"a match of more than {bound} steps")
                break
            if terminal:
                values = [vs or [MISSING] for vs in goals]
                if all(len(vs) == 1 for vs in values):
                    total = sum(int(vs[0]) for vs in values)
                    sums.add(total)
                    if out["sum"] is not None and total != out["sum"]:
                        bad.append(f"an end summing to {total}")
        out["longest"] = longest
        out["sums"] = sorted(sums)
        out["violations"] = bad
    return out


def run_child(path: Path, matches: int, timeout: float) -> dict[str, Any]:
    """``one_game`` in a fresh process (its own Prolog), killed after ``timeout``."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent)}
    cmd = [sys.executable, "-P", __file__, "--one", str(path), "--matches", str(matches)]
    started = time.monotonic()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"game": path.stem, "error": f"more than {timeout:g} s"}
    for line in reversed(done.stdout.splitlines()):
        if line.startswith("{"):
            row = json.loads(line)
            row["wall_s"] = time.monotonic() - started
            return row
    last = (done.stderr.strip().splitlines() or ["no output"])[-1]
    return {"game": path.stem, "error": last[:100]}


def report(rows: list[dict[str, Any]], args: argparse.Namespace, header: str) -> str:
    proved = [r for r in rows if r.get("bound") is not None or r.get("sum") is not None]
    table = [
        [
            r["game"],
            "" if r.get("counter") is None else str(r["counter"]),
            "" if r.get("measure") is None else f"{r['measure']} ({r['measure_how']})",
            f"{r['measure_s']:.2f}",
            "" if r.get("sum") is None else f"{r['sum']} ({r['sum_how']})",
            f"{r['sum_s']:.2f}",
            str(r["longest"]),
            ", ".join(map(str, r["sums"])),
            "; ".join(r["violations"]) or r.get("play", ""),
        ]
        for r in sorted(proved, key=lambda r: r["game"].lower())
    ]
    failed = sorted(r["game"] for r in rows if "error" in r)
    violated = [r["game"] for r in proved if r["violations"]]
    lines = [
        SECTION,
        "",
        header,
        "",
        f"`python benchmarks/proofs.py --matches {args.matches}` over {len(rows)} games of "
        f"`{Path(args.games_dir).name}`: {len(proved)} with a proof, "
        f"{sum(r.get('bound') is not None for r in proved)} with a proved length bound and "
        f"{sum(r.get('sum') is not None for r in proved)} with a proved goal sum; "
        f"**{len(violated)} violated** by a random match"
        + (f" ({', '.join(violated)})" if violated else "")
        + f". {len(failed)} not analysed (time limit or error"
        + (f": {', '.join(failed)}" if failed else "") + "). Seconds are CPU seconds of "
        "the proof in the child process; a goal sum counts 50 for a role without a goal.",
        "",
        markdown_table(
            ["game", "step counter", "measure", "measure s", "goal sum", "sum s",
             "longest match", "end sums seen", "violations"],
            table,
        ),
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games-dir", default=str(DEFAULT_GAMES))
    ap.add_argument("--games", nargs="*", default=None, help="game names (default: all)")
    ap.add_argument("--matches", type=int, default=20)
    ap.add_argument("--timeout", type=float, default=180.0)
    ap.add_argument("--results", default=None, help="replace this section of that file")
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one_game(Path(args.one), args.matches)))
        return 0
    folder = Path(args.games_dir)
    paths = sorted(
        p for p in folder.glob("*.kif")
        if "__v" not in p.stem and (not args.games or p.stem in args.games)
    )
    header = header_markdown(machine_header())
    rows = []
    for i, path in enumerate(paths, 1):
        row = run_child(path, args.matches, args.timeout)
        rows.append(row)
        note = row.get("error") or "; ".join(row.get("violations", [])) or ""
        print(f"[{i}/{len(paths)}] {path.stem}: bound {row.get('bound')} sum {row.get('sum')} "
              f"{note}", file=sys.stderr, flush=True)
    text = report(rows, args, header)
    print(text)
    if args.results:
        replace_section(Path(args.results), SECTION, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
