"""The ``verify`` and ``trace-all`` runs: build one job per game, run them (in this
process, on local workers or on Ray), save and print the results in game order."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from gdl2pl.load import read_text

from .games import GameRef
from .games import check_distinct_outputs
from .games import find_games
from .games import output_name
from .games import trace_file
from .job import Job
from .job import run_trace
from .job import run_verify
from .outfiles import write_file
from .report import FAILING
from .report import append_result
from .report import details
from .report import read_results
from .report import rewrite_in_order
from .report import shown_name
from .report import summary_table
from .report import write_repro
from .runner import OnResult
from .runner import Task
from .runner import run_local


def _run(
    args: argparse.Namespace, task: Task, jobs: list[Job], on_result: OnResult, label: str
) -> list[dict[str, Any]]:
    if args.ray is not None:
        from .ray_runner import run_ray

        return run_ray(
            task,
            jobs,
            on_result,
            address=args.ray or None,
            task_timeout=args.task_timeout,
            memory_mb=args.memory,
            retries=args.retries,
            label=label,
        )
    return run_local(task, jobs, args.workers, on_result, label)


def _ray_address_is_a_game(args: argparse.Namespace) -> None:
    """``--ray GAMES...``: argparse takes the first game for the address; give it back."""
    if args.ray and Path(args.ray).exists():
        args.games.insert(0, args.ray)
        args.ray = ""


def _verify_job(args: argparse.Namespace, game: GameRef) -> Job:
    common = {
        "path": game.path,
        "text": read_text(game.path),
        "matches": args.matches,
        "seed": args.seed,
        "max_steps": args.max_steps,
        "timeout": args.timeout,
        "case_sensitive": args.case_sensitive,
        "keep_going": args.keep_going,
    }
    if args.engine is not None:
        return Job(engine=args.engine, **common)
    trace = trace_file(game, Path(args.against))
    if trace is None:
        return Job(skip_reason=f"no trace file for it in {args.against}", **common)
    return Job(trace_text=read_text(trace), trace_path=str(trace), **common)


class _Printer:
    """Prints ``--json`` lines in game order as soon as all earlier games are done."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.pending: dict[int, dict[str, Any]] = {}
        self.next = 0
        self.total = total
        self.enabled = enabled

    def add(self, i: int, r: dict[str, Any]) -> None:
        self.pending[i] = r
        while self.next in self.pending:
            if self.enabled:
                print(json.dumps(self.pending.pop(self.next), separators=(",", ":")), flush=True)
            self.next += 1


def verify_main(args: argparse.Namespace) -> int:
    """Run ``gdl2pl verify``; see ``commands`` for the exit status."""
    _ray_address_is_a_game(args)
    if args.resume and not args.out:
        raise ValueError("--resume needs --out FILE")
    if args.against is not None and not Path(args.against).is_dir():
        raise NotADirectoryError(f"--against: no such directory: {args.against}")
    games = find_games(args.games)
    if not games:
        raise ValueError("no game files found (.kif, .gdl, .hrf)")
    check_distinct_outputs(games)
    if args.engine is not None and "{game}" not in args.engine:
        print(
            "gdl2pl verify: warning: the engine command has no {game}: the game's path is "
            "appended as its last argument",
            file=sys.stderr,
        )
    out = Path(args.out) if args.out else None
    if out and args.resume and out.is_symlink():
        raise ValueError(f"--out: {out} is a symbolic link: --resume appends only to a file")
    saved = read_results(out) if out and args.resume else {}
    if out and not args.resume and out.exists():
        out.unlink()
    todo = [g for g in games if g.path not in saved]
    jobs = [_verify_job(args, g) for g in todo]
    repro_dir = Path(args.repro_dir)
    by_path: dict[str, dict[str, Any]] = dict(saved)
    order = {g.path: i for i, g in enumerate(games)}
    printer = _Printer(len(games), args.json)
    for g in games:
        if g.path in saved:
            printer.add(order[g.path], saved[g.path])

    def on_result(i: int, r: dict[str, Any]) -> None:
        if r.get("first_divergence"):
            try:
                r["reproduction"] = str(write_repro(repro_dir, todo[i].rel, r["first_divergence"]))
            except OSError as e:  # a name too long for the file system, a full disk
                r["reproduction_error"] = f"cannot write the reproduction file: {e.strerror or e}"
        by_path[r["game"]] = r
        if out:
            append_result(out, r)
        printer.add(order[todo[i].path], r)

    _run(args, run_verify, jobs, on_result, "verify")
    results = [by_path[g.path] for g in games]
    if out:
        rewrite_in_order(out, results)
    if not args.json:
        print(summary_table(results))
        for r in results:
            if r["verdict"] in FAILING:
                print()
                print(details(r))
    return 1 if any(r["verdict"] in FAILING for r in results) else 0


def trace_all_main(args: argparse.Namespace) -> int:
    """Run ``gdl2pl trace-all``: ``<out-dir>/<output_name(game path below its folder)>.jsonl``
    each."""
    _ray_address_is_a_game(args)
    games = find_games(args.games)
    if not games:
        raise ValueError("no game files found (.kif, .gdl, .hrf)")
    check_distinct_outputs(games)
    out_dir = Path(args.out_dir)
    targets = {g.path: out_dir / (output_name(g.rel) + ".jsonl") for g in games}
    todo = [g for g in games if not (args.resume and targets[g.path].is_file())]
    jobs = [
        Job(
            path=g.path,
            text=read_text(g.path),
            matches=args.matches,
            seed=args.seed,
            max_steps=args.max_steps,
            case_sensitive=args.case_sensitive,
        )
        for g in todo
    ]
    failures: list[str] = []
    records = 0

    def on_result(i: int, r: dict[str, Any]) -> None:
        nonlocal records
        target = targets[todo[i].path]
        if r.get("error"):
            failures.append(shown_name(f"{r['game']}: {r['error']}"))
            return
        out_dir.mkdir(parents=True, exist_ok=True)
        try:
            write_file(target, r["text"])
        except OSError as e:  # a name too long for the file system, a full disk
            failures.append(shown_name(f"{r['game']}: cannot write {target}: {e.strerror or e}"))
            return
        records += r["records"]

    _run(args, run_trace, jobs, on_result, "trace")
    skipped = len(games) - len(todo)
    print(
        f"{len(todo) - len(failures)} games traced into {out_dir} ({records} records)"
        + (f", {skipped} already there" if skipped else "")
        + (f", {len(failures)} failed" if failures else "")
    )
    for f in sorted(failures):
        print(f, file=sys.stderr)
    return 1 if failures else 0
