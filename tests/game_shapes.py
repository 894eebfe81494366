"""Small random games of every head and body shape GDL's grammar allows, for checking the
compiled engine against the reasoner (``tests/test_compiled_shapes.py``).

``random_game(rng)`` writes one game's KIF text from ``rng`` (a ``random.Random``; the
test passes Hypothesis's, so a failing game shrinks). Every game is safe and stratified
by construction, its terms cannot grow (a variable that goes into a fluent, a move or a
goal value only ever holds a number) and it ends within a few steps (a step counter), so
both engines must answer alike in every state. The shapes it draws from:

- zero-arity relations written bare (``w``) and in parentheses (``(w)``), both of one
  name in some games (two relations, as in ggp-base), in heads and bodies, under ``not``
  and in the rules of ``init`` (static ones), ``next``, ``legal``, ``goal`` and
  ``terminal``; zero-arity
  function terms (``(z)``, ``(go)``) beside the constants of the same name, as fluents and
  moves;
- ``or``, nested, with ``and`` under it; ``not`` and ``(not (not ...))``;
- ``distinct`` on variables, constants and function terms, and ``(not (distinct ...))``;
- ``(true ?f)`` with a variable relation; function terms as arguments;
- recursion through static relations, through state-dependent ones, and a cycle of
  propositions; relations that read ``does``, used by ``next``;
- constants and variables mixed in the arguments of heads and bodies.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from dataclasses import field

#: The numbers of the games: the values of fluents, moves and counters.
NUMBERS = ("0", "1", "2", "3")
GOAL_VALUES = ("0", "25", "50", "100")

NUM = "num"  # a variable or argument that only ever holds a number
ANY = "any"  # one that may hold any term of the game (a whole fluent, a function term)


@dataclass
class Relation:
    """A relation the game defines: its name, how it is written, its arguments' types
    (NUM or ANY), and its level (a rule uses relations of lower levels only, and its own
    relation positively)."""

    name: str
    types: tuple[str, ...]
    bare: bool  # a zero-arity relation written ``w`` (True) or ``(w)`` (False)
    level: int
    moving: bool = False  # reads does: only next's rules may use it
    recursive: bool = False

    def atom(self, args: list[str]) -> str:
        if not self.types:
            return self.name if self.bare else f"({self.name})"
        return f"({self.name} {' '.join(args)})"


@dataclass
class Body:
    """A rule body being drawn: its literals and the variables they bind, with types."""

    literals: list[str] = field(default_factory=list)
    bound: dict[str, str] = field(default_factory=dict)
    fresh: int = 0

    def var(self, kind: str) -> str:
        self.fresh += 1
        name = f"?v{self.fresh}"
        self.bound[name] = kind
        return name


class GameWriter:
    """One random game (see the module's docstring); ``text()`` is its KIF."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.roles = ["r", "s"][: rng.randint(1, 2)]
        self.limit = rng.randint(2, 3)
        self.fluent_d = rng.random() < 0.7  # (d (f N)): a function term in a fluent
        self.fluent_z = rng.random() < 0.7  # z and (z): constant and zero-arity term
        self.static_le = rng.random() < 0.5  # (le X Y): static recursion over succ
        self.relations: list[Relation] = []
        self.rules: list[str] = []

    # -- terms ---------------------------------------------------------------------------

    def constant(self, kind: str) -> str:
        rng = self.rng
        if kind == NUM or rng.random() < 0.5:
            return rng.choice(NUMBERS)
        return rng.choice(["(f 1)", "(c 2)", "z", "(z)", "(step 0)", "(d (f 0))"])

    def value(self, body: Body, kind: str = ANY) -> str:
        """A term over the body's bound variables: a variable, a constant or a function
        term (of a variable or a constant)."""
        rng = self.rng
        names = [v for v, k in body.bound.items() if kind == ANY or k == NUM]
        roll = rng.random()
        if names and roll < 0.55:
            return rng.choice(names)
        if kind == ANY and roll < 0.8:
            inner = rng.choice(names) if names and rng.random() < 0.6 else self.constant(NUM)
            return f"(f {inner})"
        return self.constant(kind)

    # -- literals ------------------------------------------------------------------------

    def usable(self, level: int, moving: bool) -> list[Relation]:
        return [
            r for r in self.relations if r.level < level and (moving or not r.moving)
        ]

    def binder(self, body: Body, var: str, kind: str, level: int, moving: bool) -> str:
        """A positive literal (or an ``or`` of them) that binds ``var`` to a value of
        ``kind``, perhaps binding new variables too."""
        rng = self.rng
        options = ["c", "num", "succ"]
        if self.fluent_d:
            options.append("d")
        if self.static_le:
            options.append("le")
        if kind == ANY:
            options += ["true", "true"]
        rels = [r for r in self.usable(level, moving) if any(
            t == NUM or kind == ANY for t in r.types)]
        if rels:
            options += ["rel"] * 3
        if moving:
            options += ["does", "does"]
        options.append("or")
        pick = rng.choice(options)
        body.bound[var] = kind
        if pick == "c":
            return f"(true (c {var}))"
        if pick == "num":
            return f"(num {var})"
        if pick == "succ":
            other = body.var(NUM)
            return f"(succ {var} {other})" if rng.random() < 0.5 else f"(succ {other} {var})"
        if pick == "d":
            return f"(true (d (f {var})))"
        if pick == "le":
            return f"(le {var} {self.value(body, NUM)})" if rng.random() < 0.5 else (
                f"(le {self.constant(NUM)} {var})")
        if pick == "true":
            return f"(true {var})"
        if pick == "does":
            role = rng.choice([*self.roles, "?who"])
            if role == "?who":
                body.bound["?who"] = ANY
            return f"(does {role} (mv {var}))" if rng.random() < 0.6 else (
                f"(does {role} (put (f {var})))")
        if pick == "rel":
            rel = rng.choice(rels)
            spots = [i for i, t in enumerate(rel.types) if t == NUM or kind == ANY]
            at = rng.choice(spots)
            args = []
            for i, t in enumerate(rel.types):
                if i == at:
                    args.append(var)
                elif rng.random() < 0.5:
                    args.append(body.var(t))
                else:
                    args.append(self.constant(t))
            return rel.atom(args)
        # or: each branch binds the variable (nested, with and under it)
        first = f"(true (c {var}))" if rng.random() < 0.5 else f"(num {var})"
        second = f"(succ 0 {var})"
        if rng.random() < 0.5:
            second = f"(or {second} (and (num {var}) (distinct {var} {self.constant(NUM)})))"
        return f"(or {first} {second})"

    def atom_test(self, body: Body, level: int, moving: bool) -> str:
        """A positive literal over bound variables and constants only (a test)."""
        rng = self.rng
        rels = self.usable(level, moving)
        options = ["c", "true"]
        if self.fluent_z:
            options += ["z"]
        if rels:
            options += ["rel"] * 4
        if moving:
            options.append("does")
        pick = rng.choice(options)
        if pick == "c":
            return f"(true (c {self.value(body, NUM)}))"
        if pick == "true":
            return f"(true {self.value(body)})"
        if pick == "z":
            return rng.choice(["(true z)", "(true (z))"])
        if pick == "does":
            move = rng.choice(["go", "(go)", f"(mv {self.value(body, NUM)})"])
            return f"(does {rng.choice(self.roles)} {move})"
        rel = rng.choice(rels)
        return rel.atom([self.value(body, t) for t in rel.types])

    def test(self, body: Body, level: int, moving: bool, depth: int = 0) -> str:
        """A literal that binds nothing: distinct, not, not not, or, a ground atom."""
        rng = self.rng
        roll = rng.random()
        if roll < 0.2:
            return f"(distinct {self.value(body)} {self.value(body)})"
        if roll < 0.27:
            return f"(not (distinct {self.value(body)} {self.value(body)}))"
        if roll < 0.55:
            return f"(not {self.atom_test(body, level, moving)})"
        if roll < 0.65:
            return f"(not (not {self.atom_test(body, level, moving)}))"
        if roll < 0.8 and depth < 2:
            first = self.test(body, level, moving, depth + 1)
            second = self.test(body, level, moving, depth + 1)
            if rng.random() < 0.3:
                second = f"(and {second} {self.test(body, level, moving, depth + 1)})"
            return f"(or {first} {second})"
        return self.atom_test(body, level, moving)

    def body(self, head_vars: dict[str, str], level: int, moving: bool = False,
             tests: int = 2) -> list[str]:
        """A body whose positive literals bind every head variable, with up to ``tests``
        tests, in a random order (the translator orders bodies itself)."""
        rng = self.rng
        b = Body()
        literals = []
        for var, kind in head_vars.items():
            if var not in b.bound:
                literals.append(self.binder(b, var, kind, level, moving))
        if rng.random() < 0.3:
            literals.append(self.binder(b, b.var(ANY), ANY, level, moving))
        literals += [self.test(b, level, moving) for _ in range(rng.randint(0, tests))]
        rng.shuffle(literals)
        return literals

    def rule(self, head: str, body: list[str]) -> None:
        self.rules.append(f"(<= {head} {' '.join(body)})" if body else f"(<= {head})")

    # -- the game ------------------------------------------------------------------------

    def head_args(self, types: tuple[str, ...]) -> tuple[list[str], dict[str, str]]:
        """A head's arguments (variables, constants, function terms) and its variables."""
        rng = self.rng
        args: list[str] = []
        head_vars: dict[str, str] = {}
        for i, t in enumerate(types):
            roll = rng.random()
            var = f"?h{i}"
            if roll < 0.6:
                args.append(var)
                head_vars[var] = t
            elif t == ANY and roll < 0.8:
                args.append(f"(f {var})")
                head_vars[var] = NUM
            else:
                args.append(self.constant(t))
        return args, head_vars

    def define(self, rel: Relation) -> None:
        """One to three rules for ``rel``; a recursive one has a base rule and a rule
        that steps its first argument along ``succ`` from an instance of itself."""
        rng = self.rng
        for _ in range(rng.randint(1, 3)):
            args, head_vars = self.head_args(rel.types)
            self.rule(rel.atom(args), self.body(head_vars, rel.level, rel.moving))
        if rel.recursive:
            inner = ["?r0", *(f"?h{i}" for i in range(1, len(rel.types)))]
            head = ["?h0", *inner[1:]]
            body = [rel.atom(inner), "(succ ?r0 ?h0)"]
            b = Body(bound={v: NUM for v in inner + head})
            tests = [self.test(b, rel.level, False) for _ in range(rng.randint(0, 1))]
            # a test written before the recursive call guards it (on ?h0, a head
            # variable only (succ ?r0 ?h0) binds, for a caller that leaves it unbound)
            body = tests + body if rng.random() < 0.5 else body + tests
            self.rule(rel.atom(head), body)

    def relations_drawn(self) -> None:
        rng = self.rng
        names = ["w", "v", "u", "p", "q"]
        rng.shuffle(names)
        level = 0
        for name in names[: rng.randint(2, 5)]:
            level += 1
            arity = rng.choice([0, 0, 1, 2])
            if arity == 0:
                both = rng.random() < 0.4  # w and (w): two relations of one name
                forms = [True, False] if both else [rng.random() < 0.5]
                for bare in forms:
                    rel = Relation(name, (), bare, level)
                    self.define(rel)
                    self.relations.append(rel)
                    level += 1
                continue
            types = tuple(rng.choice([NUM, NUM, ANY]) for _ in range(arity))
            recursive = all(t == NUM for t in types) and rng.random() < 0.3
            rel = Relation(name, types, True, level, recursive=recursive)
            self.define(rel)
            self.relations.append(rel)
        if rng.random() < 0.3:  # a cycle of propositions, with a way in
            level += 1
            a, b = Relation("ca", (), False, level), Relation("cb", (), True, level)
            self.rule(a.atom([]), [b.atom([])])
            self.rule(b.atom([]), [a.atom([])])
            self.rule(b.atom([]), self.body({}, level, tests=1) or ["(true (c 1))"])
            self.relations += [a, b]
        if rng.random() < 0.5:  # a relation that reads does, for next
            level += 1
            types = rng.choice([(), (NUM,)])
            rel = Relation("moved", types, rng.random() < 0.5, level, moving=True)
            args, head_vars = self.head_args(types)
            b = Body()
            lits = [self.binder(b, v, k, level, True) for v, k in head_vars.items()]
            role = rng.choice(self.roles)
            lits.append(f"(does {role} {rng.choice(['go', '(go)', '(mv ?m)'])})")
            if "?m" in lits[-1]:
                lits.append("(num ?m)")
            self.rule(rel.atom(args), lits)
            self.relations.append(rel)
        self.top = level + 1

    def keyword_rules(self) -> None:
        rng = self.rng
        top = self.top
        # init: the counter, and some of the fluents
        fluents = [f"(c {n})" for n in NUMBERS]
        if self.fluent_d:
            fluents += [f"(d (f {n}))" for n in NUMBERS]
        if self.fluent_z:
            fluents += ["z", "(z)"]
        self.rules.append("(init (step 0))")
        for f in fluents:
            if rng.random() < 0.4:
                self.rules.append(f"(init {f})")
        if rng.random() < 0.4:  # init by a rule over static relations, (k) and k too
            self.rules += ["(<= (k) (succ 1 2))", "(<= k (not (k)))"]
            self.rule("(init (c ?x))", ["(num ?x)", f"(distinct ?x {self.constant(NUM)})",
                                        rng.choice(["(k)", "k", "(not (k))", "(not k)"])])
        # next: the counter, and each fluent's rules
        self.rule("(next (step ?y))", ["(true (step ?x))", "(succ ?x ?y)"])
        heads = [("(c ?x)", {"?x": NUM})]
        if self.fluent_d:
            heads.append(("(d (f ?x))", {"?x": NUM}))
        if self.fluent_z:
            heads += [("z", {}), ("(z)", {})]
        for head, head_vars in heads:
            for _ in range(rng.randint(1, 2)):
                self.rule(f"(next {head})", self.body(dict(head_vars), top, moving=True))
        # legal: noop always, and moves of every shape
        self.rule("(legal ?r noop)", ["(role ?r)"])
        moves = [("go", {}), ("(go)", {}), ("(mv ?x)", {"?x": NUM}), ("(put (f ?x))", {"?x": NUM})]
        for move, head_vars in rng.sample(moves, rng.randint(1, len(moves))):
            role = rng.choice([*self.roles, "?r"])
            body = self.body(dict(head_vars), top)
            if role == "?r":
                body.append("(role ?r)")
            self.rule(f"(legal {role} {move})", body)
        # terminal: the counter, and perhaps a condition
        self.rule("terminal", [f"(true (step {self.limit}))"])
        if rng.random() < 0.5:
            self.rule("terminal", self.body({}, top, tests=1) or ["(true (c 3))"])
        if rng.random() < 0.2:  # (terminal) is a relation of its own, not terminal
            self.rule("(terminal)", ["(true (c 0))"])
            self.rule("(goal r 1)", ["(terminal)"])
        # goal: values by conditions, and a value read from the state
        for role in self.roles:
            for _ in range(rng.randint(1, 3)):
                self.rule(f"(goal {role} {rng.choice(GOAL_VALUES)})", self.body({}, top))
        if rng.random() < 0.3:
            self.rule("(goal ?r ?x)", ["(role ?r)", "(true (c ?x))"])

    def text(self) -> str:
        self.relations_drawn()
        self.keyword_rules()
        facts = [f"(role {r})" for r in self.roles]
        facts += [f"(num {n})" for n in NUMBERS]
        facts += [f"(succ {a} {b})" for a, b in itertools.pairwise(NUMBERS)]
        if self.static_le:
            self.rules[:0] = ["(<= (le ?x ?y) (succ ?x ?y))",
                              "(<= (le ?x ?z) (succ ?x ?y) (le ?y ?z))"]
        return "\n".join(facts + self.rules) + "\n"


def random_game(rng: random.Random) -> str:
    """The KIF text of one random game drawn from ``rng`` (see the module's docstring)."""
    return GameWriter(rng).text()


#: The issue's game (48, item 1): ``(w)`` holds by a rule over a dynamic relation; the
#: network said goal 0 where the reasoner says 100.
ISSUE_GAME = """
(role r)
(init (c 1))
(init (c 0))
(<= (legal r go))
(<= (next (c ?p)) (true (c ?p)))
(<= (next done) (does r go))
(<= terminal (true done))
(<= (v ?p) (true (c ?p)) (distinct ?p 0))
(<= (w) (v ?p))
(<= (goal r 100) (w))
(<= (goal r 0) (not (w)))
"""
