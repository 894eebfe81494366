"""The janus bridge: the GGP state machine on SWI-Prolog.

Importing this package does not start Prolog; creating the first ``StateMachine`` does.
"""

from .errors import GameClosedError
from .errors import GameError
from .errors import GoalDefinitionError
from .errors import IllegalMoveError
from .errors import MoveDefinitionError
from .errors import PlayoutDepthError
from .errors import QueryInterrupted
from .errors import ReasonerError
from .errors import TransitionDefinitionError
from .information import NoConsistentStateError
from .information import Turn
from .machine import MachineState
from .machine import StateMachine
from .machine import Step
from .machine import SymbolStep
from .swipl import PrologUnavailableError
from .swipl import check_environment
from .swipl import runtime

__all__ = [
    "GameClosedError",
    "GameError",
    "GoalDefinitionError",
    "IllegalMoveError",
    "MachineState",
    "MoveDefinitionError",
    "NoConsistentStateError",
    "PlayoutDepthError",
    "PrologUnavailableError",
    "QueryInterrupted",
    "ReasonerError",
    "StateMachine",
    "Step",
    "SymbolStep",
    "TransitionDefinitionError",
    "Turn",
    "check_environment",
    "runtime",
]
