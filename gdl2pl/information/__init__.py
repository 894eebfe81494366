"""GDL-II's information sets: what a role knows of a game it cannot see (its history of
moves and percepts), the exact belief over the states it cannot tell apart, and states
sampled from it for determinized search.

Built on the state machine's contract (``gdl2pl.contract.GameMachine``: its
``consistent_children``), so it works on any engine; the player, the adapters and the
studio import it from here.
"""

from gdl2pl.contract.errors import NoConsistentStateError

from .sets import History
from .sets import Turn
from .sets import belief
from .sets import sample_states

__all__ = ["History", "NoConsistentStateError", "Turn", "belief", "sample_states"]
