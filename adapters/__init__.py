"""What the game-AI adapters share: stable action ids, observations, game kind.

Free of optional imports: ``gdl2pl.openspiel``, ``gdl2pl.pettingzoo`` and
``gdl2pl.gymnasium`` build on it."""

from .domains import Domains, analyse_domains
from .errors import AdapterError, DomainExplosionError, UnrepresentableStateError
from .game import GdlGame, Kind, Node, Position, goal_return
from .paths import GAME_PATH_VARIABLE, find_game

__all__ = [
    "GAME_PATH_VARIABLE",
    "AdapterError",
    "DomainExplosionError",
    "Domains",
    "GdlGame",
    "Kind",
    "Node",
    "Position",
    "UnrepresentableStateError",
    "analyse_domains",
    "find_game",
    "goal_return",
]
