"""Memory and time under load that a hostile or careless user can cause.

- growth of the process over 1,000 load/close cycles of tic-tac-toe, and over 1,000
  short-lived threads that each make one query (engines must be released);
- time and peak memory of ``gdl2pl check`` on generated 5 MB and 50 MB games (each in a
  fresh process, peak RSS from ``getrusage``).

Prints a Markdown table; ``--out FILE`` also writes it there. Run from the source tree:
``python benchmarks/scale.py [--sizes 5,50] [--cycles 1000]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TTT = ROOT / "gdl2pl" / "examples" / "ticTacToe.kif"

_CHECK = """
import resource, sys, time
from gdl2pl import read_game, check_description
t = time.perf_counter()
d = read_game(sys.argv[1])
read = time.perf_counter() - t
findings = check_description(d, sys.argv[1])
total = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"{read:.2f} {total:.2f} {peak:.0f} {len(d.clauses)} {len(findings)}")
"""


def rss_kb() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def generated_game(megabytes: float) -> str:
    """A valid game of about ``megabytes`` MB: the essentials plus many rules and facts."""
    lines = [
        "(role a)",
        "(init (c 0))",
        "(<= (legal a go) (true (c ?x)))",
        "(<= (next (c 1)) (true (c 0)))",
        "(<= terminal (true (c 1)))",
        "(<= (goal a 100) (true (c 1)))",
        "(<= (goal a 0) (true (c 0)))",
    ]
    size, i = sum(map(len, lines)), 0
    while size < megabytes * 1_000_000:
        i += 1
        rule = (
            f"(<= (rel{i} ?x ?y) (true (c ?x)) (fact{i % 500} ?x ?y) "
            f"(not (rel{max(1, i - 1)} ?y ?x)) (distinct ?x ?y))"
        )
        fact = f"(fact{i % 500} {i} {i + 1})"
        lines += [rule, fact]
        size += len(rule) + len(fact) + 2
    return "\n".join(lines) + "\n"


def load_close_growth(cycles: int) -> float:
    from gdl2pl.bridge import StateMachine

    text = TTT.read_text()
    for _ in range(100):
        StateMachine.from_text(text).close()
    before = rss_kb()
    for _ in range(cycles):
        StateMachine.from_text(text).close()
    return (rss_kb() - before) / cycles


def thread_growth(threads: int) -> float:
    from gdl2pl.bridge import StateMachine

    sm = StateMachine.from_file(TTT)
    s = sm.initial_state

    def one() -> None:
        sm.legal_moves(s, "xplayer")

    for _ in range(50):
        t = threading.Thread(target=one)
        t.start()
        t.join()
    before = rss_kb()
    for _ in range(threads):
        t = threading.Thread(target=one)
        t.start()
        t.join()
    sm.close()
    return (rss_kb() - before) / threads


def check_cost(megabytes: float) -> tuple[float, float, float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"generated_{megabytes:g}mb.kif"
        path.write_text(generated_game(megabytes))
        out = subprocess.run(
            [sys.executable, "-c", _CHECK, str(path)], capture_output=True, text=True, check=True
        ).stdout.split()
    read, total, peak, clauses, _ = out
    return float(read), float(total), float(peak), int(clauses)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="5,50", help="game sizes in MB (default 5,50)")
    p.add_argument("--cycles", type=int, default=1000)
    p.add_argument("--out", default=None)
    args = p.parse_args()
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from report import publish
    from sysinfo import header_markdown
    from sysinfo import machine_header

    rows = ["| measure | value |", "|---|---|"]
    started = time.perf_counter()
    rows.append(f"| growth per load/close cycle ({args.cycles}) | "
                f"{load_close_growth(args.cycles):.1f} KB |")
    rows.append(f"| growth per short-lived thread ({args.cycles}) | "
                f"{thread_growth(args.cycles):.2f} KB |")
    for size in (float(x) for x in args.sizes.split(",")):
        read, total, peak, clauses = check_cost(size)
        rows.append(
            f"| check of a {size:g} MB game ({clauses:,} clauses) | read {read:.1f} s, "
            f"read + check {total:.1f} s, peak {peak:,.0f} MB |"
        )
    text = header_markdown(machine_header()) + "\n\n" + "\n".join(rows) + "\n"
    text += f"\n(whole run {time.perf_counter() - started:.0f} s)\n"
    publish(text, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
