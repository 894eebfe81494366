"""A bound on the length of every play, proved from the rules by a measure each step moves.

Two measures, each over one fluent relation ``F`` (``cell``, ``cellHolds``):

- **filling**: no ``F`` fluent is ever removed (an unconditional frame rule
  ``(<= (next (F ?a ..)) (true (F ?a ..)))``) and every step adds one at a *position*
  (its arguments but those naming a role: the cell ``(x, y)`` of ``(cell x y red)``)
  that no ``F`` fluent held. Positions only fill up, so a play has at most as many steps
  as there are positions still empty at the start (connectFour: the 48 cells).
- **advance**: every step removes ``F`` fluents worth more than those it adds, by at
  least one, where a fluent is worth the number of steps its piece may still go along
  one argument (breakthrough: the rows a pawn has left to its last row, read off the
  moves: each takes a pawn one row forward). The worth of the initial state bounds the
  number of steps.

Both are proved by checking each step in every arrangement of what it depends on.
Every reachable state holds exactly one fluent of a *turn* relation (``control``: one in
``init``, and each value followed by one other by an unconditional ``next`` rule), so
the states are split by the role in control. For each role and each of its moves (from
``moves``, a proved superset of the legal moves), the fluents the rules can look at to
decide that the move is legal, what the others may play, and what ``F`` fluents the
step adds or keeps are gathered (every fluent of ``fluents``, a proved superset of the
reachable ones, that a ``true`` the evaluation may reach can match); then every subset
of them is tried as the state's part that matters, with every joint move legal there.
The rest of the state cannot change the outcome, since the rules never look at it, so
a measure that moves in every arrangement moves in every reachable state. Arrangements
that no play reaches are tried too: they can only make the proof fail, never wrong.

What is checked is sound but narrow: views (relations that depend on ``true`` or
``does``) must not be recursive where the step looks, frame rules must not look at the
state beyond their own fluent, and the arrangements are capped (``MAX_ARRANGEMENTS``
per move, ``MAX_WORK`` evaluation steps in all); past any of these there is no bound
(the caller says "assumed"). Pure functions over a description; no Prolog.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
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

#: The most fluents a move's check may depend on: searched lazily (filling)...
MAX_ARRANGED = 20
#: ...or every arrangement of them tried (advance: 2**this).
MAX_ENUMERATED = 10
#: The most evaluation steps (unifications, arrangements tried) a proof may take in all:
#: about three times what connectFour's takes. The proof's verdict depends on it, never
#: on the machine's speed; the time limit is only a guard.
MAX_WORK = 1_000_000
#: The most facts the static relations may have.
MAX_STATIC_FACTS = 20_000
#: What trying one arrangement counts, beyond the evaluation steps it takes.
ARRANGEMENT_WORK = 50

#: The keyword relations the proof reads, with their arities (``terminal`` a
#: proposition): a clause or literal naming one of them in another form is a game the
#: proof does not read.
READ_KEYWORDS = {k: KEYWORD_RELATIONS[k]
                 for k in ("role", "init", "true", "does", "next", "legal", "goal", "terminal")}

Rel = tuple[str, int]  # a relation: its name (folded) and arity; ``(p)`` is ("p()", 0)
LEGAL: Rel = ("legal", 2)


@dataclass(frozen=True)
class LengthBound:
    """At most ``steps`` steps in any play, for the ``reason`` given (a sentence)."""

    steps: int
    reason: str


class _Unproved(Exception):
    """The rules do not fit what the proof checks (or it ran out of work)."""


# -- terms: ground terms are str (constant) or tuple (name, *args); _Var in patterns ----


class _Var:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"?{self.name}"


Ground = str | tuple  # type: ignore[type-arg]
Env = dict[_Var, Ground]


def _convert(t: Term, names: dict[str, _Var]) -> object:
    if isinstance(t, Const):
        return fold(t.name)
    if isinstance(t, Var):
        v = names.get(t.name)
        if v is None:
            v = names[t.name] = _Var(t.name)
        return v
    if isinstance(t, Func):
        return (fold(t.name), *(_convert(a, names) for a in t.args))
    raise _Unproved(f"not a term: {t!r}")


def ground_term(t: Term) -> Ground:
    """A ground term of the syntax as the proof's own (names folded)."""
    g = _convert(t, {})
    if not _is_ground(g):
        raise ValueError(f"not ground: {t}")
    return g  # type: ignore[return-value]


def _is_ground(p: object) -> bool:
    if isinstance(p, _Var):
        return False
    if isinstance(p, tuple):
        return all(_is_ground(a) for a in p[1:])
    return True


def _subst(p: object, env: Env) -> object:
    if isinstance(p, _Var):
        return env.get(p, p)
    if isinstance(p, tuple):
        return (p[0], *(_subst(a, env) for a in p[1:]))
    return p


def _unify(p: object, g: Ground, env: Env) -> Env | None:
    """``env`` extended so that pattern ``p`` is the ground ``g`` (a copy), or None."""
    if p.__class__ is str:
        return env if p == g else None
    out = env
    todo = [(p, g)]
    while todo:
        a, b = todo.pop()
        if isinstance(a, _Var):
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


