"""Throughput on the 20-game set: states/s and playouts/s per game and mode, as ratios
to the reference prover on this machine type.

    python benchmarks/run.py [--games G ...] [--seconds 10] [--warmup 2] [--repeats 1]
                             [--modes a,b,c] [--out benchmarks/out] [--quick]
                             [--results benchmarks/RESULTS.md]
                             [--engine prolog|compiled|auto|both]
                             [--baseline-cmd "CMD {game} {warmup} {seconds}"]

Modes are described in ``loops.py``. Each game is loaded once per round, run in every
mode, and closed; an exception in a game (or a mode) becomes an "error" row, not a crash.
``--engine`` picks the engine (``gdl2pl.compiled.load_machine``): the Prolog reasoner
(default), the compiled network, ``auto``, or ``both`` (each game on the Prolog engine,
then right after on the compiled one, so that their ratios share the machine's minute);
with the compiled engine each game's note says how long grounding took and how big the
network is.
With ``--repeats R`` the whole set is run R times, round after round (so that a noisy
minute does not hit every run of one game), and each game and mode reports its median run.
With ``--process-per-game`` each game of each round runs in a fresh Python process, as a
player loads one game per process (nothing of the games before it in the process).
With ``--baseline-cmd`` a reference engine is measured by that command (``baseline.py``)
on each game right before the game's own runs, round after round, and its states/s is
what the ratios divide by, instead of the anchors table's.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import random
import shlex
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from baseline import BaselineError
from baseline import Measured
from baseline import check_template
from baseline import measure
from loops import MODES
from loops import Count
from loops import cached_steps
from loops import in_prolog
from loops import python_questions
from loops import python_steps
from reference import DEFAULT_ANCHORS
from reference import Reference
from reference import add_set_options
from reference import chosen
from reference import game_path
from report import csv_text
from report import markdown_table
from report import rate
from report import ratio
from sysinfo import header_markdown
from sysinfo import machine_header

from gdl2pl.compiled import AutoMachine
from gdl2pl.compiled import CompiledMachine
from gdl2pl.compiled import load_machine

HERE = Path(__file__).resolve().parent

#: (mode, median ratio at least, lowest ratio at least) from the issue; None: no bound.
TARGETS: list[tuple[str, float, float | None]] = [("a", 25.0, 5.0), ("b", 10.0, 3.0)]
#: The same for the compiled engine (issue 34): in-engine playouts, the Python step API.
COMPILED_TARGETS: list[tuple[str, float, float | None]] = [("a", 100.0, None), ("b", 30.0, 5.0)]

MD_HEADER = ["game", "mode", "states/s", "playouts/s", "avg depth", "ref states/s", "ratio", "note"]
#: The table's header when the reference is measured in the run (``--baseline-cmd``).
MD_HEADER_BASELINE = [*MD_HEADER[:5], "baseline states/s", *MD_HEADER[6:]]
CSV_HEADER = [
    "game",
    "mode",
    "states_per_s",
    "playouts_per_s",
    "ratio",
    "ref_states_per_s",
    "ref_playouts_per_s",
    "states",
    "playouts",
    "seconds",
    "avg_depth",
    "note",
    "error",
]


@dataclass
class Row:
    """One game in one mode: a count, or the error that stopped it."""

    ref: Reference
    mode: str
    count: Count | None = None
    error: str = ""
    engine: str = "prolog"
    baseline_error: str = ""  # why the baseline measured for this row's round failed

    def note(self) -> str:
        """The note column: the count's note or the error, and a baseline failure."""
        text = self.error if self.count is None else self.count.note
        if self.baseline_error:
            failed = f"baseline: {self.baseline_error}"
            text = f"{text}; {failed}" if text else failed
        return text

    @property
    def ratio(self) -> float | None:
        if self.count is None or not self.ref.states_per_s:
            return None
        return self.count.states_per_s / self.ref.states_per_s

    def markdown(self) -> list[str]:
        label = f"{self.mode} ({MODES[self.mode]})"
        if self.engine != "prolog":
            label += f", {self.engine}"
        ref = "error" if self.baseline_error else rate(self.ref.states_per_s)
        c = self.count
        if c is None:
            return [self.ref.game, label, "error", "", "", ref, "", self.note()]
        depth = f"{c.states / c.playouts:.1f}" if c.playouts else ""
        r = self.ratio
        return [
            self.ref.game,
            label,
            rate(c.states_per_s),
            rate(c.playouts_per_s),
            depth,
            ref,
            ratio(r) if r is not None else "",
            self.note(),
        ]

    def csv(self) -> list[object]:
        c, ref = self.count, self.ref
        head: list[object] = [
            ref.game,
            self.mode if self.engine == "prolog" else f"{self.mode}-{self.engine}",
        ]
        tail: list[object] = [ref.states_per_s, ref.playouts_per_s]
        if c is None:
            failed = f"baseline: {self.baseline_error}" if self.baseline_error else ""
            return [*head, "", "", "", *tail, "", "", "", "", failed, self.error]
        depth = round(c.states / c.playouts, 2) if c.playouts else ""
        return [
            *head,
            round(c.states_per_s, 2),
            round(c.playouts_per_s, 3),
            round(self.ratio or 0.0, 3),
            *tail,
            c.states,
            c.playouts,
            round(c.seconds, 3),
            depth,
            self.note(),
            "",
        ]


