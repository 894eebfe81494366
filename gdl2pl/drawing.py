"""Text in drawings: DOT strings and Mermaid labels that show any name as text, and SVG
from DOT through Graphviz's ``dot`` program.

Names come from game files, that is from strangers: every drawing of gdl2pl (the
relation graph, proof trees) writes them through ``dot_string`` and ``mermaid_text``,
never as identifiers or markup.
"""

from __future__ import annotations

import re
import shutil
import subprocess

from gdl2pl.errors import GdlError


class GraphvizMissingError(GdlError):
    """svg output was asked for and Graphviz's ``dot`` program is not installed."""


_DOT_SPECIAL = re.compile(r'[\\"&\n\r\x00-\x1f\x7f]')


def _dot_char(ch: str) -> str:
    if ch in '\\"':
        return "\\" + ch
    if ch == "&":
        return "&amp;"  # Graphviz reads &name; in a label as an entity
    if ch in "\n\r":
        return "\\n"  # a line break of the label
    return f"\\\\x{ord(ch):02x}"  # shown as the text \xNN


def dot_string(text: str) -> str:
    """``text`` as a quoted DOT string (an identifier or a label) that Graphviz shows as
    the text itself: quotes and backslashes escaped, ``&`` kept from being read as an
    entity, a line break a line break of the label, other control characters written
    as ``\\xNN`` (they are not allowed in the SVG that Graphviz writes)."""
    return '"' + _DOT_SPECIAL.sub(lambda m: _dot_char(m.group()), text) + '"'


_MERMAID_SAFE = re.compile(r"[^A-Za-z0-9 _.,:()+\-]")


def mermaid_text(text: str) -> str:
    """``text`` as a Mermaid label: every character that Mermaid or the HTML it renders
    could read as markup (``<``, ``>``, ``&``, quotes, ``#``, line breaks, ...) is written
    as Mermaid's numeric entity ``#N;``, so a relation named ``<b>`` shows as text."""
    return _MERMAID_SAFE.sub(lambda m: f"#{ord(m.group())};", text)


def svg_of_dot(dot_text: str, dot_program: str | None = None) -> str:
    """The DOT drawing rendered as SVG by Graphviz (``GraphvizMissingError`` when its
    ``dot`` program is not installed, ``GdlError`` when it fails)."""
    dot = dot_program or shutil.which("dot")
    if dot is None:
        raise GraphvizMissingError(
            "svg output needs Graphviz's dot program, which is not installed "
            "(Debian/Ubuntu: apt-get install graphviz; macOS: brew install graphviz); "
            "or print --format dot and render it elsewhere"
        )
    done = subprocess.run(
        [dot, "-Tsvg"], input=dot_text, capture_output=True, text=True, timeout=60, check=False
    )
    if done.returncode != 0:
        raise GdlError(f"dot failed: {done.stderr.strip()}")
    return done.stdout
