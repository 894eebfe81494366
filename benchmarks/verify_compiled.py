"""The compiled engine checked by the reasoner over the whole corpus (issue 34, item 4).

    python benchmarks/verify_compiled.py [--games DIR] [--seed S] [--matches N]
                                         [--max-steps K] [--timeout T] [--workers W]
                                         [--budget SECONDS] [--out FILE] [--report-only]
                                         [--results FILE]

For every game file below DIR (smallest first, so a run cut short covers the most
games) it runs ``gdl2pl verify GAME --engine "gdl2pl replay --engine compiled
--accept-errors {game}" --json --matches N --seed S --max-steps K --workers 1 --timeout
T``, W games at a time: the reasoner plays N seeded random matches, and the compiled
engine (a separate process, grounded from the same game) must answer every step alike.

One verify per game, not one over the folder: verify's ``--timeout`` bounds the engine
under test, not the reasoner's own random matches, and a reasoner that takes minutes on
one game (chess's matches) would hold a worker of a folder-wide run. Here each game's
whole verify is stopped after ``T`` + ``--oracle-seconds`` on the clock (with all it
started) and counted as a timeout of the reasoner. Results are appended to FILE (JSON
lines, verify's ``--json`` objects); games already there are skipped, so a run cut short
by ``--budget`` (wall-clock seconds for this whole run) is continued by running the
script again.

Then it writes a Markdown report (printed, and in place of its section of ``--results``): the
count per outcome (agree, diverge, not compiled with the reason, timeout, reasoner
error, not reached) and every game that did not agree, with its reason. "Not compiled"
is an engine error whose stderr says the compiled engine refused the game (the grounding
budget, an unsafe rule, ...); any other engine error is listed as such. A game the run
did not reach is listed as not reached, never counted as agreeing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from report import markdown_table
from report import replace_section
from sysinfo import header_markdown
from sysinfo import machine_header

REPO = Path(__file__).resolve().parent.parent
DEFAULT_GAMES = REPO.parent / "shared" / "games"
DEFAULT_OUT = REPO / "benchmarks" / "out" / "verify_compiled.jsonl"
SECTION = "## The compiled engine checked by the reasoner (`verify_compiled.py`)"
SUFFIXES = (".kif", ".gdl", ".hrf")

#: The compiled engine's refusals (its stderr's last line), and the reason shown.
REFUSALS = (
    (re.compile(r"grounding (needs|took)", re.I), "grounding budget exceeded"),
    (re.compile(r"unsafe rule", re.I), "unsafe rule"),
    (re.compile(r"grounding failed", re.I), "grounding failed"),
    (re.compile(r"cannot be compiled", re.I), "refused"),
)
#: The temporary file name verify gives the game, as engines' messages begin.
TEMP_FILE = re.compile(r"\S*gdl2pl-verify-\w+/game\.\w+")
TEMP_PREFIX = re.compile(r"^\S*gdl2pl-verify-\w+/game\.\w+: (error: )?(game\.\w+: )?")


def gdl2pl_command() -> str:
    """The ``gdl2pl`` of the virtualenv running this script (else the one on PATH)."""
    mine = Path(sys.executable).with_name("gdl2pl")
    return str(mine) if mine.exists() else (shutil.which("gdl2pl") or "gdl2pl")


def verify_argv(args: argparse.Namespace, game: str) -> list[str]:
    """The verify command for one game."""
    exe = gdl2pl_command()
    engine = f"{exe} replay --engine compiled --accept-errors {{game}}"
    return [
        exe, "verify", game, "--engine", engine, "--json",
        "--matches", str(args.matches), "--seed", str(args.seed),
        "--max-steps", str(args.max_steps), "--workers", "1",
        "--timeout", f"{args.timeout:g}",
    ]  # fmt: skip


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _result_of(game: str, proc: subprocess.Popen[str], out: str, seconds: float) -> dict:
    """Verify's JSON object for ``game`` from its output, or one saying what went wrong."""
    for line in reversed(out.splitlines()):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if isinstance(r, dict) and "verdict" in r:
            return r
    return {
        "game": game, "verdict": "gdl2pl_error", "matches": 0, "steps_compared": 0,
        "first_divergence": None, "seconds": round(seconds, 3),
        "error": f"verify exited with status {proc.returncode} and no result",
    }  # fmt: skip


