"""What the rules prove about each game of a folder, and random matches against it.

    python benchmarks/proofs.py [--games-dir DIR] [--games NAME ...] [--matches 20]
        [--timeout 180] [--before REV] [--jobs 1] [--results FILE]

For every ``*.kif`` of ``--games-dir`` (``../shared/games/ggp-repository``, ``__v1``
variants left out), in a process of its own (killed after ``--timeout`` seconds):

1. the reachability analysis' supersets (``gdl2pl.adapters.reach``), then the proofs the
   adapters tell a library: a step counter (``rule_shapes.step_counter_bound``), a
   measure every step moves (``length_bound.prove_length_bound``), the goal sum of goal
   rules of one body (``rule_shapes.goal_sum``) or of the terminal and goal rules together
   (``sum_proof.prove_goal_sum``, a role without a goal counted as 50, the adapters'
   default); the CPU seconds each proof took;
2. ``--matches`` random matches on the reasoner (inside Prolog, ``depth_charge``; seeded),
   each cut one step past the largest
   proved bound (or at 2,000 steps): a match longer than a bound, or an end whose goals
   (each role exactly one, or 50 for none) sum otherwise than proved, is a **violation**.

``--before REV`` runs the length and sum proofs of git revision ``REV`` too (its
``length_bound.py`` and ``rule_shapes.py``, read with ``git show`` and loaded beside
today's), against the same matches: the baseline, measured in the same run.

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
from concurrent.futures import ThreadPoolExecutor
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


def old_proofs(before: str) -> Any:
    """The modules ``length_bound`` and ``rule_shapes`` of revision ``before`` (a
    namespace), loaded under names of their own."""
    import importlib.util
    import tempfile
    import types

    out = types.SimpleNamespace()
    folder = Path(tempfile.mkdtemp(prefix="proofs-before-"))
    for name in ("length_bound", "rule_shapes"):
        text = subprocess.run(
            ["git", "-C", str(REPO), "show", f"{before}:gdl2pl/{name}.py"],
            capture_output=True, text=True, check=True,
        ).stdout
        path = folder / f"before_{name}.py"
        path.write_text(text, encoding="utf-8")
        spec = importlib.util.spec_from_file_location(f"before_{name}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        setattr(out, name, module)
    return out


def one_game(path: Path, matches: int, before: str | None = None) -> dict[str, Any]:
    """The proofs for one game and the random matches against them (run in a child)."""
    from gdl2pl.adapters.reach import reachable_domains
    from gdl2pl.bridge import StateMachine
    from gdl2pl.contract import PlayoutDepthError
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
        out["measure_how"] = (
            "" if measure is None else "filling" if "position" in measure.reason else "advance"
        )
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
        checked = {"": (bound, out["sum"])}
        if before:
            old = old_proofs(before)
            counted = old.rule_shapes.step_counter_bound(d)
            try:
                measured = (old.length_bound.prove_length_bound(d, reach.fluents, reach.moves)
                            if reach else None)
            except Exception as e:  # the old proof's own defect (it crashed)
                out["before_error"] = f"{type(e).__name__}: {e}"[:80]
                measured = None
            olds = [b for b in (counted and counted[0], measured and measured.steps)
                    if b is not None]
            simple = old.rule_shapes.goal_sum(d)
            out["before_bound"] = min(olds) if olds else None
            out["before_sum"] = (simple if simple is not None
                                 and simple == MISSING * len(sm.roles) else None)
            checked["before: "] = (out["before_bound"], out["before_sum"])
        limits = [b for b, _ in checked.values() if b is not None]
        cut = max(limits) + 1 if limits else UNBOUNDED
        sm.seed(7)
        longest, sums, bad = 0, set(), []
        for _ in range(matches):
            try:  # a random match inside Prolog, cut at ``cut`` steps
                end, steps = sm.depth_charge(sm.initial_state, max_depth=cut)
                terminal, goals = True, sm.state_info(end)[2]
            except PlayoutDepthError:
                steps, terminal, goals = cut, False, []
            except GdlError as e:  # a role without a legal move: a defect of the game
                out["play"] = str(e)[:80]
                break
            longest = max(longest, steps)
            total = None
            if terminal:
                values = [vs or [MISSING] for vs in goals]
                if all(len(vs) == 1 for vs in values):
                    total = sum(int(vs[0]) for vs in values)
                    sums.add(total)
            for who, (b, proved_sum) in checked.items():
                if b is not None and steps > b:
                    bad.append(f"{who}a match of more than {b} steps")
                if proved_sum is not None and total is not None and total != proved_sum:
                    bad.append(f"{who}an end summing to {total}, not {proved_sum}")
        out["longest"] = longest
        out["sums"] = sorted(sums)
        out["violations"] = sorted(set(bad))
    return out


def run_child(path: Path, matches: int, timeout: float, before: str | None) -> dict[str, Any]:
    """``one_game`` in a fresh process (its own Prolog), killed after ``timeout``."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent)}
    cmd = [sys.executable, "-P", __file__, "--one", str(path), "--matches", str(matches)]
    if before:
        cmd += ["--before", before]
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


