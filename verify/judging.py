"""Judging an engine's records as they arrive, keeping only what the game's result needs.

A ``Judge`` takes the engine's records one at a time (``take``, the engine runner's
``on_record``), so a game's records are never all in memory at once: an engine that
prints large states costs one record's worth, not its whole output parsed. Its
``compare`` is a generator that receives each record at a ``yield`` (``END`` after the
last) and returns whether the engine may be stopped; records past that point are only
counted.
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator
from typing import Any

from .engine import EngineRun
from .oracle_link import Record

#: What a judge receives after the engine's last record.
END: Any = object()

Steps = Generator[None, Any, bool]


class Judge:
    """Compares an engine's records with gdl2pl's ``mine`` (one list per match):
    ``compared`` steps so far, and ``problem``, what is wrong with the engine's answers
    (None while nothing is)."""

    def __init__(self, mine: list[list[Record]]) -> None:
        self.mine = mine
        self.expected = sum(map(len, mine))
        self.compared = 0
        self.problem: str | None = None
        self._steps = self.compare()
        self._done = False
        try:
            next(self._steps)
        except StopIteration:  # nothing to compare
            self._done = True

    def compare(self) -> Steps:
        """Receive the engine's records (``record = yield``) until ``END``; return True
        when what follows is of no use (the engine may be stopped)."""
        raise NotImplementedError

    def take(self, record: Any) -> bool:
        """Judge one record; False when the engine may be stopped."""
        if self._done:
            return True
        try:
            self._steps.send(record)
        except StopIteration as e:
            self._done = True
            return not e.value
        return True

    def end(self) -> None:
        """The engine printed no more records."""
        if not self._done:
            self._done = True
            with contextlib.suppress(StopIteration):
                self._steps.send(END)


def result(path: str, verdict: str, **extra: Any) -> dict[str, Any]:
    """A per-game result object (the ``--json`` shape)."""
    out: dict[str, Any] = {
        "game": path,
        "verdict": verdict,
        "matches": 0,
        "steps_compared": 0,
        "first_divergence": None,
        "error": None,
    }
    out.update(extra)
    return out


def misplaced(mine: Record, theirs: Any) -> str | None:
    """Why the engine's next record is not the one of ``mine``'s match and step (None if it
    is, or if it does not say: then records are taken in order). Error records are not
    checked: engines number the step of an error differently."""
    if not isinstance(theirs, dict) or "error" in mine or "error" in theirs:
        return None
    want = (mine["match"], mine["step"])
    got = (theirs.get("match", want[0]), theirs.get("step", want[1]))
    if got == want:
        return None
    return (
        f"the engine's records are out of step: expected match {want[0]} step {want[1]}, "
        f"its next record is match {got[0]} step {got[1]} (a record missing or extra)"
    )


def finish(
    path: str,
    matches: int,
    compared: int,
    divergence: dict[str, Any] | None,
    problem: str | None,
    run: EngineRun,
    **extra: Any,
) -> dict[str, Any]:
    """The verdict: a divergence found in what the engine answered wins (with the engine's
    problem, if any, still reported); else the engine's problem; else agreement."""
    if divergence is not None:
        verdict = "diverge"
    elif problem is not None:
        verdict = "timeout" if run.timed_out else "engine_error"
    else:
        verdict = "agree"
    error = problem
    if problem is not None and run.stderr_tail.strip():
        error = f"{problem}; stderr: {run.stderr_tail.strip()}"
    return result(
        path,
        verdict,
        matches=matches,
        steps_compared=compared,
        first_divergence=divergence,
        error=error,
        **extra,
    )
