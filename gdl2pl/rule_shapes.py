"""What the rules prove by their shape, without playing: a game-length bound from a
step counter, turn-taking from a control fluent (``turn_control``), the goal sum
(``goal_sum``) and moves legal in every state (``always_legal``). The adapters and
the analyzer (``gdl2pl analyze``) both use them.

The step counter (``step_counter_bound``). The pattern, every relation taken with its
arity (``(step 1 go)`` is no ``(step 1)``, ``(terminal)`` no ``terminal``):

- a ``terminal`` rule (the proposition, not ``(terminal)``) whose body is ``(true (c n))``
  alone, ``c`` a one-argument fluent and ``n`` a constant;
- one ``init`` fact ``(c k)`` (no other ``init`` clause for a one-argument ``c``, and no
  ``init`` or ``next`` rule for any fluent ``?f``);
- one ``next`` rule for a one-argument ``c``: ``(<= (next (c ?y)) (true (c ?x)) (r ?x ?y))``
  with ``?x`` and ``?y`` two variables and ``r`` no keyword, every clause of whose name is a
  ground fact of two constants; the chain of ``r`` from ``k`` is functional and reaches ``n``
  after ``d`` links.

The argument: the rule's body has no negation, so whatever else the game says, a state
holding ``(c x)`` is followed by one holding ``(c y)`` for the fact ``(r x y)``; the initial
state holds ``(c k)``, so the state at depth ``t`` holds the chain's ``t``-th value and the
one at depth ``d`` holds ``(c n)``: it is terminal, and no play has more than ``d`` steps.
Pure functions over a description.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gdl2pl.normalize import fold
from gdl2pl.normalize import normalize_case
from gdl2pl.syntax import Const
from gdl2pl.syntax import Description
from gdl2pl.syntax import Distinct
from gdl2pl.syntax import Fact
from gdl2pl.syntax import Func
from gdl2pl.syntax import Not
from gdl2pl.syntax import Rule
from gdl2pl.syntax import Term
from gdl2pl.syntax import Var
from gdl2pl.syntax import variables
from gdl2pl.vocabulary import KEYWORDS


def _true_of(lit: object) -> Func | None:
    """The fluent ``f`` of a literal ``(true f)`` whose fluent has arity 1."""
    if isinstance(lit, Func) and lit.name == "true" and len(lit.args) == 1:
        f = lit.args[0]
        if isinstance(f, Func) and len(f.args) == 1:
            return f
    return None


def _keyword_fluent(c: Fact | Rule, keyword: str) -> Term | None:
    """The fluent of a clause whose head is ``(keyword f)`` (``init``, ``next``), else None."""
    h = c.head
    if isinstance(h, Func) and h.name == keyword and len(h.args) == 1:
        return h.args[0]
    return None


def _unary(t: Term | None, name: str) -> Func | None:
    """``t`` if it is ``(name x)``, one argument, else None."""
    if isinstance(t, Func) and t.name == name and len(t.args) == 1:
        return t
    return None


def step_counter_bound(d: Description) -> tuple[int, str] | None:
    """The proved bound on the number of steps of any play, and the counter that proves
    it (e.g. ``(200, "step")``), or None when the rules do not show the pattern (see the
    module doc)."""
    d = normalize_case(d)
    clauses = d.clauses
    for c in clauses:
        if not (
            isinstance(c, Rule)
            and isinstance(c.head, Const)
            and c.head.name == "terminal"
            and len(c.body) == 1
        ):
            continue
        end = _true_of(c.body[0])
        if end is None or not isinstance(end.args[0], Const):
            continue
        bound = _chain(clauses, end.name, end.args[0].name)
        if bound is not None:
            return bound, end.name
    return None


def _chain(clauses: tuple[Fact | Rule, ...], counter: str, last: str) -> int | None:
    """The links of the counter's chain from its ``init`` value to ``last``, or None."""
    for c in clauses:
        for keyword in ("init", "next"):
            f = _keyword_fluent(c, keyword)
            if f is not None and not isinstance(f, Func | Const):
                return None  # an init or next rule for any fluent (?f): not this pattern
    inits = [c for c in clauses if _unary(_keyword_fluent(c, "init"), counter) is not None]
    if len(inits) != 1 or not isinstance(inits[0], Fact):
        return None  # none, several, or one under conditions: not this pattern
    start = _unary(_keyword_fluent(inits[0], "init"), counter)
    if start is None or not isinstance(start.args[0], Const):
        return None
    updates = [c for c in clauses if _unary(_keyword_fluent(c, "next"), counter) is not None]
    if len(updates) != 1 or not isinstance(updates[0], Rule) or len(updates[0].body) != 2:
        return None
    rule = updates[0]
    y = _unary(_keyword_fluent(rule, "next"), counter).args[0]  # type: ignore[union-attr]
    now = next((f for f in map(_true_of, rule.body) if f is not None), None)
    link = next((b for b in rule.body if _true_of(b) is None), None)
    if now is None or now.name != counter or not isinstance(link, Func) or len(link.args) != 2:
        return None
    x = now.args[0]
    if not (isinstance(x, Var) and isinstance(y, Var) and x != y and link.args == (x, y)):
        return None
    if fold(link.name) in KEYWORDS:
        return None  # (does ?x ?y), (legal ?x ?y)...: not a table of facts
    successor: dict[str, set[str]] = {}
    for c in clauses:
        if fold(c.head.name) != fold(link.name):
            continue
        if not isinstance(c, Fact) or not isinstance(c.head, Func) or len(c.head.args) != 2:
            return None  # defined by a rule, or used with another arity: not a plain table
        a, b = c.head.args
        if not (isinstance(a, Const) and isinstance(b, Const)):
            return None
        successor.setdefault(a.name, set()).add(b.name)
    at, steps, seen = start.args[0].name, 0, set()
    while at != last:
        nxt = successor.get(at)
        if nxt is None or len(nxt) != 1 or at in seen:
            return None  # the counter stops, branches or cycles before the end
        seen.add(at)
        (at,) = nxt
        steps += 1
    return steps


