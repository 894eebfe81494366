"""What goes wrong when a GDL game cannot be represented in a game-AI library."""

from __future__ import annotations

from gdl2pl.errors import GdlError


class AdapterError(GdlError):
    """A game cannot be represented as asked; the message names the game, and where it
    shows, the state and the role."""


class DomainExplosionError(AdapterError):
    """The static analysis of moves or fluents cannot bound a domain."""


class UnrepresentableStateError(AdapterError):
    """A reachable state breaks what the adapter promised (a role without a legal move,
    no unique goal at the end, a move outside the action table, a second mover in a game
    loaded as turn-taking)."""


class MissingGoalWarning(UserWarning):
    """A terminal state gives a role no goal value (the game is not well-formed); the
    role got the assumed value (``GdlGame(missing_goal=...)`` chooses it or refuses)."""


class UndeclaredFluentWarning(UserWarning):
    """The game's ``base`` omits fluents its rules may reach; the adapters' observation
    holds them too, from the reachability analysis (``GdlGame.gdl_metadata()`` names
    them under ``observation``)."""
