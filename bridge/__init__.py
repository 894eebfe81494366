"""The janus bridge: the GGP state machine on SWI-Prolog (``StateMachine``, the
janus-backed ``GameMachine`` of ``gdl2pl.contract``, whose names it re-exports).

Importing this package does not start Prolog; creating the first ``StateMachine`` does.
"""

from gdl2pl.contract import Consistent
from gdl2pl.contract import GameMachine
from gdl2pl.contract import MachineState
from gdl2pl.contract import Step
from gdl2pl.contract import SymbolStep

from .errors import GameClosedError
from .errors import GameError
from .errors import GoalDefinitionError
from .errors import IllegalMoveError
from .errors import MoveDefinitionError
from .errors import NoConsistentStateError
from .errors import PlayoutDepthError
from .errors import QueryInterrupted
from .errors import ReasonerError
from .errors import TransitionDefinitionError
from .machine import StateMachine
from .swipl import PrologUnavailableError
from .swipl import check_environment
from .swipl import runtime

__all__ = [
    "Consistent",
    "GameMachine",
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
    "check_environment",
    "runtime",
]
