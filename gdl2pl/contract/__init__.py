"""The state machine's contract, shared by every engine: ``GameMachine`` (what the layers
above call; an engine supplies its primitives), the ``MachineState`` every engine
returns, and the game's errors. Pure Python: no engine, no SWI-Prolog.
"""

from .consistent import ConsistentStream
from .consistent import JointMoves
from .errors import GameError
from .errors import GoalDefinitionError
from .errors import IllegalMoveError
from .errors import MoveDefinitionError
from .errors import NoConsistentStateError
from .errors import PlayoutDepthError
from .errors import TransitionDefinitionError
from .game_machine import DEFAULT_MAX_DEPTH
from .game_machine import Consistent
from .game_machine import EngineChoice
from .game_machine import GameMachine
from .game_machine import Step
from .game_machine import SymbolStep
from .state import MAX_TERM_DEPTH
from .state import MachineState
from .state import TermCache

__all__ = [
    # the contract
    "GameMachine",
    "Step",
    "SymbolStep",
    "Consistent",
    "ConsistentStream",
    "JointMoves",
    "EngineChoice",
    "DEFAULT_MAX_DEPTH",
    # the state every engine returns
    "MachineState",
    "TermCache",
    "MAX_TERM_DEPTH",
    # the game's errors
    "GameError",
    "MoveDefinitionError",
    "GoalDefinitionError",
    "TransitionDefinitionError",
    "IllegalMoveError",
    "PlayoutDepthError",
    "NoConsistentStateError",
]
