"""Prefix GDL (KIF): reading and printing.

``parse_kif`` reads what GGP servers send: ``(<= head body...)`` rules, facts, ``not``,
``or``, ``distinct``, ``and``, ``?variables``, ``;`` comments, any whitespace (CR LF
included), keywords in any case, and descriptions wrapped in one extra pair of
parentheses. ``print_kif`` writes a description back so that
``parse_kif(print_kif(d)) == d``.

Tokenizing uses one regular expression rather than a parser combinator: KIF is plain
s-expressions, and the regex reader is about 30 times faster on large games (chess),
which keeps translate+load well under a second.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from sys import intern

from gdl2pl.errors import GdlSyntaxError
from gdl2pl.normalize import symbol_table
from gdl2pl.source import MAX_NESTING
from gdl2pl.source import check_characters
from gdl2pl.source import nesting_error
from gdl2pl.source import position
from gdl2pl.source import without_cycle_collection
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
from gdl2pl.syntax import Sentence
from gdl2pl.syntax import Term
from gdl2pl.syntax import Var
from gdl2pl.syntax import kif_clause
from gdl2pl.syntax import kif_term

_TOKEN = re.compile(r"(\s+)|;[^\n\r]*|(\()|(\))|([^\s();]+)")


class _Atom:
    __slots__ = ("pos", "text")

    def __init__(self, text: str, pos: Pos) -> None:
        self.text = text
        self.pos = pos


class _List:
    __slots__ = ("items", "pos")

    def __init__(self, items: list[_Atom | _List], pos: Pos) -> None:
        self.items = items
        self.pos = pos


_SExpr = _Atom | _List


def _wraps(x: _SExpr) -> bool:
    """Whether ``x`` could be a whole description in one pair of parentheses."""
    return isinstance(x, _List) and bool(x.items) and all(isinstance(i, _List) for i in x.items)


class _Reader:
    """Turns KIF text into s-expressions with positions, then into the AST.

    Lines end at LF, CRLF or a lone CR (old Mac files), for comments and positions
    alike. Positions are counted as the tokens go by, so reading is linear."""

    def __init__(self, text: str, file: str | None) -> None:
        self.text = text
        self.file = file

    def pos(self, offset: int) -> Pos:
        return position(self.text, offset, self.file)

    def error(self, message: str, pos: Pos) -> GdlSyntaxError:
        return GdlSyntaxError(message, pos, self.text)

    def sexprs(self) -> list[_SExpr]:
        """Every top-level s-expression of the text."""
        return list(self.top_level())

    def top_level(self) -> Iterator[_SExpr]:
        """The top-level s-expressions, each as soon as it is complete, so that a large
        text never has all of them in memory at once. Symbols are interned: a game
        repeats its few symbols millions of times."""
        check_characters(self.text, self.file)
        text, file = self.text, self.file
        stack: list[tuple[Pos, list[_SExpr]]] = []
        top: list[_SExpr] = []
        current = top
        line, line_start = 1, 0
        for m in _TOKEN.finditer(text):
            kind = m.lastindex
            start = m.start()
            if kind == 1:  # white space: count the line breaks in it
                ws = m.group(1)
                if "\n" in ws or "\r" in ws:
                    line += ws.count("\n") + ws.count("\r") - ws.count("\r\n")
                    line_start = start + max(ws.rfind("\n"), ws.rfind("\r")) + 1
            elif kind == 2:
                if len(stack) >= MAX_NESTING:
                    raise nesting_error(text, start, file)
                stack.append((Pos(line, start - line_start + 1, file), current))
                current = []
            elif kind == 3:
                here = Pos(line, start - line_start + 1, file)
                if not stack:
                    raise self.error("unbalanced ')': no '(' is open here", here)
                opened, outer = stack.pop()
                outer.append(_List(current, opened))
                current = outer
                if not stack:
                    yield top.pop()
            elif kind == 4:
                atom = _Atom(intern(m.group(4)), Pos(line, start - line_start + 1, file))
                if stack:
                    current.append(atom)
                else:
                    yield atom
        if stack:
            opened, _ = stack[-1]
            raise self.error(
                f"unbalanced '(': {len(stack)} parenthesis(es) still open at end of input; "
                "the innermost opens here",
                opened,
            )

    # -- s-expressions to AST -------------------------------------------------------

    def description(self) -> Description:
        clauses: list[Clause] = []
        first: _SExpr | None = None  # held back: it may wrap the whole description
        for count, item in enumerate(self.top_level()):
            if count == 0 and _wraps(item):
                first = item
                continue
            if first is not None:
                clauses.append(self.clause(first))
                first = None
            clauses.append(self.clause(item))
        if first is not None:  # the only item: the description in one pair of parens
            assert isinstance(first, _List)
            clauses = [self.clause(i) for i in first.items]
        return Description(tuple(clauses), self.text, "kif")

    def clause(self, x: _SExpr) -> Clause:
        if (
            isinstance(x, _List)
            and x.items
            and isinstance(x.items[0], _Atom)
            and x.items[0].text == "<="
        ):
            if len(x.items) < 2:
                raise self.error("rule '(<= ...)' has no head", x.pos)
            head = self.sentence(x.items[1])
            return Rule(head, tuple(self.literal(i) for i in x.items[2:]), x.pos)
        return Fact(self.sentence(x), x.pos)

    def name(self, x: _SExpr, what: str) -> str:
        if isinstance(x, _List):
            raise self.error(f"{what} must be a symbol, found a list", x.pos)
        if x.text.startswith("?"):
            raise self.error(f"{what} must be a symbol, found the variable '{x.text}'", x.pos)
        if x.text == "<=":
            raise self.error(f"misplaced '<=': {what} cannot be '<='", x.pos)
        return x.text

    def sentence(self, x: _SExpr) -> Sentence:
        if isinstance(x, _Atom):
            return Const(self.name(x, "a sentence"), x.pos)
        if not x.items:
            raise self.error("empty list '()' where a sentence was expected", x.pos)
        name = self.name(x.items[0], "a relation name")
        return Func(name, tuple(self.term(i) for i in x.items[1:]), x.pos)

    def literal(self, x: _SExpr) -> Literal:
        if isinstance(x, _List) and x.items and isinstance(x.items[0], _Atom):
            key = x.items[0].text.lower()
            args = x.items[1:]
            if key == "not":
                if len(args) != 1:
                    raise self.error(f"'not' takes exactly one literal, found {len(args)}", x.pos)
                return Not(self.literal(args[0]), x.pos)
            if key == "distinct":
                if len(args) != 2:
                    raise self.error(
                        f"'distinct' takes exactly two terms, found {len(args)}", x.pos
                    )
                return Distinct(self.term(args[0]), self.term(args[1]), x.pos)
            if key == "or":
                return Or(tuple(self.literal(a) for a in args), x.pos)
            if key == "and":
                return And(tuple(self.literal(a) for a in args), x.pos)
        return self.sentence(x)

    def term(self, x: _SExpr) -> Term:
        if isinstance(x, _Atom):
            if x.text.startswith("?"):
                if len(x.text) == 1:
                    raise self.error("'?' alone is not a variable: a name must follow it", x.pos)
                return Var(x.text[1:], x.pos)
            return Const(self.name(x, "a term"), x.pos)
        if not x.items:
            raise self.error("empty list '()' where a term was expected", x.pos)
        name = self.name(x.items[0], "a function name")
        return Func(name, tuple(self.term(i) for i in x.items[1:]), x.pos)


def parse_kif(text: str, file: str | None = None) -> Description:
    """Parse a whole KIF game description. Raises ``GdlSyntaxError`` with its position."""
    with without_cycle_collection():
        return _Reader(text, file).description()


def parse_kif_term(text: str, file: str | None = None) -> Term:
    """Parse one KIF term, e.g. ``(mark 1 2)`` or ``noop``; variables are allowed.
    ``file`` names the text in the position of a ``GdlSyntaxError`` (e.g. ``"<atom>"``
    for a term typed on a command line), so that the error does not point into a game."""
    reader = _Reader(text, file)
    items = reader.sexprs()
    if len(items) != 1:
        raise reader.error(f"expected exactly one term, found {len(items)}", Pos(1, 1, file))
    return reader.term(items[0])


def parse_kif_term_list(text: str, file: str | None = None) -> list[Term]:
    """Parse a list of KIF terms in one pair of parentheses, e.g. ``((cell 1 1 x) (control
    o))`` (``()`` is the empty list). ``file`` names the text in error positions as for
    ``parse_kif_term``."""
    reader = _Reader(text, file)
    items = reader.sexprs()
    if len(items) != 1 or not isinstance(items[0], _List):
        where = items[1].pos if len(items) > 1 else items[0].pos if items else Pos(1, 1, file)
        raise reader.error("expected one list of terms in parentheses", where)
    return [reader.term(i) for i in items[0].items]


# -- printing (kif_term and kif_clause live beside the AST: str() of a node) ----------------


_KIF_SYMBOL = re.compile(r"[^\s();?][^\s();]*")


def kif_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be written as a KIF symbol (None if it can): KIF has no
    quoting, so a symbol read from infix (``'x y'``, ``'('``, ``'?a'``) may have none."""
    if name == "<=" or not _KIF_SYMBOL.fullmatch(name):
        return f"the symbol {name!r} cannot be written in KIF (KIF has no quoted names)"
    return None


def print_kif(d: Description) -> str:
    """The whole description as KIF text, one clause per paragraph. ``ValueError`` if a
    symbol cannot be written in KIF (see ``kif_name_problem``)."""
    for name in symbol_table(d).spellings.values():
        problem = kif_name_problem(name)
        if problem:
            raise ValueError(problem)
    return "".join(kif_clause(c) + "\n" for c in d.clauses)


__all__ = [
    "kif_clause",
    "kif_name_problem",
    "kif_term",
    "parse_kif",
    "parse_kif_term",
    "parse_kif_term_list",
    "print_kif",
]