def turn_control(d: Description) -> str | None:
    """The fluent relation ``c`` that proves a game turn-taking from its rules, or None.

    The pattern (``c`` with one argument; its other arities are other relations): ``init``
    holds at most one ``(c k)``; every ``next`` rule for ``c`` has a ground head and a
    ground ``(true (c k))`` in its body, and two rules with the same ``k`` have the same
    head, and no ``init`` or ``next`` rule is for any fluent ``?f`` (so at most one ``c``
    fluent holds in any reachable state); the roles are ground facts, and every ``legal``
    rule of a role either needs ``(true (c r))`` with ``r`` that role (the head's role,
    constant or variable), or gives one ground move, the same for all such rules of that
    role. Then in every state at most one role has more than one move."""
    d = normalize_case(d)
    roles = _roles(d)
    if roles is None:
        return None
    names = {f.name for c in d.clauses
             if isinstance(f := _keyword_fluent(c, "init"), Func) and len(f.args) == 1}
    for name in sorted(names):
        if _at_most_one(d, name) and all(_controlled(d, name, r) for r in roles):
            return name
    return None


def _roles(d: Description) -> list[Const] | None:
    """The roles, if every ``role`` clause is a fact ``(role r)`` of a constant."""
    roles = []
    for c in d.clauses:
        if c.head.name != "role":
            continue
        if not (isinstance(c, Fact) and isinstance(c.head, Func) and len(c.head.args) == 1
                and isinstance(c.head.args[0], Const)):
            return None
        roles.append(c.head.args[0])
    return roles


def _at_most_one(d: Description, name: str) -> bool:
    inits = []
    for c in d.clauses:
        f = _keyword_fluent(c, "init")
        if f is not None and not isinstance(f, Func | Const):
            return False  # an init rule for any fluent (?f) may add another
        if _unary(f, name) is not None:
            inits.append(c)
    if len(inits) > 1 or any(not isinstance(c, Fact) for c in inits):
        return False
    head_of: dict[str, object] = {}
    for c in d.clauses:
        g = _keyword_fluent(c, "next")
        if g is not None and not isinstance(g, Func | Const):
            return False  # a next rule for any fluent (?f) may add another
        f = _unary(g, name)
        if f is None:
            continue
        if not isinstance(c, Rule) or not isinstance(f.args[0], Const):
            return False
        trues = [t for t in map(_true_of, c.body) if t is not None and t.name == name]
        if not trues or not isinstance(trues[0].args[0], Const):
            return False
        key = trues[0].args[0].name
        if head_of.setdefault(key, f.args[0].name) != f.args[0].name:
            return False
    return True