def run_verify(args: argparse.Namespace) -> float:
    """Verify every game not yet in ``args.out``, ``args.workers`` at a time, until all
    are done or ``args.budget`` seconds pass; the wall-clock seconds it ran."""
    done = set(read_results(args.out))
    todo = [g for g in corpus(args.games) if g not in done]
    todo.sort(key=lambda g: os.path.getsize(g))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    limit = args.timeout + args.oracle_seconds
    start = time.monotonic()
    running: dict[str, tuple[subprocess.Popen[str], float]] = {}
    with open(args.out, "a", encoding="utf-8") as sink:
        try:
            while todo or running:
                over = args.budget is not None and time.monotonic() - start > args.budget
                while todo and len(running) < args.workers and not over:
                    game = todo.pop(0)
                    proc = subprocess.Popen(
                        verify_argv(args, game), stdout=subprocess.PIPE,
                        stderr=subprocess.DEVNULL, text=True, start_new_session=True,
                    )  # fmt: skip
                    running[game] = (proc, time.monotonic())
                if over and not running:
                    break
                time.sleep(0.2)
                for game, (proc, began) in list(running.items()):
                    took = time.monotonic() - began
                    if proc.poll() is None and took <= limit and not over:
                        continue
                    if proc.poll() is None:
                        _stop(proc)
                        if over:
                            del running[game]  # not reached: the budget ended the run
                            continue
                        r = {
                            "game": game, "verdict": "timeout", "matches": 0,
                            "steps_compared": 0, "first_divergence": None,
                            "seconds": round(took, 3),
                            "error": f"verify (the reasoner's random matches and the "
                            f"engine) took more than {limit:g} s on the clock",
                        }  # fmt: skip
                    else:
                        assert proc.stdout is not None
                        r = _result_of(game, proc, proc.stdout.read(), took)
                    del running[game]
                    sink.write(json.dumps(r) + "\n")
                    sink.flush()
        finally:
            for proc, _ in running.values():
                _stop(proc)
    return time.monotonic() - start


def read_results(path: Path) -> dict[str, dict]:
    """The results in ``path`` (JSON lines), by game path; the last one of a game wins."""
    out: dict[str, dict] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                r = json.loads(line)
            except ValueError:
                continue  # a line cut off when the run was stopped
            if isinstance(r, dict) and "game" in r:
                out[r["game"]] = r
    return out


def outcome(r: dict) -> tuple[str, str]:
    """(outcome, reason) of one game's result."""
    verdict, error = r.get("verdict", "?"), r.get("error") or ""
    if verdict == "agree":
        return "agree", ""
    if verdict == "diverge":
        d = r.get("first_divergence") or {}
        where = f"match {d.get('match')} step {d.get('step')}" if d else ""
        return "diverge", f"{where}: {_first_line(error or json.dumps(d)[:300])}"
    if verdict == "engine_error":
        said = TEMP_FILE.sub(os.path.basename(r["game"]), engine_said(error))
        for pattern, reason in REFUSALS:
            if pattern.search(said):
                return "not compiled", said if said.startswith(reason) else f"{reason}: {said}"
        prolog = r.get("prolog_engine")
        if prolog and prolog["status"] != 0 and said in engine_said(prolog["stderr"]):
            return "both engines refuse", said
        return "engine error", said
    if verdict == "gdl2pl_error":
        return "the reasoner refuses it", _first_line(error)
    return verdict, _first_line(error)


def engine_said(error: str) -> str:
    """The engine's last line of stderr in ``error`` (its own sentence), shortened,
    without the temporary file name verify gave the game."""
    tail = error.split("stderr:", 1)[-1].strip()
    lines = [ln for ln in tail.splitlines() if ln.strip()]
    return _first_line(TEMP_PREFIX.sub("", lines[-1].strip() if lines else tail))


