"""Flat rules: the form the translator works on.

``flatten_rules`` turns a description into flat clauses whose bodies contain only
positive sentences, negated sentences and ``distinct``; it

- expands ``or``/``and`` into separate clauses (disjunctive normal form), keeping
  the source clause of each;
- orders each body so that every test (a negation, a ``distinct``, or a positive
  literal whose variables earlier literals bind) comes right after the literals that
  bind its variables (ground ones come first).

Like ggp-base's prover it is lenient where the meaning is clear: ``(foo)`` is a
zero-arity relation distinct from the proposition ``foo``; an empty ``or`` never
holds; unsafe rules and facts with variables are kept (the checker reports them);
``(not (distinct a b))`` means ``a`` and ``b`` are identical. A ``sees`` rule whose
role is a variable no positive sentence of the body binds gets ``(role ?r)`` in its
body: the role ranges over the roles, as the Dresden GameController reads such a rule
(it asks each role's percepts with the role given; the checker warns,
``sees-any-role``). What has no meaning (a rule defining ``true``, ``not`` around a
disjunction) raises ``TranslationError``.

Pure functions only.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import dataclass

from gdl2pl.depgraph import Dependency
from gdl2pl.depgraph import DependencyGraph
from gdl2pl.depgraph import dependency_graph
from gdl2pl.depgraph import graph_of
from gdl2pl.errors import GdlError
from gdl2pl.syntax import And
from gdl2pl.syntax import Clause
from gdl2pl.syntax import Const
from gdl2pl.syntax import Description
from gdl2pl.syntax import Distinct
from gdl2pl.syntax import Fact
from gdl2pl.syntax import Func
from gdl2pl.syntax import Literal
from gdl2pl.syntax import Not
from gdl2pl.syntax import Or
from gdl2pl.syntax import Pos
from gdl2pl.syntax import Sentence
from gdl2pl.syntax import Term
from gdl2pl.syntax import Var
from gdl2pl.syntax import clause_line
from gdl2pl.syntax import variables
from gdl2pl.vocabulary import INPUT_RELATIONS

#: The most clauses one source rule may expand into; beyond that the game is rejected.
MAX_EXPANSION = 4096
#: The most body literals the ``or`` of one description may expand into, over all its
#: rules (the largest public games need a few hundred; ten rules of twelve ``or`` in 5 KB
#: of text make half a million, a minute of translation).
MAX_EXPANDED_LITERALS = 100_000


class TranslationError(GdlError):
    """The description cannot be translated; says which rule and why."""

    def __init__(self, message: str, clause: Clause | None = None) -> None:
        self.clause = clause
        self.pos: Pos | None = clause.pos if clause is not None else None
        where = f"{self.pos}: " if self.pos else ""
        rule = f"\n  in rule: {clause_line(clause, 160)}" if clause is not None else ""
        super().__init__(f"{where}error: {message}{rule}")


BodyLiteral = Const | Func | Not | Distinct


@dataclass(frozen=True, slots=True)
class FlatRule:
    """One flat clause: ``head :- body``, with the source clause it came from."""

    head: Sentence
    body: tuple[BodyLiteral, ...]
    source: Clause
    #: Which conjunction of the source rule's ``or`` expansion this is: ``branch`` of
    #: ``branches`` (1 of 1 for a rule without ``or``).
    branch: int = 1
    branches: int = 1


def relation_name(s: Sentence) -> str:
    """The relation a sentence belongs to (the proposition name for a ``Const``)."""
    return s.name


def relation_key(s: Sentence) -> tuple[str, int]:
    """(name, arity) of a sentence; a zero-arity relation ``(foo)`` is ``("foo()", 0)``,
    a different relation from the proposition ``foo``, as in ggp-base."""
    if isinstance(s, Func):
        return (s.name, len(s.args)) if s.args else (s.name + "()", 0)
    return (s.name, 0)


def relation_atom(key: tuple[str, int], args: tuple[Term, ...] = ()) -> Sentence:
    """The atom of the relation ``key`` (a ``relation_key``) with ``args``: the inverse of
    ``relation_key``, ``(p)`` for ``("p()", 0)``, the proposition ``p`` for ``("p", 0)``."""
    name, arity = key
    if args:
        return Func(name, args)
    if arity == 0 and name.endswith("()"):
        return Func(name[:-2], ())
    return Const(name)


def key_node(key: tuple[str, int]) -> str:
    """A relation's ``relation_key`` as a node of ``relation_graph``: ``name/arity``."""
    return f"{key[0]}/{key[1]}"


