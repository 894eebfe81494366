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

from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field


@dataclass(frozen=True, slots=True)
class Pos:
    """A place in a source text: 1-based line and column, and the file name if known."""

    line: int
    column: int
    file: str | None = None

    def __str__(self) -> str:
        where = f"{self.line}:{self.column}"
        return f"{self.file}:{where}" if self.file else where


class _KifTerm:
    """What every term and literal shares: ``str()`` is its KIF text."""

    __slots__ = ()

    def __str__(self) -> str:
        return kif_term(self)  # type: ignore[arg-type]


class _KifClause:
    """What every clause shares: ``str()`` is its KIF text."""

    __slots__ = ()

    def __str__(self) -> str:
        return kif_clause(self)  # type: ignore[arg-type]


# Alike on purpose: one frozen dataclass per kind of node, each its own fields then a
# position that takes no part in equality (``duplicates`` pairs them by shape).


@dataclass(frozen=True, slots=True)
class Const(_KifTerm):
    """An object constant, a proposition, or a numeral (kept as text: ``01`` is not ``1``)."""

    name: str
    pos: Pos | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Var(_KifTerm):
    """A variable; ``name`` is written without KIF's leading ``?``."""

    name: str
    pos: Pos | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Func(_KifTerm):
    """A compound term or relational sentence ``(name arg...)``; ``args`` may be empty."""

    name: str
    args: tuple[Term, ...]
    pos: Pos | None = field(default=None, compare=False, repr=False)


Term = Const | Var | Func
Sentence = Const | Func


@dataclass(frozen=True, slots=True)
class Not(_KifTerm):
    """Negation as failure of one literal."""

    body: Literal
    pos: Pos | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Distinct(_KifTerm):
    """``(distinct a b)``: the two terms are not syntactically identical."""

    left: Term
    right: Term
    pos: Pos | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Or(_KifTerm):
    """A disjunction of literals (may be empty in malformed input; the checker reports it)."""

    disjuncts: tuple[Literal, ...]
    pos: Pos | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class And(_KifTerm):
    """An explicit conjunction inside a body (KIF ``and``, infix parentheses)."""

    conjuncts: tuple[Literal, ...]
    pos: Pos | None = field(default=None, compare=False, repr=False)


Literal = Const | Func | Not | Distinct | Or | And


@dataclass(frozen=True, slots=True)
class Fact(_KifClause):
    """A sentence stated on its own, e.g. ``(role white)``."""

    head: Sentence
    pos: Pos | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Rule(_KifClause):
    """``(<= head body...)``; ``body`` may be empty (``(<= (p a))``, which checkers flag)."""

    head: Sentence
    body: tuple[Literal, ...]
    pos: Pos | None = field(default=None, compare=False, repr=False)


Clause = Fact | Rule


@dataclass(frozen=True, slots=True)
class Description:
    """A whole game description: its clauses in source order, the text they were read
    from and that text's syntax (``"kif"`` or ``"infix"``; None for one built in code),
    in which answers about the description are written by default."""

    clauses: tuple[Clause, ...]
    source: str | None = field(default=None, compare=False)
    syntax: str | None = field(default=None, compare=False)


# -- traversal: the one place that knows which nodes a node contains ----------------------

Node = Term | Literal | Clause


def children(node: Node) -> tuple[Node, ...]:
    """The direct sub-nodes of ``node`` in reading order (a clause: head, then body)."""
    cls = node.__class__
    if cls is Func:
        return node.args  # type: ignore[union-attr]
    if cls is Not:
        return (node.body,)  # type: ignore[union-attr, return-value]
    if cls is Distinct:
        return (node.left, node.right)  # type: ignore[union-attr]
    if cls is Or:
        return node.disjuncts  # type: ignore[union-attr]
    if cls is And:
        return node.conjuncts  # type: ignore[union-attr]
    if cls is Rule:
        return (node.head, *node.body)  # type: ignore[union-attr, misc]
    if cls is Fact:
        return (node.head,)  # type: ignore[union-attr]
    return ()


def walk(node: Node) -> Iterator[Node]:
    """``node`` and every node inside it, in reading order (pre-order, left to right)."""
    stack: list[Node] = [node]
    while stack:
        n = stack.pop()
        yield n
        sub = children(n)
        if sub:
            stack.extend(reversed(sub))


def variables(node: Node) -> list[Var]:
    """The variables of a node, in order of first occurrence, without repeats."""
    seen: dict[str, Var] = {}
    for n in walk(node):
        if n.__class__ is Var:
            seen.setdefault(n.name, n)  # type: ignore[union-attr]
    return list(seen.values())


def is_ground(term: Node) -> bool:
    """True if the term (or literal) contains no variable."""
    return not any(n.__class__ is Var for n in walk(term))


# -- KIF text: ``str()`` of every node ------------------------------------------------------


def kif_term(t: Term | Literal) -> str:
    """KIF text of a term or literal, single-spaced: ``(cell 1 1 b)``."""
    if isinstance(t, Const):
        return t.name
    if isinstance(t, Var):
        return "?" + t.name
    if isinstance(t, Func):
        return "(" + " ".join([t.name, *map(kif_term, t.args)]) + ")"
    if isinstance(t, Not):
        return f"(not {kif_term(t.body)})"
    if isinstance(t, Distinct):
        return f"(distinct {kif_term(t.left)} {kif_term(t.right)})"
    if isinstance(t, Or):
        return "(" + " ".join(["or", *map(kif_term, t.disjuncts)]) + ")"
    if isinstance(t, And):
        return "(" + " ".join(["and", *map(kif_term, t.conjuncts)]) + ")"
    raise TypeError(f"not a GDL term or literal: {t!r}")


def kif_clause(c: Clause) -> str:
    """KIF text of one clause; rules put each body literal on its own indented line."""
    if isinstance(c, Fact):
        return kif_term(c.head)
    lines = ["(<= " + kif_term(c.head)] + ["    " + kif_term(b) for b in c.body]
    return "\n".join(lines) + ")"


def clause_line(c: Clause, width: int | None = None) -> str:
    """One-line KIF text of a clause, cut to ``width`` characters with ``...`` if given:
    the form every message and comment quoting a rule uses."""
    if isinstance(c, Fact):
        text = kif_term(c.head)
    else:
        text = "(<= " + " ".join([kif_term(c.head), *map(kif_term, c.body)]) + ")"
    if width is None or len(text) <= width:
        return text
    return text[: width - 3] + "..."