def _unify_args(ps: tuple[object, ...], gs: tuple[Ground, ...], env: Env) -> Env | None:
    """``env`` extended so that each pattern of ``ps`` is the ground term of ``gs``."""
    if len(ps) != len(gs):
        return None
    return _unify(("", *ps), ("", *gs), env)


def _matches(p: object, g: Ground) -> bool:
    return _unify(p, g, {}) is not None


def _text(g: object) -> str:
    if isinstance(g, tuple):
        return "(" + " ".join(_text(a) for a in g) + ")"
    return str(g)


# -- the program -----------------------------------------------------------------------

Lit = tuple  # ("A", name, args) | ("N", lit) | ("D", a, b) | ("O", (conj, ...))


def _rel(s: Const | Func) -> Rel:
    """The relation of an atom: ``p``, ``(p)`` and ``(p a)`` are three relations."""
    if isinstance(s, Func):
        return (fold(s.name), len(s.args)) if s.args else (fold(s.name) + "()", 0)
    return (fold(s.name), 0)


def _literal(lit: Literal, names: dict[str, _Var]) -> Lit:
    if isinstance(lit, Const):
        return ("A", _rel(lit), ())
    if isinstance(lit, Func):
        return ("A", _rel(lit), tuple(_convert(a, names) for a in lit.args))
    if isinstance(lit, Not):
        return ("N", _literal(lit.body, names))
    if isinstance(lit, Distinct):
        return ("D", _convert(lit.left, names), _convert(lit.right, names))
    if isinstance(lit, Or):
        return ("O", tuple(_conjunction(d, names) for d in lit.disjuncts))
    if isinstance(lit, And):
        return ("O", (_conjunction(lit, names),))
    raise _Unproved(f"a literal the proof does not read: {lit!r}")


def _conjunction(lit: Literal, names: dict[str, _Var]) -> tuple[Lit, ...]:
    if isinstance(lit, And):
        return tuple(_literal(c, names) for c in lit.conjuncts)
    return (_literal(lit, names),)


@dataclass
class _Clause:
    head: tuple[object, ...]  # the head's arguments
    body: tuple[Lit, ...]


class _Context:
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
            self.by_relation.setdefault(_relation(f), []).append(f)
        self.does = does
        self.gather = gather
        self.memo: dict[tuple[Rel, tuple[object, ...]], dict[tuple[Ground, ...], bool]] = {}


Answer = tuple[Env, bool]  # an extension of the bindings, and whether it surely holds


