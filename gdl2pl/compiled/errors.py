"""Why the compiled engine cannot take a game (the Prolog engine still can)."""

from __future__ import annotations

from gdl2pl.errors import GdlError


class CompileRefusedError(GdlError):
    """The game cannot be compiled; the message names the game and the reason."""


class GroundingBudgetError(CompileRefusedError):
    """Grounding the game went past a budget: the message names the game, the figure
    exceeded (seconds, ground rules, facts, the depth of a term, or memory) and the rule
    whose atoms grew most. When the grounding ran in this process, ``sizes`` has what
    was ground so far: per predicate (a relation, its demand, true, does, a rule's
    chain) its arity and atoms."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.sizes: list[tuple[str, int, int]] = []


class CompiledUnavailableError(CompileRefusedError):
    """The compiled engine's C extension is not built in this installation."""
