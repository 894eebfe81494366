"""Judging an engine's records against gdl2pl's: a record out of place, a divergence's
report (with gdl2pl's reasons), and a game's verdict. Shared by the plain comparison
(``job.py``, up to the first divergence) and ``--keep-going`` (``keep_going.py``)."""

from __future__ import annotations

from typing import Any

from gdl2pl.contract import MachineState
from gdl2pl.kif import kif_term

from .engine import EngineRun
from .oracle_link import Record
from .oracle_link import StateMachine
from .records import Difference
from .why import why_of


def game_result(game: str, verdict: str, **extra: Any) -> dict[str, Any]:
    """A per-game result object (the ``--json`` shape) for the game file ``game``."""
    out: dict[str, Any] = {
        "game": game,
        "verdict": verdict,
        "matches": 0,
        "steps_compared": 0,
        "first_divergence": None,
        "error": None,
    }
    out.update(extra)
    return out


def out_of_place(mine: Record, theirs: Any) -> str | None:
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
    game: str,
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
    return game_result(
        game,
        verdict,
        matches=matches,
        steps_compared=compared,
        first_divergence=divergence,
        error=error,
        **extra,
    )


#: The fields whose facts are terms of the game, reported in its spelling.
SPELLED = frozenset({"state", "legal"})


def _spelled(sm: StateMachine, fact: str) -> str:
    """An engine's fact in the game's spelling (``(CELLHOLDS 1 1 WHITE)`` as the game
    writes ``cellHolds``; symbols the game lacks as the engine wrote them), or as it came
    if it is not a KIF term."""
    try:
        return kif_term(sm.term(fact))
    except Exception:  # not a term: shown as the engine wrote it
        return fact


def states_along(
    sm: StateMachine, moves: list[list[str]]
) -> tuple[MachineState | None, MachineState]:
    """(the state before the last, the last state) along ``moves`` from the initial state."""
    previous, state = None, sm.initial_state
    for jm in moves:
        previous, state = state, sm.next_state(state, [sm.term(m) for m in jm])
    return previous, state


def divergence_at(
    sm: StateMachine,
    match: int,
    step: int,
    prefix: list[list[str]],
    diffs: list[Difference],
    state: MachineState,
    previous: MachineState | None,
    explain: bool = True,
) -> dict[str, Any]:
    """A divergence's report: where, the moves there, and each difference in the game's
    spelling with gdl2pl's reason (as text and as proof trees) for its side, given the
    step's ``state`` and the ``previous`` one gdl2pl judged it from (no reason unless
    ``explain``)."""
    last = prefix[-1] if prefix else None
    out = []
    for d in diffs:
        shown = Difference(
            d.field,
            d.role,
            d.only_gdl2pl,
            [_spelled(sm, f) for f in d.only_engine] if d.field in SPELLED else d.only_engine,
            "",
            d.kind,
        )
        entry = shown.as_json()
        if explain:
            why = why_of(sm, shown, step, last, state, previous)
            entry["why"] = why.text
            entry["why_details"] = why.details
        out.append(entry)
    return {"match": match, "step": step, "moves": prefix, "differences": out}