class _Program:
    """A normalized description read for the proof: the static relations evaluated,
    the others kept as rules to evaluate in a context, in three values (an answer holds
    surely, maybe, or is not given)."""

    def __init__(self, d: Description, work: list[int], deadline: float) -> None:
        d = normalize_case(d)
        self.work = work
        self.deadline = deadline
        self.rules: dict[Rel, list[_Clause]] = {}
        graph = dependency_graph(d)
        # by name, every arity at once: a name's other arities only add to these sets,
        # which can only make the proof fail
        self.dynamic = graph.dependents(["true", "does"]) | {"true", "does"}
        self.stateful = graph.dependents(["true"]) | {"true"}
        self.recursive = graph.recursive()
        _check_keywords(d, graph)
        self._spellings: dict[str, str] = {}
        for c in d.clauses:
            for node in walk(c):
                if isinstance(node, Func | Const):
                    self._spellings.setdefault(fold(node.name), node.name)
            names: dict[str, _Var] = {}
            head = c.head
            args = tuple(_convert(a, names) for a in head.args) if isinstance(head, Func) else ()
            body = tuple(_literal(b, names) for b in c.body) if isinstance(c, Rule) else ()
            self.rules.setdefault(_rel(head), []).append(_Clause(args, body))
        self.static: dict[Rel, set[tuple[Ground, ...]]] = {}
        self._index: dict[tuple[Rel, tuple[int, ...]], dict[tuple, list]] = {}  # type: ignore[type-arg]
        self._complete: set[Rel] = set()  # static relations evaluated
        self._static_count = 0
        self._evaluate_static(graph)

    def spelling(self, rel: Rel) -> str:
        """How the game spells the relation's name."""
        name = _graph_name(rel)
        return self._spellings.get(name, name)

    def is_static(self, rel: Rel) -> bool:
        name = _graph_name(rel)
        return name not in self.dynamic and name not in ("next", "legal", "goal", "terminal")

    def is_recursive(self, rel: Rel) -> bool:
        return _graph_name(rel) in self.recursive

    def _evaluate_static(self, graph: DependencyGraph) -> None:
        """The static relations' facts, bottom-up, a component of the dependency graph
        at a time once those it uses are complete (then they are indexed); capped."""
        names = {n for n in self.rules if self.is_static(n)}
        for n in names:
            self.static[n] = set()
        component = graph.component_of()

        def group_of(n: Rel) -> set[Rel]:
            """The static relations of ``n``'s component (every arity of its names)."""
            comp = component.get(_graph_name(n), frozenset({_graph_name(n)}))
            return {m for m in names if _graph_name(m) in comp} | {n}

        uses = {
            n: {u for c in self.rules[n] for lit in c.body for u in _names(lit) if u in names}
            for n in names
        }
        empty = _Context((), (), {})
        while names - self._complete:
            ready = next(
                (n for n in sorted(names - self._complete)
                 if uses[n] <= self._complete | group_of(n)),
                None,
            )
            if ready is None:
                raise _Unproved("the static relations cannot be ordered")
            group = group_of(ready)
            changed = True
            while changed:
                # a group that does not use itself is complete after one pass
                changed = False
                for n in sorted(group):
                    for clause in self.rules[n]:
                        for env, _ in self.solve(clause.body, {}, empty):
                            fact = tuple(_subst(a, env) for a in clause.head)
                            if not all(_is_ground(a) for a in fact):
                                raise _Unproved(f"a rule of {n[0]} leaves a variable unbound")
                            if fact not in self.static[n]:
                                self._add_static(n, fact)  # type: ignore[arg-type]
                                changed = any(map(self.is_recursive, group))
            self._complete |= group

    # -- solving a conjunction -----------------------------------------------------------

    def _tick(self, n: int = 1) -> None:
        self.work[0] -= n
        if self.work[0] % 4096 == 0 and time.monotonic() > self.deadline:
            raise _Unproved("the proof ran out of time")
        if self.work[0] < 0:
            raise _Unproved("the proof ran out of work")

    def solve(
        self, lits: tuple[Lit, ...], env: Env, ctx: _Context, sure: bool = True
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
            raise _Unproved("a negation or distinct whose variables no atom binds")
        rest = lits[:i] + lits[i + 1 :]
        for env2, s in self._one(lit, env, ctx):
            yield from self.solve(rest, env2, ctx, sure and s)

    def _ground_under(self, lit: Lit, env: Env) -> bool:
        if lit[0] == "D":
            return _is_ground(_subst(lit[1], env)) and _is_ground(_subst(lit[2], env))
        if lit[0] == "N":
            return self._ground_under(lit[1], env)
        if lit[0] == "A":
            return all(_is_ground(_subst(a, env)) for a in lit[2])
        return all(self._ground_under(x, env) for conj in lit[1] for x in conj)

    def _one(self, lit: Lit, env: Env, ctx: _Context) -> Iterator[Answer]:
        self._tick()
        kind = lit[0]
        if kind == "A":
            yield from self._atom(lit[1], lit[2], env, ctx)
        elif kind == "D":
            if _subst(lit[1], env) != _subst(lit[2], env):
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
        self, name: Rel, args: tuple[object, ...], env: Env, ctx: _Context
    ) -> Iterator[Answer]:
        if name == ("true", 1):
            (p,) = args
            p = _subst(p, env)
            if isinstance(p, _Var):
                # which fluents it may match is no relation's: not what the proof reads
                raise _Unproved("the step reads the state through a variable: (true ?f)")
            if ctx.gather is not None:
                ctx.gather.add(p)
            if _is_ground(p):
                self._tick()
                if p in ctx.sure:
                    yield env, True
                elif p in ctx.unknown:
                    yield env, False
                return
            for g in ctx.by_relation.get(_relation(p), ()):  # type: ignore[arg-type]
                self._tick()
                e = _unify(p, g, env)
                if e is not None:
                    yield e, g in ctx.sure
        elif name == ("does", 2):
            who, move = (_subst(a, env) for a in args)
            for role, moves in ctx.does.items():
                e = _unify(who, role, env)
                if e is None:
                    continue
                for m in moves:
                    self._tick()
                    e2 = _unify(move, m, e)
                    if e2 is not None:
                        yield e2, True
        elif self.is_static(name):
            bound = tuple(_subst(a, env) for a in args)
            for fact in self._indexed(name, bound):
                self._tick()
                e = _unify_args(bound, fact, env)
                if e is not None:
                    yield e, True
        else:
            if self.is_recursive(name):
                raise _Unproved(f"the step looks at the recursive relation {name[0]}")
            bound = tuple(_subst(a, env) for a in args)
            # each call pattern of a view is answered once per context (gathering too:
            # what it looked at is already recorded)
            shape = tuple(a if _is_ground(a) else None for a in bound)
            known = ctx.memo.get((name, shape))
            if known is None:
                free = tuple(_Var(f"m{i}") if a is None else a for i, a in enumerate(shape))
                known = ctx.memo[(name, shape)] = {}
                for e, s in self.view(name, free, {}, ctx):
                    answer = cast(tuple[Ground, ...], tuple(_subst(a, e) for a in free))
                    known[answer] = known.get(answer, False) or s
            for answer, s in known.items():
                self._tick()
                e = _unify_args(bound, answer, env)
                if e is not None:
                    yield e, s

    def _add_static(self, name: Rel, fact: tuple[Ground, ...]) -> None:
        self._static_count += 1
        if self._static_count > MAX_STATIC_FACTS:
            raise _Unproved("the static relations are too large")
        self.static[name].add(fact)
        for (n, where), index in self._index.items():
            if n == name:
                index.setdefault(tuple(fact[i] for i in where), []).append(fact)

    def _indexed(self, name: Rel, bound: tuple[object, ...]) -> list[tuple[Ground, ...]]:
        """The facts of the static relation ``name`` that agree with the ground
        arguments of ``bound`` (indexes are kept up to date as facts are added)."""
        where = tuple(i for i, a in enumerate(bound) if _is_ground(a))
        index = self._index.get((name, where))
        if index is None:
            index = self._index[(name, where)] = {}
            for fact in self.static.get(name, ()):
                index.setdefault(tuple(fact[i] for i in where), []).append(fact)
        return index.get(tuple(bound[i] for i in where), [])  # type: ignore[misc]

    def view(
        self, name: Rel, args: tuple[object, ...], env: Env, ctx: _Context
    ) -> Iterator[Answer]:
        """``env`` extended by each answer of the view ``name`` for ``args``."""
        for clause in self.rules.get(name, ()):
            if len(clause.head) != len(args):
                continue
            inner: Env | None = {}
            for h, a in zip(clause.head, args, strict=True):
                if _is_ground(a):
                    inner = _unify(h, a, inner)  # type: ignore[arg-type]
                    if inner is None:
                        break
            if inner is None:
                continue
            for e, s in self.solve(clause.body, inner, ctx):
                answer = tuple(_subst(h, e) for h in clause.head)
                if not all(_is_ground(v) for v in answer):
                    raise _Unproved(f"a rule of {name[0]} leaves a variable unbound")
                out = _unify_args(args, answer, env)  # type: ignore[arg-type]
                if out is not None:
                    yield out, s

    def truth(self, name: Rel, args: tuple[Ground, ...], ctx: _Context) -> bool | None:
        """Whether the ground atom surely holds (True), may hold (False), or does not
        (None)."""
        best: bool | None = None
        for _, s in self.view(name, args, {}, ctx):
            if s:
                return True
            best = False
        return best


