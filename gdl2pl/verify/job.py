"""One game's work, as a picklable task: verify it against an engine or recorded traces,
or write its random-match traces. Runs in a worker process (local or Ray); the game's text
travels with the task, so a worker needs no shared file system."""

from __future__ import annotations

import json
import os
import random
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gdl2pl.jsonline import loads_line

from . import judging
from .divergence import divergence_at
from .divergence import finish
from .divergence import game_result
from .divergence import out_of_place
from .divergence import states_along
from .engine import SAFE_PATH
from .engine import EngineRun
from .engine import engine_argv
from .engine import game_file_name
from .engine import run_engine
from .games import game_digest
from .keep_going import EveryDivergence
from .oracle_link import Record
from .oracle_link import StateMachine
from .oracle_link import load_machine
from .oracle_link import random_match
from .oracle_link import replay
from .records import Difference
from .records import MalformedRecord
from .records import compare


@dataclass(frozen=True)
class Job:
    """What to do with one game. Exactly one of ``engine`` (a command template with
    ``{game}``) and ``trace_text`` (the recorded JSON lines) is set for verification;
    neither for ``trace`` jobs."""

    path: str
    text: str
    engine: str | None = None
    trace_text: str | None = None
    matches: int = 2
    seed: int = 0
    max_steps: int = 1000
    timeout: float = 300.0
    case_sensitive: bool = False
    skip_reason: str | None = None
    trace_path: str = ""
    keep_going: bool = False


def result(job: Job, verdict: str, **extra: Any) -> dict[str, Any]:
    """A per-game result object (the ``--json`` shape)."""
    return game_result(job.path, verdict, **extra)


def run_verify(job: Job) -> dict[str, Any]:
    """Verify one game; never raises (a failure of gdl2pl itself is ``gdl2pl_error``)."""
    if job.skip_reason:
        return result(job, "skipped", error=job.skip_reason)
    start = time.perf_counter()
    try:
        sm = load_machine(job.text, job.path, job.case_sensitive)
    except Exception as e:
        return result(job, "gdl2pl_error", error=f"gdl2pl cannot load the game: {e}")
    try:
        out = _verify_loaded(job, sm)
    except Exception as e:  # a reasoner error while playing or explaining
        out = result(job, "gdl2pl_error", error=f"{type(e).__name__}: {e}")
    finally:
        sm.close()
    out["seconds"] = round(time.perf_counter() - start, 3)
    return out


def _verify_loaded(job: Job, sm: StateMachine) -> dict[str, Any]:
    if job.trace_text is not None:
        try:
            theirs_by_match = _trace_matches(job.trace_text)
        except (ValueError, KeyError, TypeError) as e:
            return result(job, "engine_error", error=f"the trace file is not readable: {e}")
        stranger = _foreign_trace(job, theirs_by_match)
        if stranger:
            return result(job, "engine_error", error=stranger)
        move_lists = [[r["move"] for r in recs if r.get("move")] for recs in theirs_by_match]
        ids = [int(recs[0]["match"]) for recs in theirs_by_match]
        mine = [list(replay(sm, moves, m)) for m, moves in zip(ids, move_lists, strict=True)]
        # A match cut short by the trace's size cap keeps only its first records.
        mine = [
            ours[: len(recs)] if recs and "error" not in recs[-1] and recs[-1].get("move") else ours
            for ours, recs in zip(mine, theirs_by_match, strict=True)
        ]
        judge = _judge(job, sm, mine, move_lists)
        run = EngineRun()
        for recs in theirs_by_match:
            for rec in recs:
                run.received += 1
                judge.take(rec)
    else:
        rng = random.Random(job.seed)
        mine = [list(random_match(sm, rng, m, job.max_steps)) for m in range(job.matches)]
        move_lists = [[r["move"] for r in recs if r.get("move")] for recs in mine]
        judge = _judge(job, sm, mine, move_lists)
        run = _run_engine_on(job, move_lists, judge)
    return judge.result(run)


def _judge(
    job: Job, sm: StateMachine, mine: list[list[Record]], move_lists: list[list[list[str]]]
) -> FirstDivergence | EveryDivergence:
    """The judge of the game's records: up to the first divergence, or every divergence
    with ``keep_going`` (see ``keep_going.py``)."""
    if job.keep_going:
        return EveryDivergence(job.path, sm, mine, move_lists)
    return FirstDivergence(job.path, sm, mine, move_lists)