def _controlled(d: Description, name: str, role: object) -> bool:
    free: set[str] = set()
    for c in d.clauses:
        if not (c.head.name == "legal" and isinstance(c.head, Func) and len(c.head.args) == 2):
            continue
        who, move = c.head.args
        if isinstance(who, Const) and who != role:
            continue
        body = c.body if isinstance(c, Rule) else ()
        needs = any(
            t is not None and t.name == name and (t.args[0] == who or t.args[0] == role)
            for t in map(_true_of, body)
        )
        if needs:
            continue
        if not isinstance(move, Const):
            return False  # an uncontrolled rule with a move that may vary
        free.add(move.name)
    return len(free) <= 1


def never_terminal(body: frozenset[object], terminal_bodies: Sequence[Sequence[object]]) -> bool:
    """Whether a rule body can hold in no terminal state: every ``terminal`` rule's body
    has a ground literal whose complement (``p`` against ``(not p)``) is in ``body``."""
    if not terminal_bodies:
        return False
    return all(
        any(_complement(lit) in body for lit in t if _ground_literal(lit)) for t in terminal_bodies
    )


def _ground_literal(lit: object) -> bool:
    atom = lit.body if isinstance(lit, Not) else lit
    return isinstance(atom, Const | Func) and not variables(atom)


def _complement(lit: object) -> object:
    return lit.body if isinstance(lit, Not) else Not(lit)  # type: ignore[arg-type]


def goal_sum(d: Description) -> int | None:
    """The sum of the goal values at every terminal state, proved from the goal rules'
    shape, or None: every goal rule names a role and a value, and the rules fall into
    groups of one body (the same literals) with one rule per role each, every group
    summing to one constant; a group whose body contradicts every ``terminal`` rule
    (``never_terminal``) is left out, as it never gives the goals of a play's end.
    Since each role has exactly one goal value at the end (the
    adapters check it in every terminal state they meet), the rule giving the first
    role its value has a body that holds, so its whole group holds."""
    d = normalize_case(d)
    listed = _roles(d)
    if listed is None:
        return None
    roles = set(listed)
    groups: dict[frozenset[object], dict[object, int]] = {}
    for c in d.clauses:
        if c.head.name != "goal":
            continue
        if not (isinstance(c.head, Func) and len(c.head.args) == 2):
            return None
        who, value = c.head.args
        if not (isinstance(who, Const) and isinstance(value, Const)) or who not in roles:
            return None
        try:
            v = int(value.name)
        except ValueError:
            return None
        body = frozenset(c.body) if isinstance(c, Rule) else frozenset()
        group = groups.setdefault(body, {})
        if who in group:
            return None  # two rules of one role with one body: not this pattern
        group[who] = v
    terminal_bodies = [c.body if isinstance(c, Rule) else () for c in d.clauses
                       if isinstance(c.head, Const) and c.head.name == "terminal"]
    groups = {body: g for body, g in groups.items()
              if not never_terminal(body, terminal_bodies)}
    sums = {sum(g.values()) for g in groups.values() if set(g) == roles}
    if not groups or len(sums) != 1 or any(set(g) != roles for g in groups.values()):
        return None
    return sums.pop()


#: The most steps ``always_legal`` spends matching rule bodies against the facts.
MATCH_STEPS = 100_000

Env = dict[str, "Const | Func"]


def always_legal(d: Description) -> dict[str, str]:
    """For each role that has one, a ground move the rules make legal in every state.
    Such a move is an instance of a ``legal`` rule (or fact) whose body needs only what
    no state changes: atoms of relations given by ground facts alone (``role``, ``coord``
    ...; never ``true`` or ``does``), ``distinct``, and the negation of such atoms; the
    instance is found by matching the body against the facts, in at most
    ``MATCH_STEPS`` steps in all. ``(<= (legal player (switch ?x ?y)) (coord ?x)
    (coord ?y))`` with ``(coord 1)`` gives ``(switch 1 1)``. A role missing from the
    answer may still always have a move; the rules just do not show it by their shape."""
    d = normalize_case(d)
    facts = _static_facts(d)
    roles = _roles(d) or []
    found: dict[str, str] = {}
    steps = [MATCH_STEPS]
    for c in d.clauses:
        if not (c.head.name == "legal" and isinstance(c.head, Func) and len(c.head.args) == 2):
            continue
        who, move = c.head.args
        body = c.body if isinstance(c, Rule) else ()
        for role in roles:
            if role.name in found or not (isinstance(who, Var) or who == role):
                continue
            start: Env = {who.name: role} if isinstance(who, Var) else {}
            env = _solve(list(body), facts, start, steps)
            if env is not None:
                ground = _subst(move, env)
                if _ground(ground):
                    found[role.name] = str(ground)
    return found


