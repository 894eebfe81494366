"""A static over-approximation of a game's moves and fluents (a sentence-domain model).

From the rules alone, no playout: every argument position of every relation gets the set
of ground terms it may hold, by a fixpoint over the normalized rules that ignores
negation and ``distinct``. A variable ranges over the intersection of what its positive
body occurrences allow; a head position gets every instance of its term. ``true`` holds
what ``init`` and ``next`` hold, ``does`` what ``legal`` holds. The result contains every
fluent and legal move of every reachable state (it may contain more).

Pure functions. ``DomainExplosionError`` when a position would exceed ``max_terms``.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import product

from gdl2pl.flatten import FlatRule
from gdl2pl.flatten import flatten_rules
from gdl2pl.flatten import relation_key
from gdl2pl.flatten import term_args
from gdl2pl.kif import kif_term
from gdl2pl.normalize import normalize_case
from gdl2pl.syntax import Const
from gdl2pl.syntax import Description
from gdl2pl.syntax import Func
from gdl2pl.syntax import Term
from gdl2pl.syntax import Var

from .errors import DomainExplosionError

Position = tuple[tuple[str, int], int]  # ((relation, arity), argument index)

_TRUE = ("true", 1)
_DOES = ("does", 2)
_LEGAL = ("legal", 2)
_FEEDS_TRUE = (("init", 1), ("next", 1))

#: The default bound on the ground terms of one argument position.
MAX_TERMS = 100_000
#: How many candidate sentences the exact (relaxed) model may try before giving up.
JOIN_BUDGET = 300_000
#: The most nodes a term of the analysis may have as a tree (as the runtime's cap on a
#: fluent): rules that grow a term without bound (doubling it each step) are refused
#: before the term is ever hashed, which would take time exponential in its depth.
MAX_TERM_NODES = 100_000


def _check_size(terms: Iterable[Term], game: str) -> None:
    """``DomainExplosionError`` if a term of ``terms`` is larger than ``MAX_TERM_NODES``
    as a tree (counted over its shared subterms once each, so the check is linear)."""
    sizes: dict[int, int] = {}
    for term in terms:
        todo: list[tuple[Term, bool]] = [(term, False)]
        while todo:
            node, ready = todo.pop()
            if id(node) in sizes:
                continue
            args = node.args if isinstance(node, Func) else ()
            if not ready:
                todo.append((node, True))
                todo.extend((a, False) for a in args if id(a) not in sizes)
                continue
            size = 1 + sum(sizes[id(a)] for a in args)
            if size > MAX_TERM_NODES:
                raise DomainExplosionError(
                    f"{game}: the rules make a term of more than {MAX_TERM_NODES:,} nodes: "
                    "the static analysis cannot bound it"
                )
            sizes[id(node)] = size


@dataclass(frozen=True)
class Domains:
    """What the rules allow: per role the possible legal moves, and the possible fluents."""

    moves: dict[Term, frozenset[Term]]
    fluents: frozenset[Term]


def _match(pattern: Term, ground: Term, binding: dict[str, Term]) -> bool:
    if isinstance(pattern, Var):
        seen = binding.get(pattern.name)
        if seen is None:
            binding[pattern.name] = ground
            return True
        return seen == ground
    if isinstance(pattern, Const):
        return isinstance(ground, Const) and ground.name == pattern.name
    if not isinstance(ground, Func) or ground.name != pattern.name:
        return False
    if len(ground.args) != len(pattern.args):  # type: ignore[union-attr]
        return False
    return all(
        _match(p, g, binding)
        for p, g in zip(pattern.args, ground.args, strict=True)  # type: ignore[union-attr]
    )


def _vars(t: Term) -> Iterator[str]:
    if isinstance(t, Var):
        yield t.name
    elif isinstance(t, Func):
        for a in t.args:
            yield from _vars(a)


def _substitute(t: Term, binding: dict[str, Term]) -> Term:
    if isinstance(t, Var):
        return binding[t.name]
    if isinstance(t, Func):
        return Func(t.name, tuple(_substitute(a, binding) for a in t.args))
    return t


def _instances(
    t: Term, ranges: dict[str, set[Term]], limit: int, where: str
) -> Iterable[Term]:
    names = sorted(set(_vars(t)))
    if not names:
        return (t,)
    if any(n not in ranges for n in names):  # an unsafe variable: nothing to say
        return ()
    size = 1
    for n in names:
        size *= len(ranges[n])
    if size > limit:
        raise DomainExplosionError(
            f"the domain of {where} would hold {size} terms (bound {limit}): "
            "the static analysis cannot bound it"
        )
    return (
        _substitute(t, dict(zip(names, combo, strict=True)))
        for combo in product(*(ranges[n] for n in names))
    )


class _Model:
    def __init__(self, rules: list[FlatRule], limit: int, game: str) -> None:
        self.rules = rules
        self.limit = limit
        self.game = game
        self.domain: dict[Position, set[Term]] = {}
        self._memo: dict[tuple[Position, Term], tuple[int, dict[str, set[Term]]]] = {}

    def values(self, pos: Position) -> set[Term]:
        return self.domain.setdefault(pos, set())

    def add(self, pos: Position, terms: Iterable[Term]) -> bool:
        terms = list(terms)
        _check_size(terms, self.game)
        target = self.values(pos)
        before = len(target)
        target.update(terms)
        if len(target) > self.limit:
            (name, _), i = pos
            raise DomainExplosionError(
                f"{self.game}: argument {i + 1} of '{name}' has more than {self.limit} "
                "possible terms: the static analysis cannot bound it"
            )
        return len(target) != before

    def bindings(self, pos: Position, pattern: Term) -> dict[str, set[Term]]:
        """Per variable of ``pattern``, the values it takes over the terms at ``pos``."""
        vals = self.values(pos)
        memo = self._memo.get((pos, pattern))
        if memo is not None and memo[0] == len(vals):
            return memo[1]
        out: dict[str, set[Term]] = {n: set() for n in _vars(pattern)}
        for g in vals:
            b: dict[str, Term] = {}
            if _match(pattern, g, b):
                for n, v in b.items():
                    out[n].add(v)
        self._memo[(pos, pattern)] = (len(vals), out)
        return out

    def ranges(self, rule: FlatRule) -> dict[str, set[Term]] | None:
        """Each variable's possible values in ``rule``; None if some literal cannot hold."""
        ranges: dict[str, set[Term]] = {}
        for lit in rule.body:
            if not isinstance(lit, Const | Func):
                continue  # negation and distinct only restrict: ignored
            key = relation_key(lit)
            for i, arg in enumerate(term_args(lit)):
                if isinstance(arg, Const):
                    continue
                for n, vs in self.bindings((key, i), arg).items():
                    ranges[n] = ranges[n] & vs if n in ranges else set(vs)
                    if not ranges[n]:
                        return None
        return ranges

    def step(self) -> bool:
        changed = False
        for rule in self.rules:
            ranges = self.ranges(rule)
            if ranges is None:
                continue
            key = relation_key(rule.head)
            for i, arg in enumerate(term_args(rule.head)):
                where = f"{self.game}: argument {i + 1} of '{key[0]}' (rule at {rule.source.pos})"
                terms = list(_instances(arg, ranges, self.limit, where))
                targets: list[Position] = [(key, i)]
                if key in _FEEDS_TRUE:
                    targets.append((_TRUE, 0))
                if key == _LEGAL:
                    targets.append((_DOES, i))
                for pos in targets:
                    changed = self.add(pos, terms) or changed
        return changed

    def legal_per_role(self, roles: Iterable[Term]) -> dict[Term, frozenset[Term]]:
        moves: dict[Term, set[Term]] = {r: set() for r in roles}
        for rule in self.rules:
            if relation_key(rule.head) != _LEGAL:
                continue
            ranges = self.ranges(rule)
            if ranges is None:
                continue
            who, what = term_args(rule.head)
            for role in moves:
                b: dict[str, Term] = {}
                if not _match(who, role, b):
                    continue
                if isinstance(who, Var) and who.name in ranges and role not in ranges[who.name]:
                    continue
                fixed = {**ranges, **{n: {v} for n, v in b.items()}}
                where = f"{self.game}: the moves of role {kif_term(role)}"
                moves[role].update(_instances(what, fixed, self.limit, where))
        return {r: frozenset(ms) for r, ms in moves.items()}


