"""Reading a studio request: its JSON body and each value an endpoint takes from it,
checked (type, size, allowed words) before any work runs. Each reader raises
``StudioError`` (400, or 413 for too large) naming the field and what it must be.
"""

from __future__ import annotations

import json
from typing import Any
from typing import cast

from starlette.requests import Request

from gdl2pl.load import SYNTAXES
from gdl2pl.load import Syntax
from gdl2pl.written import ANSWER_SYNTAXES

from .limits import Limits
from .sessions import GAME_NAME
from .sessions import NAME_PATTERN
from .sessions import StudioError

#: A request's values, as its JSON object holds them.
Fields = dict[str, Any]


async def json_body(request: Request, lim: Limits) -> Fields:
    """The request's JSON object (415: not JSON; 413: past the size its texts allow)."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise StudioError("send JSON (Content-Type: application/json)", 415)
    cap = 4 * lim.max_text + 100_000  # texts, moves and JSON escapes
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > cap:
            raise StudioError(f"the request is larger than {cap} bytes", 413)
    try:
        data = json.loads(body)
    except ValueError as e:
        raise StudioError(f"not JSON: {e}") from None
    except RecursionError:
        raise StudioError("the JSON is nested too deeply") from None
    if not isinstance(data, dict):
        raise StudioError("expected a JSON object")
    return cast(Fields, data)


def string(d: Fields, key: str, cap: int) -> str:
    """The string ``key`` of at most ``cap`` characters."""
    value = d.get(key)
    if not isinstance(value, str):
        raise StudioError(f"'{key}' must be a string")
    if len(value) > cap:
        raise StudioError(f"'{key}' is longer than {cap} characters", 413)
    return value


def text(d: Fields, lim: Limits) -> str:
    """The game's (or program's) text."""
    return string(d, "text", lim.max_text)


def syntax(d: Fields) -> Syntax:
    """The syntax the text is written in (default ``auto``)."""
    chosen = d.get("syntax", "auto")
    if chosen not in SYNTAXES:
        raise StudioError(f"'syntax' must be one of {', '.join(SYNTAXES)}")
    return cast(Syntax, chosen)


def answer_syntax(d: Fields) -> str | None:
    """The syntax a student reads answers in (``answer_syntax``: ``kif``, ``infix``, or
    ``auto`` or none for the game's own)."""
    chosen = d.get("answer_syntax", "auto")
    if chosen not in ("auto", *ANSWER_SYNTAXES):
        raise StudioError(f"'answer_syntax' must be one of auto, {', '.join(ANSWER_SYNTAXES)}")
    return None if chosen == "auto" else str(chosen)


def game_fields(d: Fields, lim: Limits) -> Fields:
    """What a front-end question about the game text carries: the text, its syntax and
    name, and the answer syntax."""
    return {
        "text": text(d, lim),
        "syntax": syntax(d),
        "name": name(d),
        "answer_syntax": answer_syntax(d),
    }


def name(d: Fields) -> str:
    """The name of the game's file or example, which the page sends (``GAME_NAME`` when
    it sends none): messages, the Prolog header and the analysis report say it."""
    given = d.get("name")
    if given is None:
        return GAME_NAME
    if not isinstance(given, str) or not NAME_PATTERN.fullmatch(given):
        raise StudioError(
            "'name' must be a file name of at most 100 letters, digits, '.', '_', '-' "
            "and spaces, starting with a letter or digit"
        )
    return given


def moves(d: Fields, lim: Limits) -> list[list[str]]:
    """The match's history: joint moves, each a list of KIF strings."""
    history = d.get("moves", [])
    if not isinstance(history, list) or not all(
        isinstance(jm, list) and all(isinstance(m, str) and len(m) <= 1_000 for m in jm)
        for jm in history
    ):
        raise StudioError("'moves' must be a list of joint moves, each a list of KIF strings")
    if len(history) > lim.max_moves:
        raise StudioError(f"'moves' holds more than {lim.max_moves} joint moves", 413)
    return history


def row_first(d: Fields) -> bool | None:
    """Whether the board's cells name their row first, as the student chose
    (``row_first``: true, false, or null or none for what the game says)."""
    value = d.get("row_first")
    if value is not None and not isinstance(value, bool):
        raise StudioError("'row_first' must be true, false or null")
    return value


def names(d: Fields, key: str) -> dict[str, str]:
    """The object ``key`` mapping role names to strings."""
    value = d.get(key, {})
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and len(k) + len(v) < 2_000
        for k, v in value.items()
    ):
        raise StudioError(f"'{key}' must map role names to strings")
    return cast(dict[str, str], value)
