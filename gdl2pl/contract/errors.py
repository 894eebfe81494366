"""Exceptions of the state machine, after ggp-base's (in Python naming): what any engine
raises when the game's rules cannot answer a question."""

from __future__ import annotations

from gdl2pl.errors import GdlError


class GameError(GdlError):
    """A question the game's rules cannot answer (the game, not gdl2pl, is at fault)."""


class MoveDefinitionError(GameError):
    """A role has no legal move in a non-terminal state."""


class GoalDefinitionError(GameError):
    """A role has no goal value, or several, in a state."""


class TransitionDefinitionError(GameError):
    """A joint move that cannot be applied: wrong length, or ill-formed."""


class IllegalMoveError(TransitionDefinitionError):
    """A joint move containing a move that is not legal for its role."""


class PlayoutDepthError(GameError):
    """A random playout reached its depth cap without a terminal state."""


class NoConsistentStateError(GameError):
    """No state agrees with a role's history (``gdl2pl.information``): the history is
    impossible (``exhausted`` is True: the whole tree was searched), or the search budget
    ran out first."""

    def __init__(self, message: str, exhausted: bool) -> None:
        super().__init__(message)
        self.exhausted = exhausted
