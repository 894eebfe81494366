"""Why the compiled engine cannot take a game (the Prolog engine still can)."""

from __future__ import annotations

from gdl2pl.errors import GdlError


class CompileRefusedError(GdlError):
    """The game cannot be compiled; the message names the game and the reason."""


class GroundingBudgetError(CompileRefusedError):
    """Grounding the game went past a budget: the message names the game and the
    figure exceeded (seconds, inferences, ground rules or memory)."""


class CompiledUnavailableError(CompileRefusedError):
    """The compiled engine's C extension is not built in this installation."""
