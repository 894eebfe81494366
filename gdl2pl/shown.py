"""Outside text fit for one line of a log or a message: ``shown(text)``.

Game symbols, rules, file names, match ids and whatever a stranger sends may hold
control characters (ESC starts a terminal's escape sequence, BEL rings, CR and newline
start a line that looks like another entry). Every log line and message of gdl2pl that
quotes such text quotes it through ``shown``, so it can neither forge a line nor drive a
terminal.
"""

from __future__ import annotations


def shown(text: str, limit: int | None = 200) -> str:
    """``text`` fit for one log line: backslashes doubled, control and other non-printable
    characters written as Python escapes (``\\n`` is ``\\x0a``), cut to ``limit`` characters
    (``...`` marks a cut; None: never cut)."""
    cut = limit is not None and len(text) > limit
    out = []
    for ch in text[:limit]:
        if ch == "\\":
            out.append("\\\\")
        elif ch.isprintable():
            out.append(ch)
        else:
            code = ord(ch)
            if code < 0x100:
                out.append(f"\\x{code:02x}")
            else:
                out.append(f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    return "".join(out) + ("..." if cut else "")


def shown_lines(text: str) -> str:
    """``text`` of several lines (a message with a listing), each line ``shown`` whole:
    its line breaks kept, every other control character escaped."""
    return "\n".join(shown(line, None) for line in text.split("\n"))


__all__ = ["shown", "shown_lines"]
