"""What a machine built on the reasoner asks of it, named one by one: ``ReasonerPart``,
shared by ``CompiledMachine`` and ``AutoMachine``. The declared sets (``base``,
``input``, ``percept``) are the game's text, and the game's module and its ``using``
guard are for the tools that query the runtime themselves (explain, analysis): none of
them is a question of a state, so the network has no answer of its own to give.
"""

from __future__ import annotations

from contextlib import AbstractContextManager

from gdl2pl.bridge import StateMachine
from gdl2pl.syntax import Term


class ReasonerPart:
    """The part of a machine that the Prolog engine it was built on (``prolog``)
    answers."""

    prolog: StateMachine

    @property
    def module(self) -> str:
        """The Prolog module the reasoner loaded the game into."""
        return self.prolog.module

    def using(self) -> AbstractContextManager[None]:
        """Hold the game loaded while the calling thread queries its module."""
        return self.prolog.using()

    @property
    def base_propositions(self) -> list[Term]:
        return self.prolog.base_propositions

    def input_moves(self, role: Term | str) -> list[Term]:
        return self.prolog.input_moves(role)

    def declared_percepts(self, role: Term | str) -> list[Term]:
        return self.prolog.declared_percepts(role)
