"""Grounding before and after, game by game, in one run: this checkout's grounder beside
another checkout's (e.g. main's), each game grounded by both one right after the other.

    python benchmarks/grounding_ab.py --before PYTHON [--games DIR] [--seconds S]
                                      [--out FILE] [--results FILE]

``PYTHON`` is the interpreter of the other checkout (its own installation of gdl2pl,
e.g. a venv made from ``git archive main``). For every game file below DIR that this
checkout's reasoner loads, a child process of each interpreter grounds it in-process
(``ground_network`` on the flat rules, within ``GroundingBudget(seconds=S)``, its
address space capped at 4 GiB) and reports the CPU seconds and wall seconds of the
grounding alone, the ground rules and atoms, or why it did not compile. The two run
alternately, so that they share the machine's load; CPU seconds are the measure that
load disturbs least.

The report (put in place of its section of ``--results``) has the sums over the games
both compile, the ratio, the games only one compiles, and the table.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from grounding import DEFAULT_GAMES
from grounding import corpus
from report import markdown_table
from report import replace_section
from sysinfo import header_markdown
from sysinfo import machine_header

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "benchmarks" / "out" / "grounding_ab.jsonl"
SECTION = "## Grounding before and after (`benchmarks/grounding_ab.py`)"

#: What a child runs: one game grounded in-process, the figures as one line of JSON.
CHILD = textwrap.dedent(
    """
    import json, resource, sys, time
    resource.setrlimit(resource.RLIMIT_AS, (4 * 2**30, 4 * 2**30))
    from pathlib import Path
    from gdl2pl.bridge import StateMachine
    from gdl2pl.compiled import GroundingBudget
    from gdl2pl.compiled.ground import ground_network, grounding_input
    from gdl2pl.flatten import flatten_rules
    from gdl2pl.load import read_game
    from gdl2pl.pipeline import normalized

    def cpu():
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime

    path, seconds = Path(sys.argv[1]), float(sys.argv[2])
    d = read_game(path)
    sm = StateMachine(d, name=path.name)
    row = {}
    try:
        n, _ = normalized(d)
        flat = flatten_rules(n)
        c0, t0 = cpu(), time.perf_counter()
        try:
            inp = grounding_input(flat, path.name)
            net = ground_network(inp, sm._raw_roles, path.name, GroundingBudget(seconds=seconds))
            row = {"outcome": "compiled", "rules": net.n_rules, "atoms": net.n_atoms}
        except Exception as e:
            row = {"outcome": "not compiled", "reason": f"{type(e).__name__}: {e}"[:300]}
        row["cpu"] = round(cpu() - c0, 3)
        row["wall"] = round(time.perf_counter() - t0, 3)
    finally:
        sm.close()
    print(json.dumps(row), flush=True)
    """
)


def measure(python: str, game: Path, seconds: float) -> dict[str, Any]:
    """One game grounded by ``python``'s gdl2pl in a child process."""
    try:
        done = subprocess.run(
            [python, "-P", "-c", CHILD, str(game), str(seconds)],
            capture_output=True, text=True, timeout=seconds * 4 + 120,
        )
    except subprocess.TimeoutExpired:
        return {"outcome": "not compiled", "reason": "the child ran past its time"}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        tail = " ".join(done.stderr.strip().splitlines()[-2:])[:300]
        return {"outcome": "error", "reason": f"exit {done.returncode}: {tail}"}
    row: dict[str, Any] = json.loads(lines[-1])
    return row


def run(args: argparse.Namespace) -> None:
    games = Path(args.games)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = {json.loads(x)["game"] for x in out.read_text().splitlines()} if out.is_file() else set()
    for path in corpus(games):
        name = str(path.relative_to(games))
        if name in done:
            continue
        row = {
            "game": name,
            "before": measure(args.before, path, args.seconds),
            "after": measure(sys.executable, path, args.seconds),
        }
        with out.open("a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")
        print(name, row["before"].get("cpu"), row["after"].get("cpu"), file=sys.stderr, flush=True)


def report(args: argparse.Namespace) -> str:
    rows = [json.loads(x) for x in Path(args.out).read_text().splitlines() if x.strip()]
    rows = [r for r in rows if "error" not in (r["before"]["outcome"], r["after"]["outcome"])]
    both = [r for r in rows if r["before"]["outcome"] == r["after"]["outcome"] == "compiled"]
    cpu_b = sum(r["before"]["cpu"] for r in both)
    cpu_a = sum(r["after"]["cpu"] for r in both)
    wall_b = sum(r["before"]["wall"] for r in both)
    wall_a = sum(r["after"]["wall"] for r in both)
    rules_b = sum(r["before"]["rules"] for r in both)
    rules_a = sum(r["after"]["rules"] for r in both)
    atoms_b = sum(r["before"]["atoms"] for r in both)
    atoms_a = sum(r["after"]["atoms"] for r in both)
    only_b = [r["game"] for r in rows
              if r["before"]["outcome"] == "compiled" != r["after"]["outcome"]]
    only_a = [r["game"] for r in rows
              if r["after"]["outcome"] == "compiled" != r["before"]["outcome"]]
    lines = [
        SECTION,
        "",
        header_markdown(machine_header()),
        f"- before: `{args.before}`; after: this checkout; in-process grounding of each game "
        f"(`ground_network`), `GroundingBudget(seconds={args.seconds:g})`, the two "
        "alternating game by game",
        "",
        f"Over the {len(both)} games both compile: grounding **{cpu_b:,.1f} s CPU before, "
        f"{cpu_a:,.1f} s after ({cpu_b / max(cpu_a, 1e-9):.1f}x)**; wall {wall_b:,.1f} s "
        f"before, {wall_a:,.1f} s after ({wall_b / max(wall_a, 1e-9):.1f}x); ground rules "
        f"{rules_b:,} before, {rules_a:,} after; atoms {atoms_b:,} before, {atoms_a:,} after.",
        "",
        f"Compiled only before: {', '.join(only_b) or 'none'}.",
        "",
        f"Compiled only after: {', '.join(only_a) or 'none'}.",
        "",
    ]

    def cell(x: dict[str, Any], key: str) -> str:
        return f"{x[key]:,}" if key in x else "-"

    table = [
        [
            r["game"],
            f"{r['before']['cpu']:.2f}" if "cpu" in r["before"] else r["before"]["outcome"],
            f"{r['after']['cpu']:.2f}" if "cpu" in r["after"] else r["after"]["outcome"],
            cell(r["before"], "rules"), cell(r["after"], "rules"),
            cell(r["before"], "atoms"), cell(r["after"], "atoms"),
            "" if r["after"]["outcome"] == "compiled" else str(r["after"].get("reason", ""))[:120],
        ]
        for r in sorted(rows, key=lambda r: r["game"])
    ]
    lines.append(markdown_table(
        ["game", "CPU s before", "CPU s after", "rules before", "rules after",
         "atoms before", "atoms after", "after: why not"],
        table,
    ))
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", required=True, help="the other checkout's python")
    ap.add_argument("--games", default=str(DEFAULT_GAMES))
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    ap.add_argument("--results", default=None, help="replace this section of that file")
    ap.add_argument("--report-only", action="store_true")
    args = ap.parse_args()
    if not args.report_only:
        run(args)
    text = report(args)
    print(text)
    if args.results:
        replace_section(Path(args.results), SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
