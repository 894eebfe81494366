"""The propositional network of a ground game, and a reference evaluator in Python.

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

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gdl2pl.vocabulary import goal_number

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


class PyEvaluator:
    """The network evaluated in Python: the reference for the C extension, and the
    figure it is measured against. Same methods as ``_network.Network``."""

    def __init__(self, net: Network) -> None:
        self.net = net
        self.val = bytearray(net.n_atoms)
        self.current: bytes | None = None
        self.rng = random.Random(0)
        #: move index -> (its role, the atom saying it is legal)
        self.move_legal = {m: (r, a) for r, ms in enumerate(net.legal) for a, m in ms}
        self.move_objects: tuple[Any, ...] | None = None

    def _atom(self, a: int) -> int:
        val, lits, ls = self.val, self.net.lits, self.net.lit_start
        for r in range(self.net.rule_start[a], self.net.rule_start[a + 1]):
            for i in range(ls[r], ls[r + 1]):
                lit = lits[i]
                if val[lit >> 1] == (lit & 1):
                    break
            else:
                return 1
        return 0

    def _run(self, program: Sequence[int]) -> None:
        val = self.val
        i = 0
        while i < len(program):
            x = program[i]
            if x >= 0:
                val[x] = self._atom(x)
                i += 1
                continue
            group = program[i + 1 : i + 1 - x]
            for a in group:
                val[a] = 0
            changed = True
            while changed:
                changed = False
                for a in group:
                    v = self._atom(a)
                    if v != val[a]:
                        val[a] = v
                        changed = True
            i += 1 - x

    def _state(self, state: bytes) -> None:
        if self.current != state:
            self.val[: self.net.n_fluents] = state
            self._run(self.net.state_program)
            self.current = state

    def legal(self, state: bytes) -> list[list[int]]:
        self._state(state)
        val = self.val
        return [[m for a, m in ms if val[a]] for ms in self.net.legal]

    def terminal(self, state: bytes) -> bool:
        self._state(state)
        return bool(self.val[self.net.terminal])

    def goals(self, state: bytes) -> list[list[int]]:
        self._state(state)
        val = self.val
        return [[i for i, (a, _) in enumerate(vs) if val[a]] for vs in self.net.goals]

    def next(self, state: bytes, moves: Sequence[int]) -> bytes:
        self._state(state)
        net, val = self.net, self.val
        base = net.n_fluents
        val[base : base + net.n_moves] = bytes(net.n_moves)
        for m in moves:
            val[base + m] = 1
        self._run(net.move_program)
        out = bytearray(net.n_fluents)
        for a, f in net.next:
            if val[a]:
                out[f] = 1
        return bytes(out)

    def sees(self, state: bytes, moves: Sequence[int]) -> list[list[int]]:
        """Per role, the indices of its percepts when ``moves`` is played in ``state``."""
        self.next(state, moves)
        val = self.val
        return [[k for k, (a, _) in enumerate(ps) if val[a]] for ps in self.net.sees]

    def set_moves(self, objects: tuple[Any, ...]) -> None:
        """The objects, one per move index, that ``step(..., 2)`` answers legal moves with."""
        if not isinstance(objects, tuple) or len(objects) != self.net.n_moves:
            raise ValueError("set_moves takes a tuple of one object per move")
        self.move_objects = objects

    def step(self, state: bytes, moves: Sequence[int], full: int) -> Any:
        """``("illegal", role)`` for the first role whose move is not legal; else the next
        state, and with ``full`` also whether it is terminal and the legal moves there:
        ``(state, terminal, legal)``, legal as move indices (1) or ``set_moves``' objects
        (2)."""
        if full == 2 and self.move_objects is None:
            raise ValueError("step(..., 2) needs set_moves first")
        if len(moves) != len(self.net.legal):
            raise ValueError("a joint move is one move index per role")
        self._state(state)
        for r, m in enumerate(moves):
            role, atom = self.move_legal.get(m, (-1, -1))
            if role != r or not self.val[atom]:
                return ("illegal", r)
        new = self.next(state, moves)
        if not full:
            return new
        legal: Any = self.legal(new)
        if full == 2:
            objects = self.move_objects
            assert objects is not None
            legal = tuple(tuple(objects[m] for m in ms) for ms in legal)
        return new, self.terminal(new), legal

    def seed(self, seed: int) -> None:
        self.rng.seed(seed)

    def _playout(self, state: bytes, max_depth: int) -> tuple[bytes, int, int]:
        """(final state, depth, -1) or (state, depth, role without a legal move)."""
        depth = 0
        while not self.terminal(state) and depth < max_depth:
            joint = []
            for r, ms in enumerate(self.legal(state)):
                if not ms:
                    return state, depth, r
                joint.append(self.rng.choice(ms))
            state = self.next(state, joint)
            depth += 1
        return state, depth, -1

    def depth_charge(self, state: bytes, max_depth: int) -> tuple[Any, ...]:
        final, depth, stuck = self._playout(state, max_depth)
        return ("stuck", stuck, final) if stuck >= 0 else ("done", final, depth)

    def playouts(self, state: bytes, n: int, max_depth: int) -> tuple[Any, ...]:
        per_role: list[list[tuple[int, int]]] = [[] for _ in self.net.legal]
        steps = 0
        for _ in range(n):
            final, depth, stuck = self._playout(state, max_depth)
            if stuck >= 0:
                return ("stuck", stuck, final)
            steps += depth
            for r, ks in enumerate(self.goals(final)):
                values = [self.net.goals[r][k][1] for k in ks]
                number = goal_number(values[0]) if len(values) == 1 else None
                value = -1 if number is None else number
                per_role[r].append((value, depth))
        return ("playouts", per_role, steps)
