"""gdl2pl: a GDL reasoner. GDL is parsed and checked in Python, translated to tabled
SWI-Prolog, and played through ``gdl2pl.bridge.StateMachine``.

This package (the front end and the translator) is pure Python and never imports SWI.
"""

from gdl2pl.errors import GdlError, GdlSyntaxError
from gdl2pl.kif import parse_kif, print_kif
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
    Rule,
    Term,
    Var,
)

__all__ = [
    "And",
    "Clause",
    "Const",
    "Description",
    "Distinct",
    "Fact",
    "Func",
    "GdlError",
    "GdlSyntaxError",
    "Literal",
    "Not",
    "Or",
    "Pos",
    "Rule",
    "Term",
    "Var",
    "parse_kif",
    "print_kif",
]
