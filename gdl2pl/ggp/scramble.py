"""Scrambling a game: renaming its symbols so that a player cannot recognise it by name.

A ``Scrambler`` renames every symbol that is not a GDL relation keyword (``role``, ``true``,
``legal``, ...) or an integer (goal values and counters keep their meaning), and every
variable, with one random name per symbol; GDL symbols are case-insensitive, so ``Cell`` and
``cell`` get the same name. The names given are always plain KIF symbols (a lowercase letter,
then letters and digits), so a game whose symbols KIF cannot write bare (infix's quoted
``'not-filled'``, ``'x player'``, ``'cell(1)'``) scrambles into rules that KIF reads back.
The connectives ``not``, ``distinct``, ``or`` and ``and`` are syntax, not symbols: where one
of these names is used as an ordinary symbol (infix's quoted ``'distinct'(a, b, c)``) it is
renamed like any other, as KIF would read it as the connective.

The renaming is built while scrambling and then works both ways: moves sent to the players
are scrambled, their replies unscrambled. Unscrambling a name the
scrambler never produced raises ``KeyError``: it cannot be a move of the game.
"""

from __future__ import annotations

import random
import re
import string

from gdl2pl.syntax import Clause
from gdl2pl.syntax import Const
from gdl2pl.syntax import Description
from gdl2pl.syntax import Func
from gdl2pl.syntax import Literal
from gdl2pl.syntax import Term
from gdl2pl.visitor import Renamer
from gdl2pl.vocabulary import CONNECTIVES
from gdl2pl.vocabulary import KEYWORDS

_INTEGER = re.compile(r"-?\d+")
_LETTERS = string.ascii_lowercase
_CHARS = string.ascii_lowercase + string.digits

#: Keywords a scrambler keeps: GDL's relations (``role``, ``legal``, ``true``, ...).
RELATION_KEYWORDS = KEYWORDS - CONNECTIVES


def kept(name: str) -> bool:
    """True for the symbols a scrambler leaves alone: GDL's relation keywords and integers."""
    return name.casefold() in RELATION_KEYWORDS or _INTEGER.fullmatch(name) is not None


class Scrambler:
    """A consistent random renaming of symbols and variables (see the module doc)."""

    def __init__(self, rng: random.Random | None = None, length: int = 6) -> None:
        self._rng = rng or random.Random()
        self._length = length
        self._forward: dict[str, str] = {}  # casefolded original -> scrambled
        self._backward: dict[str, str] = {}  # scrambled -> original (first spelling seen)
        self._vars: dict[str, str] = {}
        self._used: set[str] = set()

    def _fresh(self) -> str:
        while True:
            name = self._rng.choice(_LETTERS) + "".join(
                self._rng.choice(_CHARS) for _ in range(self._length - 1)
            )
            if name not in self._used and name not in KEYWORDS:
                self._used.add(name)
                return name

    def symbol(self, name: str) -> str:
        """The scrambled name of a symbol (created on first use)."""
        if kept(name):
            return name
        key = name.casefold()
        new = self._forward.get(key)
        if new is None:
            new = self._forward[key] = self._fresh()
            self._backward[new] = name
        return new

    def unsymbol(self, name: str) -> str:
        """The original name of a scrambled symbol; ``KeyError`` if it is not one."""
        if kept(name):
            return name
        return self._backward[name.casefold()]

    def _variable(self, name: str) -> str:
        key = name.casefold()
        new = self._vars.get(key)
        if new is None:
            new = self._vars[key] = self._fresh()
        return new

    def _renamer(self) -> Renamer:
        renamer = Renamer(self.symbol, self._variable)
        renamer.keep_positions = False  # nothing of the original file goes out
        return renamer

    def term(self, t: Term) -> Term:
        """``t`` scrambled."""
        return self._renamer()(t)  # type: ignore[no-any-return]

    def unterm(self, t: Term) -> Term:
        """``t`` unscrambled; ``KeyError`` if it holds a name the scrambler never gave."""
        if isinstance(t, Func):
            return Func(self.unsymbol(t.name), tuple(self.unterm(a) for a in t.args))
        if isinstance(t, Const):
            return Const(self.unsymbol(t.name))
        raise KeyError(f"?{t.name}")

    def literal(self, lit: Literal) -> Literal:
        return self._renamer()(lit)  # type: ignore[no-any-return]

    def clause(self, c: Clause) -> Clause:
        return self._renamer()(c)  # type: ignore[no-any-return]

    def description(self, d: Description) -> Description:
        """Every clause of ``d`` scrambled."""
        return Description(tuple(self.clause(c) for c in d.clauses))
