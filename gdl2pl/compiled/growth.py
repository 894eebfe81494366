"""Which rules may build terms without end: the relaxation of a game is finite unless a
cycle of its rules carries a term into a deeper one.

The graph is over argument positions: ``(relation id, i)`` for the i-th argument of a
relation, ``("t", 0)`` for a fluent (of ``true``, and of ``next`` and ``init`` through
it), ``("m", i)`` for the arguments of a move (of ``does``, and of ``legal`` through it).
A rule makes an edge from a position of a positive body literal to a position of its
head for every variable they share, weighted by how much deeper the variable sits in the
head than in the body (``(next (count (succ ?x)))`` from ``(true (count ?x))``: +1). If
no cycle has a positive weight, every term the relaxation derives is at most as deep as
the program's own terms allow: it is finite. Otherwise the rules with a positive edge in
a component holding such a cycle are the ones whose terms are checked against the depth
budget as they are ground (``asp.py``'s ``@deep``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable
from collections.abc import Sequence
from typing import Any

from gdl2pl.depgraph import strongly_connected_components

Position = tuple[Hashable, int]

#: the tags of a positive literal (``dm``: a demand, ``demand.py``)
POSITIVE = ("s", "p", "t", "m", "dm")


def _depths(t: Any, out: dict[int, int], deepest: bool) -> None:
    """Per variable of ``t`` the least (or greatest) depth at which it occurs."""
    stack = [(t, 0)]
    while stack:
        x, d = stack.pop()
        if isinstance(x, int):
            if x < 0:
                seen = out.get(x)
                if seen is None or (d > seen if deepest else d < seen):
                    out[x] = d
        else:
            stack.extend((a, d + 1) for a in x[1:])


def _positions(lit: Sequence[Any]) -> list[tuple[Position, Any]]:
    """The argument positions of a positive body literal, with their terms."""
    tag = lit[0]
    if tag in ("s", "p"):
        return [((lit[1][0], i), a) for i, a in enumerate(lit[1][1:])]
    if tag == "dm":
        key = ("d", lit[1][0])
        return [((key, i), a) for i, a in enumerate(lit[1][1:])]
    if tag == "t":
        return [(("t", 0), lit[1])]
    return [(("m", 0), lit[1]), (("m", 1), lit[2])]


def growing(
    rules: Sequence[list[Any]], demand: Sequence[list[Any]], keywords: Sequence[int]
) -> dict[int, list[int]]:
    """Per rule that may build terms without end, the indices of its head's arguments
    to check (see the module doc). ``rules`` as the grounder takes them, then the
    demand's rules (``demand.py``, numbered after them); negated literals are ignored
    (the relaxation drops the dynamic ones; negation binds nothing)."""
    init, nxt, legal = keywords[0], keywords[1], keywords[2]
    weight: dict[tuple[Position, Position], int] = {}
    made_by: dict[tuple[Position, Position], set[int]] = defaultdict(set)
    heads: list[tuple[Hashable, Sequence[Any], Sequence[Any]]] = [
        (head[0], head, body) for _, head, body in rules
    ]
    heads += [(("d", head[0]), head, body) for head, body, _ in demand]
    for r, (key, head, body) in enumerate(heads):
        sources: dict[int, list[tuple[Position, int]]] = defaultdict(list)
        for lit in body:
            if lit[0] in POSITIVE:
                for pos, t in _positions(lit):
                    found: dict[int, int] = {}
                    _depths(t, found, deepest=False)
                    for v, d in found.items():
                        sources[v].append((pos, d))
        for j, t in enumerate(head[1:]):
            built: dict[int, int] = {}
            _depths(t, built, deepest=True)
            for v, dh in built.items():
                for pos, db in sources.get(v, ()):
                    edge = (pos, (key, j))
                    w = dh - db
                    if w > weight.get(edge, -(10**9)):
                        weight[edge] = w
                    if w > 0:
                        made_by[edge].add(r)
    for src, dst in (((nxt, 0), ("t", 0)), ((init, 0), ("t", 0)),
                     ((legal, 0), ("m", 0)), ((legal, 1), ("m", 1))):
        weight[(src, dst)] = max(weight.get((src, dst), 0), 0)
    if not any(w > 0 for w in weight.values()):
        return {}
    graph: dict[Position, list[Position]] = defaultdict(list)
    for a, b in weight:
        graph[a].append(b)
        graph.setdefault(b, [])
    out: dict[int, list[int]] = defaultdict(list)
    for comp in strongly_connected_components(list(graph), graph):
        members = set(comp)
        edges = [(e, w) for e, w in weight.items() if e[0] in members and e[1] in members]
        if any(w > 0 for _, w in edges) and _positive_cycle(members, edges):
            for e, w in edges:
                if w > 0:
                    for r in made_by[e]:
                        if e[1][1] not in out[r]:
                            out[r].append(e[1][1])
    return dict(out)


def _positive_cycle(
    nodes: set[Position], edges: list[tuple[tuple[Position, Position], int]]
) -> bool:
    """Whether the edges have a cycle of positive weight (longest paths that never
    settle, Bellman-Ford)."""
    dist = dict.fromkeys(nodes, 0)
    for _ in range(len(nodes)):
        changed = False
        for (a, b), w in edges:
            if dist[a] + w > dist[b]:
                dist[b] = dist[a] + w
                changed = True
        if not changed:
            return False
    return True
