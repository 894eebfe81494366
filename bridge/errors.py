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


class PlayoutDepthError(GameError):
    """A random playout reached its depth cap without a terminal state."""


class ReasonerError(GdlError):
    """SWI-Prolog raised an exception (resource limits included) while answering."""


class QueryInterrupted(ReasonerError):
    """The query was interrupted from another thread (``engine.interrupt``): a stopped
    match, or Ctrl-C on the command line."""


class GameClosedError(ReasonerError):
    """The state machine was closed: its game is (being) unloaded and answers no more."""