def _cell(value: object, how: str = "") -> str:
    return "" if value is None else f"{value} ({how})" if how else str(value)


def report(rows: list[dict[str, Any]], args: argparse.Namespace, header: str) -> str:
    def has_proof(r: dict[str, Any]) -> bool:
        return any(r.get(k) is not None for k in ("bound", "sum", "before_bound", "before_sum"))

    proved = sorted((r for r in rows if has_proof(r)), key=lambda r: r["game"].lower())
    before = bool(args.before)
    table = []
    for r in proved:
        row = [r["game"], _cell(r.get("counter")), _cell(r.get("measure"), r["measure_how"]),
               f"{r['measure_s']:.2f}", _cell(r.get("sum"), r["sum_how"]), f"{r['sum_s']:.2f}"]
        if before:
            row += [_cell(r.get("before_bound")), _cell(r.get("before_sum"))]
        row += [str(r["longest"]), ", ".join(map(str, r["sums"])),
                "; ".join(r["violations"]) or r.get("play", "") or r.get("before_error", "")]
        table.append(row)
    failed = sorted(r["game"] for r in rows if "error" in r)

    def violated(prefix: str) -> list[str]:
        return [r["game"] for r in proved
                if any(v.startswith(prefix) == bool(prefix) for v in r["violations"])]

    def counts(key: str) -> int:
        return sum(r.get(key) is not None for r in proved)

    now, then = violated(""), violated("before: ")
    summary = (
        f"`python benchmarks/proofs.py --matches {args.matches}"
        + (f" --before {args.before}" if before else "")
        + f"` over {len(rows)} games of `{Path(args.games_dir).name}`: "
        f"{counts('bound')} with a proved length bound and {counts('sum')} with a proved "
        f"goal sum; **{len(now)} violated** by a random match"
        + (f" ({', '.join(now)})" if now else "")
        + "."
    )
    if before:
        summary += (
            f" At `{args.before}` (the same matches): {counts('before_bound')} bounds and "
            f"{counts('before_sum')} sums, **{len(then)} violated**"
            + (f" ({', '.join(then)})" if then else "") + "."
        )
    summary += (
        f" {len(failed)} not analysed (time limit or error"
        + (f": {', '.join(failed)}" if failed else "") + "). Seconds are CPU seconds of "
        "the proof in the child process; a goal sum counts 50 for a role without a goal."
    )
    columns = ["game", "step counter", "measure", "measure s", "goal sum", "sum s"]
    if before:
        columns += ["bound before", "sum before"]
    columns += ["longest match", "end sums seen", "violations"]
    lines = [SECTION, "", header, "", summary, "", markdown_table(columns, table)]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games-dir", default=str(DEFAULT_GAMES))
    ap.add_argument("--games", nargs="*", default=None, help="game names (default: all)")
    ap.add_argument("--matches", type=int, default=20)
    ap.add_argument("--timeout", type=float, default=180.0)
    ap.add_argument("--before", default=None, help="a git revision: its proofs too")
    ap.add_argument("--jobs", type=int, default=1, help="games analysed at once")
    ap.add_argument("--results", default=None, help="replace this section of that file")
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(one_game(Path(args.one), args.matches, args.before)))
        return 0
    folder = Path(args.games_dir)
    paths = sorted(
        p for p in folder.glob("*.kif")
        if "__v" not in p.stem and (not args.games or p.stem in args.games)
    )
    header = header_markdown(machine_header())
    rows = []
    with ThreadPoolExecutor(args.jobs) as pool:
        runs = [pool.submit(run_child, p, args.matches, args.timeout, args.before)
                for p in paths]
        for i, run in enumerate(runs, 1):
            row = run.result()
            rows.append(row)
            note = row.get("error") or "; ".join(row.get("violations", [])) or ""
            print(f"[{i}/{len(paths)}] {row['game']}: bound {row.get('bound')} "
                  f"sum {row.get('sum')} {note}", file=sys.stderr, flush=True)
    text = report(rows, args, header)
    print(text)
    if args.results:
        replace_section(Path(args.results), SECTION, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
