"""A game's rules evaluated in states known in part, for the proofs told to libraries
(``gdl2pl.length_bound``, ``gdl2pl.sum_proof``): what holds surely, what may hold, what
does not, whatever the rest of the state.

Terms are the proofs' own: a ground term is a ``str`` (a constant) or a tuple
``(name, *args)`` (``(c)``, a function of no arguments, is ``("c",)``, another term than
``c``); a pattern may hold ``Variable`` objects. A relation is its folded name and arity
(``Rel``): ``p``, ``(p)`` and ``(p a)`` are three relations, and so are ``cell`` of two
and of three arguments, as in the reasoner.

``Program`` reads a normalized description: the static relations (those that depend on
neither ``true`` nor ``does``) are evaluated to their facts when first read, bottom-up, a
component of the dependency graph at a time after those it uses, each within
``STATIC_WORK`` steps and ``MAX_STATIC_FACTS`` facts, and kept per description for the
next proof (``STATIC_MEMO_SIZE``); the others are kept as rules and evaluated in a ``Context``: the
fluents that surely hold, those that may or may not, and per role the moves it may be
making. An answer holds surely or maybe, or is not given: every answer that holds in some
state the context stands for is given (as maybe, at least), and one given as sure holds
in all of them. Where the rules are not what the evaluation reads soundly, it raises
``Unproved``, and a proof built on it says "not proved":

- a keyword relation in another form than GDL's (``(next a b)``, ``(terminal)``,
  ``(role)``), a rule body asking for ``next``, ``init`` or ``legal`` depending on what
  GDL forbids them (``legal`` on ``does``: the proofs ask for the legal moves without
  one), or rules that are not stratified;
- ``(true ?f)`` with ``?f`` unbound when it is read: which fluents it may match is no
  relation's;
- a relation the evaluation reaches that depends on itself (a recursive view), a
  negation or ``distinct`` whose variables no atom binds, an answer with a variable
  left, static relations too large, or the work given (``tick``) used up.

The dependency graph names relations without their arity: a name used with two arities
is one node there, which can only make more relations dynamic or recursive, and so only
make a proof fail. Pure functions and objects over a description; no Prolog.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from gdl2pl.depgraph import DependencyGraph
from gdl2pl.depgraph import body_atoms
from gdl2pl.depgraph import dependency_graph
from gdl2pl.normalize import fold
from gdl2pl.normalize import normalize_case
from gdl2pl.syntax import And
from gdl2pl.syntax import Const
from gdl2pl.syntax import Description
from gdl2pl.syntax import Distinct
from gdl2pl.syntax import Func
from gdl2pl.syntax import Literal
from gdl2pl.syntax import Not
from gdl2pl.syntax import Or
from gdl2pl.syntax import Rule
from gdl2pl.syntax import Term
from gdl2pl.syntax import Var
from gdl2pl.syntax import walk
from gdl2pl.vocabulary import FORBIDDEN_DEPENDENCIES
from gdl2pl.vocabulary import KEYWORD_RELATIONS

#: The most facts a static relation (with those of its component) may have, and the most
#: evaluation steps finding them may take: budgets of their own, beside each proof's, so
#: that what a relation is does not depend on which proof asked for it first.
MAX_STATIC_FACTS = 20_000
STATIC_WORK = 1_000_000
#: The keyword relations the proof reads, with their arities (``terminal`` a
#: proposition): a clause or literal naming one of them in another form is a game the
#: proof does not read.
READ_KEYWORDS = {k: KEYWORD_RELATIONS[k]
                 for k in ("role", "init", "true", "does", "next", "legal", "goal", "terminal")}

Rel = tuple[str, int]  # a relation: its name (folded) and arity; ``(p)`` is ("p()", 0)
LEGAL: Rel = ("legal", 2)



class Unproved(Exception):
    """The rules do not fit what the proof checks (or it ran out of work)."""


class OutOfTime(Unproved):
    """The proof ran past its time limit (a guard: the verdict is the machine's)."""


# -- terms: ground terms are str (constant) or tuple (name, *args); patterns hold Variables


class Variable:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"?{self.name}"


Ground = str | tuple  # type: ignore[type-arg]
Env = dict[Variable, Ground]

#: The descriptions whose static relations were evaluated last, with each relation's
#: facts or why it has none: a game's length and sum proofs evaluate each one once.
STATIC_MEMO_SIZE = 8
StaticFacts = frozenset[tuple[Ground, ...]] | str
_static_memo: OrderedDict[Description, dict[Rel, StaticFacts]] = OrderedDict()
_static_lock = threading.Lock()


def convert(t: Term, names: dict[str, Variable]) -> object:
    if isinstance(t, Const):
        return fold(t.name)
    if isinstance(t, Var):
        v = names.get(t.name)
        if v is None:
            v = names[t.name] = Variable(t.name)
        return v
    if isinstance(t, Func):
        return (fold(t.name), *(convert(a, names) for a in t.args))
    raise Unproved(f"not a term: {t!r}")


def ground_term(t: Term) -> Ground:
    """A ground term of the syntax as the proof's own (names folded)."""
    g = convert(t, {})
    if not is_ground(g):
        raise ValueError(f"not ground: {t}")
    return g  # type: ignore[return-value]


def is_ground(p: object) -> bool:
    if isinstance(p, Variable):
        return False
    if isinstance(p, tuple):
        return all(is_ground(a) for a in p[1:])
    return True


def subst(p: object, env: Env) -> object:
    if isinstance(p, Variable):
        return env.get(p, p)
    if isinstance(p, tuple):
        return (p[0], *(subst(a, env) for a in p[1:]))
    return p


def unify(p: object, g: Ground, env: Env) -> Env | None:
    """``env`` extended so that pattern ``p`` is the ground ``g`` (a copy), or None."""
    if p.__class__ is str:
        return env if p == g else None
    out = env
    todo = [(p, g)]
    while todo:
        a, b = todo.pop()
        if isinstance(a, Variable):
            have = out.get(a)
            if have is None:
                if out is env:
                    out = dict(env)
                out[a] = b
            elif have != b:
                return None
        elif isinstance(a, tuple):
            if not isinstance(b, tuple) or len(a) != len(b) or a[0] != b[0]:
                return None
            todo.extend(zip(a[1:], b[1:], strict=True))
        elif a != b:
            return None
    return out


def unify_args(ps: tuple[object, ...], gs: tuple[Ground, ...], env: Env) -> Env | None:
    """``env`` extended so that each pattern of ``ps`` is the ground term of ``gs``."""
    if len(ps) != len(gs):
        return None
    return unify(("", *ps), ("", *gs), env)


def matches(p: object, g: Ground) -> bool:
    return unify(p, g, {}) is not None


def text(g: object) -> str:
    if isinstance(g, tuple):
        return "(" + " ".join(text(a) for a in g) + ")"
    return str(g)


# -- the program -----------------------------------------------------------------------

Lit = tuple  # ("A", name, args) | ("N", lit) | ("D", a, b) | ("O", (conj, ...))


def atom_relation(s: Const | Func) -> Rel:
    """The relation of an atom: ``p``, ``(p)`` and ``(p a)`` are three relations."""
    if isinstance(s, Func):
        return (fold(s.name), len(s.args)) if s.args else (fold(s.name) + "()", 0)
    return (fold(s.name), 0)


def literal(lit: Literal, names: dict[str, Variable]) -> Lit:
    if isinstance(lit, Const):
        return ("A", atom_relation(lit), ())
    if isinstance(lit, Func):
        return ("A", atom_relation(lit), tuple(convert(a, names) for a in lit.args))
    if isinstance(lit, Not):
        return ("N", literal(lit.body, names))
    if isinstance(lit, Distinct):
        return ("D", convert(lit.left, names), convert(lit.right, names))
    if isinstance(lit, Or):
        return ("O", tuple(conjunction(d, names) for d in lit.disjuncts))
    if isinstance(lit, And):
        return ("O", (conjunction(lit, names),))
    raise Unproved(f"a literal the proof does not read: {lit!r}")


def conjunction(lit: Literal, names: dict[str, Variable]) -> tuple[Lit, ...]:
    if isinstance(lit, And):
        return tuple(literal(c, names) for c in lit.conjuncts)
    return (literal(lit, names),)


@dataclass
class Clause:
    head: tuple[object, ...]  # the head's arguments
    body: tuple[Lit, ...]


class Context:
    """What an evaluation sees: the fluents that hold (``sure``) and those that may or
    may not (``unknown``: an arrangement being built, or in *gathering* mode every
    fluent that may hold, recording the ``true`` patterns met in ``gather``), and the
    joint move (``does``: per role, the moves it may be making)."""

    def __init__(
        self,
        sure: Iterable[Ground],
        unknown: Iterable[Ground],
        does: Mapping[Ground, Iterable[Ground]],
        gather: set[object] | None = None,
    ) -> None:
        self.sure = set(sure)
        self.unknown = set(unknown) - self.sure
        self.by_relation: dict[Rel, list[Ground]] = {}
        for f in (*self.sure, *self.unknown):
            self.by_relation.setdefault(relation(f), []).append(f)
        self.does = does
        self.gather = gather
        self.memo: dict[tuple[Rel, tuple[object, ...]], dict[tuple[Ground, ...], bool]] = {}

    def with_fluent(self, f: Ground, held: bool) -> Context:
        """This context with the fluent ``f`` known: held, or not; a memo of its own."""
        out = Context((), (), self.does, self.gather)
        out.sure = self.sure | {f} if held else self.sure - {f}
        out.unknown = self.unknown - {f}
        out.by_relation = dict(self.by_relation)
        rel = relation(f)
        fs = [g for g in self.by_relation.get(rel, ()) if g != f]
        out.by_relation[rel] = [*fs, f] if held else fs
        return out


Answer = tuple[Env, bool]  # an extension of the bindings, and whether it surely holds


class Program:
    """A normalized description read for the proof: the static relations evaluated,
    the others kept as rules to evaluate in a context, in three values (an answer holds
    surely, maybe, or is not given)."""

    def __init__(self, d: Description, work: list[int], deadline: float) -> None:
        d = normalize_case(d)
        self.work = work
        self.deadline = deadline
        self.rules: dict[Rel, list[Clause]] = {}
        graph = self.graph = dependency_graph(d)
        # by name, every arity at once: a name's other arities only add to these sets,
        # which can only make the proof fail
        self.dynamic = graph.dependents(["true", "does"]) | {"true", "does"}
        self.stateful = graph.dependents(["true"]) | {"true"}
        self.recursive = graph.recursive()
        check_readable(d, graph)
        self._spellings: dict[str, str] = {}
        for c in d.clauses:
            for node in walk(c):
                if isinstance(node, Func | Const):
                    self._spellings.setdefault(fold(node.name), node.name)
            names: dict[str, Variable] = {}
            head = c.head
            args = tuple(convert(a, names) for a in head.args) if isinstance(head, Func) else ()
            body = tuple(literal(b, names) for b in c.body) if isinstance(c, Rule) else ()
            self.rules.setdefault(atom_relation(head), []).append(Clause(args, body))
        self.static: dict[Rel, set[tuple[Ground, ...]]] = {}
        self._index: dict[tuple[Rel, tuple[int, ...]], dict[tuple, list]] = {}  # type: ignore[type-arg]
        self._complete: set[Rel] = set()  # static relations evaluated
        self._count = 0  # facts of the component under evaluation
        self._by_first: dict[Rel, dict[tuple[int, object], list[Clause]]] = {}
        self._read_statics(d, graph)

    def spelling(self, rel: Rel) -> str:
        """How the game spells the relation's name."""
        name = graph_name(rel)
        return self._spellings.get(name, name)

    def spelled(self, t: object) -> str:
        """A ground term or pattern as KIF text, in the game's spellings."""
        if isinstance(t, tuple):
            return "(" + " ".join(self.spelled(a) for a in t) + ")"
        if isinstance(t, Variable):
            return f"?{t.name}"
        return self._spellings.get(str(t), str(t))

    def is_static(self, rel: Rel) -> bool:
        name = graph_name(rel)
        return name not in self.dynamic and name not in ("next", "legal", "goal", "terminal")

    def is_recursive(self, rel: Rel) -> bool:
        return graph_name(rel) in self.recursive

    def _read_statics(self, d: Description, graph: DependencyGraph) -> None:
        """Prepare the static relations, to be evaluated when first read (``facts``)."""
        names = {n for n in self.rules if self.is_static(n)}
        self.static = {n: set() for n in names}
        component = graph.component_of()
        self._groups: dict[Rel, frozenset[Rel]] = {}
        for n in names:
            comp = component.get(graph_name(n), frozenset({graph_name(n)}))
            self._groups[n] = frozenset({m for m in names if graph_name(m) in comp} | {n})
        self._uses = {
            n: {u for c in self.rules[n] for lit in c.body for u in relations_in(lit) if u in names}
            for n in names
        }
        self._evaluating: frozenset[Rel] = frozenset()
        with _static_lock:
            self._memo = _static_memo.setdefault(d, {})
            _static_memo.move_to_end(d)
            while len(_static_memo) > STATIC_MEMO_SIZE:
                _static_memo.popitem(last=False)

    def all_facts(self, rel: Rel) -> set[tuple[Ground, ...]]:
        """Every fact of the static relation ``rel``."""
        self._ensure(rel)
        return self.static.get(rel, set())

    def _ensure(self, rel: Rel) -> None:
        """Evaluate ``rel`` (with its component) and the static relations it uses, lowest
        first, unless done or under way."""
        if rel in self._complete or rel not in self._groups or rel in self._evaluating:
            return
        order: list[frozenset[Rel]] = []
        seen: set[frozenset[Rel]] = set()
        stack: list[tuple[frozenset[Rel], bool]] = [(self._groups[rel], False)]
        while stack:  # groups in post-order: each after those it uses
            group, expanded = stack.pop()
            if expanded:
                order.append(group)
                continue
            if group in seen or group <= self._complete:
                continue
            seen.add(group)
            stack.append((group, True))
            for n in group:
                for u in self._uses[n] - group:
                    stack.append((self._groups[u], False))
        for group in order:
            if not group <= self._complete:
                self._evaluate_group(group)

    def _evaluate_group(self, group: frozenset[Rel]) -> None:
        """One component's facts, from the memo or bottom-up within ``STATIC_WORK`` steps
        and ``MAX_STATIC_FACTS`` facts (then remembered, or why it has none; a time out
        is not remembered)."""
        with _static_lock:
            known = [self._memo.get(n) for n in sorted(group)]
        failed = next((k for k in known if isinstance(k, str)), None)
        if failed is not None:
            raise Unproved(failed)
        if all(k is not None for k in known):
            for n in group:
                for fact in cast(frozenset, self._memo[n]):  # type: ignore[type-arg]
                    self._add_static(n, fact)
            self._complete |= group
            return
        outer = self.work, self._evaluating, self._count
        self.work, self._evaluating, self._count = [STATIC_WORK], group, 0
        try:
            self._fixpoint(group)
        except OutOfTime:
            raise
        except Unproved as e:
            with _static_lock:
                self._memo.update({n: str(e) for n in group})
            raise
        finally:
            self.work, self._evaluating, self._count = outer
        with _static_lock:
            self._memo.update({n: frozenset(self.static[n]) for n in group})
        self._complete |= group

    def _fixpoint(self, group: frozenset[Rel]) -> None:
        """A component's facts, its rules applied until no fact is new (one pass where it
        does not use itself); those it uses are complete."""
        empty = Context((), (), {})
        changed = True
        while changed:
            changed = False
            for n in sorted(group):
                for clause in self.rules[n]:
                    for env, _ in self.solve(clause.body, {}, empty):
                        fact = tuple(subst(a, env) for a in clause.head)
                        if not all(is_ground(a) for a in fact):
                            raise Unproved(f"a rule of {n[0]} leaves a variable unbound")
                        if fact not in self.static[n]:
                            self._count += 1
                            if self._count > MAX_STATIC_FACTS:
                                raise Unproved("the static relations are too large")
                            self._add_static(n, fact)  # type: ignore[arg-type]
                            changed = any(map(self.is_recursive, group))

    # -- solving a conjunction -----------------------------------------------------------

    def tick(self, n: int = 1) -> None:
        self.work[0] -= n
        if self.work[0] % 4096 == 0 and time.monotonic() > self.deadline:
            raise OutOfTime("the proof ran out of time")
        if self.work[0] < 0:
            raise Unproved("the proof ran out of work")

    def next_fluents(self, rules: Iterable[Clause], ctx: Context) -> dict[Ground, bool]:
        """The fluents the ``next`` rules ``rules`` give in ``ctx``, each with whether
        surely; ``Unproved`` where a rule leaves a variable of its head unbound."""
        out: dict[Ground, bool] = {}
        for c in rules:
            for e, sure in self.solve(c.body, {}, ctx):
                f = subst(c.head[0], e)
                if not is_ground(f):
                    raise Unproved("a next rule leaves a variable unbound")
                g = cast(Ground, f)
                out[g] = out.get(g, False) or sure
        return out

    def solve(
        self, lits: tuple[Lit, ...], env: Env, ctx: Context, sure: bool = True
    ) -> Iterator[Answer]:
        """Every extension of ``env`` under which the literals may hold in ``ctx``, with
        whether they surely do. Atoms are taken in order; ``not`` and ``distinct`` as
        soon as their variables are bound."""
        if not lits:
            yield env, sure
            return
        for i, lit in enumerate(lits):  # noqa: B007 - i is used after the loop
            if lit[0] in ("A", "O"):
                break
            if self._ground_under(lit, env):
                break
        else:
            raise Unproved("a negation or distinct whose variables no atom binds")
        rest = lits[:i] + lits[i + 1 :]
        for env2, s in self._one(lit, env, ctx):
            yield from self.solve(rest, env2, ctx, sure and s)

    def _ground_under(self, lit: Lit, env: Env) -> bool:
        if lit[0] == "D":
            return is_ground(subst(lit[1], env)) and is_ground(subst(lit[2], env))
        if lit[0] == "N":
            return self._ground_under(lit[1], env)
        if lit[0] == "A":
            return all(is_ground(subst(a, env)) for a in lit[2])
        return all(self._ground_under(x, env) for conj in lit[1] for x in conj)

    def _one(self, lit: Lit, env: Env, ctx: Context) -> Iterator[Answer]:
        self.tick()
        kind = lit[0]
        if kind == "A":
            yield from self._atom(lit[1], lit[2], env, ctx)
        elif kind == "D":
            if subst(lit[1], env) != subst(lit[2], env):
                yield env, True
        elif kind == "N":
            inner = [s for _, s in self._one(lit[1], env, ctx)]  # ground: no bindings
            if ctx.gather is not None:
                yield env, False  # gathering: let either outcome through
            elif not inner:
                yield env, True
            elif not any(inner):
                yield env, False
        else:
            for conj in lit[1]:
                yield from self.solve(conj, env, ctx)

    def _atom(
        self, name: Rel, args: tuple[object, ...], env: Env, ctx: Context
    ) -> Iterator[Answer]:
        if name == ("true", 1):
            (p,) = args
            p = subst(p, env)
            if isinstance(p, Variable):
                # which fluents it may match is no relation's: not what the proof reads
                raise Unproved("the step reads the state through a variable: (true ?f)")
            if ctx.gather is not None:
                ctx.gather.add(p)
            if is_ground(p):
                self.tick()
                if p in ctx.sure:
                    yield env, True
                elif p in ctx.unknown:
                    yield env, False
                return
            for g in ctx.by_relation.get(relation(p), ()):  # type: ignore[arg-type]
                self.tick()
                e = unify(p, g, env)
                if e is not None:
                    yield e, g in ctx.sure
        elif name == ("does", 2):
            who, move = (subst(a, env) for a in args)
            for role, moves in ctx.does.items():
                e = unify(who, role, env)
                if e is None:
                    continue
                for m in moves:
                    self.tick()
                    e2 = unify(move, m, e)
                    if e2 is not None:
                        yield e2, True
        elif self.is_static(name):
            for e in self.static_answers(name, args, env):
                yield e, True
        else:
            if self.is_recursive(name):
                raise Unproved(f"the step looks at the recursive relation {name[0]}")
            bound = tuple(subst(a, env) for a in args)
            # each call pattern of a view is answered once per context (gathering too:
            # what it looked at is already recorded)
            shape = tuple(a if is_ground(a) else None for a in bound)
            known = ctx.memo.get((name, shape))
            if known is None:
                free = tuple(Variable(f"m{i}") if a is None else a for i, a in enumerate(shape))
                known = ctx.memo[(name, shape)] = {}
                for e, s in self.view(name, free, {}, ctx):
                    answer = cast(tuple[Ground, ...], tuple(subst(a, e) for a in free))
                    known[answer] = known.get(answer, False) or s
            for answer, s in known.items():
                self.tick()
                e = unify_args(bound, answer, env)
                if e is not None:
                    yield e, s

    def _add_static(self, name: Rel, fact: tuple[Ground, ...]) -> None:
        self.static[name].add(fact)
        for (n, where), index in self._index.items():
            if n == name:
                index.setdefault(tuple(fact[i] for i in where), []).append(fact)

    def static_answers(self, name: Rel, args: Sequence[object], env: Env) -> Iterator[Env]:
        """``env`` extended by each fact of the static relation ``name`` that ``args``
        (under ``env``) match, a step of work each."""
        bound = tuple(subst(a, env) for a in args)
        for fact in self.facts(name, bound):
            self.tick()
            e = unify_args(bound, fact, env)
            if e is not None:
                yield e

    def facts(self, name: Rel, bound: tuple[object, ...]) -> list[tuple[Ground, ...]]:
        """The facts of the static relation ``name`` that agree with the ground
        arguments of ``bound`` (indexes are kept up to date as facts are added)."""
        self._ensure(name)
        where = tuple(i for i, a in enumerate(bound) if is_ground(a))
        index = self._index.get((name, where))
        if index is None:
            index = self._index[(name, where)] = {}
            for fact in self.static.get(name, ()):
                index.setdefault(tuple(fact[i] for i in where), []).append(fact)
        return index.get(tuple(bound[i] for i in where), [])  # type: ignore[misc]

    def view(
        self, name: Rel, args: tuple[object, ...], env: Env, ctx: Context
    ) -> Iterator[Answer]:
        """``env`` extended by each answer of the view ``name`` for ``args``."""
        for clause in self.clauses(name, args):
            inner: Env | None = {}
            for h, a in zip(clause.head, args, strict=True):
                if is_ground(a):
                    inner = unify(h, a, inner)  # type: ignore[arg-type]
                    if inner is None:
                        break
            if inner is None:
                continue
            for e, s in self.solve(clause.body, inner, ctx):
                answer = tuple(subst(h, e) for h in clause.head)
                if not all(is_ground(v) for v in answer):
                    raise Unproved(f"a rule of {name[0]} leaves a variable unbound")
                out = unify_args(args, answer, env)  # type: ignore[arg-type]
                if out is not None:
                    yield out, s

    def clauses(self, name: Rel, args: tuple[object, ...]) -> list[Clause]:
        """The rules of ``name`` whose head may match ``args``: of the same arity, and
        whose first argument has the functor of the first of ``args`` where both have one
        (``next`` of ``(cell 1 1 b)`` looks at the rules for ``cell`` and ``?f`` alone)."""
        first = _functor(args[0]) if args else None
        index = self._by_first.get(name)
        if index is None:
            index = self._by_first[name] = {}
            for c in self.rules.get(name, ()):
                key = (len(c.head), _functor(c.head[0]) if c.head else None)
                index.setdefault(key, []).append(c)
        if first is None:
            return [c for (n, _), cs in index.items() if n == len(args) for c in cs]
        return index.get((len(args), first), []) + index.get((len(args), None), [])

    def truth(self, name: Rel, args: tuple[Ground, ...], ctx: Context) -> bool | None:
        """Whether the ground atom surely holds (True), may hold (False), or does not
        (None)."""
        best: bool | None = None
        for _, s in self.view(name, args, {}, ctx):
            if s:
                return True
            best = False
        return best


# -- the turn relation -------------------------------------------------------------------


def turns(p: Program, roles: list[Ground]) -> tuple[Rel, list[Ground]] | None:
    """A one-argument fluent relation exactly one fluent of which holds in every
    reachable state, and the values it takes in order, or None.

    The pattern: one ``init`` fact ``(c k)`` and no other ``init`` clause for ``c``; every
    ``next`` rule for ``c`` is ground with the body ``(true (c k))`` alone, one head per
    ``k``; the values from the initial one go round a cycle, every value a role; no
    ``init`` or ``next`` rule is for any fluent ``?f``. By induction over a play: the
    initial state holds one ``c`` fluent, and from a state holding ``(c k)`` alone exactly
    the rule for ``k`` fires."""
    inits = p.rules.get(("init", 1), [])
    nexts = p.rules.get(("next", 1), [])
    if any(isinstance(c.head[0], Variable) for c in (*inits, *nexts)):
        return None  # an init or next rule for any fluent (?f) might make another
    for c in inits:
        first = c.head[0]
        if not (isinstance(first, tuple) and len(first) == 2):
            continue
        rel = relation(first)
        mine = [x for x in inits if relation(cast(Ground, x.head[0])) == rel]
        if len(mine) != 1 or c.body or not is_ground(first):
            continue
        successor: dict[Ground, Ground] = {}
        fits = True
        for n in nexts:
            f = cast(Ground, n.head[0])
            if relation(f) != rel:
                continue
            body = n.body
            now = body[0][2][0] if len(body) == 1 and body[0][:2] == ("A", ("true", 1)) else None
            if not (
                is_ground(f)
                and isinstance(now, tuple)
                and is_ground(now)
                and relation(now) == rel
            ):
                fits = False
                break
            if successor.setdefault(now[1], f[1]) != f[1]:
                fits = False
                break
        if not fits:
            continue
        values: list[Ground] = []
        at = first[1]
        while at not in values:
            values.append(at)
            if at not in successor:
                break
            at = successor[at]
        else:
            if all(v in roles for v in values):
                return rel, values
    return None


def relations_in(lit: Lit) -> Iterator[Rel]:
    if lit[0] == "A":
        yield lit[1]
    elif lit[0] == "N":
        yield from relations_in(lit[1])
    elif lit[0] == "O":
        for conj in lit[1]:
            for x in conj:
                yield from relations_in(x)


def relation(f: Ground) -> Rel:
    """The fluent relation of a fluent (or pattern): ``c``, ``(c)``, ``(c a)`` are three."""
    if isinstance(f, tuple):
        return (f[0], len(f) - 1) if len(f) > 1 else (f[0] + "()", 0)
    return (f, 0)


def _functor(t: object) -> object:
    """A term's name and arity (a constant's name), or None for a variable."""
    if isinstance(t, tuple):
        return (t[0], len(t))
    return None if isinstance(t, Variable) else t


def graph_name(rel: Rel) -> str:
    """The dependency graph's node of a relation: its name, every arity at once."""
    return rel[0].removesuffix("()")


def check_readable(d: Description, graph: DependencyGraph) -> None:
    """``Unproved`` unless every keyword relation the proof reads is used in its own
    form only (``(next a b)``, ``(terminal)`` or ``(legal r)`` are not what it reads), no
    body asks for ``next``, ``init`` and ``legal`` do not depend on what GDL forbids
    them (``legal`` on ``does``: the proof asks for the legal moves without one), and the
    rules are stratified (the static relations are evaluated stratum by stratum)."""
    for c in d.clauses:
        atoms = [c.head] + [a for b in (c.body if isinstance(c, Rule) else ())
                            for a, _ in body_atoms(b)]
        for i, a in enumerate(atoms):
            name = fold(a.name)
            if name not in READ_KEYWORDS:
                continue
            arity = len(a.args) if isinstance(a, Func) else 0
            if isinstance(a, Func) and not a.args:
                raise Unproved(f"({a.name}) is written with parentheses: a relation other "
                               f"than the keyword {a.name}, which the proof does not read")
            if arity != READ_KEYWORDS[name]:
                raise Unproved(f"{a.name} is used with {arity} arguments")
            if i > 0 and name == "next":
                raise Unproved("a rule body asks for next")
    for keyword in ("init", "legal"):
        bad = graph.depends_on(keyword) & set(FORBIDDEN_DEPENDENCIES[keyword])
        if bad:
            raise Unproved(f"{keyword} depends on {', '.join(sorted(bad))}")
    if graph.negative_cycle_edges():
        raise Unproved("the rules are not stratified")


# -- a game read for a proof -------------------------------------------------------------


class ProofGame:
    """A description read for a proof, with the reachability analysis' proved supersets:
    the program (``p``), the roles and the moves each may make (``moves``), the fluents
    that may hold by relation (``fluents``), the initial state (``init``) and the turn
    relation (``turn``: see ``turns``). ``work`` evaluation steps in all, then
    ``Unproved``."""

    def __init__(
        self,
        d: Description,
        fluents: Iterable[Term],
        moves: Mapping[Term, Iterable[Term]],
        work: int,
        deadline: float,
    ) -> None:
        self.work = [work]
        self.p = Program(d, self.work, deadline)
        self.roles = [ground_term(r) for r in moves]
        self.moves = {
            ground_term(r): sorted(map(ground_term, ms), key=text) for r, ms in moves.items()
        }
        self.fluents: dict[Rel, list[Ground]] = {}
        for f in fluents:
            g = ground_term(f)
            self.fluents.setdefault(relation(g), []).append(g)
        for fs in self.fluents.values():
            fs.sort(key=text)
        self.init = {a[0] for a in self.p.all_facts(("init", 1))}
        self.turn = turns(self.p, self.roles)
        self._matching: dict[tuple[Rel, tuple[int, ...]], dict[tuple, list[Ground]]] = {}  # type: ignore[type-arg]
        self._possible: dict[Ground | None, dict[Ground, list[Ground]]] = {}

    def matching(self, pattern: object) -> list[Ground]:
        """The fluents that may hold and agree with the ground arguments of ``pattern``
        (a tuple or a constant; a superset of those it matches)."""
        rel = relation(pattern)  # type: ignore[arg-type]
        if not isinstance(pattern, tuple):
            return [f for f in self.fluents.get(rel, ()) if f == pattern]
        where = tuple(i for i, a in enumerate(pattern) if i and is_ground(a))
        index = self._matching.get((rel, where))
        if index is None:
            index = self._matching[(rel, where)] = {}
            for f in self.fluents.get(rel, ()):
                index.setdefault(tuple(f[i] for i in where), []).append(f)
        return index.get(tuple(pattern[i] for i in where), [])

    def turn_values(self) -> list[Ground | None]:
        """The values of the turn fluent in the reachable states, or ``[None]`` when there
        is no turn relation."""
        return list(self.turn[1]) if self.turn else [None]

    def fixed(self, value: Ground | None) -> list[Ground]:
        """The turn fluent of ``value`` (none for None)."""
        return [(self.turn[0][0], value)] if self.turn and value is not None else []

    def free_fluents(self) -> list[Ground]:
        """Every fluent that may hold but those of the turn relation (one of which is
        fixed in every state a proof looks at)."""
        turn = self.turn[0] if self.turn else None
        return [f for r, fs in self.fluents.items() if r != turn for f in fs]

    def possible_moves(self, value: Ground | None) -> dict[Ground, list[Ground]]:
        """Per role, its moves that may be legal in a state whose turn fluent is
        ``value`` (any state if None); found once."""
        out = self._possible.get(value)
        if out is None:
            ctx = Context(self.fixed(value), self.free_fluents(), {}, set())
            out = {}
            for r in self.roles:
                answers = self.p.view(LEGAL, (r, Variable("move")), {}, ctx)
                legal = {m for e, _ in answers for m in e.values() if is_ground(m)}
                out[r] = [m for m in self.moves.get(r, ()) if m in legal]
            self._possible[value] = out
        return out
