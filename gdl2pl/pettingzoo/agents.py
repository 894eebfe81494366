"""PettingZoo's names for the agents of a game: ``<role>_<index>``.

PettingZoo's API test recommends agent names of the form ``<descriptor>_<number>``
(``player_0``, matched by ``[a-z]+_[0-9]+``). An agent is named after its role, in
lowercase letters only, and numbered in role order: ``xplayer_0`` and ``oplayer_1`` in
tic-tac-toe, ``red_0`` and ``black_1`` in connectFour; a role with no letter in its name
is ``player_<index>``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence


def agent_names(roles: Sequence[object]) -> list[str]:
    """The agents' names of ``roles``, in the same order (distinct: each ends in its
    index)."""
    return [f"{re.sub('[^a-z]', '', str(r).lower()) or 'player'}_{i}" for i, r in enumerate(roles)]
