"""From an exception to one line on stderr and an exit status: the one place where the
command line decides both, for its own commands and those the other packages add.

Exit status: ``game_error_status`` (1 unless a command says otherwise) when the game or
program is at fault (a syntax error with its position and excerpt, any ``GdlError``); 2
for usage, set-up and I/O errors (a missing file, a missing optional library, SWI-Prolog
unusable) and for bugs, which are reported in one line, never as a traceback. What a
message quotes of the outside (file names, the game's symbols) is written with its
control characters escaped (``gdl2pl.shown``): no game can drive the terminal.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable

from gdl2pl.check import format_finding
from gdl2pl.errors import GdlError
from gdl2pl.errors import GdlSyntaxError
from gdl2pl.pipeline import GameCheckError
from gdl2pl.shown import shown
from gdl2pl.shown import shown_lines
from gdl2pl.syntax import Pos

Command = Callable[[argparse.Namespace], int]

_PLACE = re.compile(r"\S+:\d+(:\d+)?: ")

#: The extra that installs an optional library, by the name of its top-level module.
EXTRAS = {
    "pyspiel": "openspiel",
    "open_spiel": "openspiel",
    "pettingzoo": "pettingzoo",
    "gymnasium": "gymnasium",
    "ray": "ray",
    "starlette": "studio",
    "uvicorn": "studio",
}


def run_guarded(fn: Command, args: argparse.Namespace, game_error_status: int = 1) -> int:
    """``fn(args)``, with every exception turned into a message and an exit status
    (see the module doc). ``BrokenPipeError`` and ``KeyboardInterrupt`` go through:
    ``main`` ends quietly on them."""
    path = shown(str(getattr(args, "game", None) or getattr(args, "file", None) or ""), None)
    command = f"gdl2pl {getattr(args, 'command', '')}".rstrip()
    try:
        return fn(args)
    except GameCheckError as e:  # refused as gdl2pl check refuses it: status 1
        said = str(e).split("\n", 1)[0]  # what it found; then each finding on its line
        listed = "".join(f"\n{shown(format_finding(f, e.file), None)}" for f in e.findings)
        print(f"{path or shown(e.file, None)}: error: {said}{listed}", file=sys.stderr)
        return 1
    except GdlSyntaxError as e:
        place = e.pos if e.pos.file else Pos(e.pos.line, e.pos.column, path or None)
        print(f"{shown(str(place), None)}: error: {shown(e.message, None)}", file=sys.stderr)
        if e.excerpt:
            print(e.excerpt, file=sys.stderr)  # escaped by excerpt()
        return game_error_status
    except GdlError as e:
        text = shown_lines(str(e))
        named = _PLACE.match(text) or not path  # the message says where itself
        print(f"{command if named else path}: error: {text}", file=sys.stderr)
        return game_error_status
    except BrokenPipeError:
        raise
    except ImportError as e:
        library = (e.name or "").split(".")[0]
        extra = EXTRAS.get(library)
        hint = f" (pip install 'gdl2pl[{extra}]')" if extra else ""
        what = shown(library or str(e))
        print(f"{command}: needs the library {what}, not installed{hint}", file=sys.stderr)
        return 2
    except OSError as e:
        where = shown(str(e.filename), None) if e.filename else path or command
        print(f"{where}: error: cannot read: {shown(reason(e), None)}", file=sys.stderr)
        return 2
    except ValueError as e:  # a value the command cannot use, named by the command
        print(f"{command}: error: {shown_lines(str(e))}", file=sys.stderr)
        return 2
    except RuntimeError as e:  # PrologUnavailableError and friends
        print(f"gdl2pl: {shown_lines(str(e))}", file=sys.stderr)
        return 2
    except Exception as e:  # a bug: say so in one line, never a traceback
        print(f"{path or command}: internal error: {type(e).__name__}: {shown(str(e), None)}",
              file=sys.stderr)
        return 2


def reason(e: Exception) -> str:
    """Why a file could not be read, in words."""
    if isinstance(e, UnicodeDecodeError):
        return f"not UTF-8 text (byte {e.start})"
    if isinstance(e, OSError) and e.strerror:
        return e.strerror
    return str(e)

