"""A bound on the length of every play, proved from the rules by a measure each step moves.

Two measures, each over one fluent relation ``F`` (a name and an arity: ``cell`` of three
arguments is another relation than ``cell`` of two, or ``(cell)``):

- **filling**: no ``F`` fluent is ever removed (an unconditional frame rule
  ``(<= (next (F ?a ..)) (true (F ?a ..)))``, distinct variables, nothing else in its
  body) and every step adds one at a *position* (its arguments but those whose values
  are all roles: the cell ``(x, y)`` of ``(cell x y red)``) that no ``F`` fluent held.
  Filled positions only grow, by one at least a step, and a step fills a position only
  where an effect rule may add an ``F`` fluent; so a play has at most as many steps as
  there are such positions empty at the start (connectFour: its 8 x 6 = 48 cells).
  Checked with the invariant that no position holds two ``F`` fluents: true at the
  start, and kept by a step that adds none where one is held and no two at one position.
- **advance**: every step removes ``F`` fluents worth more than those it adds, by at
  least one, where a fluent is worth the number of steps its piece may still go along
  one argument (breakthrough: the rows a pawn has left to its last row, read off the
  moves: each takes a pawn one row forward). The worths are never negative, so the
  worth of the initial state bounds the number of steps. The worths are only a guess
  read off the steps; what proves the bound is the check that every step lowers their
  sum, made exactly in every arrangement (below).

Both are proved by checking each step in every arrangement of what it depends on.
Where a *turn* relation exists (``rule_eval.turns``: exactly one ``(control r)`` in
every reachable state), the states are split by its value. For each value and each move
of the role with the most moves (``moves``: a proved superset of the legal ones, kept
where the three-valued ``legal`` may hold), the fluents the rules can look at to decide
that the move is legal, what the others may play, and what ``F`` fluents the step adds
or keeps are gathered: every fluent of ``fluents`` (a proved superset of the reachable
ones) that a ``true`` pattern met by the evaluation with every fluent unknown can
match. An evaluation in any arrangement follows a part of the paths of that one, so it
looks at no other fluent; every subset of the gathered ones is then tried as the state's
part that matters, with every joint move that may be legal there. The rest of the state
cannot change the outcome, so a measure that moves in every arrangement moves in every
reachable state. Arrangements that no play reaches are tried too: they can only make the
proof fail, never wrong.

What the proof does not read, it does not prove (the caller says "assumed"): what
``rule_eval`` does not read soundly (``(true ?f)`` with ``?f`` unbound, keyword
relations in another form, ``legal`` reading ``does``, recursive views where the step
looks, a negation whose variables no atom binds...), a ``next`` rule for any fluent
``?f``, frame rules that look at the state beyond their own fluent, a relation whose
worths go round a cycle, and more fluents to arrange than ``MAX_ARRANGED`` (filling,
searched lazily) or ``MAX_ENUMERATED`` (advance, every subset) per move, or more than
``MAX_WORK`` evaluation steps in all. Pure functions over a description; no Prolog.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from dataclasses import dataclass

from gdl2pl.rule_eval import LEGAL
from gdl2pl.rule_eval import Clause
from gdl2pl.rule_eval import Context
from gdl2pl.rule_eval import Env
from gdl2pl.rule_eval import Ground
from gdl2pl.rule_eval import ProofGame
from gdl2pl.rule_eval import Rel
from gdl2pl.rule_eval import Unproved
from gdl2pl.rule_eval import Variable
from gdl2pl.rule_eval import graph_name
from gdl2pl.rule_eval import matches
from gdl2pl.rule_eval import relation
from gdl2pl.rule_eval import relations_in
from gdl2pl.rule_eval import subst
from gdl2pl.rule_eval import text
from gdl2pl.rule_eval import unify
from gdl2pl.syntax import Description
from gdl2pl.syntax import Term

#: The most fluents a move's check may depend on: searched lazily (filling)...
MAX_ARRANGED = 20
#: ...or every arrangement of them tried (advance: 2**this).
MAX_ENUMERATED = 10
#: The most evaluation steps (unifications, arrangements tried) a proof may take in all:
#: about three times what connectFour's takes. The proof's verdict depends on it, never
#: on the machine's speed; the time limit is only a guard.
MAX_WORK = 1_000_000
#: What trying one arrangement counts, beyond the evaluation steps it takes.
ARRANGEMENT_WORK = 50

@dataclass(frozen=True)
class LengthBound:
    """At most ``steps`` steps in any play, for the ``reason`` given (a sentence)."""

    steps: int
    reason: str


# -- the checks --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Step:
    """One step as far as it matters to the measure: the ``F`` fluents of the
    arrangement before, those added by effect rules, and those kept by frame rules."""

    before: frozenset[Ground]
    added: frozenset[Ground]
    kept: frozenset[Ground]


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


class _Prover(ProofGame):
    def __init__(
        self,
        d: Description,
        fluents: Iterable[Term],
        moves: Mapping[Term, Iterable[Term]],
        deadline: float,
    ) -> None:
        super().__init__(d, fluents, moves, MAX_WORK, deadline)
        self._steps: dict[Rel, list[_Step]] = {}
        self._looked: dict[tuple[Ground | None, Ground], tuple[set[object], set[object]]] = {}

    def frames_and_effects(self, rel: Rel) -> tuple[list[Clause], list[Clause]]:
        """The ``next`` rules for ``rel``: those that keep a fluent that holds (frame,
        which must look at nothing else of the state) and the others (effect)."""
        frames, effects = [], []
        for c in self.p.rules.get(("next", 1), ()):
            (f,) = c.head
            if not isinstance(f, str | tuple):
                raise Unproved("a next rule for any fluent")
            if relation(f) != rel:
                continue
            keep = ("A", ("true", 1), (f,))
            if keep in c.body:
                if any(
                    graph_name(n) in self.p.stateful
                    for b in c.body if b != keep for n in relations_in(b)
                ):
                    raise Unproved(f"a frame rule of {rel[0]} looks at the state")
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

    def moves_to_check(self, rel: Rel, effects: list[Clause]) -> Iterator[_Move]:
        """Under each value of the turn fluent (or none if there is no turn relation),
        every move of the role with the most moves that may be legal, with what its step
        may look at (see the module doc)."""
        turn = self.turn
        everything = self.free_fluents()
        for value in self.turn_values():
            fixed = self.fixed(value)
            possible = self.possible_moves(value)
            anchor = max(self.roles, key=lambda r: len(possible[r]))
            for move in possible[anchor]:
                does = {r: [move] if r == anchor else possible[r] for r in self.roles}
                looked = self._looked.get((value, move))
                if looked is None:  # what the legality of the move and the others' looks at
                    mine: set[object] = set()
                    self.p.truth(LEGAL, (anchor, move), Context(fixed, everything, does, mine))
                    theirs: set[object] = set()
                    ctx = Context(fixed, everything, does, theirs)
                    for r in self.roles:
                        for m in possible[r] if r != anchor else ():
                            self.p.truth(LEGAL, (r, m), ctx)
                    looked = self._looked[(value, move)] = (mine, theirs)
                seen = set(looked[1])
                ctx = Context(fixed, everything, does, seen)
                heads = {
                    subst(c.head[0], e) for c in effects for e, _ in self.p.solve(c.body, {}, ctx)
                }
                first = self._arranged(looked[0], set(), rel, turn[0] if turn else None)
                rest = self._arranged(seen, heads, rel, turn[0] if turn else None)
                # what decides the move's legality first: a branch it ends ends soonest
                arranged = first + [f for f in rest if f not in first]
                if len(arranged) > MAX_ARRANGED:
                    raise Unproved(
                        f"the move {text(move)} depends on {len(arranged)} fluents, more "
                        f"than {MAX_ARRANGED} to arrange"
                    )
                yield _Move(anchor, move, possible, fixed, arranged, frozenset(heads))

    def _arranged(
        self, seen: set[object], heads: set[object], rel: Rel, fixed: Rel | None
    ) -> list[Ground]:
        """The fluents (of those that may hold) a step may look at, and those that share
        a position with an ``rel`` fluent it may add."""
        out: set[Ground] = set()
        for pattern in seen:
            key = relation(pattern)  # type: ignore[arg-type]
            if key == fixed:
                continue
            for f in self.fluents.get(key, ()):
                if matches(pattern, f):
                    out.add(f)
        owner = self.owner_positions(rel)
        for h in heads:
            for f in self.fluents.get(rel, ()):
                if _same_position(h, f, owner):
                    out.add(f)
        return sorted(out, key=text)

    def joint_moves(self, m: _Move, ctx: Context) -> Iterator[tuple[Ground, ...]]:
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

    def added(self, effects: list[Clause], ctx: Context) -> dict[Ground, bool]:
        """The fluents the effect rules add in ``ctx``, each with whether surely."""
        return self.p.next_fluents(effects, ctx)

    def _stepping(self, ctx: Context, joint: tuple[Ground, ...]) -> Context:
        return Context(ctx.sure, ctx.unknown, {r: [x] for r, x in zip(self.roles, joint,
                                                                        strict=True)})

    # -- every step, for the advance measure --------------------------------------------

    def steps(self, rel: Rel) -> list[_Step]:
        """Every step, in every arrangement of what it depends on, as the ``rel``
        fluents before, added and kept (see the module doc); ``Unproved`` as soon as
        one removes none."""
        if rel not in self._steps:
            self._steps[rel] = self._all_steps(rel)
        return self._steps[rel]

    def _all_steps(self, rel: Rel) -> list[_Step]:
        frames, effects = self.frames_and_effects(rel)
        out: set[_Step] = set()
        for m in self.moves_to_check(rel, effects):
            if len(m.arranged) > MAX_ENUMERATED:
                raise Unproved(
                    f"the move {text(m.move)} depends on {len(m.arranged)} fluents, more "
                    f"than {MAX_ENUMERATED} to enumerate"
                )
            for n in range(len(m.arranged) + 1):
                for subset in itertools.combinations(m.arranged, n):
                    self.p.tick(ARRANGEMENT_WORK)
                    ctx = Context((*m.fixed, *subset), (), {})
                    before = frozenset(f for f in subset if relation(f) == rel)
                    for joint in self.joint_moves(m, ctx):
                        step = self._stepping(ctx, joint)
                        added = frozenset(self.added(effects, step))
                        kept = frozenset(f for f in before if self._kept(f, frames, step))
                        if kept == before:
                            # nothing removed: no sum of worths falls (the advance's
                            # only use of these steps), so stop here
                            raise Unproved(f"a step removes no {rel} fluent")
                        out.add(_Step(before, added, kept))
        return list(out)

    def _kept(self, f: Ground, frames: list[Clause], ctx: Context) -> bool:
        for c in frames:
            env = unify(c.head[0], f, {})
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
        start = [_position(f, owner) for f in self.init if relation(f) == rel]
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
        effects: list[Clause],
        rel: Rel,
        owner: frozenset[int],
        same: Mapping[tuple[object, ...], list[Ground]],
    ) -> bool:
        """No fluent the move's step may add is at a position that holds one, and no
        two it may add share a position (the invariant kept)."""
        ctx = Context(m.fixed, m.arranged, {})
        for joint in self.joint_moves(m, ctx):
            places = [_position(g, owner) for g in self.added(effects, self._stepping(ctx, joint))]
            if len(set(places)) != len(places):
                return False
        for f in m.arranged:
            if relation(f) != rel:
                continue
            here = _position(f, owner)
            others = set(same.get(here, ())) - {f}
            ctx = Context((*m.fixed, f), [g for g in m.arranged if g != f and g not in others], {})
            for joint in self.joint_moves(m, ctx):
                added = self.added(effects, self._stepping(ctx, joint))
                if any(_position(g, owner) == here for g in added):
                    return False
        return True

    def _fills(
        self,
        m: _Move,
        effects: list[Clause],
        owner: frozenset[int],
        same: Mapping[tuple[object, ...], list[Ground]],
        held: set[Ground],
        empty: set[Ground],
        i: int,
    ) -> bool:
        while i < len(m.arranged) and m.arranged[i] in empty:
            i += 1  # set by the invariant: its position holds another
        self.p.tick(ARRANGEMENT_WORK)
        ctx = Context((*m.fixed, *held), [f for f in m.arranged[i:] if f not in empty], {})
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
        e = unify(a, b, env)
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
    start = {_position(f, owner) for f in prover.init if relation(f) == rel}
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


def _unconditional(c: Clause) -> bool:
    """A frame rule ``(<= (next (F ?a ..)) (true (F ?a ..)))`` with distinct variables."""
    (h,) = c.head
    args = h[1:] if isinstance(h, tuple) else ()
    return (
        c.body == (("A", ("true", 1), (h,)),)
        and all(isinstance(a, Variable) for a in args)
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
                total = sum(w(f) for f in prover.init if relation(f) == rel)
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
                if a != b:  # removed and added again: no way on (the check weighs it)
                    edges.setdefault(a, set()).add(b)
    longest: dict[object, int] = {}
    on_path: set[object] = set()

    def go(v: object) -> int:
        if v in longest:
            return longest[v]
        if v in on_path:
            raise Unproved("cycle")
        on_path.add(v)
        n = max((go(u) + 1 for u in edges.get(v, ())), default=0)
        on_path.discard(v)
        longest[v] = n
        return n

    try:
        for v in list(edges):
            go(v)
    except Unproved:
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
    except (Unproved, RecursionError):
        return None
    best: LengthBound | None = None
    for rel in sorted(prover.fluents):
        if prover.turn is not None and rel == prover.turn[0]:
            continue  # one fluent in every state: it measures nothing
        for measure in (_filling, _advance):
            try:
                found = measure(prover, rel)
            except (Unproved, RecursionError):
                found = None
            if found is not None and (best is None or found.steps < best.steps):
                best = found
    return best
