"""What every reader checks about a text before parsing it: that it is made of real
characters, and that its nesting stays within ``MAX_NESTING``.

A text from a stranger (a game file, a match message) may hold anything; these checks
turn what no GDL reader can take into a ``GdlSyntaxError`` with its position, instead of
a crash later on (a lone surrogate cannot be handed to Prolog; a term nested thousands
deep would exhaust Python's stack in every pass that walks it).
"""

from __future__ import annotations

import gc
import re
from collections.abc import Iterator
from contextlib import contextmanager

from gdl2pl.errors import GdlSyntaxError
from gdl2pl.syntax import Pos

#: The deepest nesting of parentheses a game text may have. The deepest public game
#: nests 27 levels; every pass over the AST is safe well beyond this limit.
MAX_NESTING = 100

_NOT_TEXT = re.compile("[\x00\ud800-\udfff]")


def position(text: str, offset: int, file: str | None = None) -> Pos:
    """The line and column (1-based) of ``offset`` in ``text``; lines end at LF, CRLF
    or a lone CR."""
    before = text[:offset]
    line = before.count("\n") + before.count("\r") - before.count("\r\n") + 1
    start = max(before.rfind("\n"), before.rfind("\r")) + 1
    return Pos(line, offset - start + 1, file)


def check_characters(text: str, file: str | None = None) -> None:
    """Raise ``GdlSyntaxError`` at the first NUL byte or lone surrogate in ``text`` (a
    NUL is no part of any text and ends a C string where Prolog reads it; a lone
    surrogate, what bytes decoded with ``surrogateescape`` leave behind, is no character)."""
    m = _NOT_TEXT.search(text)
    if m:
        code = ord(m.group())
        if 0xDC80 <= code <= 0xDCFF:
            message = (
                f"byte 0x{code - 0xDC00:02X} is not UTF-8: a game text must be UTF-8 "
                "(re-encode the file, e.g. with iconv -f latin1 -t utf-8)"
            )
        else:
            what = "a NUL byte" if code == 0 else "a lone surrogate"
            message = f"U+{code:04X} is {what}, not a character a game text may hold"
        raise GdlSyntaxError(
            message,
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


@contextmanager
def without_cycle_collection() -> Iterator[None]:
    """Pause Python's cycle collector while a reader builds millions of small acyclic
    nodes: otherwise it rescans them all again and again, and reading a large game
    takes several times as long. Restores the collector's previous state."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
