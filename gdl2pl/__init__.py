"""gdl2pl: a GDL reasoner. GDL is parsed and checked in Python, translated to tabled
SWI-Prolog, and played through ``gdl2pl.bridge.StateMachine``.

This package (the front end and the translator) is pure Python and never imports SWI.
"""

from gdl2pl.errors import GdlError, GdlSyntaxError
from gdl2pl.check import check_description
from gdl2pl.infix import parse_infix, print_infix
from gdl2pl.kif import parse_kif, print_kif
from gdl2pl.load import parse_game, read_game
from gdl2pl.normalize import normalize_case
from gdl2pl.translate import translate
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
    "check_description",
    "normalize_case",
    "parse_game",
    "parse_infix",
    "parse_kif",
    "print_infix",
    "print_kif",
    "read_game",
    "translate",
]
