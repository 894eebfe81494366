"""Reading a game description from text or a file, in either syntax.

``syntax="auto"`` decides as follows. A text that begins (after white space and ``;`` or
``%`` comment lines) with ``(`` is KIF, whatever the file is called: an infix description
never begins so, and many ``.gdl`` files in the wild hold KIF. Otherwise a ``.kif`` file is
KIF (KIF may begin with a proposition, ``terminal``), any other non-empty text is infix, and
an empty (or comments-only) text is infix for ``.gdl``, ``.hrf``, ``.infix`` and ``.pl`` files
and KIF otherwise.
"""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path
from typing import Literal as TypingLiteral
from typing import get_args

from gdl2pl.infix import parse_infix
from gdl2pl.kif import parse_kif
from gdl2pl.syntax import Description

Syntax = TypingLiteral["auto", "kif", "infix"]
#: The values of ``Syntax`` (command-line choices).
SYNTAXES: tuple[str, ...] = get_args(Syntax)

KIF_EXTENSIONS = frozenset({".kif"})
INFIX_EXTENSIONS = frozenset({".gdl", ".hrf", ".infix", ".pl"})

_LEADING = re.compile(r"(?:\s+|[;%][^\n]*)*")


def detect_syntax(text: str, file: str | os.PathLike[str] | None = None) -> str:
    """``"kif"`` or ``"infix"``: the syntax ``text`` is written in (see module doc)."""
    start = _LEADING.match(text)
    rest = text[start.end() if start else 0 :]
    if rest.startswith("("):
        return "kif"
    suffix = Path(file).suffix.lower() if file is not None else ""
    if suffix in KIF_EXTENSIONS:
        return "kif"
    if rest or suffix in INFIX_EXTENSIONS:
        return "infix"
    return "kif"


def parse_game(text: str, syntax: Syntax = "auto", file: str | None = None) -> Description:
    """Parse a game description; ``file`` names it in error messages and helps ``auto``.

    Raises ``GdlSyntaxError`` (with file, line and column) if the text is not well-formed.
    """
    if syntax == "auto":
        syntax = "kif" if detect_syntax(text, file) == "kif" else "infix"
    if syntax == "kif":
        return parse_kif(text, file)
    if syntax == "infix":
        return parse_infix(text, file)
    raise ValueError(f"unknown syntax {syntax!r}: expected 'auto', 'kif' or 'infix'")


#: The most bytes read from a game (or program, facts, moves) file: far beyond any game
#: (the largest public ones are under a megabyte), and short of exhausting memory on a
#: device or a pipe that never ends (``/dev/zero``).
MAX_FILE_BYTES = 64 * 2**20


def read_text(path: str | os.PathLike[str], limit: int = MAX_FILE_BYTES) -> str:
    """The text of a file, read as UTF-8 (a byte-order mark is dropped). A byte that is
    not UTF-8 is kept as a lone surrogate (``surrogateescape``), which every reader
    refuses with its line and column (``source.check_characters``).

    Raises ``OSError`` (whose ``filename`` is the path) if the file cannot be read or
    holds more than ``limit`` bytes (``EFBIG``; only that much is read).
    """
    with open(path, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise OSError(
            errno.EFBIG,
            f"larger than {limit:,} bytes, the most gdl2pl reads from a file",
            os.fspath(path),
        )
    return data.decode("utf-8-sig", "surrogateescape")


def read_game(path: str | os.PathLike[str], syntax: Syntax = "auto") -> Description:
    """Read and parse a game file. Raises ``OSError`` or ``GdlSyntaxError``."""
    return parse_game(read_text(path), syntax, os.fspath(path))
