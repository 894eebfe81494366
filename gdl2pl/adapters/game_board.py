"""The board of a loaded game, for drawing its states: the geometry (``gdl2pl.board``) of
every fluent the game may hold, not of the fluents one state holds.

The fluents are the game's ``base`` when it declares one, else the static domains of its
rules (``domains.py``, pure Python, bounded by ``MAX_BOARD_TERMS`` values per argument:
a second or two at most), else, past that bound (chess, checkers), the initial state's
(which lays out the whole board in most such games). A game whose fluents form no board
has none: its states are drawn from their own fluents. Its rows are the coordinate the
game's own ``row`` and ``column`` rules keep (``gdl2pl.board_axes``). ``gdl2pl play`` and
the studio draw with it; the adapters draw on their observation's board, made the same way
(``GdlGame.draw``).
"""

from __future__ import annotations

import weakref

from gdl2pl.board import BoardGeometry
from gdl2pl.board_axes import oriented_board
from gdl2pl.contract import GameMachine
from gdl2pl.errors import GdlError
from gdl2pl.flatten import FlatRule
from gdl2pl.syntax import Term

from .domains import rule_domains

#: The bound on the terms of one argument the static domains may reach for a board
#: (beyond it: the initial state's fluents).
MAX_BOARD_TERMS = 2_000

_KNOWN: weakref.WeakKeyDictionary[GameMachine, BoardGeometry | None] = (
    weakref.WeakKeyDictionary()
)


def game_geometry(sm: GameMachine) -> BoardGeometry | None:
    """The board every state of ``sm`` is drawn on, or None (computed once per game)."""
    if sm in _KNOWN:
        return _KNOWN[sm]
    geometry = oriented_board(_fluents(sm), game_rules(sm))
    _KNOWN[sm] = geometry
    return geometry


def game_rules(sm: GameMachine) -> list[FlatRule]:
    """The game's flat rules, as the translation made them."""
    return [rule for _, rule in sm.translation.origins]


def _fluents(sm: GameMachine) -> list[Term]:
    try:
        base = sm.base_propositions
    except GdlError:
        base = []  # a game older than GDL 2010 that uses 'base' for something else
    if base:
        return base
    try:
        return list(rule_domains(game_rules(sm), sm.roles, sm.name, MAX_BOARD_TERMS).fluents)
    except GdlError:  # DomainExplosionError: past the bound
        return list(sm.initial_state)
