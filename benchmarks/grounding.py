"""Every game of the corpus grounded with the default budget: the grounding table.

    python benchmarks/grounding.py [--games DIR] [--workers W] [--seconds S]
                                   [--out FILE] [--results FILE] [--profile GAME]

For every game file below DIR (``../shared/games`` by default) the reasoner loads it
(a game it cannot load is listed as such and left out of the share), then the
compiled engine is built from it as ``auto`` builds it (``CompiledMachine.from_machine``:
grounded in a worker process within the default ``GroundingBudget``, ``--seconds`` to
change its time; then the C evaluator takes the network and is tuned): ground rules,
atoms, fluents, moves, grounding seconds and the whole build's seconds, or the reason
it was not compiled, with the figure that stopped it. Every game is reached: a game's build
cannot take more than its budget. W games run at a time (each its own worker).

Results go to FILE (JSON lines; games already there are skipped, so a run cut short
continues); the Markdown report (printed, and put in place of its section of
``--results``) has the share of the games the reasoner plays that compile, the table,
and every game that did not.

``--profile GAME`` instead prints where one game's grounding goes: the seconds of its
phases (the relaxed model, the counts that choose chains, the network's rules, their
assembly), and per relation its ground rules (the profile of chess in RESULTS.md).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from report import markdown_table
from report import replace_section
from sysinfo import header_markdown
from sysinfo import machine_header

from gdl2pl.bridge import StateMachine
from gdl2pl.bridge.swipl import attach_thread
from gdl2pl.compiled import CompiledMachine
from gdl2pl.compiled import CompileRefusedError
from gdl2pl.compiled import GroundingBudget
from gdl2pl.compiled import GroundingBudgetError
from gdl2pl.flatten import flatten_rules
from gdl2pl.load import read_game
from gdl2pl.pipeline import normalized

REPO = Path(__file__).resolve().parent.parent
DEFAULT_GAMES = REPO.parent / "shared" / "games"
DEFAULT_OUT = REPO / "benchmarks" / "out" / "grounding.jsonl"
SUFFIXES = (".kif", ".gdl", ".hrf")
SECTION = "## The grounding table (`benchmarks/grounding.py`)"


def corpus(games: Path) -> list[Path]:
    """Every game file below ``games``, smallest first."""
    files = [f for f in games.rglob("*") if f.suffix.lower() in SUFFIXES and f.is_file()]
    return sorted(files, key=lambda f: (f.stat().st_size, str(f)))


def ground_one(path: Path, games: Path, budget: GroundingBudget) -> dict[str, Any]:
    """One game's row: loaded by the reasoner, then grounded (or why not)."""
    attach_thread()
    row: dict[str, Any] = {"game": str(path.relative_to(games))}
    try:
        d = read_game(path)
        sm = StateMachine(d, name=path.name)
    except Exception as e:  # the reasoner cannot play it: not counted
        row.update(outcome="reasoner cannot load", reason=f"{type(e).__name__}: {e}"[:300])
        return row
    start = time.monotonic()
    try:
        # the whole compiled engine (the network, its evaluator, tuning), as `auto` builds
        # it: a network the evaluator refuses is not compiled
        with CompiledMachine.from_machine(sm, d, budget=budget) as compiled:
            net = compiled.network
        row.update(
            outcome="compiled",
            rules=net.n_rules,
            atoms=net.n_atoms,
            fluents=net.n_fluents,
            moves=net.n_moves,
            grounding=round(net.stats.seconds, 3),
        )
    except CompileRefusedError as e:
        row.update(outcome="not compiled", reason=str(e)[:300])
    except Exception as e:  # a defect of the build: listed as such
        row.update(outcome="build error", reason=f"{type(e).__name__}: {e}"[:300])
    finally:
        row["seconds"] = round(time.monotonic() - start, 3)
        sm.close()
    return row


def read_results(path: Path) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                r = json.loads(line)
                out[r["game"]] = r
    return out


def run(args: argparse.Namespace) -> None:
    games = Path(args.games)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = read_results(out)
    todo = [p for p in corpus(games) if str(p.relative_to(games)) not in done]
    budget = GroundingBudget(seconds=args.seconds)
    lock = threading.Lock()

    def work(p: Path) -> None:
        row = ground_one(p, games, budget)
        with lock, out.open("a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")
        print(f"{row['game']}: {row['outcome']} {row.get('rules', row.get('reason', ''))}",
              file=sys.stderr, flush=True)

    with ThreadPoolExecutor(max_workers=args.workers) as pool:
        list(pool.map(work, todo))


