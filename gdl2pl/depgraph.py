"""The dependency graph of a game description over relation names, its strongly connected
components, and what follows from them: recursion, stratification, and which relations
depend on a given relation (e.g. on ``true`` or ``does``).

There is an edge from relation ``q`` to relation ``p`` for every rule with head ``p`` and an
atom ``q`` anywhere in its body (``or`` and ``and`` flattened); the edge is *negative* when
the atom occurs under a ``not``. ``distinct`` is built in and makes no edge. Facts make
nodes but no edges.

Relations are identified by a *key* of their name, ``str.casefold`` by default, since GDL
symbols are case-insensitive; pass ``key=str`` for a description already normalized with
``gdl2pl.normalize.normalize_case``. Arity is not part of the key: relations used with two
arities are an error the checker reports, and are one node here. One arity is, when asked
(``zero_arity_apart=True``): ``(p)``, a relation written with empty parentheses, is then the
node ``p()``, another relation than the proposition ``p``, as the reasoner reads them (after
ggp-base; ``gdl2pl.flatten.relation_key``). Every pass that states what a game means or
draws it asks so; merged, ``p`` and ``(p)`` are one node whose rules are those of both.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Hashable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from functools import cached_property
from typing import Any
from typing import TypeVar

from gdl2pl.syntax import And
from gdl2pl.syntax import Const
from gdl2pl.syntax import Description
from gdl2pl.syntax import Fact
from gdl2pl.syntax import Func
from gdl2pl.syntax import Literal
from gdl2pl.syntax import Not
from gdl2pl.syntax import Or
from gdl2pl.syntax import Rule
from gdl2pl.syntax import Sentence
from gdl2pl.syntax import Term
from gdl2pl.syntax import Var

N = TypeVar("N", bound=Hashable)

Key = Callable[[str], str]


def relation_name(s: Sentence) -> str:
    """The relation name of an atomic sentence: ``p`` for both ``p`` and ``(p a b)``."""
    return s.name


def is_zero_arity(s: Sentence) -> bool:
    """``s`` is ``(p)``: a relation written with empty parentheses, not the proposition
    ``p``."""
    return isinstance(s, Func) and not s.args


def sentence_node(s: Sentence, key: Key = str.casefold, zero_arity_apart: bool = True) -> str:
    """The node of the relation ``s`` belongs to: ``key(name)``; with ``zero_arity_apart``,
    ``key(name) + "()"`` for ``(p)`` (``is_zero_arity``), apart from the proposition ``p``."""
    name = key(s.name)
    return name + "()" if zero_arity_apart and is_zero_arity(s) else name


def body_atoms(lit: Literal, negative: bool = False) -> Iterator[tuple[Sentence, bool]]:
    """The atomic sentences of a body literal with their polarity (True = under an odd
    number of ``not``), in source order; ``or``/``and`` are flattened, ``distinct`` skipped."""
    if isinstance(lit, (Const, Func)):
        yield lit, negative
    elif isinstance(lit, Not):
        yield from body_atoms(lit.body, not negative)
    elif isinstance(lit, Or):
        for d in lit.disjuncts:
            yield from body_atoms(d, negative)
    elif isinstance(lit, And):
        for c in lit.conjuncts:
            yield from body_atoms(c, negative)


@dataclass(frozen=True, slots=True)
class Dependency:
    """One edge: the head relation of ``rule`` depends on the relation of ``atom``."""

    head: str
    body: str
    negative: bool
    atom: Sentence = field(compare=False)
    rule: Any = field(compare=False)  # the Rule (or the translator's FlatRule)


@dataclass(frozen=True)
class DependencyGraph:
    """Relations (by key) and the edges between them; build it with ``dependency_graph``.

    ``spelling`` maps each key to the name as first written; ``defined`` holds the keys that
    head some fact or rule; ``zero_arity`` the nodes of relations written ``(p)``, when the
    graph tells them from the propositions (``zero_arity_apart``; see the module doc).
    """

    nodes: tuple[str, ...]
    edges: tuple[Dependency, ...]
    spelling: dict[str, str]
    defined: frozenset[str]
    key: Key = str.casefold
    zero_arity_apart: bool = False
    zero_arity: frozenset[str] = frozenset()
    _succ: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False)
    _pred: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False)

    def node(self, s: Sentence) -> str:
        """The node of the relation the sentence ``s`` belongs to (``sentence_node``)."""
        return sentence_node(s, self.key, self.zero_arity_apart)

    def written(self, relation: str) -> Sentence:
        """The relation ``relation`` as a sentence to show it by: ``(p)`` (KIF) or ``p()``
        (infix) for a node of ``zero_arity``, else the proposition of its name."""
        name = self.spelling.get(relation, relation)
        return Func(name, ()) if relation in self.zero_arity else Const(name)

    def uses(self, relation: str) -> tuple[str, ...]:
        """Relations occurring in the bodies of the rules for ``relation`` (its direct
        dependencies)."""
        return self._pred.get(relation, ())

    def used_by(self, relation: str) -> tuple[str, ...]:
        """Relations whose rules use ``relation`` in their bodies."""
        return self._succ.get(relation, ())

    def depends_on(self, relation: str) -> frozenset[str]:
        """Every relation that ``relation`` depends on, transitively (itself only if it is
        recursive)."""
        return _closure(self._pred, [relation])

    def dependents(self, relations: Iterable[str]) -> frozenset[str]:
        """Every relation that depends, transitively, on one of ``relations``."""
        return _closure(self._succ, relations)

    def components(self) -> list[frozenset[str]]:
        """Strongly connected components, each after every component it depends on."""
        return list(self._components)

    def component_of(self) -> dict[str, frozenset[str]]:
        """Each relation mapped to its strongly connected component."""
        return dict(self._component_of)

    def component(self, relation: str) -> frozenset[str]:
        """The strongly connected component of ``relation``."""
        return self._component_of[relation]

    @cached_property
    def _components(self) -> tuple[frozenset[str], ...]:
        return tuple(strongly_connected_components(self.nodes, self._pred))

    @cached_property
    def _component_of(self) -> dict[str, frozenset[str]]:
        return {n: c for c in self._components for n in c}

    def recursive(self) -> frozenset[str]:
        """Relations that depend on themselves (in a cycle, or with a self-loop)."""
        out: set[str] = set()
        for comp in self._components:
            if len(comp) > 1:
                out |= comp
            else:
                (n,) = comp
                if n in self._pred.get(n, ()):
                    out.add(n)
        return frozenset(out)

    def negative_cycle_edges(self) -> list[Dependency]:
        """Negative edges whose two ends lie in one component: the edges that break
        stratification at the level of relation names."""
        comp = self._component_of
        return [e for e in self.edges if e.negative and comp[e.body] == comp[e.head]]

    def strata(self) -> dict[str, int] | None:
        """The least stratification: each relation's stratum (0 = depends on nothing
        negatively), where a relation's stratum is at least that of every relation it uses
        and greater than that of every relation it uses under ``not``. None when a cycle
        goes through a negative edge."""
        if self.negative_cycle_edges():
            return None
        comp = self._component_of
        level: dict[frozenset[str], int] = {}
        incoming: dict[frozenset[str], list[Dependency]] = {}
        for e in self.edges:
            incoming.setdefault(comp[e.head], []).append(e)
        for c in self._components:
            lv = 0
            for e in incoming.get(c, ()):
                src = comp[e.body]
                if src != c:
                    lv = max(lv, level[src] + (1 if e.negative else 0))
            level[c] = lv
        return {n: level[comp[n]] for n in self.nodes}


def dependency_graph(
    d: Description, key: Key = str.casefold, *, zero_arity_apart: bool = False
) -> DependencyGraph:
    """The dependency graph of ``d``, relations identified by ``key(name)``; with
    ``zero_arity_apart``, ``(p)`` is the node ``key(p) + "()"`` (see the module doc)."""
    order: dict[str, None] = {}
    spelling: dict[str, str] = {}
    defined: set[str] = set()
    edges: list[Dependency] = []
    zero_arity: set[str] = set()

    def node(s: Sentence) -> str:
        k = sentence_node(s, key, zero_arity_apart)
        if k not in order:
            order[k] = None
            spelling[k] = relation_name(s)
            if zero_arity_apart and is_zero_arity(s):
                zero_arity.add(k)
        return k

    for c in d.clauses:
        head = node(c.head)
        defined.add(head)
        if isinstance(c, Fact):
            continue
        for lit in c.body:
            for atom, negative in body_atoms(lit):
                body = node(atom)
                edges.append(Dependency(head, body, negative, atom, c))
    return graph_of(order, edges, defined, spelling, key, zero_arity_apart, zero_arity)


def graph_of(
    nodes: Iterable[str],
    edges: Iterable[Dependency],
    defined: Iterable[str],
    spelling: dict[str, str] | None = None,
    key: Key = str,
    zero_arity_apart: bool = False,
    zero_arity: Iterable[str] = (),
) -> DependencyGraph:
    """The graph over ``nodes`` (keys) with ``edges``, for passes whose relations are not
    plain names (the translator's ``name/arity``)."""
    nodes = tuple(nodes)
    edges = tuple(edges)
    succ: dict[str, set[str]] = {}
    pred: dict[str, set[str]] = {}
    for e in edges:
        succ.setdefault(e.body, set()).add(e.head)
        pred.setdefault(e.head, set()).add(e.body)
    return DependencyGraph(
        nodes=nodes,
        edges=edges,
        spelling=spelling if spelling is not None else {n: n for n in nodes},
        defined=frozenset(defined),
        key=key,
        zero_arity_apart=zero_arity_apart,
        zero_arity=frozenset(zero_arity),
        _succ={k: tuple(sorted(v)) for k, v in succ.items()},
        _pred={k: tuple(sorted(v)) for k, v in pred.items()},
    )


def _closure(adjacent: dict[str, tuple[str, ...]], start: Iterable[str]) -> frozenset[str]:
    seen: set[str] = set()
    todo = [m for s in start for m in adjacent.get(s, ())]
    while todo:
        n = todo.pop()
        if n not in seen:
            seen.add(n)
            todo.extend(adjacent.get(n, ()))
    return frozenset(seen)


def strongly_connected_components(
    nodes: Iterable[N], uses: Mapping[N, Iterable[N]]
) -> list[frozenset[N]]:
    """Tarjan's algorithm, iterative. ``uses[n]`` are the nodes ``n`` depends on; every
    component comes after all components it depends on."""
    index: dict[N, int] = {}
    low: dict[N, int] = {}
    stack: list[N] = []
    on_stack: set[N] = set()
    out: list[frozenset[N]] = []
    for root in nodes:
        if root in index:
            continue
        work: list[tuple[N, Iterator[N]]] = [(root, iter(uses.get(root, ())))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            n, it = work[-1]
            for m in it:
                if m not in index:
                    index[m] = low[m] = len(index)
                    stack.append(m)
                    on_stack.add(m)
                    work.append((m, iter(uses.get(m, ()))))
                    break
                if m in on_stack:
                    low[n] = min(low[n], index[m])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[n])
                if low[n] == index[n]:
                    comp: set[N] = set()
                    while True:
                        m = stack.pop()
                        on_stack.discard(m)
                        comp.add(m)
                        if m == n:
                            break
                    out.append(frozenset(comp))
    return out


# -- the atom-level refinement of stratification ----------------------------------------
#
# A negative edge inside a component breaks stratification by *name*. It is harmless when
# no ground instance of the rule's head can depend on itself through it: then the program is
# still locally stratified there. ``negation_may_close`` over-approximates the ground atoms
# that an instance of the negated atom can depend on inside the component (by unifying with
# the rule heads, renaming rules apart, and generalizing deep terms to variables) and asks
# whether any of them unifies with the rule's head.

Subst = dict[str, Term]


def _walk(t: Term, s: Subst) -> Term:
    while isinstance(t, Var) and t.name in s:
        t = s[t.name]
    return t


def _occurs(name: str, t: Term, s: Subst) -> bool:
    todo = [t]
    while todo:
        x = _walk(todo.pop(), s)
        if isinstance(x, Var):
            if x.name == name:
                return True
        elif isinstance(x, Func):
            todo.extend(x.args)
    return False


def unify(a: Term, b: Term, s: Subst, key: Key = str.casefold) -> bool:
    """Extend ``s`` (in place) to a most general unifier of ``a`` and ``b``, with occurs
    check; symbols compared by ``key``. False (``s`` then unspecified) if there is none."""
    todo = [(a, b)]
    while todo:
        x, y = todo.pop()
        x, y = _walk(x, s), _walk(y, s)
        if isinstance(x, Var) and isinstance(y, Var) and x.name == y.name:
            continue
        if isinstance(y, Var):
            x, y = y, x
        if isinstance(x, Var):
            if _occurs(x.name, y, s):
                return False
            s[x.name] = y
        elif isinstance(x, Const) and isinstance(y, Const):
            if key(x.name) != key(y.name):
                return False
        elif isinstance(x, Func) and isinstance(y, Func):
            if key(x.name) != key(y.name) or len(x.args) != len(y.args):
                return False
            todo.extend(zip(x.args, y.args, strict=True))
        else:
            return False
    return True


def renamed_apart(t: Term, tag: str) -> Term:
    """``t`` with every variable ``?x`` renamed ``?x#tag``: apart from the variables of
    any term renamed with another tag (or not renamed)."""
    if isinstance(t, Var):
        return Var(f"{t.name}#{tag}")
    if isinstance(t, Func):
        return Func(t.name, tuple(renamed_apart(a, tag) for a in t.args))
    return t


def _pattern(t: Term, s: Subst, key: Key, depth: int = 8) -> Term:
    """``t`` under ``s``, cut below ``depth`` (deeper subterms become fresh variables),
    variables renamed ``_0``, ``_1``... by first occurrence, symbols replaced by their key:
    equal patterns are variants of each other."""
    names: dict[str, str] = {}
    fresh = [0]

    def var(name: str | None) -> Var:
        if name is None or name not in names:
            v = f"_{fresh[0]}"
            fresh[0] += 1
            if name is None:
                return Var(v)
            names[name] = v
        return Var(names[name])

    def go(x: Term, d: int) -> Term:
        x = _walk(x, s)
        if isinstance(x, Var):
            return var(x.name)
        if isinstance(x, Const):
            return Const(key(x.name))
        if d >= depth:
            return var(None)
        return Func(key(x.name), tuple(go(a, d + 1) for a in x.args))

    return go(t, 0)


#: What a cycle through ``not`` in the graph of relations means, said alike by ``check``
#: and ``graph``: the course notes define stratified negation over relations, so such a
#: game is not stratified, whether or not a ground atom can depend on its own negation.
NOT_STRATIFIED = (
    "negation is not stratified by the notes' definition (a cycle of relations through not)"
)
#: ... when no ground atom can depend on its own negation (``negation_may_close`` False).
GROUND_STRATIFIED = "though no ground atom depends on its own negation"
#: ... when some ground atom may.
GROUND_NOT_STRATIFIED = "and a ground atom may depend on its own negation"


def negation_may_close(graph: DependencyGraph, edge: Dependency, limit: int = 2000) -> bool:
    """Whether some ground instance of ``edge.rule``'s head may depend on itself through the
    negated ``edge.atom`` (a negative edge inside a component). False means the negation is
    harmless: no ground atom can depend on its own negation through this edge. The test is
    conservative: True when it explores more than ``limit`` atom patterns."""
    key = graph.key
    comp = graph.component(edge.head)
    rules: dict[str, list[Rule]] = {}
    for e in graph.edges:
        if e.head in comp and e.body in comp:
            group = rules.setdefault(e.head, [])
            if all(r is not e.rule for r in group):
                group.append(e.rule)
    target = renamed_apart(edge.rule.head, "head")
    start = _pattern(renamed_apart(edge.atom, "atom"), {}, key)
    seen = {start}
    todo = [start]
    count = 0
    while todo:
        p = todo.pop()
        if unify(p, target, {}, key):
            return True
        if not isinstance(p, (Const, Func)):
            continue
        for r in rules.get(graph.node(p), ()):
            count += 1
            tag = str(count)
            s: Subst = {}
            if not unify(p, renamed_apart(r.head, tag), s, key):
                continue
            for lit in r.body:
                for atom, _ in body_atoms(lit):
                    if graph.node(atom) not in comp:
                        continue
                    q = _pattern(renamed_apart(atom, tag), s, key)
                    if q not in seen:
                        if len(seen) >= limit:
                            return True
                        seen.add(q)
                        todo.append(q)
    return False
