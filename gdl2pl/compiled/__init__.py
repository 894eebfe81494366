"""The compiled engine: the game's rules grounded (by clingo's grounder,
``grounder.py``) into a network of boolean gates, evaluated by a small C extension
(``_network``), with the same contract as the Prolog engine
(``gdl2pl.bridge.StateMachine``), which stays the definition of every game's meaning and
checks it (tests/test_compiled.py).

``load_machine(path, engine="auto")`` gives either engine.
"""

from .auto import AutoMachine
from .build import NetworkBuild
from .errors import CompiledUnavailableError
from .errors import CompileRefusedError
from .errors import GroundingBudgetError
from .factory import EngineChoice
from .factory import load_description
from .factory import load_machine
from .factory import machine_from_text
from .factory import on_engine
from .ground import GroundingBudget
from .machine import CompiledMachine

__all__ = [
    "AutoMachine",
    "NetworkBuild",
    "CompileRefusedError",
    "CompiledMachine",
    "CompiledUnavailableError",
    "EngineChoice",
    "GroundingBudget",
    "GroundingBudgetError",
    "load_description",
    "load_machine",
    "machine_from_text",
    "on_engine",
]