def _run_engine_on(job: Job, move_lists: list[list[list[str]]], judge: judging.Judge) -> EngineRun:
    """Run the engine on a private copy of the game's text under a fixed name that gdl2pl
    chose (see ``engine.game_file_name``): the game's own file name never reaches the
    engine's command line, however it is spelled."""
    assert job.engine is not None
    with tempfile.TemporaryDirectory(prefix="gdl2pl-verify-", dir=_safe_tmp()) as tmp:
        copy = Path(tmp) / game_file_name(job.path)
        fd = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(job.text)
        try:
            argv = engine_argv(job.engine, str(copy))
        except ValueError as e:
            return EngineRun(problem=str(e))
        return run_engine(
            argv,
            move_lists,
            job.timeout,
            game=str(copy),
            on_record=judge.take,
            skip_faults=job.keep_going,
        )


def _safe_tmp() -> str:
    """The temporary folder if its path is plain (see ``engine.SAFE_PATH``), else ``/tmp``."""
    tmp = tempfile.gettempdir()
    return tmp if SAFE_PATH.fullmatch(tmp) else "/tmp"


def _foreign_trace(job: Job, matches: list[list[Record]]) -> str | None:
    """Why the trace is not of this game (its records' ``game_sha256``, written by
    ``trace-all``, is not the hash of the game's text); None if it is or does not say."""
    mine = game_digest(job.text)
    for recs in matches:
        for rec in recs:
            theirs = rec.get("game_sha256", mine)
            if theirs != mine:
                return (
                    f"the trace {job.trace_path or '(given)'} was recorded from another game: "
                    f"its game_sha256 is {str(theirs)[:16]}…, this game's is {mine[:16]}…"
                )
    return None


def _trace_matches(text: str) -> list[list[Record]]:
    by_match: dict[int, list[Record]] = {}
    for line in text.splitlines():
        if line.strip():
            rec = loads_line(line)
            by_match.setdefault(int(rec["match"]), []).append(rec)
    return [by_match[m] for m in sorted(by_match)]


class FirstDivergence(judging.GameJudge):
    """Compares the engine's records with gdl2pl's, match by match, in order, up to the
    first divergence (then the engine may be stopped)."""

    def begin(self) -> None:
        self.diverged: tuple[int, Record, list[Difference], int] | None = None

    def compare(self) -> judging.Steps:
        for n, ours in enumerate(self.mine):
            m = int(ours[0]["match"]) if ours else n
            for rec in ours:
                other = yield
                if other is judging.END:
                    self.missing = f"none for match {m} step {rec['step']}"
                    return True
                self.problem = out_of_place(rec, other)
                if self.problem:
                    return True
                try:
                    diffs = compare(rec, other)
                except MalformedRecord as e:
                    self.problem = f"match {m} step {rec['step']}: malformed record: {e}"
                    return True
                self.compared += 1
                if diffs:
                    self.diverged = (m, rec, diffs, n)
                    return True
        return False

    def result(self, run: EngineRun) -> dict[str, Any]:
        """The game's result, once the engine is done (``run``)."""
        self.end()
        divergence = None
        if self.diverged is not None:
            m, rec, diffs, n = self.diverged
            divergence = _divergence(self.sm, m, rec, diffs, self.move_lists[n])
        problem = self.problem or run.problem
        if problem is None and divergence is None:
            if self.missing is not None:
                problem = (
                    f"the engine answered {run.received} records, "
                    f"{self.expected} expected ({self.missing})"
                )
            elif run.received > self.compared:
                problem = f"the engine answered {run.received} records, {self.compared} expected"
        return finish(self.path, len(self.mine), self.compared, divergence, problem, run)


def _divergence(
    sm: StateMachine,
    match: int,
    rec: Record,
    diffs: list[Difference],
    moves: list[list[str]],
) -> dict[str, Any]:
    step = int(rec["step"])
    previous, state = states_along(sm, moves[:step])
    return divergence_at(sm, match, step, moves[:step], diffs, state, previous)


def run_trace(job: Job) -> dict[str, Any]:
    """Play ``job.matches`` random matches of the game; the result's ``text`` is what
    ``gdl2pl trace --seed S -n N`` prints, each record with the game's ``game_sha256`` (the
    caller writes it where it belongs)."""
    start = time.perf_counter()
    try:
        sm = load_machine(job.text, job.path, job.case_sensitive)
    except Exception as e:
        return {"game": job.path, "error": f"gdl2pl cannot load the game: {e}"}
    lines = []
    digest = game_digest(job.text)
    try:
        rng = random.Random(job.seed)
        for m in range(job.matches):
            for rec in random_match(sm, rng, m, job.max_steps):
                rec["game_sha256"] = digest
                lines.append(json.dumps(rec, separators=(",", ":")) + "\n")
    except Exception as e:
        return {"game": job.path, "error": f"{type(e).__name__}: {e}"}
    finally:
        sm.close()
    return {
        "game": job.path,
        "records": len(lines),
        "error": None,
        "seconds": round(time.perf_counter() - start, 3),
        "text": "".join(lines),
    }
