"""A program's cyclic groups split into the cycles of their ground atoms.

The grounder makes each recursive stratum of relations one cyclic group (see
``assemble.py``). A game may be stratified only on ground atoms: queens' ``(<= (goal
robot 100) (not (goal robot 0)))`` negates its own relation, never its own atom. Here
each group becomes the strongly connected components of its atoms (an atom depends on
the atoms of its rules' bodies), dependencies first: an atom in no cycle stands alone, a
cycle stays a group (``-k`` and its ``k`` atoms). A negation inside a component is a
cycle through ``not`` on ground atoms, which the evaluator refuses.
"""

from __future__ import annotations

from collections.abc import Iterator
from collections.abc import Sequence

from gdl2pl.depgraph import strongly_connected_components


def split_cycles(
    program: Sequence[int],
    rule_start: Sequence[int],
    lit_start: Sequence[int],
    lits: Sequence[int],
) -> list[int]:
    """``program`` (atoms in evaluation order, ``-k`` before a cyclic group of ``k``)
    with every cyclic group split into its atoms' strongly connected components."""
    out: list[int] = []
    i = 0
    while i < len(program):
        if program[i] >= 0:
            out.append(program[i])
            i += 1
            continue
        k = -program[i]
        members = list(program[i + 1 : i + 1 + k])
        i += 1 + k
        comps, uses = _components(members, rule_start, lit_start, lits)
        for comp in comps:
            a = comp[0]
            if len(comp) == 1 and a not in uses[a]:
                out.append(a)
            else:
                out.append(-len(comp))
                out.extend(comp)
    return out


def _body_atoms(
    a: int, rule_start: Sequence[int], lit_start: Sequence[int], lits: Sequence[int]
) -> Iterator[int]:
    """The atoms the rules of ``a`` read (positively or not)."""
    for r in range(rule_start[a], rule_start[a + 1]):
        for j in range(lit_start[r], lit_start[r + 1]):
            yield lits[j] >> 1


def _components(
    members: list[int],
    rule_start: Sequence[int],
    lit_start: Sequence[int],
    lits: Sequence[int],
) -> tuple[list[list[int]], dict[int, list[int]]]:
    """The strongly connected components of ``members``, each after those it depends
    on, its atoms in the group's order; and what each member reads in the group."""
    inside = set(members)
    place = {a: n for n, a in enumerate(members)}
    uses = {
        a: [b for b in _body_atoms(a, rule_start, lit_start, lits) if b in inside]
        for a in members
    }
    comps = [
        sorted(comp, key=place.__getitem__)
        for comp in strongly_connected_components(members, uses)
    ]
    return comps, uses
