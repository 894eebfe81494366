"""GDL written for a reader, in either syntax: a term or a clause as KIF or infix text,
whole and on one line. Every answer that quotes the game (a checker's finding, the comment
above a generated clause) writes it so, in the syntax the game was read in unless the
reader asks for the other (``--answer-syntax``).
"""

from __future__ import annotations

import sys
from typing import Literal as TypingLiteral
from typing import get_args

from gdl2pl.infix import clause_variable_names
from gdl2pl.infix import infix_clause
from gdl2pl.infix import infix_term
from gdl2pl.syntax import Clause
from gdl2pl.syntax import Description
from gdl2pl.syntax import Literal
from gdl2pl.syntax import Term
from gdl2pl.syntax import Var
from gdl2pl.syntax import clause_line
from gdl2pl.syntax import kif_term

AnswerSyntax = TypingLiteral["kif", "infix"]
#: The values of ``AnswerSyntax`` (command-line choices).
ANSWER_SYNTAXES: tuple[str, ...] = get_args(AnswerSyntax)


def answer_syntax(d: Description, chosen: str | None = None) -> AnswerSyntax:
    """The syntax answers about ``d`` are written in: ``chosen`` if given, else the one
    ``d`` was read in (KIF for a description built in code)."""
    wanted = chosen or d.syntax or "kif"
    if wanted not in ANSWER_SYNTAXES:
        raise ValueError(f"unknown syntax {wanted!r}: expected 'kif' or 'infix'")
    return wanted  # type: ignore[return-value]


def term_text(t: Term | Literal, syntax: str, clause: Clause | None = None) -> str:
    """A term or literal in ``syntax``: ``?x``, ``(cell 1 1 b)`` or ``X``, ``cell(1,1,b)``;
    in infix, its variables named as the printing of ``clause`` names them when given."""
    return infix_term(t, clause) if syntax == "infix" else kif_term(t)


def clause_text(c: Clause, syntax: str) -> str:
    """A whole clause in ``syntax`` on one line, never shortened:
    ``(<= (p ?x) (q ?x) (not (r ?x)))`` or ``p(X) :- q(X) & ~r(X)``."""
    return infix_clause(c, width=sys.maxsize) if syntax == "infix" else clause_line(c)


def variable_text(name: str, syntax: str, clause: Clause | None = None) -> str:
    """The variable ``name`` (as stored: KIF's ``?x`` is ``x``) in ``syntax``; in infix,
    as the printing of ``clause`` names it when given (so a message and the rule it
    quotes agree)."""
    if syntax != "infix":
        return "?" + name
    if clause is not None:
        found = clause_variable_names(clause).get(name)
        if found is not None:
            return found
    return infix_term(Var(name))

