"""Which coordinate of a board's cells is the row, as the game itself says: its ``row``
and ``column`` relations.

In a rule for ``row``, the cells of one row share the row's coordinate and differ in the
other: the notes' ``row(M,P) :- true(cell(M,1,P)) & true(cell(M,2,P)) & true(cell(M,3,P))``
keeps the first (``M``), so ``(cell row column mark)``; connect four's ``(<= (row ?z)
(true (cell ?x1 ?y ?z)) ... (true (cell ?x2 ?y ?z)) ...)`` keeps the second, Cartesian
``(cell x y piece)``. A rule for ``column`` says the same the other way round. A game with
no such rule, or whose rules disagree, says nothing (``None``): its board is drawn
Cartesian (``gdl2pl.board``). Pure functions.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Sequence
from typing import Protocol

from gdl2pl.board import BoardGeometry
from gdl2pl.board import board_geometry
from gdl2pl.depgraph import body_atoms
from gdl2pl.syntax import Func
from gdl2pl.syntax import Literal
from gdl2pl.syntax import Sentence
from gdl2pl.syntax import Term

__all__ = ["RuleLike", "oriented_board", "row_first"]


class RuleLike(Protocol):
    """A rule with a head and body literals (a ``Rule``, or the translator's
    ``FlatRule``)."""

    @property
    def head(self) -> Sentence: ...

    @property
    def body(self) -> Sequence[Literal]: ...


def _cells(body: Sequence[Literal], relation: str, arity: int = 3) -> list[Func]:
    """The cells of ``relation`` (of ``arity``) that the positive ``true`` literals of a
    body ask for."""
    out = []
    for lit in body:
        for atom, negative in body_atoms(lit):
            if negative or not isinstance(atom, Func) or atom.name.casefold() != "true":
                continue
            if len(atom.args) != 1:
                continue
            cell = atom.args[0]
            if (
                isinstance(cell, Func)
                and len(cell.args) == arity
                and cell.name.casefold() == relation.casefold()
            ):
                out.append(cell)
    return out


def _kept(cells: list[Func]) -> int | None:
    """The one coordinate (0 or 1) that every cell shares while the other differs."""
    same = [i for i in (0, 1) if len({_key(c.args[i]) for c in cells}) == 1]
    return same[0] if len(same) == 1 else None


def _key(t: Term) -> str:
    return str(t).casefold()


def row_first(rules: Iterable[RuleLike], relation: str, arity: int = 3) -> bool | None:
    """Whether the cells ``(relation a b v ...)`` (of ``arity``) name their row first
    (``a``), as the rules for ``row`` and ``column`` say (see the module doc); None when
    no rule says, or they disagree."""
    said: set[bool] = set()
    for rule in rules:
        kind = rule.head.name.casefold()
        if kind not in ("row", "column"):
            continue
        cells = _cells(rule.body, relation, arity)
        kept = _kept(cells) if len(cells) >= 2 else None
        if kept is None:
            continue
        row_coordinate = kept if kind == "row" else 1 - kept
        said.add(row_coordinate == 0)
    return said.pop() if len(said) == 1 else None


def oriented_board(fluents: Iterable[Term], rules: Iterable[RuleLike]) -> BoardGeometry | None:
    """The board ``fluents`` form (``gdl2pl.board.board_geometry``), its row the
    coordinate the game's ``row`` and ``column`` rules keep (Cartesian when they say
    nothing)."""
    fluents = list(fluents)
    geometry = board_geometry(fluents)
    if geometry is None or not row_first(rules, geometry.relation, geometry.arity):
        return geometry
    return board_geometry(fluents, row_first=True)
