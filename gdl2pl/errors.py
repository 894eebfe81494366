"""Errors raised by the front end. Each says what went wrong and where."""

from __future__ import annotations

from gdl2pl.shown import shown
from gdl2pl.syntax import Pos


def excerpt(text: str, line: int, column: int, width: int = 60) -> str:
    """The source line `line` (1-based), shortened around `column`, with a caret under it;
    the line's control characters escaped (``shown``), the caret under the escaped text."""
    lines = text.splitlines()
    if not 1 <= line <= len(lines):
        return ""
    src = lines[line - 1].expandtabs(1)
    start = max(0, column - 1 - width // 2)
    piece = shown(src[start : start + width], None)
    prefix = "..." if start > 0 else ""
    suffix = "..." if start + width < len(src) else ""
    caret = " " * (len(prefix) + len(shown(src[start : column - 1], None))) + "^"
    return f"{prefix}{piece}{suffix}\n{caret}"


class GdlError(Exception):
    """Base class of every error gdl2pl raises about a game description."""


class GdlSyntaxError(GdlError):
    """The text is not well-formed GDL: a message, a position and an excerpt of the line."""

    def __init__(self, message: str, pos: Pos, source: str | None = None) -> None:
        self.message = message
        self.pos = pos
        self.excerpt = excerpt(source, pos.line, pos.column) if source else ""
        text = f"{pos}: syntax error: {message}"
        if self.excerpt:
            text += "\n" + self.excerpt
        super().__init__(text)

    @property
    def file(self) -> str | None:
        return self.pos.file

    @property
    def line(self) -> int:
        return self.pos.line

    @property
    def column(self) -> int:
        return self.pos.column
