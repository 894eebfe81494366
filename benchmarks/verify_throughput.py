"""Verification throughput: game-steps compared per second by ``gdl2pl verify``.

    python benchmarks/verify_throughput.py [--every K] [--configs w1,w2,ray]
                                           [--mode against|self] [--repeats R] [--out FILE]

Runs ``gdl2pl verify`` as a subprocess on a deterministic sample of the shared corpus
(every K-th game of ../shared/games that has a reference trace, in sorted order), once per
configuration: ``w1`` one worker (in the driver process), ``w1k`` the same with
``--keep-going`` (every step of every match compared, past divergences), ``w2`` two
worker processes, ``ray`` a local Ray instance started by the command itself (2 CPUs
here). ``--mode
against`` compares with ../shared/reference (no second engine); ``self`` runs
``gdl2pl replay`` as the engine (two reasoners per game). Wall time includes each
configuration's start-up (spawning workers, starting Ray), which is the honest cost of a
run; Ray's start-up alone is measured too. The verdicts of all configurations must be
identical (with ``--keep-going`` the verdicts; it compares more steps where a game
diverges); the script says so (or fails). Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"

#: The self-check's engine: gdl2pl replay, taking games as verify does (see README).
SELF_FLAGS = "--accept-errors {game}"

CONFIGS = {
    "w1": ["--workers", "1"],
    "w1k": ["--workers", "1", "--keep-going"],
    "w2": ["--workers", "2"],
    "ray": ["--ray"],
}
LABELS = {
    "w1": "1 worker",
    "w1k": "1 worker, --keep-going",
    "w2": "2 workers",
    "ray": "local Ray (2 CPUs)",
}


def sample(every: int) -> list[str]:
    """Every ``every``-th game (sorted) that the reference played."""
    games = sorted((SHARED / "games").rglob("*.kif"))
    played = [
        g
        for g in games
        if (SHARED / "reference" / g.relative_to(SHARED / "games")).with_suffix(".jsonl").is_file()
    ]
    return [str(g) for g in played[::every]]


def run(config: str, games: list[str], mode: str, tmp: Path) -> tuple[float, list[dict]]:
    source = (
        ["--against", str(SHARED / "reference")]
        if mode == "against"
        else ["--engine", f"{shlex.quote(sys.executable)} -m gdl2pl.cli replay {SELF_FLAGS}"]
    )
    argv = [sys.executable, "-m", "gdl2pl.cli", "verify", *games, *source, "--json"]
    argv += ["--repro-dir", str(tmp / config), *CONFIGS[config]]
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        sys.exit(f"{config}: verify failed ({proc.returncode}): {proc.stderr[-2000:]}")
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    return wall, results


def ray_startup() -> float:
    code = (
        "import time, ray; t = time.perf_counter(); "
        "ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False); "
        "print(time.perf_counter() - t); ray.shutdown()"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def verdicts(results: list[dict], config: str) -> list[tuple]:
    if config == "w1k":  # goes on past divergences: more steps, the same verdicts
        return [(r["game"], r["verdict"]) for r in results]
    return [
        (r["game"], r["verdict"], r["steps_compared"], json.dumps(r["first_divergence"]))
        for r in results
    ]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--every", type=int, default=10, help="take every K-th game")
    p.add_argument("--configs", default="w1,w2,ray")
    p.add_argument("--mode", choices=["against", "self"], default="against")
    p.add_argument("--repeats", type=int, default=1, help="rounds (configurations interleaved)")
    p.add_argument("--out", help="also write the table here")
    args = p.parse_args()
    games = sample(args.every)
    tmp = Path("/tmp") / "gdl2pl-verify-bench"
    configs = args.configs.split(",")
    walls: dict[str, list[float]] = {c: [] for c in configs}
    loads: list[float] = []
    first: dict[str, list[tuple]] = {}
    steps: dict[str, int] = {}
    tally = ""
    for _ in range(args.repeats):
        for config in configs:
            wall, results = run(config, games, args.mode, tmp)
            loads.append(os.getloadavg()[0])
            walls[config].append(wall)
            seen = verdicts(results, config)
            plain = [v[:2] for v in seen]
            if not first:
                counts: dict[str, int] = {}
                for r in results:
                    counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
                tally = ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
            if any([v[:2] for v in f] != plain for f in first.values()):
                sys.exit(f"{config}: verdicts differ from the first run's")
            if first.setdefault(config, seen) != seen:
                sys.exit(f"{config}: results differ from its first run's")
            steps[config] = sum(r["steps_compared"] for r in results)
    base = statistics.median(walls[configs[0]]) / steps[configs[0]]
    rows = []
    for config in configs:
        med = statistics.median(walls[config])
        spread = f"{min(walls[config]):.1f} to {max(walls[config]):.1f}"
        rows.append(
            f"| {LABELS[config]} | {len(games)} | {steps[config]} | {med:.1f} | {spread} "
            f"| {steps[config] / med:,.0f} | {base / (med / steps[config]):.2f} | {tally} |"
        )
    lines = [
        f"Sample: every {args.every}th reference-played game of ../shared/games "
        f"({len(games)} games), mode `{args.mode}`, {args.repeats} round(s), configurations "
        f"interleaved, median wall time; {platform.node()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}; 1-minute load average after each run: "
        f"{', '.join(f'{x:.1f}' for x in loads)}.",
        "",
        "| configuration | games | steps compared | wall s (median) | range | steps/s "
        "| speed-up per step | verdicts |",
        "|---|---:|---:|---:|---|---:|---:|---|",
        *rows,
    ]
    if "ray" in configs:
        lines += ["", f"Ray start-up alone (ray.init, 2 CPUs): {ray_startup():.1f} s."]
    lines.append("Verdicts identical in every run: yes.")
    text = "\n".join(lines) + "\n"
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from report import publish

    publish(text, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
