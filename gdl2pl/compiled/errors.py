"""Why the compiled engine cannot take a game (the Prolog engine still can)."""

from __future__ import annotations

from gdl2pl.errors import GdlError


class CompileRefusedError(GdlError):
    """The game cannot be compiled; the message names the game and the reason."""


class GroundingBudgetError(CompileRefusedError):
    """Grounding the game went past a budget: the message names the game, the figure
    exceeded (seconds, inferences, ground rules or memory) and the rule at work.
    When the grounding ran in this process, ``profile`` has per rule grounded before
    (rule number, instances, ground rules, CPU seconds) and ``sizes`` the relations (and
    fluents, moves) of the relaxed model so far with their facts."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.profile: list[tuple[int, int, int, float]] = []
        self.sizes: list[tuple[str, int, int]] = []


class CompiledUnavailableError(CompileRefusedError):
    """The compiled engine's C extension is not built in this installation."""