def figure(r: dict[str, Any]) -> str:
    """The budget figure or reason that stopped a game, short."""
    reason = str(r.get("reason", ""))
    return reason.split(": ", 1)[1] if ": " in reason else reason


def report(args: argparse.Namespace) -> str:
    rows = read_results(Path(args.out))
    playable = [r for r in rows.values() if r["outcome"] != "reasoner cannot load"]
    compiled = [r for r in playable if r["outcome"] == "compiled"]
    lines = [
        SECTION,
        "",
        header_markdown(machine_header()),
        f"- budget: the default GroundingBudget ({GroundingBudget().seconds:g} s unless "
        f"--seconds), {args.workers} game(s) at a time",
        "",
        f"Of {len(rows)} game files, the reasoner loads {len(playable)}; of those, "
        f"**{len(compiled)} compile ({100 * len(compiled) / max(1, len(playable)):.1f} %)**, "
        f"{len(playable) - len(compiled)} do not (listed below with the figure that "
        "stopped them); none was left unreached.",
        "",
    ]
    table = [
        [
            r["game"],
            f"{r['rules']:,}",
            f"{r['atoms']:,}",
            f"{r['fluents']:,}",
            f"{r['moves']:,}",
            f"{r['grounding']:.2f}",
            f"{r['seconds']:.2f}",
        ]
        for r in sorted(compiled, key=lambda r: r["game"])
    ]
    refused = [
        [r["game"], r["outcome"], figure(r), f"{r['seconds']:.1f}"]
        for r in sorted(playable, key=lambda r: r["game"])
        if r["outcome"] != "compiled"
    ]
    unloadable = [
        [r["game"], figure(r)] for r in sorted(rows.values(), key=lambda r: r["game"])
        if r["outcome"] == "reasoner cannot load"
    ]
    lines += ["### Not compiled", ""]
    lines += [markdown_table(["game", "outcome", "why", "s"], refused) if refused else "none"]
    lines += ["", "### Compiled", ""]
    lines += [
        markdown_table(
            ["game", "ground rules", "atoms", "fluents", "moves", "grounding s", "build s"],
            table,
        )
    ]
    lines += ["", "### Not loaded by the reasoner (not counted)", ""]
    lines += [markdown_table(["game", "why"], unloadable) if unloadable else "none"]
    return "\n".join(lines) + "\n"


def profile(game: str, seconds: float) -> str:
    """Where one game's grounding goes: its phases' seconds, and per relation its ground
    rules (in-process, for the numbers); past a budget, what was ground so far."""
    from gdl2pl.compiled.ground import ground_network
    from gdl2pl.compiled.ground import grounding_input

    path = Path(game)
    d = read_game(path)
    sm = StateMachine(d, name=path.name)
    n, _ = normalized(d)
    inp = grounding_input(flatten_rules(n), path.name)
    start = time.monotonic()
    try:
        net = ground_network(inp, sm._raw_roles, path.name, GroundingBudget(seconds=seconds))
    except GroundingBudgetError as e:
        biggest = sorted(e.sizes, key=lambda s: -s[2])[:12]
        return "\n".join([
            f"{e} (after {time.monotonic() - start:.1f} s)",
            "",
            markdown_table(
                ["predicate ground so far", "atoms"],
                [[f"{n}/{a}", f"{c:,}"] for n, a, c in biggest],
            ),
        ]) + "\n"
    finally:
        sm.close()
    s = net.stats
    phases = ", ".join(f"{name} {t:.2f} s" for name, t in s.phases)
    return "\n".join([
        f"{path.name}: {s.rules:,} ground rules, {net.n_atoms:,} atoms, relaxed model of "
        f"{s.facts:,} facts, {s.seconds:.2f} s ({phases})",
        "",
        markdown_table(
            ["relation", "ground rules"], [[name, f"{c:,}"] for name, c in s.relations[:25]]
        ),
    ]) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", default=str(DEFAULT_GAMES))
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=GroundingBudget().seconds)
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    ap.add_argument("--results", default=None, help="replace this section of that file")
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument("--profile", default=None, metavar="GAME")
    args = ap.parse_args()
    if args.profile:
        print(profile(args.profile, args.seconds * 10))
        return 0
    if not args.report_only:
        run(args)
    text = report(args)
    print(text)
    if args.results:
        replace_section(Path(args.results), SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
