"""gdl2pl: a GDL reasoner. GDL is parsed and checked in Python, translated to tabled
SWI-Prolog, and played through ``gdl2pl.bridge.StateMachine``.

This package (the front end and the translator) is pure Python and never imports SWI.
"""

from gdl2pl.check import check_description
from gdl2pl.errors import GdlError
from gdl2pl.errors import GdlSyntaxError
from gdl2pl.infix import parse_infix
from gdl2pl.infix import print_infix
from gdl2pl.kif import parse_kif
from gdl2pl.kif import print_kif
from gdl2pl.load import parse_game
from gdl2pl.load import read_game
from gdl2pl.normalize import normalize_case
from gdl2pl.syntax import And
from gdl2pl.syntax import Clause
from gdl2pl.syntax import Const
from gdl2pl.syntax import Description
from gdl2pl.syntax import Distinct
from gdl2pl.syntax import Fact
from gdl2pl.syntax import Func
from gdl2pl.syntax import Literal
from gdl2pl.syntax import Not
from gdl2pl.syntax import Or
from gdl2pl.syntax import Pos
from gdl2pl.syntax import Rule
from gdl2pl.syntax import Term
from gdl2pl.syntax import Var
from gdl2pl.translate import translate

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

from gdl2pl import _top_level_rooms

_top_level_rooms.install(__name__, __file__)
