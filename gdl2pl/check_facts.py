"""What the checker's checks read of a game, gathered in one pass over its clauses.

``game_facts`` walks each clause once and keeps, in reading order, what the checks of
``gdl2pl.check`` ask about: its atomic sentences, its terms, its body literals and what
follows when each body sentence can never hold; over the whole game, the dependency graph
and the declared roles. The checks are then small functions over these facts, none of
which walks the syntax tree again (as an optimizer's passes share one scope analysis).

Names are compared by ``str.casefold`` (GDL symbols are case-insensitive). The graph tells
``(p)``, a relation written with empty parentheses, from the proposition ``p``, as the
reasoner does (``gdl2pl.depgraph.sentence_node``): they are two relations.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal as Choice

from gdl2pl.depgraph import DependencyGraph
from gdl2pl.depgraph import dependency_graph
from gdl2pl.syntax import And
from gdl2pl.syntax import Clause
from gdl2pl.syntax import Const
from gdl2pl.syntax import Description
from gdl2pl.syntax import Distinct
from gdl2pl.syntax import Func
from gdl2pl.syntax import Literal
from gdl2pl.syntax import Not
from gdl2pl.syntax import Or
from gdl2pl.syntax import Rule
from gdl2pl.syntax import Sentence
from gdl2pl.syntax import Term
from gdl2pl.syntax import walk

#: What follows if a body sentence can never hold: ``"rule"`` (a conjunct: the rule never
#: fires), ``"disjunct"`` (under ``or``: that branch never holds) or ``"negation"`` (under
#: ``not``: the negation always holds).
Effect = Choice["rule", "disjunct", "negation"]


@dataclass(frozen=True, slots=True)
class ClauseFacts:
    """One clause as the checks read it; every sequence is in reading order."""

    clause: Clause
    #: The head, then every atomic sentence of the body (nested ones included).
    sentences: tuple[Sentence, ...]
    #: Every constant and compound term (not variables), at any depth: first those inside
    #: the sentences, in the order of ``sentences``, then those inside each ``distinct``.
    terms: tuple[Const | Func, ...]
    #: Every literal of the body, nested ones included, outermost first (empty for a fact).
    literals: tuple[Literal, ...]
    #: Every atomic sentence of the body with what follows if it can never hold.
    uses: tuple[tuple[Sentence, Effect], ...]
    #: The ids of the terms inside the percept (second argument) of a ``sees/2`` head.
    percept: frozenset[int]

    @property
    def is_sees_rule(self) -> bool:
        """The clause is a rule for GDL-II's ``sees/2``."""
        c = self.clause
        return isinstance(c, Rule) and c.head.name.casefold() == "sees" and arity(c.head) == 2


@dataclass(frozen=True, slots=True)
class GameFacts:
    """A whole description as the checks read it."""

    description: Description
    clauses: tuple[ClauseFacts, ...]
    #: The dependency graph of relation names, ``(p)`` apart from ``p`` (``graph.defined``:
    #: the relations that head some clause).
    graph: DependencyGraph
    #: The declared roles (``(role r)`` facts and rules with a constant ``r``), casefolded.
    roles: frozenset[str]


def arity(s: Sentence) -> int:
    """The number of arguments of a sentence (0 for a proposition)."""
    return len(s.args) if isinstance(s, Func) else 0


def game_facts(d: Description) -> GameFacts:
    """The facts of ``d``: each clause walked once, and the dependency graph."""
    clauses = tuple(clause_facts(c) for c in d.clauses)
    roles = frozenset(
        head.args[0].name.casefold()
        for c in d.clauses
        if isinstance(head := c.head, Func)
        and head.name.casefold() == "role"
        and len(head.args) == 1
        and isinstance(head.args[0], Const)
    )
    return GameFacts(d, clauses, dependency_graph(d, zero_arity_apart=True), roles)


def clause_facts(c: Clause) -> ClauseFacts:
    """The facts of one clause, in one walk of its body (an explicit stack: no nesting
    depth exhausts Python's)."""
    sentences: list[Sentence] = [c.head]
    literals: list[Literal] = []
    uses: list[tuple[Sentence, Effect]] = []
    distincts: list[Distinct] = []
    if isinstance(c, Rule):
        stack: list[tuple[Literal, Effect]] = [(lit, "rule") for lit in reversed(c.body)]
        while stack:
            lit, effect = stack.pop()
            literals.append(lit)
            if isinstance(lit, (Const, Func)):
                sentences.append(lit)
                uses.append((lit, effect))
            elif isinstance(lit, Distinct):
                distincts.append(lit)
            elif isinstance(lit, Not):
                stack.append((lit.body, "negation"))
            elif isinstance(lit, And):
                stack.extend((x, effect) for x in reversed(lit.conjuncts))
            elif isinstance(lit, Or):
                inner: Effect = "disjunct" if effect == "rule" else effect
                stack.extend((x, inner) for x in reversed(lit.disjuncts))
    roots: list[Term] = [a for s in sentences if isinstance(s, Func) for a in s.args]
    roots += [t for lit in distincts for t in (lit.left, lit.right)]
    terms = tuple(n for r in roots for n in walk(r) if isinstance(n, (Const, Func)))
    head = c.head
    percept: frozenset[int] = frozenset()
    if isinstance(head, Func) and head.name.casefold() == "sees" and len(head.args) == 2:
        percept = frozenset(id(t) for t in walk(head.args[1]))
    return ClauseFacts(c, tuple(sentences), terms, tuple(literals), tuple(uses), percept)
