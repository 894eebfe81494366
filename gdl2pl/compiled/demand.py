"""Demand: a relation ground only for the arguments its users can ask it with.

Two kinds of relation are *demanded*:

- one with an unsafe rule, whose head variable no positive literal binds (``(<= (legal
  ?p ?p) (cell 1 1))``, ``(error is ?here)``): the reasoner answers it for the arguments a
  question brings, and so does the network, for the arguments its users bring;
- one used only under ``not`` (chess.kif's ``threatened_with_capture/7``): the relaxation
  would ground it for every combination of its arguments' values, where only those its
  users negate matter.

A demanded relation P has *bound positions* B: the argument positions every user binds
(a negated literal binds all of them; a positive one those whose variables other,
undemanded positive literals of its rule bind, or the rule's own demand). Its demand
``d<P>`` holds the values of those positions any user may ask for, over the relaxation:
for each use, the rule's positive literals (for a positive use, only the undemanded
ones), and the rule's own demand if its head is demanded; for ``legal``, ``goal`` and
``sees``, every role (the state machine asks them role by role). Each rule of P then
reads its demand first (``["dm", [P, head's bound arguments]]``), which binds what the
head leaves unbound. The demand is the magic-set transformation with this sideways
passing of bindings: every tuple of P a user can read in a reachable state is
ground, so the network answers as the reasoner does.

The demand's rules are ground in the model only (``asp.py``): in the network a demand
is a fact, which clingo drops from the rules it reads.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .plan import term_vars

#: tags of a positive literal, and of one over a relation
POSITIVE = ("s", "p", "t", "m", "dm")
RELATION = ("s", "p", "ns", "nd")
NEGATED = ("ns", "nd", "nt", "nm")


@dataclass(frozen=True)
class Unsafe:
    """A rule with a variable that nothing can bind: where (rule index, variable,
    whether it is in the head)."""

    rule: int
    var: int
    in_head: bool


def _vars(terms: Sequence[Any]) -> set[int]:
    out: list[int] = []
    for t in terms:
        term_vars(t, out)
    return set(out)


def _lit_vars(lit: Sequence[Any]) -> set[int]:
    if lit[0] in RELATION or lit[0] == "dm":
        return _vars(lit[1][1:])
    return _vars(lit[1:])


def transform(
    rules: list[list[Any]], keywords: Sequence[int], answered_by_role: Sequence[int]
) -> tuple[list[list[Any]], list[list[Any]], list[Unsafe]]:
    """The rules with demand (see the module doc): the rules (the same, in the same
    order, a demanded relation's reading its demand first), the demand's rules ([[P,
    bound argument...], body, the index of the rule whose use it is, or -1]) and the
    unsafe variables no demand binds (the game then has no network). ``keywords``: the
    keyword relations (those not ``answered_by_role`` are never demanded: init, next,
    terminal, role); ``answered_by_role``: relations the state machine asks role by
    role (legal, goal, sees); ``keywords[-1]``, the role relation, gives the roles."""
    role = keywords[-1]
    positive_vars = []
    unsafe: dict[int, list[tuple[int, bool]]] = {}
    for i, (_, head, body) in enumerate(rules):
        bound = set().union(*(_lit_vars(x) for x in body if x[0] in POSITIVE)) if body else set()
        positive_vars.append(bound)
        free = [(v, True) for v in sorted(_vars(head[1:]) - bound, reverse=True)]
        for x in body:
            if x[0] not in POSITIVE:
                free += [(v, False) for v in sorted(_lit_vars(x) - bound, reverse=True)]
        if free:
            unsafe[i] = free

    uses: dict[int, list[tuple[int, int]]] = defaultdict(list)  # relation -> (rule, literal)
    arity: dict[int, int] = {}
    for i, (_, head, body) in enumerate(rules):
        arity[head[0]] = len(head) - 1
        for k, x in enumerate(body):
            if x[0] in RELATION:
                uses[x[1][0]].append((i, k))
    # relation -> the heads reading it in the model (a dynamic rule's negations of
    # dynamic relations are relaxed away there: ``asp._relaxed_away``)
    readers: dict[int, set[int]] = defaultdict(set)
    for kind, head, body in rules:
        for x in body:
            if x[0] in RELATION and (kind == "s" or x[0] != "nd"):
                readers[x[1][0]].add(head[0])
    never = set(keywords) - set(answered_by_role)
    demanded = {rules[i][1][0] for i in unsafe} - never
    demanded |= {
        p
        for p, us in uses.items()
        if p not in never
        and p not in answered_by_role
        and arity.get(p, 0) > 0
        and all(rules[i][2][k][0] in NEGATED for i, k in us)
        and not _demand_negates_itself(rules, p, us, readers)
    }

    # the bound positions, to a fixpoint: dropping a relation unbinds what its demand bound
    bound_at: dict[int, set[int]] = {}
    while True:
        bound_at = {p: set(range(arity.get(p, 0))) for p in demanded}
        for p in demanded:
            if p in answered_by_role:
                bound_at[p] &= {0}
            for i, k in uses.get(p, ()):
                bound_at[p] &= _bound_positions(rules, i, k, demanded, bound_at, positive_vars)
        empty = {p for p in demanded if not bound_at[p]}
        if not empty:
            break
        demanded -= empty

    left: list[Unsafe] = []
    for i, free in unsafe.items():
        head = rules[i][1]
        given = _vars([head[1 + b] for b in bound_at.get(head[0], ())])
        left += [Unsafe(i, v, in_head) for v, in_head in free if v not in given]

    demand_rules: list[list[Any]] = []
    for p in sorted(demanded):
        b = sorted(bound_at[p])
        if p in answered_by_role:
            demand_rules.append([[p, -1], [["s", [role, -1]]], -1])
        for i, k in uses.get(p, ()):
            demand_rules.append(_demand_rule(rules, i, k, b, demanded, bound_at))
    out = [
        [kind, head, [["dm", [head[0], *(head[1 + j] for j in sorted(bound_at[head[0]]))]], *body]]
        if head[0] in demanded
        else [kind, head, body]
        for kind, head, body in rules
    ]
    return out, demand_rules, left


def _demand_negates_itself(
    rules: list[list[Any]], p: int, uses: list[tuple[int, int]], readers: dict[int, set[int]]
) -> bool:
    """Whether the demand of ``p`` (used only under ``not``) would read a relation that
    depends on ``p`` in the model: a static user recursing through its own negation of
    ``p``, e.g. ``(<= (r ?x) (not (q ?x)) (r ?y) (e ?y ?x))``. Demanded, ``q`` would wait
    for ``r`` and ``r`` for ``not q``: a cycle through ``not`` that leaves the model
    undetermined, so such a ``p`` is ground whole instead. (A dynamic rule's negation of
    a demanded relation is relaxed away in the model: no cycle goes through it.)
    ``readers``: the heads reading each relation in the model."""
    depends = {rules[i][1][0] for i, _ in uses if rules[i][0] == "s"}
    todo = list(depends)
    while todo:
        for h in readers.get(todo.pop(), ()):
            if h not in depends:
                depends.add(h)
                todo.append(h)
    return any(
        x[0] in RELATION and x[0] not in NEGATED and x[1][0] in depends
        for i, _ in uses
        for x in rules[i][2]
    )


def _own(rule: list[Any], demanded: set[int], bound_at: dict[int, set[int]]) -> list[Any]:
    """The demand literal a rule of a demanded relation reads (none otherwise)."""
    head = rule[1]
    if head[0] not in demanded:
        return []
    return [["dm", [head[0], *(head[1 + j] for j in sorted(bound_at[head[0]]))]]]


def _usable(rule: list[Any], k: int, demanded: set[int]) -> list[Any]:
    """The positive literals that bind a use's arguments: all of them for a negated
    use; for a positive one, the others over relations not demanded."""
    body = rule[2]
    negated = body[k][0] in NEGATED
    return [
        x
        for j, x in enumerate(body)
        if x[0] in POSITIVE
        and x[0] != "dm"
        and (negated or (j != k and not (x[0] in RELATION and x[1][0] in demanded)))
    ]


def _bound_positions(
    rules: list[list[Any]],
    i: int,
    k: int,
    demanded: set[int],
    bound_at: dict[int, set[int]],
    positive_vars: list[set[int]],
) -> set[int]:
    rule = rules[i]
    known: set[int] = set()
    for x in _usable(rule, k, demanded) + _own(rule, demanded, bound_at):
        known |= _lit_vars(x)
    args = rule[2][k][1][1:]
    return {j for j, t in enumerate(args) if _vars([t]) <= known}


def _demand_rule(
    rules: list[list[Any]],
    i: int,
    k: int,
    positions: list[int],
    demanded: set[int],
    bound_at: dict[int, set[int]],
) -> list[Any]:
    """The demand a use makes: [[P, its arguments at the bound positions], body, i]."""
    rule = rules[i]
    lit = rule[2][k]
    body = _own(rule, demanded, bound_at) + _usable(rule, k, demanded)
    known: set[int] = set()
    for x in body:
        known |= _lit_vars(x)
    tests = [x for x in rule[2] if x[0] in ("ne", "eq") and _lit_vars(x) <= known]
    args = lit[1][1:]
    return [[lit[1][0], *(args[j] for j in positions)], body + tests, i]
