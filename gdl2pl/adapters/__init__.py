"""What the game-AI adapters share: stable action ids, observations, game kind.

Free of optional imports: ``gdl2pl.openspiel``, ``gdl2pl.pettingzoo`` and
``gdl2pl.gymnasium`` build on it."""

from .domains import Domains
from .domains import analyse_domains
from .errors import AdapterError
from .errors import DomainExplosionError
from .errors import UndeclaredFluentWarning
from .errors import UnrepresentableStateError
from .game import Claim
from .game import GdlGame
from .game import Kind
from .game import Node
from .game import Position
from .game import goal_return
from .paths import GAME_PATH_VARIABLE
from .paths import find_game

__all__ = [
    "GAME_PATH_VARIABLE",
    "AdapterError",
    "Claim",
    "DomainExplosionError",
    "Domains",
    "GdlGame",
    "Kind",
    "Node",
    "Position",
    "UndeclaredFluentWarning",
    "UnrepresentableStateError",
    "analyse_domains",
    "find_game",
    "goal_return",
]
