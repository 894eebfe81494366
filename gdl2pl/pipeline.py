"""The whole front end in one call: text -> AST -> case normalization -> checks ->
flat rules -> Prolog text.

``compile_game`` is what every caller that turns a game into a Prolog module uses (the
state machine, the ``translate`` command, the GGP player, the match runner), so the
steps and their order are written down once.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from gdl2pl import written
from gdl2pl.check import Finding
from gdl2pl.check import check_description
from gdl2pl.check import format_finding
from gdl2pl.errors import GdlError
from gdl2pl.flatten import FlatRule
from gdl2pl.flatten import flatten_rules
from gdl2pl.load import Syntax
from gdl2pl.load import parse_game
from gdl2pl.load import read_game
from gdl2pl.normalize import SymbolTable
from gdl2pl.normalize import normalize_case
from gdl2pl.normalize import normalize_keywords
from gdl2pl.normalize import symbol_table
from gdl2pl.normalize import unambiguous_table
from gdl2pl.syntax import Description
from gdl2pl.translate import Translation
from gdl2pl.translate import emit
from gdl2pl.translate import plan

__all__ = [
    "CompiledGame",
    "GameCheckError",
    "accepted_errors_warning",
    "compile_game",
    "normalized",
    "require_checked",
]


@dataclass(frozen=True)
class CompiledGame:
    """Every stage of one game's compilation."""

    #: The description as read (names as written).
    description: Description
    #: The description the translator worked on (one spelling per symbol, or keywords
    #: only folded in the case-sensitive reading).
    normalized: Description
    #: Maps names from outside (a manager's move) onto the game's spellings.
    symbols: SymbolTable
    #: The checker's findings (empty when the check was not asked for).
    findings: tuple[Finding, ...]
    #: The flat clauses the translator emitted.
    rules: tuple[FlatRule, ...]
    translation: Translation


def normalized(d: Description, case_sensitive: bool = False) -> tuple[Description, SymbolTable]:
    """``d`` in the spelling the translator works on, and the symbol table for names from
    outside: GDL's case-insensitive reading, or with ``case_sensitive`` only the keywords
    folded (as ggp-base by default) and a table of the symbols written one way only."""
    if case_sensitive:
        n = normalize_keywords(d)
        return n, unambiguous_table(n)
    n = normalize_case(d)
    return n, symbol_table(n)


def compile_game(
    game: Description | str | os.PathLike[str] | None = None,
    *,
    text: str | None = None,
    syntax: Syntax = "auto",
    name: str | None = None,
    module: str = "game",
    case_sensitive: bool = False,
    check: bool = False,
    translate: bool = True,
    answer_syntax: str | None = None,
) -> CompiledGame:
    """Compile a game given as a ``Description``, a file path, or its ``text``.

    ``name`` names it in messages and comments (default: the file's name, else "game").
    With ``check`` the findings are returned (an error does not stop the compilation: the
    caller decides). Without ``translate`` only reading, normalizing and checking run
    (the translation is then an empty module). Findings and the comments of the module
    quote the game in ``answer_syntax`` (default: the syntax it was read in).

    Raises ``OSError`` (file), ``GdlSyntaxError`` (text) or ``TranslationError``."""
    if text is not None:
        d = parse_game(text, syntax, name)
    elif isinstance(game, Description):
        d = game
    elif game is None:
        raise ValueError("compile_game needs a description, a file or a text")
    else:
        d = read_game(game, syntax)
        name = name or Path(game).name
    label = name or "game"
    n, symbols = normalized(d, case_sensitive)
    findings = tuple(check_description(d, name, answer_syntax)) if check else ()
    rules = flatten_rules(n) if translate else []
    translation = (
        emit(plan(rules), module, label, written.answer_syntax(n, answer_syntax))
        if translate
        else Translation(module, "", ())
    )
    return CompiledGame(d, n, symbols, findings, tuple(rules), translation)


class GameCheckError(GdlError):
    """The checker found errors in a game that a command needs well-formed: the command
    refuses it as ``gdl2pl check`` reports it (``findings`` are the errors)."""

    def __init__(self, findings: tuple[Finding, ...], file: str) -> None:
        self.findings = findings
        self.file = file
        listed = "\n".join(format_finding(f, file) for f in findings)
        noun = "error" if len(findings) == 1 else "errors"
        super().__init__(
            f"the game has {len(findings)} {noun} (as gdl2pl check reports them; "
            f"--accept-errors runs it anyway):\n{listed}"
        )


def require_checked(
    game: str | os.PathLike[str], syntax: Syntax = "auto", accept_errors: bool = False
) -> tuple[Finding, ...]:
    """Check a game file the way ``gdl2pl check`` does before a command runs on it.

    Returns the errors found. Raises ``GameCheckError`` if there are any and
    ``accept_errors`` is false (and ``OSError``/``GdlSyntaxError`` for a file that cannot
    be read or parsed)."""
    name = os.fspath(game)
    compiled = compile_game(game, syntax=syntax, name=name, check=True, translate=False)
    errors = tuple(f for f in compiled.findings if f.is_error)
    if errors and not accept_errors:
        raise GameCheckError(errors, name)
    return errors


def accepted_errors_warning(
    errors: tuple[Finding, ...],
    file: str,
    consequence: str = "running anyway (--accept-errors): answers follow the translated "
    "rules as they stand, which GDL does not define for such a game",
) -> str:
    """The line a command prints when it runs on a game with ``errors``, saying so and
    what follows from it."""
    noun = "error" if len(errors) == 1 else "errors"
    return f"{file}: warning: the game has {len(errors)} check {noun}; {consequence}"