def _error_text(e: BaseException, width: int = 160) -> str:
    text = " ".join(f"{type(e).__name__}: {e}".split())
    return text if len(text) <= width else text[: width - 3] + "..."


def run_game(ref: Reference, args: argparse.Namespace) -> list[Row]:
    """Every requested mode on one game, on each engine asked for (one after the other,
    so that both see the same minute of the machine); each machine is closed after."""
    rows: list[Row] = []
    for engine in args.engines:
        rows += run_engine(ref, args, engine)
    return rows


def run_game_in_process(ref: Reference, args: argparse.Namespace, argv: list[str]) -> list[Row]:
    """``run_game`` in a fresh Python process (this script with ``--worker``), its rows
    read back from the JSON it prints; a process that fails gives error rows."""
    command = [sys.executable, str(Path(__file__).resolve()), *argv, "--worker", ref.game]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    sys.stderr.write(done.stderr)
    try:
        data = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        why = f"worker process failed (exit {done.returncode})"
        return [Row(ref, m, error=why, engine=e) for e in args.engines for m in args.modes]
    rows = []
    for d in data:
        count = Count(**d["count"]) if d["count"] is not None else None
        rows.append(Row(ref, d["mode"], count, d["error"], d["engine"]))
    return rows


def worker_json(rows: list[Row]) -> str:
    """The rows of one game as one line of JSON (``--worker``'s answer)."""
    return json.dumps(
        [
            {
                "mode": r.mode,
                "engine": r.engine,
                "error": r.error,
                "count": None if r.count is None else dataclasses.asdict(r.count),
            }
            for r in rows
        ]
    )


def run_engine(ref: Reference, args: argparse.Namespace, engine: str) -> list[Row]:
    """Every requested mode on one game and engine; the machine is closed afterwards."""
    rows = [Row(ref, m, engine=engine) for m in args.modes]
    try:
        t0 = time.perf_counter()
        sm = load_machine(game_path(ref.game, args.games_dir), engine)  # type: ignore[arg-type]
        if isinstance(sm, AutoMachine):
            sm.wait_for_engine()  # measured as users get it: the network once it is in
        loaded = time.perf_counter() - t0
    except Exception as e:  # any failure becomes a row of the table
        for row in rows:
            row.error = "load: " + _error_text(e)
        return rows
    try:
        for row in rows:
            rng = random.Random(args.seed)
            sm.seed(args.seed)
            try:
                if row.mode == "a":
                    row.count = in_prolog(sm, args.warmup, args.seconds)  # type: ignore[arg-type]
                elif row.mode == "b":
                    row.count = python_steps(sm, args.warmup, args.seconds, rng)  # type: ignore[arg-type]
                elif row.mode == "q":
                    row.count = python_questions(sm, args.warmup, args.seconds, rng)  # type: ignore[arg-type]
                else:
                    row.count = cached_steps(sm, args.warmup, args.seconds, rng, args.max_nodes)  # type: ignore[arg-type]
            except Exception as e:
                row.error = _error_text(e)
            if row.count is not None and engine != "prolog":
                row.count.add_note(engine_note(sm, loaded))
            print(" | ".join(row.markdown()), file=sys.stderr, flush=True)
    finally:
        sm.close()
    return rows


