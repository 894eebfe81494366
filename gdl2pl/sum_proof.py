"""The sum of the goal values at every reachable end of a play, proved from the terminal
and goal rules together, where the goal rules alone do not show it
(``gdl2pl.rule_shapes.goal_sum``): chess_200's goal rules name their roles through
variables, breakthroughSmall's would give 100 to both roles if both won at once.

The argument, in three steps, each sound on its own:

1. **Conditions.** Every ``goal`` rule, for each role it may name, and every ``terminal``
   rule is read as a disjunction of *instances*: its static literals solved (``role``,
   ``opponent``, tables), the rest kept as *conditions*: a ground literal of a relation
   that depends on the state (``whiteWin``, ``(true (step 201))``, ``(line red)``), or,
   where variables are left that only such literals bind, their conjunction as one
   existential condition. A goal value must be a number once the static literals are
   solved. Each condition is true or false in a state; the proof takes the conditions as
   independent, which can only add combinations that no state has.
2. **Ends.** Each combination of the conditions (``MAX_CONDITIONS`` at most) in which a
   ``terminal`` instance holds is an end; in it a role's goals are the values of its goal
   instances that hold. More than one and the adapters refuse the state (no returns);
   none and the role gets ``missing`` (or, with None, the state is refused). If every
   other end's goals sum to one value, that is the proof.
3. **One step.** Otherwise each end that sums differently must be shown unreachable, given
   the reachability analysis' supersets of the fluents and moves: it is not the initial
   state's (computed exactly), and no step reaches it from a state that is not terminal.
   For each value of the turn fluent (``rule_eval.turns``) and each joint move the roles
   may make there, every condition's possible (before, after) pairs are found: a fluent's
   from the ``next`` rules evaluated with it held, then not, every other fluent unknown
   (three-valued, ``rule_eval.Program``; for every fluent at once where each frame rule,
   ``(true h)`` of its head ``h`` in its body, reads nothing else of the state: the
   effect rules with every fluent unknown, the frame rules with their fluent held, which
   a fluent not held cannot use), and a condition's from its literals' pairs
   (``and``, ``or`` and ``not`` taken pair by pair, as if independent: again only more
   pairs than a state has). An end is reached only if some combination before it, in
   which no ``terminal`` instance holds, pairs with it condition by condition.

breakthroughSmall: the conditions are ``whiteWin`` and ``blackWin``; the end where both
hold sums to 200, but when white moves no black pawn is added and a white one surely is,
so ``blackWin`` cannot go from false to true, and it was false before (the state was not
terminal); likewise for black. Every other end sums to 100.

A game the evaluation does not read (``rule_eval``), a goal or terminal rule that depends
on ``does``, a recursive view among the conditions, or more than ``MAX_WORK`` steps of
work: not proved (None). Pure functions over a description; no Prolog.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

from gdl2pl.rule_eval import Clause
from gdl2pl.rule_eval import Context
from gdl2pl.rule_eval import Env
from gdl2pl.rule_eval import Ground
from gdl2pl.rule_eval import Lit
from gdl2pl.rule_eval import Program
from gdl2pl.rule_eval import ProofGame
from gdl2pl.rule_eval import Rel
from gdl2pl.rule_eval import Unproved
from gdl2pl.rule_eval import Variable
from gdl2pl.rule_eval import graph_name
from gdl2pl.rule_eval import is_ground
from gdl2pl.rule_eval import relation
from gdl2pl.rule_eval import relations_in
from gdl2pl.rule_eval import subst
from gdl2pl.rule_eval import unify
from gdl2pl.rule_eval import unify_args
from gdl2pl.syntax import Description
from gdl2pl.syntax import Term

#: The most conditions the goal and terminal rules may read (2**this combinations).
MAX_CONDITIONS = 12
#: The most evaluation steps the proof may take in all: about a quarter more than what
#: breakthrough's takes (620,000), about 3 s on this 2-core machine where a proof fails
#: for want of work (the same on every machine; the time limit is only a guard).
MAX_WORK = 800_000
#: The most evaluation steps finding a group's ground instances may take (and all
#: groups' together), and the most instances it may have (beyond any, the group is one
#: condition).
GROUNDING_WORK = 20_000
GROUNDING_BUDGET = 100_000
MAX_GROUNDED = 16
#: What trying one combination counts, beyond the evaluation steps it takes.
COMBINATION_WORK = 4

NEXT: Rel = ("next", 1)


@dataclass(frozen=True)
class SumProof:
    """The goals of every role add up to ``total`` at every reachable end where each role
    has one (or ``missing``), for the ``reason`` given (a sentence)."""

    total: int
    reason: str


def prove_goal_sum(
    d: Description,
    missing: int | None = None,
    fluents: Iterable[Term] | None = None,
    moves: Mapping[Term, Iterable[Term]] | None = None,
    seconds: float = 60.0,
) -> SumProof | None:
    """The constant sum of the goals at every reachable end of ``d`` (see the module
    doc), or None when it is not proved. ``missing`` is the goal a role without one gets
    at an end (None: such an end is refused, and has no sum). ``fluents`` and ``moves``
    (per role) are proved supersets of the fluents of the reachable states and of the
    legal moves (``gdl2pl.adapters.reach``); without them there is no step 3. Past
    ``MAX_WORK`` evaluation steps it is not proved (and, a guard on a machine too slow or
    busy, past ``seconds``)."""
    deadline = time.monotonic() + seconds
    try:
        if fluents is not None and moves is not None:
            game: ProofGame | None = ProofGame(d, fluents, moves, MAX_WORK, deadline)
            p = game.p  # type: ignore[union-attr]
        else:
            game, p = None, Program(d, [MAX_WORK], deadline)
        return _Proof(p, game, missing).prove()
    except (Unproved, RecursionError):
        return None


# -- step 1: the rules as instances over conditions ----------------------------------------

Instance = tuple[int, int]  # bits of the conditions that must hold, and that must not


class _Conditions:
    """The conditions met so far, each a conjunction of literals (variables free).
    With ``everything`` (a context where every fluent that may hold is unknown), a group
    of literals left with variables stands for its ground instances that may hold in
    some state, each literal of them a condition of its own, where finding them takes at
    most ``GROUNDING_WORK`` steps: ``(win ?r)`` is ``(win white)`` or ``(win black)``, the
    conditions the goal rules read, not one more condition as if independent of them."""

    def __init__(self, p: Program, everything: Context | None) -> None:
        self.p = p
        self.everything = everything
        self.grounding = GROUNDING_BUDGET  # the steps left for finding ground instances
        self.index: dict[object, int] = {}
        self.conjunctions: list[tuple[Lit, ...]] = []

    def bit(self, lits: tuple[Lit, ...]) -> int:
        key = _canonical(lits, {})
        i = self.index.get(key)
        if i is None:
            i = self.index[key] = len(self.conjunctions)
            self.conjunctions.append(lits)
            if len(self.conjunctions) > MAX_CONDITIONS:
                raise Unproved(f"the goal and terminal rules read more than {MAX_CONDITIONS} "
                               "conditions")
        return 1 << i

    def instances(self, body: tuple[Lit, ...], env: Env) -> Iterator[tuple[Env, Instance]]:
        """Each solution of the body's static literals, with the instances of the rest
        (one per choice of a ground instance in each group that has them)."""
        p = self.p
        static = [lit for lit in body if self._static(lit) and lit[0] in ("A", "O")]
        bound = set(env) | {v for lit in static for v in _variables(lit)}
        tests = [lit for lit in body if self._static(lit) and lit[0] in ("N", "D")
                 and set(_variables(lit)) <= bound]
        rest = [lit for lit in body if not any(lit is x for x in (*static, *tests))]
        for env2, _ in p.solve(tuple(static + tests), env, Context((), (), {})):
            choices = [self._choices(g) for g in _groups([_subst_literal(x, env2) for x in rest])]
            for chosen in itertools.product(*choices):
                p.tick()
                pos = neg = 0
                for more_pos, more_neg in chosen:
                    pos, neg = pos | more_pos, neg | more_neg
                if not pos & neg:
                    yield env2, (pos, neg)

    def _choices(self, group: list[Lit]) -> list[Instance]:
        """The ways a group of literals may hold, as conditions (none: it never does)."""
        if not any(_variables(x) for x in group):
            return self._ground(group)
        if not any(x[0] in ("A", "O") for x in group):
            raise Unproved("a negation or distinct whose variables no atom binds")
        grounded = self._grounded(tuple(group))
        if grounded is None:
            return [(self.bit(tuple(group)), 0)]
        return [c for lits in grounded for c in self._ground(list(lits))]

    def _ground(self, lits: list[Lit]) -> list[Instance]:
        """Ground literals as one instance (none if a distinct among them fails)."""
        pos = neg = 0
        for lit in lits:
            if lit[0] == "D":
                if lit[1] == lit[2]:
                    return []
            elif lit[0] == "N":
                neg |= self.bit((lit[1],))
            else:
                pos |= self.bit((lit,))
        return [(pos, neg)]

    def _grounded(self, group: tuple[Lit, ...]) -> list[tuple[Lit, ...]] | None:
        """The ground instances of the group that may hold in some state, or None."""
        if self.everything is None:
            return None
        p = self.p
        saved = p.work[0]
        given = p.work[0] = min(saved, GROUNDING_WORK, self.grounding)
        out: set[tuple[Lit, ...]] = set()
        try:
            for env, _ in p.solve(group, {}, self.everything):
                lits = tuple(_subst_literal(x, env) for x in group)
                if any(_variables(x) for x in lits) or len(out) >= MAX_GROUNDED:
                    return None  # a variable of a disjunct alone, or too many
                out.add(lits)
        except Unproved:
            return None  # too costly to find, or not read: the group stays one condition
        finally:
            used = given - p.work[0]
            self.grounding -= used
            p.work[0] = saved - used
        return sorted(out, key=repr)

    def _static(self, lit: Lit) -> bool:
        return all(self.p.is_static(r) for r in relations_in(lit))

    def shown(self, bits: int) -> str:
        """The conditions of ``bits``, as the game writes them."""
        return ", ".join(
            " and ".join(_shown_literal(self.p, x) for x in self.conjunctions[i])
            for i in range(len(self.conjunctions)) if bits >> i & 1
        )


def _variables(p: object) -> list[Variable]:
    if isinstance(p, Variable):
        return [p]
    if isinstance(p, tuple):
        return [v for a in p for v in _variables(a)]
    return []


def _subst_literal(lit: Lit, env: Env) -> Lit:
    kind = lit[0]
    if kind == "A":
        return ("A", lit[1], tuple(subst(a, env) for a in lit[2]))
    if kind == "N":
        return ("N", _subst_literal(lit[1], env))
    if kind == "D":
        return ("D", subst(lit[1], env), subst(lit[2], env))
    return ("O", tuple(tuple(_subst_literal(x, env) for x in conj) for conj in lit[1]))


def _groups(lits: list[Lit]) -> list[list[Lit]]:
    """The literals in groups linked by the variables they share (ground ones alone)."""
    groups: list[tuple[set[Variable], list[Lit]]] = []
    for lit in lits:
        vs = set(_variables(lit))
        linked = [g for g in groups if g[0] & vs]
        merged: tuple[set[Variable], list[Lit]] = (vs, [])
        for g in linked:
            merged[0].update(g[0])
            merged[1].extend(g[1])
            groups.remove(g)
        merged[1].append(lit)
        groups.append(merged)
    return [g[1] for g in groups]


def _canonical(p: object, names: dict[Variable, int]) -> object:
    """``p`` with its variables numbered by first occurrence: equal for equal shapes."""
    if isinstance(p, Variable):
        return ("?", names.setdefault(p, len(names)))
    if isinstance(p, tuple):
        return tuple(_canonical(a, names) for a in p)
    return p


def _shown_literal(p: Program, lit: Lit) -> str:
    kind = lit[0]
    if kind == "A":
        name = p.spelling(lit[1])
        return name if not lit[2] and not lit[1][0].endswith("()") else (
            "(" + " ".join([name, *(p.spelled(a) for a in lit[2])]) + ")")
    if kind == "N":
        return f"(not {_shown_literal(p, lit[1])})"
    if kind == "D":
        return f"(distinct {p.spelled(lit[1])} {p.spelled(lit[2])})"
    return "(or " + " ".join(
        "(and " + " ".join(_shown_literal(p, x) for x in conj) + ")" for conj in lit[1]) + ")"


# -- steps 2 and 3 ---------------------------------------------------------------------------


def _holds(instances: list[Instance], world: int) -> bool:
    return any(world & pos == pos and not world & neg for pos, neg in instances)


class _Proof:
    def __init__(self, p: Program, game: ProofGame | None, missing: int | None) -> None:
        self.p = p
        self.game = game
        self.missing = missing
        graph = p.graph
        if not p.is_static(("role", 1)):
            raise Unproved("the roles depend on the state")
        for keyword in ("goal", "terminal"):
            if "does" in graph.depends_on(keyword):
                raise Unproved(f"{keyword} depends on does")
        everything = (
            Context((), [f for fs in game.fluents.values() for f in fs], {}) if game else None
        )
        self.conditions = _Conditions(p, everything)
        self.roles = sorted(a[0] for a in p.all_facts(("role", 1)))
        self.goals: dict[tuple[Ground, int], list[Instance]] = {}
        for clause in p.rules.get(("goal", 2), []):
            who, value = clause.head
            for role in self.roles:
                env = unify(who, role, {})
                if env is None:
                    continue
                for env2, instance in self.conditions.instances(clause.body, env):
                    v = subst(value, env2)
                    if not (isinstance(v, str) and v.isdigit()):
                        raise Unproved("a goal rule computes its value")
                    self.goals.setdefault((role, int(v)), []).append(instance)
        self.terminal = [
            instance
            for clause in p.rules.get(("terminal", 0), [])
            for _, instance in self.conditions.instances(clause.body, {})
        ]

    def sums(self, world: int) -> int | None:
        """The sum of the goals in a combination that ends a play, None if refused."""
        total = 0
        for role in self.roles:
            values = {v for (r, v), insts in self.goals.items()
                      if r == role and _holds(insts, world)}
            if len(values) > 1 or (not values and self.missing is None):
                return None
            total += values.pop() if values else self.missing  # type: ignore[operator]
        return total

    def prove(self) -> SumProof | None:
        n = len(self.conditions.conjunctions)
        ends: dict[int, int] = {}
        for world in range(1 << n):
            self.p.tick(COMBINATION_WORK)
            if _holds(self.terminal, world):
                total = self.sums(world)
                if total is not None:
                    ends[world] = total
        if not ends:
            return None  # no end the adapters accept: nothing to claim
        read = (f"the goal and terminal rules read {n} conditions "
                f"({self.conditions.shown((1 << n) - 1)})" if n else
                "the goal and terminal rules read nothing of the state")
        fill = "" if self.missing is None else f" (a role with none gets {self.missing})"
        if len(set(ends.values())) == 1:
            total = next(iter(ends.values()))
            return SumProof(total, f"{read}; every combination of them that ends a play gives "
                            f"each role at most one goal{fill}, summing to {total}")
        if self.game is None:
            return None
        reached = self.reached(ends)
        if reached is None or len(set(reached.values())) != 1:
            return None
        total = next(iter(reached.values()))
        other = sorted(w for w, s in ends.items() if s != total)
        some = self.conditions.shown(other[0]) or "none of them"
        return SumProof(
            total,
            f"{read}; every combination of them that ends a play gives each role at most "
            f"one goal{fill}, summing to {total}, except {len(other)} (e.g. {some} hold: "
            f"{ends[other[0]]}) that the initial state does not have and no step reaches "
            "from a state that is not terminal (checked for every move that may be legal "
            "under each turn)",
        )

    def reached(self, ends: dict[int, int]) -> dict[int, int] | None:
        """The ends the initial state is or a step may reach, with their sums; None as
        soon as two of them sum differently."""
        game = self.game
        assert game is not None
        found: dict[int, int] = {}
        start = self.world(Context(game.init, (), {}))
        if start in ends:
            found[start] = ends[start]
        todo = {w for w in ends if w != start}
        split = _next_split(self.p)
        for value in game.turn_values():
            possible = game.possible_moves(value)
            for joint in itertools.product(*(possible[r] for r in game.roles)):
                step = _Pairs(game, value, dict(zip(game.roles, joint, strict=True)), split)
                masks = [step.condition(c) for c in self.conditions.conjunctions]
                for world in sorted(todo):
                    if self.steps_to(world, masks):
                        found[world] = ends[world]
                        todo.discard(world)
                        if len(set(found.values())) > 1:
                            return None
                if not todo:
                    return found
        return found

    def world(self, ctx: Context) -> int:
        """The combination of the conditions in a state known exactly."""
        return sum(
            1 << i for i, lits in enumerate(self.conditions.conjunctions)
            if any(True for _ in self.p.solve(lits, {}, ctx))
        )

    def steps_to(self, world: int, masks: list[int]) -> bool:
        """Whether some combination before, where no terminal instance holds, pairs with
        ``world`` condition by condition."""
        options: list[list[int]] = []
        for i, mask in enumerate(masks):
            after = world >> i & 1
            before = [b for b in (0, 1) if mask >> (2 * b + after) & 1]
            if not before:
                return False
            options.append(before)
        for befores in itertools.product(*options):
            self.p.tick(COMBINATION_WORK)
            if not _holds(self.terminal, sum(b << i for i, b in enumerate(befores))):
                return True
        return False


def _next_split(p: Program) -> tuple[list[Clause], list[Clause]] | None:
    """The ``next`` rules as effect rules and frame rules (``(true h)`` of the head
    ``h`` in the body, nothing else of the state read), or None if a frame rule reads
    more of the state (then each fluent's rules are evaluated on their own)."""
    effects, frames = [], []
    for c in p.rules.get(NEXT, ()):
        (h,) = c.head
        keep = ("A", ("true", 1), (h,))
        if keep not in c.body:
            effects.append(c)
        elif isinstance(h, Variable) or any(
            graph_name(r) in p.stateful for b in c.body if b != keep for r in relations_in(b)
        ):
            return None
        else:
            frames.append(c)
    return effects, frames


# -- the pairs (before, after) of a step ------------------------------------------------------

# A set of (before, after) pairs of truth values, as four bits: bit 2 * before + after.
FF, FT, TF, TT = 1, 2, 4, 8


def _lift(op: object) -> list[list[int]]:
    table = [[0] * 16 for _ in range(16)]
    for m1, m2 in itertools.product(range(16), repeat=2):
        out = 0
        for i, j in itertools.product(range(4), repeat=2):
            if m1 >> i & 1 and m2 >> j & 1:
                b = op(i >> 1, j >> 1)  # type: ignore[operator]
                a = op(i & 1, j & 1)  # type: ignore[operator]
                out |= 1 << (2 * b + a)
        table[m1][m2] = out
    return table


AND = _lift(lambda x, y: x & y)
OR = _lift(lambda x, y: x | y)
NOT = [sum(1 << (3 - i) for i in range(4) if m >> i & 1) for m in range(16)]


class _Pairs:
    """What each literal may be before and after one step: from a state whose turn
    fluent is ``value`` (any state if None), by the joint move ``joint``."""

    def __init__(
        self,
        game: ProofGame,
        value: Ground | None,
        joint: dict[Ground, Ground],
        split: tuple[list[Clause], list[Clause]] | None,
    ) -> None:
        self.game = game
        self.p = game.p
        self.fixed = game.fixed(value)
        self.does = {r: [m] for r, m in joint.items()}
        self.before = Context(self.fixed, game.free_fluents(), self.does)
        self.fluents: dict[Ground, int] = {}
        self.views: dict[tuple[Rel, tuple[object, ...]], dict[tuple[Ground, ...], int]] = {}
        self.next_values = None if split is None else self._next_values(*split)

    def condition(self, lits: tuple[Lit, ...]) -> int:
        """The pairs of an existential conjunction: any of its instances."""
        out = FF
        for _, m in self.solve(lits, {}):
            out = OR[out][m]
        return out

    def _next_values(
        self, effects: list[Clause], frames: list[Clause]
    ) -> tuple[dict[Ground, bool], dict[Ground, bool]]:
        """What the ``next`` rules give, at once for every fluent: the effect rules
        with every fluent unknown, and the frame rules (which read nothing else of the
        state) with their own fluent held; each fluent with whether surely."""
        held = Context([f for fs in self.game.fluents.values() for f in fs], (), self.does)
        return self.p.next_fluents(effects, self.before), self.p.next_fluents(frames, held)

    def fluent(self, f: Ground) -> int:
        """A fluent's pairs: before, held or not (the turn fluent as fixed); after, what
        the ``next`` rules give with every other fluent unknown."""
        out = self.fluents.get(f)
        if out is None:
            turn = self.game.turn
            befores = [f in self.fixed] if turn and relation(f) == turn[0] else [False, True]
            out = 0
            for before in befores:
                now = self._after(f, before)
                for after in (1,) if now is True else (0, 1) if now is False else (0,):
                    out |= 1 << (2 * before + after)
            self.fluents[f] = out
        return out

    def _after(self, f: Ground, before: bool) -> bool | None:
        """Whether ``f`` surely holds after the step (True), may (False) or does not
        (None), given whether it held before."""
        if self.next_values is None:
            return self.p.truth(NEXT, (f,), self.before.with_fluent(f, before))
        added, kept = self.next_values
        answers = [added.get(f)] + ([kept.get(f)] if before else [])
        if True in answers:
            return True
        return False if False in answers else None

    def solve(self, lits: tuple[Lit, ...], env: Env, mask: int = TT) -> Iterator[tuple[Env, int]]:
        """Each extension of ``env`` under which the literals may hold, before or after,
        with their pairs; atoms in order, tests once their variables are bound."""
        if not lits:
            yield env, mask
            return
        for i, lit in enumerate(lits):  # noqa: B007 - i is used after the loop
            if lit[0] in ("A", "O") or not _variables(_subst_literal(lit, env)):
                break
        else:
            raise Unproved("a negation or distinct whose variables no atom binds")
        rest = lits[:i] + lits[i + 1:]
        for env2, m in self.one(lit, env):
            both = AND[mask][m]
            if both != FF:  # never true, before or after: adds nothing to a disjunction
                yield from self.solve(rest, env2, both)

    def one(self, lit: Lit, env: Env) -> Iterator[tuple[Env, int]]:
        self.p.tick()
        kind = lit[0]
        if kind == "A":
            yield from self.atom(lit[1], lit[2], env)
        elif kind == "D":
            if subst(lit[1], env) != subst(lit[2], env):
                yield env, TT
        elif kind == "N":
            inner = FF
            for _, m in self.one(lit[1], env):
                inner = OR[inner][m]
            yield env, NOT[inner]
        else:
            for conj in lit[1]:
                yield from self.solve(conj, env)

    def atom(self, rel: Rel, args: tuple[object, ...], env: Env) -> Iterator[tuple[Env, int]]:
        p = self.p
        if rel == ("true", 1):
            pattern = subst(args[0], env)
            if isinstance(pattern, Variable):
                raise Unproved("a condition reads the state through a variable: (true ?f)")
            for f in self.game.matching(pattern):
                p.tick()
                e = unify(pattern, f, env)
                if e is not None:
                    m = self.fluent(f)
                    if m != FF:
                        yield e, m
        elif rel == ("does", 2):
            raise Unproved("a condition reads does")
        elif p.is_static(rel):
            for e in p.static_answers(rel, args, env):
                yield e, TT
        else:
            if p.is_recursive(rel):
                raise Unproved(f"a condition reads the recursive relation {rel[0]}")
            bound = tuple(subst(a, env) for a in args)
            for answer, m in self.view(rel, bound).items():
                p.tick()
                e = unify_args(bound, answer, env)
                if e is not None:
                    yield e, m

    def view(self, rel: Rel, bound: tuple[object, ...]) -> dict[tuple[Ground, ...], int]:
        """The answers of a view for the ground arguments of ``bound``, each with its
        pairs (any instance of a rule giving it)."""
        shape = tuple(a if is_ground(a) else None for a in bound)
        known = self.views.get((rel, shape))
        if known is None:
            known = self.views[(rel, shape)] = {}
            for clause in self.p.clauses(rel, shape):
                inner: Env | None = {}
                for h, a in zip(clause.head, shape, strict=True):
                    if a is not None and inner is not None:
                        inner = unify(h, cast(Ground, a), inner)
                if inner is None:
                    continue
                for e, m in self.solve(clause.body, inner):
                    answer = cast(tuple[Ground, ...], tuple(subst(h, e) for h in clause.head))
                    if not all(is_ground(a) for a in answer):
                        raise Unproved(f"a rule of {rel[0]} leaves a variable unbound")
                    known[answer] = OR[known.get(answer, FF)][m]
        return known

