"""Text in drawings: DOT strings and Mermaid labels that show any name as text, and SVG
from DOT through Graphviz's ``dot`` program.

Names come from game files, that is from strangers: every drawing of gdl2pl (the
relation graph, proof trees) writes them through ``dot_string`` and ``mermaid_text``,
never as identifiers or markup. A drawing is bounded too: at most ``MAX_DRAWN_EDGES``
edges, ``DOT_AT_ONCE`` ``dot`` processes of one process at once, and a time limit each
(``GraphTooLargeError`` past them: the text forms still show the graph).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import threading
import time

from gdl2pl.errors import GdlError


class GraphvizMissingError(GdlError):
    """svg output was asked for and Graphviz's ``dot`` program is not installed."""


class GraphTooLargeError(GdlError):
    """Graphviz could not draw the graph within the limits (its size, the time, the
    drawings running at once); the message offers the text forms."""


#: Edges beyond which a drawing is not attempted (``dot``'s layout grows much faster than
#: the graph: a few hundred edges can take it a minute).
MAX_DRAWN_EDGES = 1_000
#: ``dot`` processes one process runs at once; a drawing waits its turn within its time.
DOT_AT_ONCE = 2
#: Seconds a drawing may take, waiting for its turn included.
DOT_SECONDS = 20.0
_TEXT_FORMS = "print it as text instead (--format dot or --format mermaid)"
_dot_slots = threading.BoundedSemaphore(DOT_AT_ONCE)


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


def svg_of_dot(
    dot_text: str,
    dot_program: str | None = None,
    seconds: float = DOT_SECONDS,
    text_forms: str = _TEXT_FORMS,
) -> str:
    """The DOT drawing rendered as SVG by Graphviz within ``seconds``
    (``GraphvizMissingError`` when its ``dot`` program is not installed,
    ``GraphTooLargeError`` past ``MAX_DRAWN_EDGES`` or the time, its message ending
    with ``text_forms``; ``GdlError`` when ``dot`` fails)."""
    dot = dot_program or shutil.which("dot")
    if dot is None:
        raise GraphvizMissingError(
            "svg output needs Graphviz's dot program, which is not installed "
            "(Debian/Ubuntu: apt-get install graphviz; macOS: brew install graphviz); "
            "or print --format dot and render it elsewhere"
        )
    edges = dot_text.count(" -> ")
    if edges > MAX_DRAWN_EDGES:
        raise GraphTooLargeError(
            f"the graph is too large to draw ({edges} edges, more than {MAX_DRAWN_EDGES}): "
            + text_forms
        )
    end = time.monotonic() + seconds
    too_long = GraphTooLargeError(
        f"the graph is too large to draw (Graphviz took longer than {seconds:g} seconds): "
        + text_forms
    )
    if not _dot_slots.acquire(timeout=seconds):
        raise too_long
    try:
        done = subprocess.run(
            [dot, "-Tsvg"],
            input=dot_text,
            capture_output=True,
            text=True,
            timeout=max(0.1, end - time.monotonic()),
            check=False,
        )
    except subprocess.TimeoutExpired:  # run() has killed it
        raise too_long from None
    finally:
        _dot_slots.release()
    if done.returncode != 0:
        raise GdlError(f"dot failed: {done.stderr.strip()}")
    return done.stdout