# -- the turn relation -------------------------------------------------------------------


def _turns(p: _Program, roles: list[Ground]) -> tuple[Rel, list[Ground]] | None:
    """A one-argument fluent relation exactly one fluent of which holds in every
    reachable state, and the values it takes (see the module doc), or None."""
    inits = p.rules.get(("init", 1), [])
    nexts = p.rules.get(("next", 1), [])
    if any(isinstance(c.head[0], _Var) for c in (*inits, *nexts)):
        return None  # an init or next rule for any fluent (?f) might make another
    for c in inits:
        first = c.head[0]
        if not (isinstance(first, tuple) and len(first) == 2):
            continue
        rel = _relation(first)
        mine = [x for x in inits if _relation(cast(Ground, x.head[0])) == rel]
        if len(mine) != 1 or c.body or not _is_ground(first):
            continue
        successor: dict[Ground, Ground] = {}
        fits = True
        for n in nexts:
            f = cast(Ground, n.head[0])
            if _relation(f) != rel:
                continue
            body = n.body
            now = body[0][2][0] if len(body) == 1 and body[0][:2] == ("A", ("true", 1)) else None
            if not (
                _is_ground(f)
                and isinstance(now, tuple)
                and _is_ground(now)
                and _relation(now) == rel
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


# -- the checks --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Step:
    """One step as far as it matters to the measure: the ``F`` fluents of the
    arrangement before, those added by effect rules, and those kept by frame rules."""

    before: frozenset[Ground]
    added: frozenset[Ground]
    kept: frozenset[Ground]


Fixed = Mapping[str, list[Ground]]  # a relation whose fluents are fixed, and them


@dataclass(frozen=True)
class _Move:
    """One move of the role that may move under a fixed turn fluent, with what its step
    may depend on: the others' moves that may be legal with it, the effect rules' heads,
    and the fluents to arrange."""

    anchor: Ground
    move: Ground
    possible: Mapping[Ground, list[Ground]]
    fixed: list[Ground]
    arranged: list[Ground]
    heads: frozenset[object]  # what the effect rules may add (patterns)


class _Prover:
    def __init__(
        self,
        d: Description,
        fluents: Iterable[Term],
        moves: Mapping[Term, Iterable[Term]],
        deadline: float,
    ) -> None:
        self.work = [MAX_WORK]
        self.p = _Program(d, self.work, deadline)
        self.roles = [ground_term(r) for r in moves]
        self.moves = {
            ground_term(r): sorted(map(ground_term, ms), key=_text) for r, ms in moves.items()
        }
        self.fluents: dict[Rel, list[Ground]] = {}
        for f in fluents:
            g = ground_term(f)
            self.fluents.setdefault(_relation(g), []).append(g)
        for fs in self.fluents.values():
            fs.sort(key=_text)
        self.init = {a[0] for a in self.p.static.get(("init", 1), set())}
        self.turn = _turns(self.p, self.roles)
        self._steps: dict[Rel, list[_Step]] = {}
        self._possible: dict[Ground | None, dict[Ground, list[Ground]]] = {}
        self._looked: dict[tuple[Ground | None, Ground], tuple[set[object], set[object]]] = {}

    def frames_and_effects(self, rel: Rel) -> tuple[list[_Clause], list[_Clause]]:
        """The ``next`` rules for ``rel``: those that keep a fluent that holds (frame,
        which must look at nothing else of the state) and the others (effect)."""
        frames, effects = [], []
        for c in self.p.rules.get(("next", 1), ()):
            (f,) = c.head
            if not isinstance(f, str | tuple):
                raise _Unproved("a next rule for any fluent")
            if _relation(f) != rel:
                continue
            keep = ("A", ("true", 1), (f,))
            if keep in c.body:
                if any(
                    _graph_name(n) in self.p.stateful
                    for b in c.body if b != keep for n in _names(b)
                ):
                    raise _Unproved(f"a frame rule of {rel[0]} looks at the state")
                frames.append(c)
            else:
                effects.append(c)
        return frames, effects

    def owner_positions(self, rel: Rel) -> frozenset[int]:
        """The argument positions of ``rel`` whose values are all roles."""
        fs = self.fluents.get(rel, [])
        if not fs or not isinstance(fs[0], tuple):
            return frozenset()
        n = len(fs[0]) - 1
        return frozenset(
            i for i in range(n) if all(isinstance(f, tuple) and f[i + 1] in self.roles for f in fs)
        )

    # -- the moves and what they depend on ----------------------------------------------

    def moves_to_check(self, rel: Rel, effects: list[_Clause]) -> Iterator[_Move]:
        """Under each value of the turn fluent (or none if there is no turn relation),
        every move of the role with the most moves that may be legal, with what its step
        may look at (see the module doc)."""
        turn = self.turn
        for value in turn[1] if turn else [None]:
            fixed: list[Ground] = [(turn[0][0], value)] if turn else []
            free = {r: fs for r, fs in self.fluents.items() if not turn or r != turn[0]}
            everything = [f for fs in free.values() for f in fs]
            possible = self._possible.get(value)
            if possible is None:
                possible = self._possible[value] = self._possible_moves(fixed, everything)
            anchor = max(self.roles, key=lambda r: len(possible[r]))
            for move in possible[anchor]:
                does = {r: [move] if r == anchor else possible[r] for r in self.roles}
                looked = self._looked.get((value, move))
                if looked is None:  # what the legality of the move and the others' looks at
                    mine: set[object] = set()
                    self.p.truth(LEGAL, (anchor, move), _Context(fixed, everything, does, mine))
                    theirs: set[object] = set()
                    ctx = _Context(fixed, everything, does, theirs)
                    for r in self.roles:
                        for m in possible[r] if r != anchor else ():
                            self.p.truth(LEGAL, (r, m), ctx)
                    looked = self._looked[(value, move)] = (mine, theirs)
                seen = set(looked[1])
                ctx = _Context(fixed, everything, does, seen)
                heads = {
                    _subst(c.head[0], e) for c in effects for e, _ in self.p.solve(c.body, {}, ctx)
                }
                first = self._arranged(looked[0], set(), rel, turn[0] if turn else None)
                rest = self._arranged(seen, heads, rel, turn[0] if turn else None)
                # what decides the move's legality first: a branch it ends ends soonest
                arranged = first + [f for f in rest if f not in first]
                if len(arranged) > MAX_ARRANGED:
                    raise _Unproved(
                        f"the move {_text(move)} depends on {len(arranged)} fluents, more "
                        f"than {MAX_ARRANGED} to arrange"
                    )
                yield _Move(anchor, move, possible, fixed, arranged, frozenset(heads))

    def _possible_moves(
        self, fixed: list[Ground], everything: list[Ground]
    ) -> dict[Ground, list[Ground]]:
        """Per role, its moves that may be legal in a state with the ``fixed`` fluents."""
        ctx = _Context(fixed, everything, {}, set())
        out = {}
        for r in self.roles:
            answers = self.p.view(LEGAL, (r, _Var("move")), {}, ctx)
            legal = {m for e, _ in answers for m in e.values() if _is_ground(m)}
            out[r] = [m for m in self.moves.get(r, ()) if m in legal]
        return out

    def _arranged(
        self, seen: set[object], heads: set[object], rel: Rel, fixed: Rel | None
    ) -> list[Ground]:
        """The fluents (of those that may hold) a step may look at, and those that share
        a position with an ``rel`` fluent it may add."""
        out: set[Ground] = set()
        for pattern in seen:
            key = _relation(pattern)  # type: ignore[arg-type]
            if key == fixed:
                continue
            for f in self.fluents.get(key, ()):
                if _matches(pattern, f):
                    out.add(f)
        owner = self.owner_positions(rel)
        for h in heads:
            for f in self.fluents.get(rel, ()):
                if _same_position(h, f, owner):
                    out.add(f)
        return sorted(out, key=_text)

    def joint_moves(self, m: _Move, ctx: _Context) -> Iterator[tuple[Ground, ...]]:
        """The joint moves with ``m``'s move that may be legal in ``ctx``."""
        if self.p.truth(LEGAL, (m.anchor, m.move), ctx) is None:
            return
        others = [
            [m.move]
            if r == m.anchor
            else [x for x in m.possible[r] if self.p.truth(LEGAL, (r, x), ctx) is not None]
            for r in self.roles
        ]
        yield from itertools.product(*others)

    def added(self, effects: list[_Clause], ctx: _Context) -> dict[Ground, bool]:
        """The fluents the effect rules add in ``ctx``, each with whether surely."""
        out: dict[Ground, bool] = {}
        for c in effects:
            for e, s in self.p.solve(c.body, {}, ctx):
                h = _subst(c.head[0], e)
                if not _is_ground(h):
                    raise _Unproved("a next rule leaves a variable unbound")
                g = cast(Ground, h)
                out[g] = out.get(g, False) or s
        return out

    def _stepping(self, ctx: _Context, joint: tuple[Ground, ...]) -> _Context:
        return _Context(ctx.sure, ctx.unknown, {r: [x] for r, x in zip(self.roles, joint,
                                                                        strict=True)})

    # -- every step, for the advance measure --------------------------------------------

    def steps(self, rel: Rel) -> list[_Step]:
        """Every step, in every arrangement of what it depends on, as the ``rel``
        fluents before, added and kept (see the module doc); ``_Unproved`` as soon as
        one removes none."""
        if rel not in self._steps:
            self._steps[rel] = self._all_steps(rel)
        return self._steps[rel]

    def _all_steps(self, rel: Rel) -> list[_Step]:
        frames, effects = self.frames_and_effects(rel)
        out: set[_Step] = set()
        for m in self.moves_to_check(rel, effects):
            if len(m.arranged) > MAX_ENUMERATED:
                raise _Unproved(
                    f"the move {_text(m.move)} depends on {len(m.arranged)} fluents, more "
                    f"than {MAX_ENUMERATED} to enumerate"
                )
            for n in range(len(m.arranged) + 1):
                for subset in itertools.combinations(m.arranged, n):
                    self.p._tick(ARRANGEMENT_WORK)
                    ctx = _Context((*m.fixed, *subset), (), {})
                    before = frozenset(f for f in subset if _relation(f) == rel)
                    for joint in self.joint_moves(m, ctx):
                        step = self._stepping(ctx, joint)
                        added = frozenset(self.added(effects, step))
                        kept = frozenset(f for f in before if self._kept(f, frames, step))
                        if kept == before:
                            # nothing removed: no sum of worths falls (the advance's
                            # only use of these steps), so stop here
                            raise _Unproved(f"a step removes no {rel} fluent")
                        out.add(_Step(before, added, kept))
        return list(out)

    def _kept(self, f: Ground, frames: list[_Clause], ctx: _Context) -> bool:
        for c in frames:
            env = _unify(c.head[0], f, {})
            if env is not None and any(s for _, s in self.p.solve(c.body, env, ctx)):
                return True
        return False

    # -- positions filled, for the filling measure --------------------------------------

    def fills(self, rel: Rel) -> set[tuple[object, ...]] | None:
        """If every step adds a ``rel`` fluent at a position no ``rel`` fluent held, the
        positions a step may fill (those of the fluents an effect rule may add, over
        every move checked); else None.

        Proved with an invariant that prunes the search: no position holds two ``rel``
        fluents. It holds at the start, and a step keeps it if no fluent it adds is at a
        position that holds one (checked per move and per fluent that may be there, the
        fluent held) and no two that it may add share a position; so only arrangements
        with at most one fluent per position are searched, and a branch ends as soon as
        a fluent is surely added at a surely empty position for every joint move that
        may be legal in it."""
        _, effects = self.frames_and_effects(rel)
        owner = self.owner_positions(rel)
        same: dict[tuple[object, ...], list[Ground]] = {}
        for f in self.fluents.get(rel, ()):
            same.setdefault(_position(f, owner), []).append(f)
        start = [_position(f, owner) for f in self.init if _relation(f) == rel]
        if len(start) != len(set(start)):
            return None  # two at one position at the start
        fillable: set[tuple[object, ...]] = set()
        for m in self.moves_to_check(rel, effects):
            if not self._adds_only_where_empty(m, effects, rel, owner, same):
                return None
            if not self._fills(m, effects, owner, same, set(), set(), 0):
                return None
            fillable |= {
                place for place, fs in same.items()
                if any(_same_position(h, fs[0], owner) for h in m.heads)
            }
        return fillable

    def _adds_only_where_empty(
        self,
        m: _Move,
        effects: list[_Clause],
        rel: Rel,
        owner: frozenset[int],
        same: Mapping[tuple[object, ...], list[Ground]],
    ) -> bool:
        """No fluent the move's step may add is at a position that holds one, and no
        two it may add share a position (the invariant kept)."""
        ctx = _Context(m.fixed, m.arranged, {})
        for joint in self.joint_moves(m, ctx):
            places = [_position(g, owner) for g in self.added(effects, self._stepping(ctx, joint))]
            if len(set(places)) != len(places):
                return False
        for f in m.arranged:
            if _relation(f) != rel:
                continue
            here = _position(f, owner)
            others = set(same.get(here, ())) - {f}
            ctx = _Context((*m.fixed, f), [g for g in m.arranged if g != f and g not in others], {})
            for joint in self.joint_moves(m, ctx):
                added = self.added(effects, self._stepping(ctx, joint))
                if any(_position(g, owner) == here for g in added):
                    return False
        return True

    def _fills(
        self,
        m: _Move,
        effects: list[_Clause],
        owner: frozenset[int],
        same: Mapping[tuple[object, ...], list[Ground]],
        held: set[Ground],
        empty: set[Ground],
        i: int,
    ) -> bool:
        while i < len(m.arranged) and m.arranged[i] in empty:
            i += 1  # set by the invariant: its position holds another
        self.p._tick(ARRANGEMENT_WORK)
        ctx = _Context((*m.fixed, *held), [f for f in m.arranged[i:] if f not in empty], {})
        sure = True
        for joint in self.joint_moves(m, ctx):
            added = self.added(effects, self._stepping(ctx, joint))
            if not any(
                s and all(f in empty for f in same.get(_position(g, owner), [g]))
                for g, s in added.items()
            ):
                sure = False
                break
        if sure:
            return True
        if i == len(m.arranged):
            return False  # an arrangement where the move is legal and fills nothing
        f = m.arranged[i]
        others = {g for g in same.get(_position(f, owner), ()) if g != f}
        return self._fills(
            m, effects, owner, same, held | {f}, empty | others, i + 1
        ) and self._fills(m, effects, owner, same, held, empty | {f}, i + 1)


def _names(lit: Lit) -> Iterator[Rel]:
    if lit[0] == "A":
        yield lit[1]
    elif lit[0] == "N":
        yield from _names(lit[1])
    elif lit[0] == "O":
        for conj in lit[1]:
            for x in conj:
                yield from _names(x)


def _relation(f: Ground) -> Rel:
    """The fluent relation of a fluent (or pattern): ``c``, ``(c)``, ``(c a)`` are three."""
    if isinstance(f, tuple):
        return (f[0], len(f) - 1) if len(f) > 1 else (f[0] + "()", 0)
    return (f, 0)


def _graph_name(rel: Rel) -> str:
    """The dependency graph's node of a relation: its name, every arity at once."""
    return rel[0].removesuffix("()")


def _check_keywords(d: Description, graph: DependencyGraph) -> None:
    """``_Unproved`` unless every keyword relation the proof reads is used in its own
    form only (``(next a b)``, ``(terminal)`` or ``(legal r)`` are not what it reads), no
    body asks for ``next``, and ``init`` and ``legal`` do not depend on what GDL forbids
    them (``legal`` on ``does``: the proof asks for the legal moves without one)."""
    for c in d.clauses:
        atoms = [c.head] + [a for b in (c.body if isinstance(c, Rule) else ())
                            for a, _ in body_atoms(b)]
        for i, a in enumerate(atoms):
            name = fold(a.name)
            if name not in READ_KEYWORDS:
                continue
            arity = len(a.args) if isinstance(a, Func) else 0
            if arity != READ_KEYWORDS[name] or (isinstance(a, Func) and not a.args):
                raise _Unproved(f"{a.name} is used with {arity} arguments")
            if i > 0 and name == "next":
                raise _Unproved("a rule body asks for next")
    for keyword in ("init", "legal"):
        bad = graph.depends_on(keyword) & set(FORBIDDEN_DEPENDENCIES[keyword])
        if bad:
            raise _Unproved(f"{keyword} depends on {', '.join(sorted(bad))}")


def _position(f: object, owner: frozenset[int]) -> tuple[object, ...]:
    if not isinstance(f, tuple):
        return (f,)
    return (f[0], *(a for i, a in enumerate(f[1:]) if i not in owner))


def _same_position(pattern: object, f: Ground, owner: frozenset[int]) -> bool:
    if not isinstance(pattern, tuple) or not isinstance(f, tuple):
        return pattern == f
    if pattern[0] != f[0] or len(pattern) != len(f):
        return False
    env: Env = {}
    for i, (a, b) in enumerate(zip(pattern[1:], f[1:], strict=True)):
        if i in owner:
            continue
        e = _unify(a, b, env)
        if e is None:
            return False
        env = e
    return True


# -- the measures ------------------------------------------------------------------------


def _filling(prover: _Prover, rel: Rel) -> LengthBound | None:
    frames, _ = prover.frames_and_effects(rel)
    if not any(_unconditional(c) for c in frames):
        return None  # fluents may be removed
    fillable = prover.fills(rel)
    if fillable is None:
        return None
    owner = prover.owner_positions(rel)
    start = {_position(f, owner) for f in prover.init if _relation(f) == rel}
    n = len(fillable - start)
    name = prover.p.spelling(rel)
    whose = " (whoever holds it)" if owner else ""
    return LengthBound(
        n,
        f"every step adds a {name} fluent at a position{whose} that none held, and none "
        f"is ever removed: of the {len(fillable)} positions a move can fill, {n} are "
        "empty at the start (checked for every move in every arrangement of what it "
        "depends on)",
    )


def _unconditional(c: _Clause) -> bool:
    """A frame rule ``(<= (next (F ?a ..)) (true (F ?a ..)))`` with distinct variables."""
    (h,) = c.head
    args = h[1:] if isinstance(h, tuple) else ()
    return (
        c.body == (("A", ("true", 1), (h,)),)
        and all(isinstance(a, _Var) for a in args)
        and len(set(map(id, args))) == len(args)
    )


def _advance(prover: _Prover, rel: Rel) -> LengthBound | None:
    frames, _ = prover.frames_and_effects(rel)
    if any(_unconditional(c) for c in frames):
        return None  # nothing is ever removed: no sum of worths can fall
    steps = prover.steps(rel)
    if not steps:
        return None
    fs = prover.fluents[rel]
    if not isinstance(fs[0], tuple):
        return None
    owner = prover.owner_positions(rel)
    arity = len(fs[0]) - 1
    best: LengthBound | None = None
    owners: list[int | None] = [*sorted(owner)] or [None]
    for o in owners:
        for i in range(arity):
            if i == o:
                continue
            worth = _worths(steps, i, o)
            if worth is None:
                continue

            def w(f: Ground, i: int = i, o: int | None = o, worth: dict = worth) -> int:
                return worth.get((f[o + 1] if o is not None else None, f[i + 1]), 0)

            if all(sum(map(w, s.added)) - sum(w(f) for f in s.before - s.kept) <= -1
                   for s in steps):
                total = sum(w(f) for f in prover.init if _relation(f) == rel)
                if best is None or total < best.steps:
                    name = prover.p.spelling(rel)
                    best = LengthBound(
                        total,
                        f"each {name} fluent is worth the moves its argument {i + 1} may "
                        "still make (the longest way on, read off the moves); every step "
                        f"lowers the sum of the worths by at least one, and it is {total} "
                        "at the start (checked for every move in every arrangement of what "
                        "it depends on)",
                    )
    return best


def _worths(steps: list[_Step], i: int, o: int | None) -> dict | None:
    """Per (owner, value at argument ``i``): the longest way on from it, along the
    moves seen (an owner's fluent removed at one value while one is added at another);
    None if the ways go round in a cycle."""
    edges: dict[object, set[object]] = {}
    for s in steps:
        for g in s.added:
            for f in s.before - s.kept:
                if not (isinstance(f, tuple) and isinstance(g, tuple)):
                    continue
                if o is not None and f[o + 1] != g[o + 1]:
                    continue
                a = (f[o + 1] if o is not None else None, f[i + 1])
                b = (g[o + 1] if o is not None else None, g[i + 1])
                edges.setdefault(a, set()).add(b)
    longest: dict[object, int] = {}
    on_path: set[object] = set()

    def go(v: object) -> int:
        if v in longest:
            return longest[v]
        if v in on_path:
            raise _Unproved("cycle")
        on_path.add(v)
        n = max((go(u) + 1 for u in edges.get(v, ())), default=0)
        on_path.discard(v)
        longest[v] = n
        return n

    try:
        for v in list(edges):
            go(v)
    except _Unproved:
        return None
    except RecursionError:
        return None
    return longest


def prove_length_bound(
    d: Description,
    fluents: Iterable[Term],
    moves: Mapping[Term, Iterable[Term]],
    seconds: float = 20.0,
) -> LengthBound | None:
    """The least bound the measures prove on the steps of any play of ``d``, given
    ``fluents`` and, per role, ``moves``: proved supersets of the fluents of the
    reachable states and of the legal moves (``gdl2pl.adapters.reach``); None when
    neither measure applies, or none is proved within ``MAX_WORK`` evaluation steps
    (or, a guard on a machine too slow or busy, ``seconds``; see the module doc)."""
    try:
        prover = _Prover(d, fluents, moves, time.monotonic() + seconds)
    except (_Unproved, RecursionError):
        return None
    best: LengthBound | None = None
    for rel in sorted(prover.fluents):
        if prover.turn is not None and rel == prover.turn[0]:
            continue  # one fluent in every state: it measures nothing
        for measure in (_filling, _advance):
            try:
                found = measure(prover, rel)
            except (_Unproved, RecursionError):
                found = None
            if found is not None and (best is None or found.steps < best.steps):
                best = found
    return best