def relation_node(s: Sentence) -> str:
    """The node of ``relation_graph`` a sentence belongs to: ``p/0`` for ``p``, ``p()/0``
    for ``(p)``, ``p/2`` for ``(p a b)``."""
    return key_node(relation_key(s))


def called_sentence(lit: BodyLiteral) -> Sentence | None:
    """The sentence a flat body literal calls (under ``not`` or ``(not (not ...))`` too);
    None for ``distinct``."""
    if isinstance(lit, Not):
        inner = lit.body.body if isinstance(lit.body, Not) else lit.body
        return inner if isinstance(inner, Const | Func) else None
    return lit if isinstance(lit, Const | Func) else None


def relation_graph(rules: Iterable[FlatRule]) -> DependencyGraph:
    """The dependency graph of flat rules over relations as the reasoner tells them
    apart (``relation_node``: ``(p)`` and ``p`` are two relations, so are ``p`` of two
    arities): an edge from each relation a body calls to its head's, negative under
    ``not``. Every engine orders and stratifies a game's relations by this graph;
    ``gdl2pl.depgraph.dependency_graph`` (over names) is the checker's."""
    nodes: dict[str, None] = {}
    edges: list[Dependency] = []
    defined: set[str] = set()
    for r in rules:
        head = relation_node(r.head)
        nodes.setdefault(head)
        defined.add(head)
        for lit in r.body:
            s = called_sentence(lit)
            if s is not None:
                body = relation_node(s)
                nodes.setdefault(body)
                edges.append(Dependency(head, body, isinstance(lit, Not), s, r))
    return graph_of(sorted(nodes), edges, defined)


def _sentence(s: Sentence | Literal, clause: Clause) -> Sentence:
    if isinstance(s, Const | Func):
        return s
    raise TranslationError(f"expected a sentence, found {type(s).__name__.lower()}", clause)


def disjunctive_normal_form(lits: Iterable[Literal], limit: int) -> list[list[Literal]] | None:
    """A body as the plain conjunctions it stands for: ``or`` distributed, ``and`` flattened
    (literals under ``not`` are left as they are). An empty ``or`` gives no conjunction (the
    body never holds). None if there would be more than ``limit`` conjunctions."""
    result: list[list[Literal]] = [[]]
    for lit in lits:
        if isinstance(lit, Or):
            options: list[list[Literal]] = []
            for d in lit.disjuncts:
                sub = disjunctive_normal_form([d], limit)
                if sub is None:
                    return None
                options += sub
        elif isinstance(lit, And):
            sub = disjunctive_normal_form(lit.conjuncts, limit)
            if sub is None:
                return None
            options = sub
        else:
            options = [[lit]]
        if len(result) * len(options) > limit:
            return None
        result = [r + o for r in result for o in options]
    return result


def _body_literal(lit: Literal, clause: Clause) -> BodyLiteral:
    """A literal of a flat body, or ``TranslationError`` if it has no meaning there."""
    if isinstance(lit, Not):
        inner = lit.body
        if isinstance(inner, Distinct):
            return lit
        if isinstance(inner, Not) and isinstance(inner.body, Const | Func):
            return lit
        if isinstance(inner, Not | Or | And):
            raise TranslationError("'not' must contain a single sentence", clause)
        return Not(_sentence(inner, clause), lit.pos)
    if isinstance(lit, Distinct):
        return lit
    return _sentence(lit, clause)


def _conjunctions(lits: tuple[Literal, ...], clause: Clause) -> list[list[BodyLiteral]]:
    conjunctions = disjunctive_normal_form(lits, MAX_EXPANSION)
    if conjunctions is None:
        raise TranslationError(f"'or' expands into more than {MAX_EXPANSION} clauses", clause)
    if len(conjunctions) > 1 and sum(map(len, conjunctions)) > MAX_EXPANDED_LITERALS:
        raise TranslationError(
            f"'or' expands into more than {MAX_EXPANDED_LITERALS:,} body literals", clause
        )
    return [[_body_literal(lit, clause) for lit in conj] for conj in conjunctions]


