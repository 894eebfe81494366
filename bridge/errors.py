"""Exceptions of the state machine, after ggp-base's (in Python naming)."""

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


class ReasonerError(GdlError):
    """SWI-Prolog raised an exception (resource limits included) while answering."""