class _AtomModel:
    """The relaxed model: every ground atom derivable when negation and ``distinct`` are
    ignored (a join per rule, indexed on the first ground argument). Exact where the
    per-position model is loose; bounded by ``limit`` atoms per relation."""

    def __init__(self, rules: list[FlatRule], limit: int, game: str, work: int) -> None:
        self.rules = rules
        self.limit = limit
        self.game = game
        self.work = work
        self.atoms: dict[tuple[str, int], set[tuple[Term, ...]]] = {}
        self.index: dict[tuple[tuple[str, int], int, Term], list[tuple[Term, ...]]] = {}

    def add(self, key: tuple[str, int], atom: tuple[Term, ...]) -> bool:
        _check_size(atom, self.game)
        target = self.atoms.setdefault(key, set())
        if atom in target:
            return False
        target.add(atom)
        if len(target) > self.limit:
            raise DomainExplosionError(
                f"{self.game}: more than {self.limit} possible '{key[0]}' sentences"
            )
        for i, a in enumerate(atom):
            self.index.setdefault((key, i, a), []).append(atom)
        self.delta.setdefault(key, []).append(atom)
        return True

    def candidates(
        self, key: tuple[str, int], args: tuple[Term, ...], binding: dict[str, Term]
    ) -> Iterable[tuple[Term, ...]]:
        for i, a in enumerate(args):
            g = binding.get(a.name) if isinstance(a, Var) else a if isinstance(a, Const) else None
            if g is not None:
                return self.index.get((key, i, g), ())
        return self.atoms.get(key, ())

    def solve(
        self, body: list[Func | Const], i: int, binding: dict[str, Term]
    ) -> Iterator[dict[str, Term]]:
        if i == len(body):
            yield binding
            return
        lit = body[i]
        args = term_args(lit)
        atoms = list(self.candidates(relation_key(lit), args, binding))
        self.work -= len(atoms)
        if self.work < 0:
            raise DomainExplosionError(f"{self.game}: the relaxed model needs too many joins")
        for atom in atoms:
            b = dict(binding)
            if all(_match(p, g, b) for p, g in zip(args, atom, strict=True)):
                yield from self.solve(body, i + 1, b)

    def fire(self, rule: FlatRule, bindings: Iterable[dict[str, Term]]) -> None:
        key = relation_key(rule.head)
        head = term_args(rule.head)
        names = {n for a in head for n in _vars(a)}
        for b in list(bindings):
            if not names <= b.keys():
                continue  # an unsafe variable: nothing to say
            atom = tuple(_substitute(a, b) for a in head)
            self.add(key, atom)
            if key in _FEEDS_TRUE:
                self.add(_TRUE, atom)
            elif key == _LEGAL:
                self.add(_DOES, atom)

    def run(self) -> None:
        """Semi-naive evaluation: after the first round, each rule is joined once per
        positive literal that can match an atom new in the previous round."""
        self.delta: dict[tuple[str, int], list[tuple[Term, ...]]] = {}
        bodies = [[x for x in r.body if isinstance(x, Const | Func)] for r in self.rules]
        for rule, body in zip(self.rules, bodies, strict=True):
            self.fire(rule, self.solve(body, 0, {}))
        while self.delta:
            previous, self.delta = self.delta, {}
            for rule, body in zip(self.rules, bodies, strict=True):
                for i, lit in enumerate(body):
                    new = previous.get(relation_key(lit))
                    if not new:
                        continue
                    rest = body[:i] + body[i + 1 :]
                    args = term_args(lit)
                    for atom in new:
                        b: dict[str, Term] = {}
                        if all(_match(p, g, b) for p, g in zip(args, atom, strict=True)):
                            self.fire(rule, self.solve(rest, 0, b))


