"""Exceptions of the Prolog reasoner (a query that raised, was interrupted, or asked a
closed game), and the game's own exceptions (``gdl2pl.contract.errors``) re-exported."""

from __future__ import annotations

import re

from gdl2pl.contract.errors import GameError
from gdl2pl.contract.errors import GoalDefinitionError
from gdl2pl.contract.errors import IllegalMoveError
from gdl2pl.contract.errors import MoveDefinitionError
from gdl2pl.contract.errors import NoConsistentStateError
from gdl2pl.contract.errors import PlayoutDepthError
from gdl2pl.contract.errors import TransitionDefinitionError
from gdl2pl.errors import GdlError

__all__ = [
    "GameClosedError",
    "GameError",
    "GoalDefinitionError",
    "IllegalMoveError",
    "MoveDefinitionError",
    "NoConsistentStateError",
    "PlayoutDepthError",
    "QueryInterrupted",
    "ReasonerError",
    "TransitionDefinitionError",
    "prolog_message",
    "reasoner_error",
]


class ReasonerError(GdlError):
    """SWI-Prolog raised an exception (resource limits included) while answering."""


class QueryInterrupted(ReasonerError):
    """The query was interrupted from another thread (``engine.interrupt``): a stopped
    match, or Ctrl-C on the command line."""


class GameClosedError(ReasonerError):
    """The state machine was closed: its game is (being) unloaded and answers no more."""


_BLOB = re.compile(r"<(\w+)>\(0x[0-9a-f]+(?:,0x[0-9a-f]+)*\)|<(\w+)>\(\d+,0x[0-9a-f]+\)")


def prolog_message(e: Exception) -> str:
    """The Prolog exception as a sentence: SWI's message text, without the addresses of
    internal objects (tries, clauses, threads) that mean nothing to a reader."""
    try:
        text = str(e)
    except Exception:
        text = repr(getattr(e, "args", ()))
    text = _BLOB.sub(lambda m: f"<{m.group(1) or m.group(2)}>", text)
    return text.removeprefix("Unknown message: ").strip()


def reasoner_error(name: str, e: Exception) -> ReasonerError:
    """The error a question about the game ``name`` raised in Prolog, as Python's:
    ``QueryInterrupted`` if it was stopped, else ``ReasonerError`` with its message."""
    message = prolog_message(e)
    if message == "interrupted":
        return QueryInterrupted(f"{name}: interrupted")
    return ReasonerError(f"{name}: {message}")
