"""Which fluents and moves a game's rules can produce: a sound over-approximation.

``relaxed_game(d)`` rewrites a description into its *relaxation*, a GDL program whose
``base`` relation holds every fluent of every reachable state and whose ``input``
relation every legal move (it may hold more):

- ``true`` becomes a fresh relation that holds what ``init`` holds and what ``next``
  holds for it, ``does`` one that holds what ``legal`` holds: one fixpoint over all
  states at once instead of a search over states;
- a negated literal over a relation that depends on ``true`` or ``does`` is dropped
  (it can only restrict); ``distinct`` and negations over static relations stay exact;
- the game's own ``base``/``input`` relations are renamed out of the way.

Every rule of the game still holds in the relaxation for the reachable states and
their legal joint moves, so by induction over a play everything reachable is derived.
The reasoner evaluates it by tabling (``reachable_domains`` loads it as a game and reads
``base`` and ``input``), within an inference limit: no game can make it run forever.
The limit counts inferences, never seconds, so the result is a function of the rules
alone: a slow or busy machine takes longer and finds the same tables (a clock made chess
get 3,811 actions at one load and 131,072 first-seen ones at another).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gdl2pl.bridge import StateMachine
from gdl2pl.depgraph import body_atoms
from gdl2pl.depgraph import dependency_graph
from gdl2pl.errors import GdlError
from gdl2pl.normalize import fold
from gdl2pl.normalize import normalize_case
from gdl2pl.syntax import And
from gdl2pl.syntax import Const
from gdl2pl.syntax import Description
from gdl2pl.syntax import Distinct
from gdl2pl.syntax import Fact
from gdl2pl.syntax import Func
from gdl2pl.syntax import Literal
from gdl2pl.syntax import Not
from gdl2pl.syntax import Or
from gdl2pl.syntax import Rule
from gdl2pl.syntax import Sentence
from gdl2pl.syntax import Term
from gdl2pl.syntax import Var
from gdl2pl.syntax import variables
from gdl2pl.visitor import symbol_names

from .errors import DomainExplosionError

#: Prolog inferences a query of the relaxation may take (beyond it: no answer). The
#: only bound of the analysis besides ``max_terms``: no clock, so that the tables do not
#: depend on the machine (chess needs 36 million, under a fifth of it).
REACH_INFERENCES = 200_000_000
#: The version of the analysis' results: part of the key of the tables kept on disk
#: (``table_cache.py``); a change to the relaxation that can change them bumps it.
REACH_VERSION = 1


@dataclass(frozen=True)
class Reachable:
    """Per role the moves that may be legal, and the fluents that may hold, in some
    reachable state (supersets of the exact sets)."""

    moves: dict[Term, frozenset[Term]]
    fluents: frozenset[Term]


def _fresh(stem: str, taken: set[str]) -> str:
    name, i = stem, 1
    while fold(name) in taken:
        i += 1
        name = f"{stem}_{i}"
    taken.add(fold(name))
    return name


class _Relaxer:
    def __init__(self, d: Description, coarse: bool) -> None:
        self.coarse = coarse
        taken = {fold(n) for c in d.clauses for n in symbol_names(c)}
        graph = dependency_graph(d)
        self.dynamic = graph.dependents(["true", "does"]) | {"true", "does"}
        self.rename = {
            "true": _fresh("reachable_true", taken),
            "does": _fresh("reachable_does", taken),
            "base": _fresh("game_base", taken),
            "input": _fresh("game_input", taken),
        }
        self.dynamic_now = {fold(self.rename.get(n, n)) for n in self.dynamic}

    def sentence(self, s: Sentence) -> Sentence:
        new = self.rename.get(fold(s.name))
        if new is None:
            return s
        return Func(new, s.args, s.pos) if isinstance(s, Func) else Const(new, s.pos)

    def literal(self, lit: Literal) -> Literal | None:
        """The relaxed literal; None where it always holds in the relaxation."""
        if isinstance(lit, Const | Func):
            return self.sentence(lit)
        if isinstance(lit, Distinct):
            return lit
        if isinstance(lit, Not):
            if any(fold(a.name) in self.dynamic for a, _ in body_atoms(lit.body)):
                return None
            inner = self.literal(lit.body)
            return None if inner is None else Not(inner, lit.pos)
        if isinstance(lit, Or):
            ds = [self.literal(x) for x in lit.disjuncts]
            if any(x is None for x in ds):
                return None
            return Or(tuple(x for x in ds if x is not None), lit.pos)
        cs = [c for c in (self.literal(x) for x in lit.conjuncts) if c is not None]
        return And(tuple(cs), lit.pos) if cs else None

    def clause(self, c: Fact | Rule) -> Fact | Rule:
        head = self.sentence(c.head)
        if isinstance(c, Fact):
            return Fact(head, c.pos)
        body = [x for x in (self.literal(b) for b in c.body) if x is not None]
        if self.coarse and fold(head.name) in self.dynamic_now:
            # a static relation stays exact: its negations elsewhere are kept
            body = self.cover(head, body)
        return Rule(head, tuple(body), c.pos) if body else Fact(head, c.pos)

    def cover(self, head: Sentence, body: list[Literal]) -> list[Literal]:
        """The coarse relaxation of a body: a few literals that bind the head's variables
        (each chosen to bind the most still unbound), then every test those bindings
        allow (a literal all of whose variables are bound and that needs no relation of
        the game's own that depends on the state). Dropping a literal only lets more
        through, so the result is still an over-approximation. A head the literals
        cannot bind keeps the whole body."""
        needed = {v.name for v in variables(head)}
        bound: set[str] = set()
        chosen: list[Literal] = []
        candidates = list(body)
        while needed - bound:
            best, gain = None, 0
            for b in candidates:
                binds = self.binds(b)
                if not {v.name for v in variables(b)} <= bound | binds:
                    continue
                g = len(binds & (needed - bound))
                if g > gain:
                    best, gain = b, g
            if best is None:
                return body
            candidates.remove(best)
            chosen.append(best)
            bound |= {v.name for v in variables(best)}
        chosen += [
            b for b in candidates if {v.name for v in variables(b)} <= bound and self.cheap(b)
        ]
        return [b for b in body if any(b is c for c in chosen)]

    def binds(self, lit: Literal) -> set[str]:
        """The variables a literal binds on its own."""
        if isinstance(lit, Const | Func):
            return {v.name for v in variables(lit)}
        if isinstance(lit, And):
            return set().union(*(self.binds(c) for c in lit.conjuncts))
        if isinstance(lit, Or) and lit.disjuncts:
            return set.intersection(*(self.binds(d) for d in lit.disjuncts))
        return set()

    def cheap(self, lit: Literal) -> bool:
        """A test costing a lookup: no relation of the game's own that depends on the
        state (those of the relaxation are computed in full)."""
        own = {self.rename["true"], self.rename["does"]}
        return all(
            fold(a.name) not in self.dynamic_now or a.name in own for a, _ in body_atoms(lit)
        )


def relaxed_game(d: Description, coarse: bool = False) -> Description:
    """The relaxation of ``d``: its ``base`` and ``input`` relations hold every fluent and
    legal move of every reachable state (see the module's docstring). Only the relations
    these depend on are kept (the reasoner computes every static relation on loading)."""
    d = normalize_case(d)  # one spelling per symbol, as the game's StateMachine reports it
    r = _Relaxer(d, coarse)
    f, who, move = Var("f"), Var("r"), Var("m")
    true, does = r.rename["true"], r.rename["does"]
    extra = (
        Rule(Func(true, (f,)), (Func("init", (f,)),)),
        Rule(Func(true, (f,)), (Func("next", (f,)),)),
        Rule(Func(does, (who, move)), (Func("legal", (who, move)),)),
        Rule(Func("base", (f,)), (Func(true, (f,)),)),
        Rule(Func("input", (who, move)), (Func("legal", (who, move)),)),
    )
    clauses = tuple(r.clause(c) for c in d.clauses) + extra
    graph = dependency_graph(Description(clauses))
    needed = graph.depends_on("base") | graph.depends_on("input") | {"role", "base", "input"}
    return Description(
        tuple(c for c in clauses if fold(c.head.name) in needed), d.source, d.syntax
    )


def reachable_domains(
    d: Description,
    roles: Iterable[Term],
    game: str,
    max_terms: int,
) -> Reachable:
    """The coarse relaxation of ``d`` evaluated by the reasoner. ``DomainExplosionError``
    when a role's moves or the fluents number more than ``max_terms``, or a query of the
    evaluation needs more than ``REACH_INFERENCES`` inferences (e.g. an unbounded
    counter). No clock: the same rules give the same answer on any machine."""
    try:
        with StateMachine(
            relaxed_game(d, coarse=True), name=game, inference_limit=REACH_INFERENCES
        ) as sm:
            fluents = frozenset(sm.base_propositions)
            moves = {r: frozenset(sm.input_moves(r)) for r in roles}
    except GdlError as e:
        raise DomainExplosionError(
            f"{game}: the reachable moves and fluents cannot be computed: {e}"
        ) from None
    return bounded(Reachable(moves, fluents), game, max_terms)


def bounded(found: Reachable, game: str, max_terms: int) -> Reachable:
    """``found``, or ``DomainExplosionError`` when a role's moves or the fluents number
    more than ``max_terms``."""
    moves, fluents = found.moves, found.fluents
    for what, n in [("fluents", len(fluents))] + [
        (f"moves of role {r}", len(ms)) for r, ms in moves.items()
    ]:
        if n > max_terms:
            raise DomainExplosionError(
                f"{game}: {n} possible {what}, more than the bound of {max_terms}"
            )
    return found
