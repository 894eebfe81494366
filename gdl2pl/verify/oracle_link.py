"""gdl2pl's own answers, for this package: the one place that imports the reasoner's
oracle, state machine and explanations. When they move, only the imports below change.
"""

from __future__ import annotations

from gdl2pl.bridge import StateMachine
from gdl2pl.explain import explain
from gdl2pl.ggp.records import Record
from gdl2pl.ggp.records import random_match
from gdl2pl.ggp.records import replay
from gdl2pl.ggp.records import state_record
from gdl2pl.load import parse_game

__all__ = [
    "Record",
    "StateMachine",
    "explain",
    "load_machine",
    "random_match",
    "replay",
    "state_record",
]


def load_machine(text: str, path: str, case_sensitive: bool = False) -> StateMachine:
    """Load a game from its ``text``; ``path`` names it in messages and decides the syntax
    when the text alone does not."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return StateMachine(parse_game(text, file=path), name, case_sensitive=case_sensitive)