def order_body(
    body: list[BodyLiteral],
    head_variables: frozenset[str] = frozenset(),
    recursive: Callable[[Sentence], bool] = lambda s: False,
    lookup: Callable[[Sentence], bool] = lambda s: s.name in ("true", "does"),
) -> tuple[list[BodyLiteral], set[str]]:
    """Safety ordering, with cheap tests as early as they can be. Positive sentences
    keep their source order, except that a ``lookup`` (a literal answered from facts:
    the state, the joint move, a relation computed once) whose variables are all bound
    by the literals before it (a test: it holds or not, binding nothing) moves up to
    right after the last literal binding them; each negation and ``distinct`` goes
    there too (at its earliest safe point), several at one point in source order,
    negations and ``distinct`` first. Other tests stay where the author put them: a
    rule often ends with its costliest check. A ``recursive`` call is never moved, and
    a negation written before it, whose variables are bound by the literals before it
    or occur in the head, stays before it (it guards the recursion, e.g. a loop check
    ``(not (member ?x ?visited))``). A guard kept there on a head variable that a later
    literal binds is asked again after that literal: the caller may leave the variable
    unbound, where ``X \\== a`` holds and ``\\+ p(X)`` fails whatever ground value
    ``X`` would take. The translator writes such a negation to be asked only when its
    variables are bound (``translate.guarded``), so the guard prunes only a bound call
    and the second asking decides every call; no answer is lost or added.

    Moving a test up changes no answer (conjunction commutes, and a ground literal
    binds nothing) and prunes the search where it fails: ``(true (cell ?x ?y ?p))
    (succ ?x ?x2) (succ ?x2 ?x3) (true (cell ?x2 ?y ?p))`` checks the second cell
    before looking for ``?x3``.

    Returns the ordered body and the names of variables left unbound (non-empty means
    the clause is unsafe)."""
    n = len(body)
    names = [frozenset(v.name for v in variables(b)) for b in body]
    positive = [isinstance(b, Const | Func) for b in body]
    # The tests wait for their variables: every negation and ``distinct`` ("pending"),
    # and each positive lookup that is not recursive. ``missing[i]`` counts the unbound
    # variables of test i, ``unguarded[i]`` those of a pending one that are not in the
    # head, and ``waiting[v]`` the tests holding ``v``: binding a variable touches only
    # those, so the ordering is linear in the body's size (a 5,000-literal body is one).
    test = [not isinstance(b, Const | Func) or (lookup(b) and not recursive(b)) for b in body]
    missing = [len(vs) for vs in names]
    unguarded = [len(vs - head_variables) for vs in names]
    waiting: dict[str, list[int]] = {}
    ready: list[int] = []  # pending tests whose variables are all bound (a heap)
    guards: list[int] = []  # pending tests bound but for head variables (a heap)
    lookups: list[int] = []  # positive lookups whose variables are all bound (a heap)
    for i in range(n):
        if not test[i]:
            continue
        for v in names[i]:
            waiting.setdefault(v, []).append(i)
        if not missing[i]:
            heapq.heappush(lookups if positive[i] else ready, i)
        if not positive[i] and not unguarded[i]:
            heapq.heappush(guards, i)
    done = [False] * n
    bound: set[str] = set()
    out: list[BodyLiteral] = []

    def bind(vs: frozenset[str]) -> None:
        for v in vs - bound:
            bound.add(v)
            for i in waiting.get(v, ()):
                missing[i] -= 1
                if not missing[i]:
                    heapq.heappush(lookups if positive[i] else ready, i)
                if not positive[i] and v not in head_variables:
                    unguarded[i] -= 1
                    if not unguarded[i]:
                        heapq.heappush(guards, i)

    def take(heap: list[int], before: int = n) -> None:
        """Move the literals of ``heap`` (indices) before ``before`` out, in body order."""
        while heap and heap[0] < before:
            i = heapq.heappop(heap)
            if not done[i]:
                # a guard on a head variable the body binds later is asked again once
                # it is bound (the caller may leave it unbound; see the docstring)
                done[i] = not missing[i]
                out.append(body[i])

    take(ready)
    take(lookups)
    for i in range(n):
        b = body[i]
        if not isinstance(b, Const | Func) or done[i]:
            continue
        if recursive(b):
            take(guards, before=i)
        done[i] = True
        out.append(b)
        bind(names[i])
        take(ready)
        take(lookups)
    left = [i for i in range(n) if not done[i]]
    unbound = {v for i in left for v in names[i]} - bound
    out.extend(body[i] for i in left)
    return out, unbound


