"""Which GDL-II games of a folder gdl2pl reads and plays, and why the others fail.

    python benchmarks/gdl2_corpus.py FOLDER [--source TEXT] [--play-clock 2]
        [--start-clock 20] [--max-steps 30] [--results RESULTS.md]

Every ``*.kif``, ``*.gdl`` and ``*.lisp`` file under FOLDER that is GDL-II (it declares
the role ``random`` or has ``sees``/``percept`` rules) is taken through three steps:

1. **check**: ``gdl2pl check``'s findings; an error refuses the game (its first error is
   the reason, with file:line:col); the dialect readings' warnings are listed.
2. **load**: ``StateMachine`` over the rules.
3. **play**: one match by gdl2pl's own manager (``run_match``, which plays ``random``
   itself and sends ``(play ID TURN LASTMOVE PERCEPTS)``) over HTTP on 127.0.0.1, with a
   ``gdl2pl serve``-like player (``--player random``) at every other role. The game plays
   when every reply was a legal move in time, for the whole match or its first
   ``--max-steps`` turns.

The table (one row per file) goes to stdout, and with ``--results`` into that file's
section "GDL-II corpus" (replaced if present, else appended). FOLDER is others' data:
nothing of it is copied anywhere but the names in the table.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gdl2pl.bridge import StateMachine
from gdl2pl.bridge import swipl
from gdl2pl.check import READ_AS_MEANT
from gdl2pl.check import format_finding
from gdl2pl.errors import GdlError
from gdl2pl.ggp.manager import run_match
from gdl2pl.ggp.player import GamePlayer
from gdl2pl.ggp.server import serving
from gdl2pl.ggp.strategy import Strategy
from gdl2pl.ggp.strategy import make_strategy
from gdl2pl.pipeline import compile_game

SECTION = "## GDL-II corpus"
#: Warnings that say a dialect was read (the other warnings are not listed).
DIALECTS = (*sorted(READ_AS_MEANT), "pre-gdl-ii")


#: Why a check error refuses a game, for the summary under the table.
WHY = {
    "unsafe-variable": "a variable of the head or of a negation that no positive literal "
    "of the body binds: the rule stands for infinitely many facts (GDL's safety rule)",
    "keyword-as-function": "a keyword (legal, role, does outside a percept) used as a "
    "function term, often with a parenthesis misplaced",
    "misplaced-keyword": "a connective (distinct, not) used as a term",
    "sees-in-body": "a goal or terminal rule that depends on a percept, which belongs to "
    "the next state's turn: the goal of a state is then undefined",
    "syntax": "not GDL's syntax (e.g. a variable in a function's place)",
}


@dataclass
class Row:
    file: str
    check: str = ""
    loads: str = ""
    plays: str = ""
    note: str = ""


def is_gdl_ii_text(text: str) -> bool:
    """A quick look: the file names ``sees`` or the role ``random`` (the check decides)."""
    low = text.lower()
    return "(sees " in low or "(role random)" in low or "percept" in low


def _cell(text: str, root: Path, width: int = 160) -> str:
    """``text`` fit for a table cell: one line, paths relative to ``root``, cut."""
    text = text.replace(str(root).rstrip("/") + "/", "")
    one = " ".join(text.split()).replace("|", "\\|")
    return one if len(one) <= width else one[: width - 3] + "..."


def _random_player(seed: int) -> Callable[[], Strategy]:
    """Random players with seeds of their own (with one seed, they mirror each other)."""
    return lambda: make_strategy("random", seed)


def examine(path: Path, root: Path, play_clock: int, start_clock: int, max_steps: int) -> Row:
    """The row of one game file."""
    row = Row(str(path.relative_to(root)))
    try:
        compiled = compile_game(path, check=True, translate=False)
    except (GdlError, OSError, RecursionError) as e:
        row.check = "refused"
        row.note = _cell(f"does not read: {e}", root)
        return row
    errors = [f for f in compiled.findings if f.is_error]
    dialects = sorted({f.code for f in compiled.findings if f.code in DIALECTS})
    if errors:
        codes = sorted({f.code for f in errors})
        row.check = f"refused ({len(errors)} error(s): {', '.join(codes)})"
        row.note = _cell(format_finding(errors[0], row.file), root)
        return row
    row.check = "ok" + (f" (read as: {', '.join(dialects)})" if dialects else "")
    try:
        with StateMachine(compiled.description, name=path.name) as sm:
            seats = len(sm.players)
            gdl_ii = sm.gdl_ii
    except GdlError as e:
        row.loads = "no"
        row.note = _cell(str(e), root)
        return row
    row.loads = "yes"
    if not gdl_ii:
        row.plays = "-"
        row.note = "not GDL-II after all"
        return row
    players = [GamePlayer(_random_player(i + 1), name=f"p{i}", margin=0.3) for i in range(seats)]
    with serving(players) as servers:
        started = time.monotonic()
        rec = run_match(
            compiled.description,
            [s.url for s in servers],
            game_name=path.name,
            start_clock=start_clock,
            play_clock=play_clock,
            seed=1,
            max_steps=max_steps,
        )
    steps = len(rec["moves"])
    seated = [i for i, url in enumerate(rec["playerURLs"]) if url is not None]
    bad = [
        (t, errors[i]) for t, errors in enumerate(rec["errors"][1:], 1) for i in seated if errors[i]
    ]
    cut = not rec["isCompleted"] and "no terminal state after" in str(rec.get("abortReason"))
    if rec["isCompleted"] or cut:
        done = "whole match" if rec["isCompleted"] else f"first {steps} turns"
        row.plays = "yes" if not bad else "no"
        row.note = f"{done}, {steps} turns, {time.monotonic() - started:.0f} s"
        if bad:
            t, error = bad[0]
            row.note += _cell(f"; {len(bad)} bad repl(ies), first at turn {t}: {error}", root)
    else:
        row.plays = "no"
        row.note = _cell(f"aborted after {steps} turns: {rec.get('abortReason')}", root)
    return row


def table(rows: list[Row]) -> str:
    lines = ["| file | check | loads | plays | note |", "| --- | --- | --- | --- | --- |"]
    lines += [f"| {r.file} | {r.check} | {r.loads} | {r.plays} | {r.note} |" for r in rows]
    return "\n".join(lines)


def section(rows: list[Row], source: str, settings: str) -> str:
    checked = sum(r.check.startswith("ok") for r in rows)
    loaded = sum(r.loads == "yes" for r in rows)
    played = sum(r.plays == "yes" for r in rows)
    codes: dict[str, int] = {}
    for r in rows:
        if r.check.startswith("refused ("):
            for code in r.check.split(": ", 1)[1].rstrip(")").split(", "):
                codes[code] = codes.get(code, 0) + 1
        elif r.check == "refused":
            codes["syntax"] = codes.get("syntax", 0) + 1
    why = "".join(
        f"- `{code}` ({n} file(s)): {WHY.get(code, 'see the note')}\n"
        for code, n in sorted(codes.items())
    )
    return (
        f"{SECTION}\n\n"
        f"Produced by `python benchmarks/gdl2_corpus.py FOLDER {settings}` "
        f"on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.\n\n"
        f"- source: {source}\n"
        f"- {len(rows)} GDL-II files: {checked} pass the check, {loaded} load, "
        f"{played} play (every reply a legal move in time)\n\n"
        f"{table(rows)}\n"
        + (f"\nWhy the refused files are refused (`gdl2pl check`'s codes):\n\n{why}" if why else "")
    )


def write_section(results: Path, text: str) -> None:
    """Put ``text`` in ``results`` in place of its GDL-II corpus section, else at its end."""
    old = results.read_text(encoding="utf-8") if results.exists() else ""
    start = old.find(SECTION)
    if start < 0:
        new = old.rstrip("\n") + "\n\n" + text
    else:
        end = old.find("\n## ", start + len(SECTION))
        rest = old[end + 1 :] if end >= 0 else ""
        new = old[:start] + text + ("\n" + rest if rest else "")
    results.write_text(new, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--source", default="", help="where the folder's files come from")
    ap.add_argument("--play-clock", type=int, default=2)
    ap.add_argument("--start-clock", type=int, default=20)
    ap.add_argument("--max-steps", type=int, default=30)
    ap.add_argument("--results", type=Path)
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)
    swipl.attach_thread()
    files = sorted(
        p
        for ext in ("*.kif", "*.gdl", "*.lisp")
        for p in args.folder.rglob(ext)
        if is_gdl_ii_text(p.read_text(encoding="utf-8", errors="replace"))
    )
    rows = []
    for path in files:
        row = examine(path, args.folder, args.play_clock, args.start_clock, args.max_steps)
        print(
            f"{row.file}: {row.check}; loads {row.loads}; plays {row.plays}; {row.note}",
            file=sys.stderr,
            flush=True,
        )
        rows.append(row)
    settings = (
        f"--play-clock {args.play_clock} --start-clock {args.start_clock} "
        f"--max-steps {args.max_steps}"
    )
    text = section(rows, args.source or str(args.folder), settings)
    print(text)
    if args.results:
        write_section(args.results, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