def analyse_domains(
    description: Description, roles: Iterable[Term], game: str = "game", max_terms: int = MAX_TERMS
) -> Domains:
    """The over-approximated legal moves per role and fluents of ``description``.

    ``roles`` are spelled as the case-normalized description spells them (as the
    ``StateMachine`` reports them). Raises ``DomainExplosionError`` past ``max_terms``."""
    return rule_domains(flatten_rules(normalize_case(description)), roles, game, max_terms)


def rule_domains(
    rules: list[FlatRule], roles: Iterable[Term], game: str = "game", max_terms: int = MAX_TERMS
) -> Domains:
    """``analyse_domains`` of a game's flat rules (e.g. a ``Translation``'s ``origins``)."""
    role_list = list(roles)
    exact = _AtomModel(rules, max_terms, game, JOIN_BUDGET)
    try:
        exact.run()
    except DomainExplosionError:
        pass  # too many sentences: fall back on the looser per-position model
    else:
        moves: dict[Term, set[Term]] = {r: set() for r in role_list}
        for who, what in exact.atoms.get(_LEGAL, ()):
            if who in moves:
                moves[who].add(what)
        return Domains(
            moves={r: frozenset(ms) for r, ms in moves.items()},
            fluents=frozenset(f for (f,) in exact.atoms.get(_TRUE, ())),
        )
    model = _Model(rules, max_terms, game)
    while model.step():
        pass
    return Domains(
        moves=model.legal_per_role(role_list),
        fluents=frozenset(model.values((_TRUE, 0))),
    )
