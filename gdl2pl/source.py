"""What every reader checks about a text before parsing it: that it is made of real
characters, and that its nesting stays within ``MAX_NESTING``.

A text from a stranger (a game file, a match message) may hold anything; these checks
turn what no GDL reader can take into a ``GdlSyntaxError`` with its position, instead of
a crash later on (a lone surrogate cannot be handed to Prolog; a term nested thousands
deep would exhaust Python's stack in every pass that walks it).
"""

from __future__ import annotations

import re

from gdl2pl.errors import GdlSyntaxError
from gdl2pl.syntax import Pos

#: The deepest nesting of parentheses a game text may have. The deepest public game
#: nests 27 levels; every pass over the AST is safe well beyond this limit.
MAX_NESTING = 100

_SURROGATE = re.compile("[\ud800-\udfff]")


def position(text: str, offset: int, file: str | None = None) -> Pos:
    """The line and column (1-based) of ``offset`` in ``text``."""
    line = text.count("\n", 0, offset) + 1
    start = text.rfind("\n", 0, offset) + 1
    return Pos(line, offset - start + 1, file)


def check_characters(text: str, file: str | None = None) -> None:
    """Raise ``GdlSyntaxError`` at the first lone surrogate in ``text`` (what a file
    name or bytes decoded with ``surrogateescape`` leave behind: not a character)."""
    m = _SURROGATE.search(text)
    if m:
        raise GdlSyntaxError(
            f"U+{ord(m.group()):04X} is a lone surrogate, not a character",
            position(text, m.start(), file),
            text.encode("utf-8", "replace").decode("utf-8"),
        )


def nesting_error(text: str, offset: int, file: str | None = None) -> GdlSyntaxError:
    """The error for a parenthesis at ``offset`` that opens level ``MAX_NESTING + 1``."""
    return GdlSyntaxError(
        f"nested deeper than {MAX_NESTING} levels of parentheses (no game needs that many)",
        position(text, offset, file),
        text,
    )