def engine_note(sm: object, loaded: float) -> str:
    """Which engine ran, and for the compiled one: grounding time, network size and
    memory (the network's arrays)."""
    compiled = sm.engine_now if isinstance(sm, AutoMachine) else sm
    if not isinstance(compiled, CompiledMachine):
        return f"prolog engine ({getattr(sm, 'engine_choice', '')})"
    net = compiled.network
    kib = (4 * (len(net.rule_start) + len(net.lit_start) + len(net.lits)) + net.n_atoms) / 1024
    return (
        f"compiled: loaded in {loaded:.1f} s (grounding {net.stats.seconds:.1f} s), "
        f"{net.n_rules:,} rules, {net.n_atoms:,} atoms, {kib:,.0f} KiB"
    )


def median_rows(rounds: list[list[Row]]) -> list[Row]:
    """Per game and mode, the run with the median ratio over the rounds (the median
    states/s when a round has no ratio; an error in any round is reported instead); the
    note gives the spread, and that of the reference when it was measured round by
    round (``--baseline-cmd``)."""
    if len(rounds) == 1:
        return rounds[0]
    out: list[Row] = []
    for runs in zip(*rounds, strict=True):
        failed = [r for r in runs if r.count is None]
        if failed:
            out.append(failed[0])
            continue
        by_ratio = all(r.ratio is not None for r in runs)
        ranked = sorted(runs, key=lambda r: r.ratio if by_ratio else r.count.states_per_s)  # type: ignore[union-attr]
        mid = ranked[(len(ranked) - 1) // 2]
        assert mid.count is not None
        speeds = sorted(r.count.states_per_s for r in runs)  # type: ignore[union-attr]
        count = dataclasses.replace(mid.count)
        count.add_note(
            f"median of {len(runs)} runs, {rate(speeds[0])} to {rate(speeds[-1])} states/s"
        )
        refs = sorted(r.ref.states_per_s for r in runs if not r.baseline_error)
        if refs and refs[0] != refs[-1]:
            count.add_note(f"baseline {rate(refs[0])} to {rate(refs[-1])} states/s")
        out.append(dataclasses.replace(mid, count=count))
    return out


def summary(rows: list[Row], modes: list[str]) -> list[str]:
    """Per engine and mode: the median and the lowest ratio over the games, and the
    targets."""
    lines: list[str] = []
    engines = list(dict.fromkeys(r.engine for r in rows))
    for engine in engines:
        targets = TARGETS if engine == "prolog" else COMPILED_TARGETS
        for mode in modes:
            of_mode = [r for r in rows if r.mode == mode and r.engine == engine]
            ok = [(r.ratio, r.ref.game) for r in of_mode if r.ratio is not None]
            errors = [r.ref.game for r in of_mode if r.count is None]
            no_ref = [r.ref.game for r in of_mode if r.count is not None and r.ratio is None]
            name = f"{mode} ({MODES[mode]}, {engine} engine)"
            if not ok:
                lines.append(f"- {name}: " + ("no baseline" if no_ref else "no game ran"))
                continue
            median = statistics.median(x for x, _ in ok)
            low, low_game = min(ok)
            text = (
                f"- {name}: median ratio {ratio(median)}, "
                f"lowest {ratio(low)} ({low_game}), {len(ok)}/{len(of_mode)} games ran"
            )
            if errors:
                text += f"; errors: {', '.join(errors)}"
            if no_ref:
                text += f"; no baseline: {', '.join(no_ref)}"
            for t_mode, t_median, t_low in targets:
                if t_mode != mode:
                    continue
                met = median >= t_median and (t_low is None or low >= t_low)
                met = met and not errors and not no_ref
                bound = f"median ≥ {t_median:g}x" + (f", none below {t_low:g}x" if t_low else "")
                text += f" — target {bound}: {'PASS' if met else 'FAIL'}"
            lines.append(text)
    return lines


def ratio_text(args: argparse.Namespace, measured: list[Measured]) -> str:
    """What the ratios divide by: the anchors table, or the baseline command measured
    in this run (and when)."""
    if not args.baseline_cmd:
        anchors = DEFAULT_ANCHORS.name if args.anchors == DEFAULT_ANCHORS else args.anchors
        return (
            "Ratio = states/s ÷ the reference prover's states/s on this machine type "
            f"({anchors}); indicative only, the reference was not re-run here."
        )
    when = "no measurement succeeded"
    if measured:
        first, last = min(m.at for m in measured), max(m.at for m in measured)
        end = f"{last:%H:%M %Z}" if last.date() == first.date() else f"{last:%Y-%m-%d %H:%M %Z}"
        when = f"measured {first:%Y-%m-%d %H:%M} to {end}"
    return (
        "Ratio = states/s ÷ the baseline's states/s measured in this run "
        f"({when}; {len(measured)} measurements): `{args.baseline_cmd}` on each game right "
        "before the game's own runs, in every round, with the same warm-up and measured "
        "seconds; each ratio divides by the baseline of its own round. The anchors table "
        "was not used."
    )


def render(
    header: list[tuple[str, str]],
    rows: list[Row],
    args: argparse.Namespace,
    measured: list[Measured] | None = None,
) -> str:
    """The Markdown report: machine header, settings, table, what the ratios divide by,
    medians. ``measured``: the baseline command's runs (with ``--baseline-cmd``)."""
    settings = (
        f"{args.engine} engine, "
        f"{args.seconds:g} s per game and mode after {args.warmup:g} s warm-up, "
        f"seed {args.seed}, node cache {args.max_nodes:,} states"
    )
    if args.repeats > 1:
        settings += f"; median of {args.repeats} rounds over the set"
    if args.process_per_game:
        settings += "; each game in a fresh Python process"
    if args.baseline_cmd:
        settings += "; baseline measured in this run before each game (see below)"
    else:
        settings += "; baseline: the anchors table"

    return (
        "\n\n".join(
            [
                header_markdown(header) + f"\n- run: {settings}",
                markdown_table(
                    MD_HEADER_BASELINE if args.baseline_cmd else MD_HEADER,
                    [r.markdown() for r in rows],
                ),
                ratio_text(args, measured or []),
                "\n".join(summary(rows, args.modes)),
            ]
        )
        + "\n"
    )


HAND_WRITTEN = "## What each change bought"


def results_document(report: str, command: str, previous: str = "") -> str:
    """The text of RESULTS.md: how it was produced, the report, then the hand-written
    sections from ``HAND_WRITTEN`` on, kept from ``previous`` (the file being replaced)."""
    at = previous.find(HAND_WRITTEN)
    kept = (
        previous[at:]
        if at >= 0
        else f"{HAND_WRITTEN}\n\n_To be filled in: each engine change and the ratios "
        "before and after it._\n"
    )
    return (
        f"# Benchmark results\n\nProduced by `{command}` (see `benchmarks/README.md`).\n\n"
        + report
        + "\n"
        + kept
    )


def write_tables(md_path: Path, csv_path: Path, report: str, rows: list[Row]) -> None:
    md_path.write_text(report, encoding="utf-8")
    csv_path.write_text(csv_text(CSV_HEADER, [r.csv() for r in rows]), encoding="utf-8")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--seconds", type=float, default=10.0, help="measured time per game and mode")
    p.add_argument("--warmup", type=float, default=2.0, help="warm-up time per game and mode")
    p.add_argument("--repeats", type=int, default=1, help="rounds over the set; median reported")
    p.add_argument("--modes", default="a,b,c", help="comma-separated subset of a,b,c,q")
    p.add_argument("--out", type=Path, default=HERE / "out", help="directory for the tables")
    p.add_argument("--results", type=Path, help="also write a RESULTS.md-style file here")
    p.add_argument("--quick", action="store_true", help="smoke run: 1 s per game and mode")
    p.add_argument("--seed", type=int, default=1, help="seed of the random moves")
    p.add_argument("--max-nodes", type=int, default=100_000, help="node cache bound (mode c)")
    p.add_argument(
        "--engine",
        choices=("prolog", "compiled", "auto", "both"),
        default="prolog",
        help="the engine; both: the Prolog engine then the compiled one, game by game",
    )
    p.add_argument(
        "--process-per-game",
        action="store_true",
        help="run each game (each round) in a fresh Python process",
    )
    p.add_argument(
        "--baseline-cmd",
        metavar="CMD",
        help="a command measuring a reference engine with the same loop on {game} for "
        "{warmup} + {seconds} s and printing a JSON line with states, playouts, seconds; "
        "run before each game's own runs, its states/s replaces the anchors' as the ratios' "
        "baseline",
    )
    p.add_argument("--worker", metavar="GAME", help=argparse.SUPPRESS)
    add_set_options(p)
    args = p.parse_args(argv)
    args.refs = chosen(p, args)
    args.engines = ["prolog", "compiled"] if args.engine == "both" else [args.engine]
    args.modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    bad = [m for m in args.modes if m not in MODES]
    if bad or not args.modes:
        p.error(f"unknown mode(s) {', '.join(bad)}; choose from {', '.join(MODES)}")
    if args.repeats < 1:
        p.error("--repeats must be at least 1")
    if args.baseline_cmd is not None:
        try:
            check_template(args.baseline_cmd)
        except BaselineError as e:
            p.error(str(e))
    if args.quick:
        args.seconds, args.warmup, args.repeats = 1.0, 0.25, 1
    return args


def measure_baseline(
    ref: Reference, args: argparse.Namespace, measured: list[Measured]
) -> tuple[Reference, str]:
    """The reference of ``ref``'s game measured now by ``--baseline-cmd`` (appended to
    ``measured``), and ""; or, when the command fails, a reference without figures (so
    no ratio) and why."""
    path = game_path(ref.game, args.games_dir)
    try:
        m = measure(args.baseline_cmd, path, args.warmup, args.seconds)
    except BaselineError as e:
        print(f"{ref.game} | baseline | error: {e}", file=sys.stderr, flush=True)
        why = " ".join(str(e).split())
        if len(why) > 160:
            why = why[:157] + "..."
        return Reference(ref.game, 0.0, 0.0, 0.0), why
    measured.append(m)
    print(
        f"{ref.game} | baseline | {rate(m.states_per_s)} states/s, "
        f"{rate(m.playouts_per_s)} playouts/s",
        file=sys.stderr,
        flush=True,
    )
    return m.reference(ref.game), ""


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    given = sys.argv[1:] if argv is None else argv
    if args.worker:
        (ref,) = [r for r in args.refs if r.game == args.worker]
        print(worker_json(run_game(ref, args)))
        return 0
    if args.process_per_game:
        worker_argv = [a for a in given if a != "--process-per-game"]
        worker_argv += ["--repeats", "1", "--out", str(args.out)]
    refs = args.refs
    header = machine_header()
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    args.out.mkdir(parents=True, exist_ok=True)
    md_path = args.out / f"run-{stamp}.md"
    csv_path = args.out / f"run-{stamp}.csv"
    rounds: list[list[Row]] = []
    measured: list[Measured] = []
    started = time.perf_counter()
    for n in range(args.repeats):
        if args.repeats > 1:
            print(f"-- round {n + 1} of {args.repeats}", file=sys.stderr, flush=True)
        rows: list[Row] = []
        for ref in refs:
            failed = ""
            if args.baseline_cmd:
                ref, failed = measure_baseline(ref, args, measured)
            if args.process_per_game:
                game_rows = run_game_in_process(ref, args, worker_argv)
            else:
                game_rows = run_game(ref, args)
            for r in game_rows:
                r.baseline_error = failed
            rows += game_rows
            if not rounds:  # rewritten as it goes: an interrupted run leaves its table
                write_tables(md_path, csv_path, render(header, rows, args, measured), rows)
        rounds.append(rows)
        shown = median_rows(rounds)
        write_tables(md_path, csv_path, render(header, shown, args, measured), shown)
    rows = median_rows(rounds)
    report = render(header, rows, args, measured)
    print()
    print(report)
    print(f"({time.perf_counter() - started:.0f} s) written: {md_path}, {csv_path}")
    if args.results:
        previous = args.results.read_text(encoding="utf-8") if args.results.exists() else ""
        command = shlex.join(["python", "benchmarks/run.py", *given])
        args.results.write_text(results_document(report, command, previous), encoding="utf-8")
        print(f"written: {args.results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
