"""GDL's case-insensitive symbols: one spelling per symbol.

"Prefix GDL is case independent": ``CELL``, ``Cell`` and ``cell`` are one symbol. The parsers
keep names as written; ``normalize_case`` rewrites a description so each symbol has a single
spelling, and ``SymbolTable`` maps names coming from outside (a move ``(MARK 1 1)`` sent by a
game manager) onto the spellings the game uses.

Rules: two names are the same symbol when their ``str.casefold()`` keys are equal. A symbol
(constant, function or relation name: one namespace) is spelled as at its first occurrence in
the file, reading clauses in order, each head before its body, left to right. GDL's keywords
(``KEYWORDS``) are always spelled in lowercase. Variables are matched the same way, but each
clause has its own variables, so each is spelled as at its first occurrence in its clause.

All functions are pure: they return new values and never change their arguments.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

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
    Rule,
    Term,
    Var,
)

#: Names reserved by GDL, always spelled in lowercase.
KEYWORDS = frozenset(
    {
        "role",
        "base",
        "input",
        "init",
        "true",
        "does",
        "next",
        "legal",
        "goal",
        "terminal",
        "distinct",
        "not",
        "or",
        "and",
    }
)


def fold(name: str) -> str:
    """The key under which spellings of one symbol are the same: ``fold("CELL") == "cell"``."""
    return name.casefold()


@dataclass(frozen=True)
class SymbolTable:
    """Maps each symbol's key (``fold(name)``) to the one spelling a game uses for it."""

    spellings: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "spellings", MappingProxyType(dict(self.spellings)))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and fold(name) in self.spellings

    def __len__(self) -> int:
        return len(self.spellings)

    def spelling(self, name: str) -> str:
        """The game's spelling of ``name``; a keyword in lowercase; else ``name`` unchanged."""
        key = fold(name)
        if key in KEYWORDS:
            return key
        return self.spellings.get(key, name)

    def term(self, t: Term) -> Term:
        """``t`` with every constant and function name in the game's spelling (variables are
        left alone). For terms from outside, e.g. a manager's move ``(MARK 1 1)``."""
        return _respell_term(t, self.spelling, lambda n: n)


def _names(node: Term | Literal) -> Iterator[str]:
    """Symbol names in ``node``, in reading order, with repeats."""
    if isinstance(node, Const):
        yield node.name
    elif isinstance(node, Func):
        yield node.name
        for a in node.args:
            yield from _names(a)
    elif isinstance(node, Not):
        yield from _names(node.body)
    elif isinstance(node, Distinct):
        yield from _names(node.left)
        yield from _names(node.right)
    elif isinstance(node, (Or, And)):
        for item in node.disjuncts if isinstance(node, Or) else node.conjuncts:
            yield from _names(item)


def _var_names(node: Term | Literal) -> Iterator[str]:
    if isinstance(node, Var):
        yield node.name
    elif isinstance(node, Func):
        for a in node.args:
            yield from _var_names(a)
    elif isinstance(node, Not):
        yield from _var_names(node.body)
    elif isinstance(node, Distinct):
        yield from _var_names(node.left)
        yield from _var_names(node.right)
    elif isinstance(node, (Or, And)):
        for item in node.disjuncts if isinstance(node, Or) else node.conjuncts:
            yield from _var_names(item)


def _parts(c: Clause) -> tuple[Literal, ...]:
    return (c.head, *c.body) if isinstance(c, Rule) else (c.head,)


def symbol_table(d: Description) -> SymbolTable:
    """The spelling of every symbol of ``d``: keywords in lowercase, others as first written."""
    spellings: dict[str, str] = {}
    for c in d.clauses:
        for part in _parts(c):
            for name in _names(part):
                key = fold(name)
                if key not in spellings:
                    spellings[key] = key if key in KEYWORDS else name
    return SymbolTable(spellings)


Respell = Callable[[str], str]


def _respell_sentence(t: Const | Func, sym: Respell, var: Respell) -> Const | Func:
    if isinstance(t, Const):
        return Const(sym(t.name), t.pos)
    return Func(sym(t.name), tuple(_respell_term(a, sym, var) for a in t.args), t.pos)


def _respell_term(t: Term, sym: Respell, var: Respell) -> Term:
    if isinstance(t, Var):
        return Var(var(t.name), t.pos)
    if isinstance(t, (Const, Func)):
        return _respell_sentence(t, sym, var)
    raise TypeError(f"not a GDL term: {t!r}")


def _respell(lit: Literal, sym: Respell, var: Respell) -> Literal:
    if isinstance(lit, (Const, Func)):
        return _respell_sentence(lit, sym, var)
    if isinstance(lit, Not):
        return Not(_respell(lit.body, sym, var), lit.pos)
    if isinstance(lit, Distinct):
        left, right = _respell_term(lit.left, sym, var), _respell_term(lit.right, sym, var)
        return Distinct(left, right, lit.pos)
    if isinstance(lit, Or):
        return Or(tuple(_respell(x, sym, var) for x in lit.disjuncts), lit.pos)
    if isinstance(lit, And):
        return And(tuple(_respell(x, sym, var) for x in lit.conjuncts), lit.pos)
    raise TypeError(f"not a GDL literal: {lit!r}")


def _clause(c: Clause, sym: Respell) -> Clause:
    first: dict[str, str] = {}
    for part in _parts(c):
        for name in _var_names(part):
            first.setdefault(fold(name), name)

    def var(name: str) -> str:
        return first[fold(name)]

    head = _respell_sentence(c.head, sym, var)
    if isinstance(c, Fact):
        return Fact(head, c.pos)
    return Rule(head, tuple(_respell(b, sym, var) for b in c.body), c.pos)


def normalize_case(d: Description) -> Description:
    """``d`` with one spelling per symbol and per variable of a clause (see module doc)."""
    table = symbol_table(d)
    return Description(tuple(_clause(c, table.spelling) for c in d.clauses), d.source)


def normalize_keywords(d: Description) -> Description:
    """``d`` with only GDL's keywords folded to lowercase: the case-sensitive reading of
    symbols that ggp-base uses by default (``GdlPool.caseSensitive``)."""

    def sym(name: str) -> str:
        key = fold(name)
        return key if key in KEYWORDS else name

    def clause(c: Clause) -> Clause:
        head = _respell_sentence(c.head, sym, lambda n: n)
        if isinstance(c, Fact):
            return Fact(head, c.pos)
        return Rule(head, tuple(_respell(b, sym, lambda n: n) for b in c.body), c.pos)

    return Description(tuple(clause(c) for c in d.clauses), d.source)


def unambiguous_table(d: Description) -> SymbolTable:
    """For the case-sensitive reading: the spelling of each symbol written one way only
    (symbols written several ways are left out, so names from outside stay as given)."""
    seen: dict[str, set[str]] = {}
    for c in d.clauses:
        for part in _parts(c):
            for name in _names(part):
                seen.setdefault(fold(name), set()).add(name)
    return SymbolTable({k: next(iter(v)) for k, v in seen.items() if len(v) == 1})
