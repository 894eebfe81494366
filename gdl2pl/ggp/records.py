"""Cross-check records: the JSON-lines format of the reference engine's answers.

One object per visited state::

    {"match": 0, "step": 3, "state": [...], "legal": {role: [...]}, "terminal": false,
     "goals": {role: 50 | null}, "move": [move per role] | null}

Strings are KIF with single spaces, sorted by their lower-case text; ``goals`` is
``null`` for a role without a unique numeric value. ``replay`` follows given joint moves,
``random_match`` chooses them; both yield these objects, and an ``{"error": ...}`` object
ends a match early.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from collections.abc import Sequence
from typing import Any

from gdl2pl.bridge.errors import GameError
from gdl2pl.contract import GameMachine
from gdl2pl.contract import MachineState
from gdl2pl.kif import kif_term

Record = dict[str, Any]
NO_LEGAL_MOVE = "non-terminal state with a role that has no legal move"


def state_record(sm: GameMachine, state: MachineState, match: int, step: int) -> Record:
    """The record of one state (without its ``move``)."""
    terminal, legal, goals = sm.state_info(state)
    roles = [str(r) for r in sm.roles]
    return {
        "match": match,
        "step": step,
        "state": sorted((kif_term(f) for f in state), key=_order),
        "legal": {
            r: sorted((kif_term(m) for m in ms), key=_order)
            for r, ms in zip(roles, legal, strict=True)
        },
        "terminal": terminal,
        "goals": {
            r: (vs[0] if len(vs) == 1 and isinstance(vs[0], int) else None)
            for r, vs in zip(roles, goals, strict=True)
        },
    }


def _order(kif: str) -> tuple[str, str]:
    """The order of facts in a record: by lower-case text (the format compares
    case-insensitively), then by the text itself."""
    return kif.lower(), kif


def replay(
    sm: GameMachine, joint_moves: Sequence[Sequence[str]], match: int = 0
) -> Iterator[Record]:
    """Follow ``joint_moves`` (KIF strings, role order) from the initial state."""
    state = sm.initial_state
    for step in range(len(joint_moves) + 1):
        rec = state_record(sm, state, match, step)
        if step == len(joint_moves):
            rec["move"] = None
            yield rec
            if not rec["terminal"] and not all(rec["legal"].values()):
                yield _error(match, step, NO_LEGAL_MOVE)
            return
        if rec["terminal"]:
            rec["move"] = None
            yield rec
            yield _error(match, step, "a move was given after the end of the match")
            return
        jm = list(joint_moves[step])
        rec["move"] = jm
        yield rec
        try:
            state = sm.next_state(state, [sm.term(m) for m in jm])
        except (GameError, ValueError) as e:
            yield _error(match, step, str(e))
            return


def random_match(
    sm: GameMachine, rng: random.Random, match: int = 0, max_steps: int = 10_000
) -> Iterator[Record]:
    """Play uniformly random joint moves until a terminal state (or ``max_steps``)."""
    state = sm.initial_state
    for step in range(max_steps + 1):
        rec = state_record(sm, state, match, step)
        if rec["terminal"] or step == max_steps:
            rec["move"] = None
            yield rec
            return
        legal = list(rec["legal"].values())
        if not all(legal):
            rec["move"] = None
            yield rec
            yield _error(match, step, NO_LEGAL_MOVE)
            return
        jm = [rng.choice(ms) for ms in legal]
        rec["move"] = jm
        yield rec
        state = sm.next_state(state, [sm.term(m) for m in jm])


def _error(match: int, step: int, message: str) -> Record:
    return {"match": match, "step": step, "error": message}
