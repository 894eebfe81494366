"""Normalized rules: the form the translator works on.

``normalize_rules`` turns a description into flat clauses whose bodies contain only
positive sentences, negated sentences and ``distinct``; it

- expands ``or``/``and`` into separate clauses (disjunctive normal form), keeping
  the source clause of each;
- orders each body so that every negation and ``distinct`` comes right after the
  positive literals that bind its variables (ground ones come first).

Like ggp-base's prover it is lenient where the meaning is clear: ``(foo)`` is a
zero-arity relation distinct from the proposition ``foo``; an empty ``or`` never
holds; unsafe rules and facts with variables are kept (the checker reports them);
``(not (distinct a b))`` means ``a`` and ``b`` are identical. What has no meaning
(a rule defining ``true``, ``not`` around a disjunction) raises ``TranslationError``.

Pure functions only.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

from gdl2pl.errors import GdlError
from gdl2pl.kif import kif_clause
from gdl2pl.syntax import (
    And,
    Clause,
    Const,
    Description,
    Distinct,
    Fact,
    Func,
    Literal,
    Not,
    Or,
    Pos,
    Sentence,
    Term,
    variables,
)

#: Relations a game may not define: they are the engine's inputs.
INPUT_RELATIONS = frozenset({"true", "does"})

#: The most clauses one source rule may expand into; beyond that the game is rejected.
MAX_EXPANSION = 4096


class TranslationError(GdlError):
    """The description cannot be translated; says which rule and why."""

    def __init__(self, message: str, clause: Clause | None = None) -> None:
        self.clause = clause
        self.pos: Pos | None = clause.pos if clause is not None else None
        where = f"{self.pos}: " if self.pos else ""
        rule = f"\n  in rule: {_shorten(kif_clause(clause))}" if clause is not None else ""
        super().__init__(f"{where}error: {message}{rule}")


def _shorten(text: str, width: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


BodyLiteral = Const | Func | Not | Distinct


@dataclass(frozen=True, slots=True)
class NormalRule:
    """One flat clause: ``head :- body``, with the source clause it came from."""

    head: Sentence
    body: tuple[BodyLiteral, ...]
    source: Clause


def relation_name(s: Sentence) -> str:
    """The relation a sentence belongs to (the proposition name for a ``Const``)."""
    return s.name


def relation_key(s: Sentence) -> tuple[str, int]:
    """(name, arity) of a sentence; a zero-arity relation ``(foo)`` is ``("foo()", 0)``,
    a different relation from the proposition ``foo``, as in ggp-base."""
    if isinstance(s, Func):
        return (s.name, len(s.args)) if s.args else (s.name + "()", 0)
    return (s.name, 0)


def _sentence(s: Sentence | Literal, clause: Clause) -> Sentence:
    if isinstance(s, Const | Func):
        return s
    raise TranslationError(f"expected a sentence, found {type(s).__name__.lower()}", clause)


def _alternatives(lit: Literal, clause: Clause) -> list[list[BodyLiteral]]:
    """The conjunctions one body literal stands for (more than one under ``or``)."""
    if isinstance(lit, Or):  # an empty 'or' has no alternative: the clause never holds
        return [alt for d in lit.disjuncts for alt in _alternatives(d, clause)]
    if isinstance(lit, And):
        return _conjunctions(lit.conjuncts, clause)
    if isinstance(lit, Not):
        inner = lit.body
        if isinstance(inner, Distinct):
            return [[Not(inner, lit.pos)]]
        if isinstance(inner, Not) and isinstance(inner.body, Const | Func):
            return [[Not(Not(inner.body, inner.pos), lit.pos)]]
        if isinstance(inner, Not | Or | And):
            raise TranslationError("'not' must contain a single sentence", clause)
        return [[Not(_sentence(inner, clause), lit.pos)]]
    if isinstance(lit, Distinct):
        return [[lit]]
    return [[_sentence(lit, clause)]]


def _conjunctions(lits: tuple[Literal, ...], clause: Clause) -> list[list[BodyLiteral]]:
    options = [_alternatives(lit, clause) for lit in lits]
    count = 1
    for o in options:
        count *= len(o)
    if count > MAX_EXPANSION:
        raise TranslationError(
            f"'or' expands into {count} clauses (more than {MAX_EXPANSION})", clause
        )
    return [[lit for part in combo for lit in part] for combo in product(*options)]


def order_body(body: list[BodyLiteral]) -> tuple[list[BodyLiteral], set[str]]:
    """Safety ordering: each negation/distinct right after the positive literals that
    bind its variables. Returns the ordered body and the names of variables left
    unbound (non-empty means the clause is unsafe)."""
    positives = [b for b in body if isinstance(b, Const | Func)]
    pending = [b for b in body if not isinstance(b, Const | Func)]
    bound: set[str] = set()
    out: list[BodyLiteral] = []

    def flush() -> None:
        ready = [p for p in pending if {v.name for v in variables(p)} <= bound]
        for p in ready:
            pending.remove(p)
            out.append(p)

    flush()
    for p in positives:
        out.append(p)
        bound.update(v.name for v in variables(p))
        flush()
    unbound = {v.name for p in pending for v in variables(p)} - bound
    out.extend(pending)
    return out, unbound


def normalize_clause(clause: Clause) -> list[NormalRule]:
    """The flat clauses for one source clause, safety-ordered."""
    head = _sentence(clause.head, clause)
    if relation_name(head) in INPUT_RELATIONS:
        raise TranslationError(f"a game may not define '{relation_name(head)}'", clause)
    if isinstance(clause, Fact):
        return [NormalRule(head, (), clause)]
    return [
        NormalRule(head, tuple(order_body(conj)[0]), clause)
        for conj in _conjunctions(clause.body, clause)
    ]


def normalize_rules(d: Description) -> list[NormalRule]:
    """All flat clauses of a description, in source order."""
    return [r for c in d.clauses for r in normalize_clause(c)]


def term_args(s: Sentence) -> tuple[Term, ...]:
    """The arguments of a sentence (none for a proposition)."""
    return s.args if isinstance(s, Func) else ()


__all__ = [
    "INPUT_RELATIONS",
    "BodyLiteral",
    "NormalRule",
    "TranslationError",
    "normalize_clause",
    "normalize_rules",
    "order_body",
    "relation_key",
    "relation_name",
    "term_args",
]
