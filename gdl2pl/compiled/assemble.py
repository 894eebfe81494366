"""The network's arrays from the ground program clingo gave (``grounder.GroundProgram``).

1. Atoms are numbered: fluents, moves, one false atom, then the derived atoms in
   evaluation order (by the stratum of their relation; a chain's atoms before its
   relation's, in their order). A recursive stratum is one cyclic group, which
   ``components.py`` splits into the cycles of its ground atoms. An atom that always holds
   has a rule without a body; one without rules is a constant (false) and folded away.
2. The state program (what depends on the state only) and the move program (what reads
   the joint move, or an atom that does), in evaluation order.

The answer (``Assembled``) is in the grounder's py form: ``ground.py`` makes the
``Network`` of it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .grounder import GroundProgram

Body = Sequence[int]


@dataclass(frozen=True)
class Assembled:
    """The network's arrays (as ``network.Network`` has them) with its terms in py form:
    ``legal`` (move index, atom), ``next`` (atom, fluent index), ``terminal`` an atom or
    -1, ``goals`` and ``sees`` [role, value, atom]; ``rules_of``: per relation id its
    ground rules (a chain's counted with its rule's head)."""

    fluents: list[Any]
    moves: list[list[Any]]
    n_atoms: int
    rule_start: list[int]
    lit_start: list[int]
    lits: list[int]
    state_program: list[int]
    move_program: list[int]
    legal: list[tuple[int, int]]
    next: list[tuple[int, int]]
    terminal: int
    goals: list[list[Any]]
    sees: list[list[Any]]
    init: list[int]
    rules_of: dict[int, int]


def assemble(
    gp: GroundProgram,
    strata: Mapping[int, tuple[int, bool]],
    rule_heads: Mapping[int, int],
) -> Assembled:
    """The network of ``gp``. ``strata``: relation id -> (position of its stratum,
    recursive); ``rule_heads``: rule index -> its head's relation id."""
    rules: dict[int, list[Body]] = defaultdict(list)
    for head, body in gp.rules:
        rules[head[0]].append(body)
    _drop_facts(gp, rules)
    return _arrays(gp, rules, strata, rule_heads)


def _drop_facts(gp: GroundProgram, rules: dict[int, list[Body]]) -> None:
    """An atom that always holds keeps a rule without a body, and only that; one that
    no rule reads and the network does not answer goes."""
    answered = {*gp.legal, *gp.next, *gp.terminal, *(g[2] for g in gp.goals),
                *(s[2] for s in gp.sees)}
    facts = [h for h, bodies in rules.items() if any(not b for b in bodies)]
    if not facts:
        return
    read = {abs(lit) for _, body in gp.rules for lit in body}
    for h in facts:
        if h in answered or h in read:
            rules[h] = [()]
        else:
            del rules[h]


def _arrays(
    gp: GroundProgram,
    rules: dict[int, list[Body]],
    strata: Mapping[int, tuple[int, bool]],
    rule_heads: Mapping[int, int],
) -> Assembled:
    nf, nm = len(gp.fluents), len(gp.moves)
    false = nf + nm
    derived = gp.derived

    def relation(a: int) -> int:
        tag = derived[a]
        return int(tag[1] if tag[0] == "r" else rule_heads[tag[1]])

    def stratum(a: int) -> int:
        return strata.get(relation(a), (-1, False))[0]

    def key(a: int) -> tuple[int, float, int]:
        tag = derived[a]
        return (stratum(a), tag[2] if tag[0] == "x" else float("inf"), a)

    heads = sorted(rules, key=key)
    # a literal of the ground program (an atom, negative for its negation) -> the
    # network's (2 * atom, + 1 if negated); None: the rule never holds (a positive
    # literal of an atom without rules); -1: the literal always holds (its negation)
    code: dict[int, int | None] = {}
    for i, a in enumerate(gp.fluent_atoms):
        code[a], code[-a] = 2 * i, 2 * i + 1
    for i, a in enumerate(gp.move_atoms, start=nf):
        code[a], code[-a] = 2 * i, 2 * i + 1
    number = {}
    for i, a in enumerate(heads, start=false + 1):
        number[a] = i
        code[a], code[-a] = 2 * i, 2 * i + 1

    rule_lists: list[list[tuple[int, ...]]] = []
    for a in heads:
        kept: set[tuple[int, ...]] = set()
        for b in rules[a]:
            mapped = [code.get(lit, None if lit > 0 else -1) for lit in b]
            if None in mapped:
                continue
            kept.add(tuple(sorted({x for x in mapped if x is not None and x >= 0})))
        rule_lists.append(sorted(kept))

    rule_start = [0] * (false + 1) + _cumulative([len(rs) for rs in rule_lists])
    lit_start = _cumulative([len(r) for rs in rule_lists for r in rs])
    lits = [x for rs in rule_lists for r in rs for x in r]
    recursive = {pos for pos, rec in strata.values() if rec}
    state_prog, move_prog = _programs(
        [number[a] for a in heads], [stratum(a) for a in heads], rule_lists, nf, false,
        recursive,
    )
    rules_of: dict[int, int] = defaultdict(int)
    for a, rs in zip(heads, rule_lists, strict=True):
        rules_of[relation(a)] += len(rs)
    return Assembled(
        fluents=gp.fluents,
        moves=gp.moves,
        n_atoms=false + 1 + len(heads),
        rule_start=rule_start,
        lit_start=lit_start,
        lits=lits,
        state_program=state_prog,
        move_program=move_prog,
        legal=[(gp.legal[a], number[a]) for a in heads if a in gp.legal],
        next=[(number[a], gp.next[a]) for a in heads if a in gp.next],
        terminal=next((number[t] for t in gp.terminal if t in number), -1),
        goals=[[r, v, number[a]] for r, v, a in gp.goals if a in number],
        sees=[[r, p, number[a]] for r, p, a in gp.sees if a in number],
        init=sorted(set(gp.init)),
        rules_of=dict(rules_of),
    )


def _cumulative(counts: Sequence[int]) -> list[int]:
    out = [0]
    for c in counts:
        out.append(out[-1] + c)
    return out


def _programs(
    atoms: list[int],
    strata: list[int],
    rule_lists: list[list[tuple[int, ...]]],
    nf: int,
    false: int,
    recursive: set[int],
) -> tuple[list[int], list[int]]:
    """The state program and the move program: the atoms in evaluation order, a
    recursive stratum's atoms as one cyclic group (``-k`` and its ``k`` atoms); a group
    moves if a rule of it reads a move or an atom that moves."""
    size = 2 * (false + 1 + len(atoms))
    moving = bytearray(size)  # by literal: 1 if its atom moves
    moving[2 * nf : 2 * false] = b"\x01" * (2 * (false - nf))
    state: list[int] = []
    move: list[int] = []
    i = 0
    while i < len(atoms):
        s = strata[i]
        j = i + 1
        if s in recursive:
            while j < len(atoms) and strata[j] == s:
                j += 1
        group = atoms[i:j]
        reads = any(
            any(map(moving.__getitem__, r)) for k in range(i, j) for r in rule_lists[k]
        )
        into = move if reads else state
        if reads:
            for a in group:
                moving[2 * a] = moving[2 * a + 1] = 1
        if s in recursive:
            into.append(-len(group))
        into.extend(group)
        i = j
    return state, move
