"""The janus bridge: the GGP state machine on SWI-Prolog.

Importing this package does not start Prolog; creating the first ``StateMachine`` does.
"""

from .engine import PrologUnavailableError, check_environment, runtime
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
from .machine import MachineState, StateMachine

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
    "TransitionDefinitionError",
    "check_environment",
    "runtime",
]
