"""The abstract syntax of GDL, shared by both concrete syntaxes (KIF and infix).

Every node is an immutable, hashable value. Source positions (`pos`) are carried for
error messages but take no part in equality, so ``parse(print(x)) == x`` compares
structure only.

Terms:     ``Const`` (object constant or proposition name), ``Var``, ``Func`` (compound).
Sentences: a ``Const`` (proposition, e.g. ``terminal``) or a ``Func`` (relation, e.g.
           ``(cell 1 1 b)``); relation names are the ``name`` of the ``Func``.
Literals:  a sentence, ``Not``, ``Distinct``, ``Or``, ``And``.
Clauses:   ``Fact`` (a bare sentence) and ``Rule`` (``(<= head body...)``).

``str()`` of any node is its KIF text. Names are kept exactly as written (``CELL``
stays ``CELL``); see ``gdl2pl.normalize`` for GDL's case-insensitive symbol identity.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Pos:
    """A place in a source text: 1-based line and column, and the file name if known."""

    line: int
    column: int
    file: str | None = None

    def __str__(self) -> str:
        where = f"{self.line}:{self.column}"
        return f"{self.file}:{where}" if self.file else where


@dataclass(frozen=True, slots=True)
class Const:
    """An object constant, a proposition, or a numeral (kept as text: ``01`` is not ``1``)."""

    name: str
    pos: Pos | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return _kif(self)


@dataclass(frozen=True, slots=True)
class Var:
    """A variable; ``name`` is written without KIF's leading ``?``."""

    name: str
    pos: Pos | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return _kif(self)


@dataclass(frozen=True, slots=True)
class Func:
    """A compound term or relational sentence ``(name arg...)``; ``args`` may be empty."""

    name: str
    args: tuple[Term, ...]
    pos: Pos | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return _kif(self)


Term = Const | Var | Func
Sentence = Const | Func


@dataclass(frozen=True, slots=True)
class Not:
    """Negation as failure of one literal."""

    body: Literal
    pos: Pos | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return _kif(self)


@dataclass(frozen=True, slots=True)
class Distinct:
    """``(distinct a b)``: the two terms are not syntactically identical."""

    left: Term
    right: Term
    pos: Pos | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return _kif(self)


@dataclass(frozen=True, slots=True)
class Or:
    """A disjunction of literals (may be empty in malformed input; the checker reports it)."""

    disjuncts: tuple[Literal, ...]
    pos: Pos | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return _kif(self)


@dataclass(frozen=True, slots=True)
class And:
    """An explicit conjunction inside a body (KIF ``and``, infix parentheses)."""

    conjuncts: tuple[Literal, ...]
    pos: Pos | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return _kif(self)


Literal = Const | Func | Not | Distinct | Or | And


@dataclass(frozen=True, slots=True)
class Fact:
    """A sentence stated on its own, e.g. ``(role white)``."""

    head: Sentence
    pos: Pos | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return _kif_clause(self)


@dataclass(frozen=True, slots=True)
class Rule:
    """``(<= head body...)``; ``body`` may be empty (``(<= (p a))``, which checkers flag)."""

    head: Sentence
    body: tuple[Literal, ...]
    pos: Pos | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return _kif_clause(self)


Clause = Fact | Rule


@dataclass(frozen=True, slots=True)
class Description:
    """A whole game description: its clauses in source order."""

    clauses: tuple[Clause, ...]
    source: str | None = field(default=None, compare=False)


def _kif(node: object) -> str:
    from gdl2pl.kif import kif_term

    return kif_term(node)  # type: ignore[arg-type]


def _kif_clause(node: object) -> str:
    from gdl2pl.kif import kif_clause

    return kif_clause(node)  # type: ignore[arg-type]


def variables(node: Term | Literal) -> list[Var]:
    """The variables of a term or literal, in order of first occurrence, without repeats."""
    seen: dict[str, Var] = {}

    def walk(n: object) -> None:
        if isinstance(n, Var):
            seen.setdefault(n.name, n)
        elif isinstance(n, Func):
            for a in n.args:
                walk(a)
        elif isinstance(n, Not):
            walk(n.body)
        elif isinstance(n, Distinct):
            walk(n.left)
            walk(n.right)
        elif isinstance(n, Or):
            for d in n.disjuncts:
                walk(d)
        elif isinstance(n, And):
            for c in n.conjuncts:
                walk(c)

    walk(node)
    return list(seen.values())


def is_ground(term: Term) -> bool:
    """True if the term contains no variable."""
    if isinstance(term, Var):
        return False
    if isinstance(term, Func):
        return all(is_ground(a) for a in term.args)
    return True
