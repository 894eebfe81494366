"""Writing Prolog text: atoms that read back as the same atom, and variable names.

Every GDL symbol becomes a Prolog atom whose text is the symbol itself, quoted when
needed (``'1'``, ``'not-filled'``), so constants keep their identity (``'01'`` is not
``'1'``) and no symbol can be read as a number, a variable or an operator.
"""

from __future__ import annotations

import re

_BARE_ATOM = re.compile(r"[a-z][A-Za-z0-9_]*")

#: Words SWI-Prolog reads as operators; quoted so that the text reads back unambiguously.
_OPERATOR_WORDS = frozenset(
    [
        "is",
        "mod",
        "rem",
        "xor",
        "div",
        "rdiv",
        "as",
        "dynamic",
        "discontiguous",
        "initialization",
        "meta_predicate",
        "module_transparent",
        "multifile",
        "public",
        "thread_local",
        "table",
        "volatile",
    ]
)

_ESCAPES = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _control(ch: str) -> str:
    """ASCII control characters escaped; every other character stands as itself (SWI
    reads any code point in a quoted atom, but rejects some as ``\\x`` escapes)."""
    return f"\\x{ord(ch):x}\\" if ch < " " or ch == "\x7f" else ch


def quote_atom(name: str) -> str:
    """Prolog text for the atom ``name`` (bare when safe, else single-quoted)."""
    if _BARE_ATOM.fullmatch(name) and name not in _OPERATOR_WORDS:
        return name
    body = "".join(_ESCAPES.get(ch, _control(ch)) for ch in name)
    return f"'{body}'"


def comment_text(text: str) -> str:
    """``text`` made safe to stand in a ``%`` comment: every character that could end the
    line or the comment, or would not print (newlines, control and format characters,
    lone surrogates, Unicode line and paragraph separators), is written as ``\\xHH``, and
    ``*/`` is broken up. The result is one line of printable text."""
    out = [ch if ch.isprintable() else f"\\x{ord(ch):x}" for ch in text]
    return "".join(out).replace("*/", "* /")


def variable_name(gdl_name: str) -> str:
    """A readable Prolog variable name for a GDL variable (``?row`` -> ``Row``).

    Not injective on its own; ``VariableNamer`` makes names unique within a clause.
    """
    cleaned = re.sub(r"[^A-Za-z0-9_]", "_", gdl_name)
    if cleaned and cleaned[0].isalpha():
        return cleaned[0].upper() + cleaned[1:]
    return "V" + cleaned


class VariableNamer:
    """Distinct Prolog variable names for the GDL variables of one clause.

    Variables that occur once are written ``_Name`` (Prolog's singleton convention).
    """

    def __init__(self, counts: dict[str, int]) -> None:
        self._names: dict[str, str] = {}
        used: set[str] = set()
        for gdl in counts:
            base = variable_name(gdl)
            name, n = base, 1
            while name in used:
                n += 1
                name = f"{base}_{n}"
            used.add(name)
            self._names[gdl] = "_" + name if counts[gdl] == 1 else name

    def __getitem__(self, gdl_name: str) -> str:
        return self._names[gdl_name]
