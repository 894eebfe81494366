"""The janus bridge: the GGP state machine on SWI-Prolog.

Importing this package does not start Prolog; creating the first ``StateMachine`` does.
"""

from .errors import (
    GameError,
    GoalDefinitionError,
    IllegalMoveError,
    MoveDefinitionError,
    PlayoutDepthError,
    QueryInterrupted,
    ReasonerError,
    TransitionDefinitionError,
)
from .explain import ExplainError, Explanation
from .machine import MachineState, StateMachine, Step
from .swipl import PrologUnavailableError, check_environment, runtime

__all__ = [
    "ExplainError",
    "Explanation",
    "GameError",
    "GoalDefinitionError",
    "IllegalMoveError",
    "MachineState",
    "MoveDefinitionError",
    "PlayoutDepthError",
    "PrologUnavailableError",
    "QueryInterrupted",
    "ReasonerError",
    "StateMachine",
    "Step",
    "TransitionDefinitionError",
    "check_environment",
    "runtime",
]
