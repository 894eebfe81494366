"""Whether memory stays flat over many state-machine calls on one game, or over many
loads of it.

    python benchmarks/memory.py [--game ticTacToe] [--calls 1000000] [--threshold-mb 5]
    python benchmarks/memory.py --game gt_two_thirds_4p --loads 20

Random playouts from Python count every ``is_terminal``, ``legal_moves`` (one per
role), ``next_state`` and ``goals`` call. The resident set size (VmRSS of
/proc/self/status, which includes Prolog's stacks and tables) is sampled every
``--calls``/10 calls; the growth from the 2nd sample (after warm-up) to the last must
stay under the threshold. With ``--loads N`` the game is instead loaded, played for a
few random steps and closed N times, as a player or the studio does match after match,
and RSS is sampled after every ``--every`` loads (default N/10).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

from reference import DEFAULT_GAMES_DIR
from reference import game_path
from report import markdown_table
from sysinfo import header_markdown
from sysinfo import machine_header

from gdl2pl.bridge import StateMachine


def rss_kib() -> int:
    """This process' resident set size in KiB (from /proc/self/status)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise OSError("no VmRSS in /proc/self/status")


def sample_rss(sm: StateMachine, calls: int, every: int, seed: int) -> list[tuple[int, int, float]]:
    """(calls so far, RSS KiB, seconds) at the start and after every ``every`` calls."""
    rng = random.Random(seed)
    roles = sm.roles
    t0 = time.perf_counter()
    samples = [(0, rss_kib(), 0.0)]
    n = 0
    next_sample = every

    def tick(k: int) -> None:
        nonlocal n, next_sample
        n += k
        while n >= next_sample:
            samples.append((next_sample, rss_kib(), time.perf_counter() - t0))
            next_sample += every

    while n < calls:
        s = sm.initial_state
        while True:
            terminal = sm.is_terminal(s)
            tick(1)
            if terminal or n >= calls:
                break
            joint = [rng.choice(sm.legal_moves(s, r)) for r in roles]
            tick(len(roles))
            s = sm.next_state(s, joint)
            tick(1)
        if terminal:
            sm.goals(s)
            tick(1)
    return samples


def sample_loads(path: Path, loads: int, every: int, seed: int) -> list[tuple[int, int, float]]:
    """(loads so far, RSS KiB, seconds) at the start and after every ``every`` loads; each
    load plays up to 20 random steps from the initial state, then closes the game."""
    rng = random.Random(seed)
    t0 = time.perf_counter()
    samples = [(0, rss_kib(), 0.0)]
    for k in range(1, loads + 1):
        with StateMachine.from_file(path) as sm:
            s = sm.initial_state
            for _ in range(20):
                if sm.is_terminal(s):
                    break
                s = sm.next_state(s, [rng.choice(m) for m in sm.all_legal_moves(s)])
        if k % every == 0:
            samples.append((k, rss_kib(), time.perf_counter() - t0))
    return samples


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--game", default="ticTacToe", help="a game name or a .kif path")
    p.add_argument("--calls", type=int, default=1_000_000, help="state-machine calls")
    p.add_argument("--loads", type=int, help="load and close the game this many times instead")
    p.add_argument("--every", type=int, help="calls (loads) between samples (default: 1/10)")
    p.add_argument("--threshold-mb", type=float, default=5.0, help="allowed growth, MB")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--quick", action="store_true", help="smoke run: 10^5 calls")
    p.add_argument("--games-dir", type=Path, default=DEFAULT_GAMES_DIR, help="KIF files")
    args = p.parse_args(argv)
    if args.quick:
        args.calls = 100_000
    args.every = args.every or max(1, (args.loads or args.calls) // 10)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    path = Path(args.game) if args.game.endswith(".kif") else game_path(args.game, args.games_dir)
    header = machine_header()
    unit = "loads" if args.loads else "calls"
    if args.loads:
        samples = sample_loads(path, args.loads, args.every, args.seed)
    else:
        with StateMachine.from_file(path) as sm:
            sm.seed(args.seed)
            samples = sample_rss(sm, args.calls, args.every, args.seed)
    rows = [
        [f"{n:,}", f"{kib / 1024:.1f}", f"{(kib - samples[0][1]) / 1024:+.1f}", f"{t:.1f}"]
        for n, kib, t in samples
    ]
    print(header_markdown(header) + f"\n- game: {path.name}, {samples[-1][0]:,} {unit}\n")
    print(markdown_table([unit, "RSS MB", "since start MB", "seconds"], rows))
    if len(samples) < 3:
        print("\ntoo few samples to judge growth (raise --calls or lower --every)")
        return 1
    growth = (samples[-1][1] - samples[1][1]) / 1024
    verdict = "PASS" if growth < args.threshold_mb else "FAIL"
    calls_per_s = samples[-1][0] / samples[-1][2] if samples[-1][2] else 0.0
    print(
        f"\ngrowth from sample 2 ({samples[1][0]:,} {unit}) to the last "
        f"({samples[-1][0]:,}): {growth:+.2f} MB (threshold < {args.threshold_mb:g} MB): "
        f"{verdict}; {calls_per_s:,.{2 if args.loads else 0}f} {unit}/s"
    )
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