def with_prolog_engine(args: argparse.Namespace) -> None:
    """Give every engine error in ``args.out`` what ``gdl2pl replay --engine prolog``
    says of the game with no matches to play (exit status, stderr): an error both
    engines raise is the game's, not the compiled engine's. Rewrites the file."""
    results = read_results(args.out)
    changed = False
    for game, r in results.items():
        if r.get("verdict") != "engine_error" or "prolog_engine" in r:
            continue
        exe = gdl2pl_command()
        argv = [exe, "replay", "--engine", "prolog", "--accept-errors", game]
        try:
            p = subprocess.run(argv, input="", capture_output=True, text=True, timeout=120)
            r["prolog_engine"] = {"status": p.returncode, "stderr": p.stderr[-2000:]}
        except subprocess.TimeoutExpired:
            r["prolog_engine"] = {"status": -1, "stderr": "timed out after 120 s"}
        changed = True
    if changed:
        text = "".join(json.dumps(r) + "\n" for r in results.values())
        args.out.write_text(text, encoding="utf-8")


def _first_line(text: str, limit: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def corpus(games: Path) -> list[str]:
    """Every game file below ``games``, as verify finds them."""
    return sorted(str(f) for f in games.rglob("*") if f.suffix.lower() in SUFFIXES and f.is_file())


def report(args: argparse.Namespace, ran: float | None) -> str:
    """The Markdown report of the results in ``args.out``."""
    from gdl2pl.compiled import GroundingBudget

    budget = GroundingBudget()
    results = read_results(args.out)
    every = corpus(args.games)
    rows: list[tuple[str, str, str]] = []
    counts: Counter[str] = Counter()
    steps = 0
    for game in every:
        r = results.get(game)
        kind, reason = (
            ("not reached", "the run ended before this game") if r is None else outcome(r)
        )
        if r is not None:
            steps += int(r.get("steps_compared") or 0)
        counts[kind] += 1
        if kind != "agree":
            rows.append((os.path.relpath(game, args.games), kind, reason))
    refusals = Counter(
        reason.split(":", 1)[0] for _, kind, reason in rows if kind == "not compiled"
    )
    lines = [
        SECTION,
        "",
        header_markdown(machine_header()),
        "",
        f'`gdl2pl verify GAME --engine "gdl2pl replay --engine compiled '
        f'--accept-errors {{game}}" --matches {args.matches} --seed {args.seed} '
        f"--max-steps {args.max_steps} --workers 1 --timeout {args.timeout:g}` per game "
        f"of `{args.games.name}/`, {args.workers} games at a time, each stopped after "
        f"{args.timeout + args.oracle_seconds:g} s on the clock; grounding budget: the "
        f"engine's default (`GroundingBudget`: {budget.seconds:g} s, {budget.rules:,} ground "
        "rules).",
        f"{len(every)} game files, {len(results)} with a result, "
        f"{steps:,} steps compared" + (f", this run {ran:.0f} s of wall clock." if ran else "."),
        "",
        markdown_table(["outcome", "games"], [(k, str(n)) for k, n in sorted(counts.items())]),
    ]
    if refusals:
        lines += ["", "Not compiled, by reason: "
                  + ", ".join(f"{n} {k}" for k, n in sorted(refusals.items())) + "."]  # fmt: skip
    if rows:
        lines += ["", "Every game that did not agree:", "", markdown_table(
            ["game", "outcome", "reason"], rows)]  # fmt: skip
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=Path, default=DEFAULT_GAMES)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--matches", type=int, default=2)
    ap.add_argument("--max-steps", type=int, default=200, help="steps per match at most")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per game (engine)")
    ap.add_argument(
        "--oracle-seconds", type=float, default=60.0,
        help="seconds per game for the reasoner's matches, beyond --timeout",
    )  # fmt: skip
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--budget", type=float, default=None, help="seconds for the whole run")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="JSON lines, resumed")
    ap.add_argument("--report-only", action="store_true", help="only report what --out holds")
    ap.add_argument("--results", help="replace this section of that file")
    args = ap.parse_args()
    args.games = args.games.resolve()
    ran = None if args.report_only else run_verify(args)
    with_prolog_engine(args)
    text = report(args, ran)
    print(text)
    if args.results:
        replace_section(Path(args.results), SECTION, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