def normalize_clause(
    clause: Clause,
    recursive: Callable[[Sentence], bool] = lambda s: False,
    lookup: Callable[[Sentence], bool] = lambda s: s.name in ("true", "does"),
) -> list[FlatRule]:
    """The flat clauses for one source clause, safety-ordered (see ``order_body``;
    ``recursive`` tells the calls that may recurse into the clause's own relation,
    ``lookup`` those answered from facts)."""
    head = _sentence(clause.head, clause)
    if relation_name(head) in INPUT_RELATIONS:
        raise TranslationError(f"a game may not define '{relation_name(head)}'", clause)
    if isinstance(clause, Fact):
        return [FlatRule(head, (), clause)]
    head_variables = frozenset(v.name for v in variables(head))
    conjunctions = [_any_role(head, conj) for conj in _conjunctions(clause.body, clause)]
    return [
        FlatRule(
            head,
            tuple(order_body(conj, head_variables, recursive, lookup)[0]),
            clause,
            branch=i,
            branches=len(conjunctions),
        )
        for i, conj in enumerate(conjunctions, 1)
    ]


def _any_role(head: Sentence, body: list[BodyLiteral]) -> list[BodyLiteral]:
    """``body``, with ``(role ?r)`` first if ``head`` is ``(sees ?r P)`` and no positive
    sentence of ``body`` binds ``?r`` (see the module doc)."""
    if not (isinstance(head, Func) and head.name == "sees" and len(head.args) == 2):
        return body
    role = head.args[0]
    if not isinstance(role, Var):
        return body
    if any(
        isinstance(lit, Const | Func) and any(v.name == role.name for v in variables(lit))
        for lit in body
    ):
        return body
    return [Func("role", (role,), role.pos), *body]


def flatten_rules(d: Description) -> list[FlatRule]:
    """All flat clauses of a description, in source order. Bodies are ordered by the
    graph of relation names with ``(p)`` apart from ``p`` (``dependency_graph``'s
    ``zero_arity_apart``), as the translator stratifies them; the order changes no answer
    (see ``order_body``), but merged by name a relation could look as if it changed with
    the state, or recursed, where only the other spelling does."""
    graph = dependency_graph(d, key=str, zero_arity_apart=True)
    recursive_relations = graph.recursive()
    changing = graph.dependents(INPUT_RELATIONS) | INPUT_RELATIONS

    def lookup(s: Sentence) -> bool:
        return graph.node(s) in INPUT_RELATIONS or graph.node(s) not in changing

    out: list[FlatRule] = []
    expanded = 0  # body literals of rules with more than one branch
    for c in d.clauses:
        head = graph.node(c.head)
        if head in recursive_relations:
            component = graph.component(head)
            flats = normalize_clause(c, lambda s, comp=component: graph.node(s) in comp, lookup)  # type: ignore[misc]
        else:
            flats = normalize_clause(c, lookup=lookup)
        if len(flats) > 1:
            expanded += sum(len(f.body) for f in flats)
            if expanded > MAX_EXPANDED_LITERALS:
                raise TranslationError(
                    f"the rules' 'or' expand into more than {MAX_EXPANDED_LITERALS:,} body "
                    "literals in all",
                    c,
                )
        out += flats
    return out


def term_args(s: Sentence) -> tuple[Term, ...]:
    """The arguments of a sentence (none for a proposition)."""
    return s.args if isinstance(s, Func) else ()


__all__ = [
    "INPUT_RELATIONS",
    "BodyLiteral",
    "FlatRule",
    "TranslationError",
    "called_sentence",
    "key_node",
    "normalize_clause",
    "flatten_rules",
    "order_body",
    "relation_atom",
    "relation_graph",
    "relation_key",
    "relation_name",
    "relation_node",
    "term_args",
]
