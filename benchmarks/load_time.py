"""How long each game of the set takes to become playable: parse, case normalization,
translation (no checking), Prolog load, and ``StateMachine.from_file`` end to end.

    python benchmarks/load_time.py [--games G ...] [--repeat 3] [--quick]

The pieces are timed separately (the Prolog load by handing the translated text to the
runtime's ``gdl_load`` under a fresh module name, then unloading it); "from_file" is
the whole of ``StateMachine.from_file`` and "first step" the first
``all_legal_moves`` + ``next_state`` from the initial state, where lazily computed
tables are filled. Each figure is the median of ``--repeat`` runs. The target is
``from_file`` of chess_200, the largest game of the set, under 1 s.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from reference import add_set_options
from reference import chosen
from reference import game_path
from report import markdown_table
from sysinfo import header_markdown
from sysinfo import machine_header

from gdl2pl.bridge import StateMachine
from gdl2pl.bridge import runtime
from gdl2pl.bridge.swipl import RUNTIME_MODULE
from gdl2pl.load import read_game
from gdl2pl.normalize import normalize_case
from gdl2pl.translate import translate

T = TypeVar("T")
TARGET_GAME = "chess_200"
TARGET_SECONDS = 1.0
COLUMNS = ["parse", "normalize", "translate", "Prolog load", "from_file", "first step"]
_modules = itertools.count(1)
_unload_errors: list[str] = []


def _timed(f: Callable[[], T]) -> tuple[T, float]:
    t0 = time.perf_counter()
    value = f()
    return value, time.perf_counter() - t0


def _prolog_load(text_of: Callable[[str], str]) -> float:
    """Seconds to load a translation into a fresh module (unloaded afterwards)."""
    janus = runtime()
    module = f"gdl_bench_load_{next(_modules)}_{os.getpid()}"
    text = text_of(module)
    t0 = time.perf_counter()
    janus.apply_once(RUNTIME_MODULE, "gdl_load", module, text)
    elapsed = time.perf_counter() - t0
    try:
        janus.apply_once(RUNTIME_MODULE, "gdl_unload", module)
    except janus.PrologError as e:  # not the measured part; reported once at the end
        _unload_errors.append(" ".join(str(e).split()))
    return elapsed


def measure_once(path: Path) -> list[float]:
    """One run of every column, in seconds."""
    d, t_parse = _timed(lambda: read_game(path))
    n, t_norm = _timed(lambda: normalize_case(d))
    _, t_translate = _timed(lambda: translate(n, "gdl_bench_probe", path.name))
    t_load = _prolog_load(lambda module: translate(n, module, path.name).text)
    sm, t_file = _timed(lambda: StateMachine.from_file(path))
    try:

        def first_step() -> None:
            s = sm.initial_state
            sm.next_state(s, [ms[0] for ms in sm.all_legal_moves(s)])

        _, t_first = _timed(first_step)
    finally:
        sm.close()
    return [t_parse, t_norm, t_translate, t_load, t_file, t_first]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=3, help="runs per game (median reported)")
    p.add_argument("--quick", action="store_true", help="one run per game")
    add_set_options(p)
    args = p.parse_args(argv)
    args.refs = chosen(p, args)
    if args.quick:
        args.repeat = 1
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    refs = args.refs
    header = machine_header()
    rows: list[list[str]] = []
    totals = [0.0] * len(COLUMNS)
    target: float | None = None
    for ref in refs:
        path = game_path(ref.game, args.games_dir)
        try:
            runs = [measure_once(path) for _ in range(max(1, args.repeat))]
        except Exception as e:  # a game that fails to load is a row, not a crash
            rows.append(
                [ref.game, f"error: {type(e).__name__}: {' '.join(str(e).split())[:120]}"]
                + [""] * (len(COLUMNS) - 1)
                + [""]
            )
            continue
        medians = [statistics.median(col) for col in zip(*runs, strict=True)]
        totals = [a + b for a, b in zip(totals, medians, strict=True)]
        if ref.game == TARGET_GAME:
            target = medians[COLUMNS.index("from_file")]
        size = f"{path.stat().st_size / 1024:.0f}"
        rows.append([ref.game, *(f"{x * 1000:.0f}" for x in medians), size])
        print(" | ".join(rows[-1]), file=sys.stderr, flush=True)
    rows.append(["**total**", *(f"**{x * 1000:.0f}**" for x in totals), ""])
    print(header_markdown(header) + f"\n- runs per game: {args.repeat} (median)\n")
    print(markdown_table(["game", *(f"{c} ms" for c in COLUMNS), "KIF KiB"], rows))
    if _unload_errors:
        print(
            f"\nnote: gdl_unload failed {len(_unload_errors)} time(s), the modules stay "
            f"loaded; first: {_unload_errors[0]}"
        )
    if target is not None:
        verdict = "PASS" if target < TARGET_SECONDS else "FAIL"
        print(
            f"\n{TARGET_GAME} from_file: {target:.3f} s (target < {TARGET_SECONDS:g} s): {verdict}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
