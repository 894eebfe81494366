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

from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from types import MappingProxyType

from gdl2pl.syntax import Clause
from gdl2pl.syntax import Description
from gdl2pl.syntax import Term
from gdl2pl.visitor import Renamer
from gdl2pl.visitor import symbol_names
from gdl2pl.visitor import variables
from gdl2pl.vocabulary import KEYWORDS

__all__ = [
    "KEYWORDS",
    "SymbolTable",
    "fold",
    "normalize_case",
    "normalize_keywords",
    "symbol_table",
    "unambiguous_table",
]


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
        return Renamer(self.spelling)(t)  # type: ignore[no-any-return]


def _names(c: Clause) -> list[str]:
    """Symbol names in a clause, in reading order (head before body), with repeats."""
    return symbol_names(c)


def symbol_table(d: Description) -> SymbolTable:
    """The spelling of every symbol of ``d``: keywords in lowercase, others as first written."""
    spellings: dict[str, str] = {}
    for c in d.clauses:
        for name in _names(c):
            key = fold(name)
            if key not in spellings:
                spellings[key] = key if key in KEYWORDS else name
    return SymbolTable(spellings)


def _clause(c: Clause, sym: Callable[[str], str]) -> Clause:
    """``c`` with symbols respelled by ``sym`` and each variable as first written in ``c``."""
    first: dict[str, str] = {}
    for v in variables(c):
        first.setdefault(fold(v.name), v.name)
    return Renamer(sym, lambda name: first[fold(name)])(c)  # type: ignore[no-any-return]


def normalize_case(d: Description) -> Description:
    """``d`` with one spelling per symbol and per variable of a clause (see module doc)."""
    table = symbol_table(d)
    return Description(
        tuple(_clause(c, table.spelling) for c in d.clauses), d.source, d.syntax
    )


def normalize_keywords(d: Description) -> Description:
    """``d`` with only GDL's keywords folded to lowercase: the case-sensitive reading of
    symbols that ggp-base uses by default (``GdlPool.caseSensitive``)."""

    def sym(name: str) -> str:
        key = fold(name)
        return key if key in KEYWORDS else name

    return Renamer(sym).description(d)


def unambiguous_table(d: Description) -> SymbolTable:
    """For the case-sensitive reading: the spelling of each symbol written one way only
    (symbols written several ways are left out, so names from outside stay as given)."""
    seen: dict[str, set[str]] = {}
    for c in d.clauses:
        for name in _names(c):
            seen.setdefault(fold(name), set()).add(name)
    return SymbolTable({k: next(iter(v)) for k, v in seen.items() if len(v) == 1})
