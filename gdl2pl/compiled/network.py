"""The propositional network of a ground game (evaluated by the C extension ``_network``).

Atoms are numbered: the fluents first (one bit of the state each), then the moves (one
bit of the joint move each), then one atom that is always false, then the derived
atoms in evaluation order. A derived atom is the OR of its rules, a rule the AND of its
literals (an atom, or its negation). The derived atoms are evaluated in the order of
their relations' strata (compiled/assemble.py), and within a recursive stratum by the
cycles of its ground atoms (compiled/components.py): negation only points to earlier
ones, and the atoms of a cycle form a cyclic group, evaluated from all-false to its
least fixpoint (by a worklist in C). The *state program* computes
what depends on the state only (legal, terminal, goal), the *move program* what
depends on the joint move too (next).

A program is a list of ints: ``a >= 0`` evaluates atom a; ``-k`` says the next k atoms
form a cycle, iterated to a fixpoint.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

Raw = Any


def standard_order(raw: Raw) -> tuple[Any, ...]:
    """The sort key of a raw term in SWI-Prolog's standard order of terms (the order of
    the Prolog engine's answers): atoms by their text, before compounds, which go by
    arity, then name, then arguments."""
    if isinstance(raw, str):
        return (0, raw)
    return (1, len(raw) - 1, raw[0], tuple(standard_order(a) for a in raw[1:]))


@dataclass(frozen=True)
class GroundingStats:
    """What grounding a game took: seconds, facts of the relaxed model, ground rules,
    seconds per phase (``model``, ``counts``, ``network``, ``assembly``: see
    compiled/grounder.py), and per relation its ground rules, most first."""

    seconds: float
    facts: int
    rules: int
    phases: list[tuple[str, float]]
    relations: list[tuple[str, int]]


@dataclass(frozen=True)
class Network:
    """A ground game as gates (see the module's docstring)."""

    n_fluents: int
    n_moves: int
    n_atoms: int
    #: rules of atom a: rule_start[a] .. rule_start[a + 1] - 1 (len n_atoms + 1)
    rule_start: Sequence[int]
    #: literals of rule r: lits[lit_start[r] .. lit_start[r + 1] - 1]; 2 * atom + negated
    lit_start: Sequence[int]
    lits: Sequence[int]
    state_program: Sequence[int]
    move_program: Sequence[int]
    #: per role, (atom, move index) of each possible legal move, in standard order
    legal: list[list[tuple[int, int]]]
    #: (atom, fluent index) of each possible next fluent
    next: list[tuple[int, int]]
    #: the atom of terminal (the false atom when the game never says terminal)
    terminal: int
    #: per role, (atom, value) of each possible goal value, in standard order
    goals: list[list[tuple[int, Raw]]]
    #: per role, (atom, percept) of each possible percept (GDL-II's sees), in standard
    #: order
    sees: list[list[tuple[int, Raw]]]
    #: the fluent of each state bit, and the (role index, move) of each move bit, in
    #: the Prolog engine's raw form (role -1: a legal move of something not a role)
    fluents: list[Raw]
    moves: list[tuple[int, Raw]]
    #: the fluents of the initial state
    init: list[int]
    stats: GroundingStats

    @property
    def n_rules(self) -> int:
        return len(self.lit_start) - 1