def _key(atom: object) -> tuple[str, int] | None:
    """(name, arity) of an atom; ``(p)`` is ``("p()", 0)``, another relation than ``p``."""
    if isinstance(atom, Const):
        return (atom.name, 0)
    if isinstance(atom, Func):
        return (atom.name, len(atom.args)) if atom.args else (atom.name + "()", 0)
    return None


@dataclass(frozen=True)
class _Facts:
    """The facts of each relation given by ground facts alone, and all of them as a set."""

    by_relation: dict[tuple[str, int], list[Const | Func]]
    every: frozenset[object]


def _static_facts(d: Description) -> _Facts:
    """The relations given by ground facts alone (no rule, no ``true`` or ``does``),
    each with its facts."""
    facts: dict[tuple[str, int], list[Const | Func]] = {}
    ruled: set[tuple[str, int]] = {("true", 1), ("does", 2)}
    for c in d.clauses:
        key = _key(c.head)
        if key is None:
            continue
        if isinstance(c, Fact) and _ground(c.head):
            facts.setdefault(key, []).append(c.head)
        else:
            ruled.add(key)
    static = {k: v for k, v in facts.items() if k not in ruled}
    return _Facts(static, frozenset(f for v in static.values() for f in v))


def _solve(goals: list[object], facts: _Facts, env: Env, steps: list[int]) -> Env | None:
    """A binding that makes every literal of ``goals`` hold by the facts, or None (also
    when one is not of the kinds ``always_legal`` takes, or ``steps[0]`` runs out). Atoms
    are matched first; ``distinct`` and negations once their terms are ground."""
    atoms = [g for g in goals if not isinstance(g, Not | Distinct)]
    tests: list[object] = [g for g in goals if isinstance(g, Not | Distinct)]
    if any(_key(a) not in facts.by_relation for a in atoms):
        return None  # a relation some state may change (or not a plain atom)
    if any(isinstance(t, Not) and _key(t.body) not in facts.by_relation for t in tests):
        return None
    return _match_all(atoms, tests, facts, env, steps)


def _match_all(
    atoms: list[object], tests: list[object],
    facts: _Facts, env: Env, steps: list[int],
) -> Env | None:
    if not atoms:
        return env if all(_test(t, facts, env) for t in tests) else None
    first, rest = atoms[0], atoms[1:]
    for fact in facts.by_relation[_key(first)]:  # type: ignore[index]
        steps[0] -= 1
        if steps[0] < 0:
            return None
        bound = _unify(first, fact, dict(env))
        if bound is not None:
            found = _match_all(rest, tests, facts, bound, steps)
            if found is not None:
                return found
    return None


def _test(t: object, facts: _Facts, env: Env) -> bool:
    """Whether a ``distinct`` or a negation holds under ``env`` (False if not ground)."""
    if isinstance(t, Distinct):
        a, b = _subst(t.left, env), _subst(t.right, env)
        return _ground(a) and _ground(b) and a != b
    atom = _subst(t.body, env)  # type: ignore[attr-defined]
    return _ground(atom) and atom not in facts.every


def _unify(pattern: object, ground: object, env: Env) -> Env | None:
    """``env`` extended so that ``pattern`` becomes the ground term, or None."""
    if isinstance(pattern, Var):
        have = env.get(pattern.name)
        if have is None:
            env[pattern.name] = ground  # type: ignore[assignment]
            return env
        return env if have == ground else None
    if isinstance(pattern, Const):
        return env if pattern == ground else None
    if isinstance(pattern, Func) and isinstance(ground, Func):
        if pattern.name != ground.name or len(pattern.args) != len(ground.args):
            return None
        for p, g in zip(pattern.args, ground.args, strict=True):
            if _unify(p, g, env) is None:
                return None
        return env
    return None


def _subst(t: Term, env: Env) -> Term:
    if isinstance(t, Var):
        return env.get(t.name, t)
    if isinstance(t, Func):
        return Func(t.name, tuple(_subst(a, env) for a in t.args))
    return t


def _ground(t: object) -> bool:
    if isinstance(t, Var):
        return False
    if isinstance(t, Func):
        return all(map(_ground, t.args))
    return True
