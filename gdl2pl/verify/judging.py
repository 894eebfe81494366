"""Judging an engine's records as they arrive, keeping only what the game's result needs.

A ``Judge`` takes the engine's records one at a time (``take``, the engine runner's
``on_record``), so a game's records are never all in memory at once: an engine that
prints large states costs one record's worth, not its whole output parsed. Its
``compare`` is a generator that receives each record at a ``yield`` (``END`` after the
last) and returns whether the engine may be stopped; records past that point are only
counted.
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator
from typing import Any

from .oracle_link import Record
from .oracle_link import StateMachine

#: What a judge receives after the engine's last record.
END: Any = object()

Steps = Generator[None, Any, bool]


class Judge:
    """Compares an engine's records with gdl2pl's ``mine`` (one list per match):
    ``compared`` steps so far, and ``problem``, what is wrong with the engine's answers
    (None while nothing is)."""

    def __init__(self, mine: list[list[Record]]) -> None:
        self.mine = mine
        self.expected = sum(map(len, mine))
        self.compared = 0
        self.problem: str | None = None
        self._steps = self.compare()
        self._done = False
        try:
            next(self._steps)
        except StopIteration:  # nothing to compare
            self._done = True

    def compare(self) -> Steps:
        """Receive the engine's records (``record = yield``) until ``END``; return True
        when what follows is of no use (the engine may be stopped)."""
        raise NotImplementedError

    def take(self, record: Any) -> bool:
        """Judge one record; False when the engine may be stopped."""
        if self._done:
            return True
        try:
            self._steps.send(record)
        except StopIteration as e:
            self._done = True
            return not e.value
        return True

    def end(self) -> None:
        """The engine printed no more records."""
        if not self._done:
            self._done = True
            with contextlib.suppress(StopIteration):
                self._steps.send(END)


class GameJudge(Judge):
    """A ``Judge`` of one game's records: the game's ``path``, gdl2pl's machine ``sm``,
    the joint moves of each match (``move_lists``), and ``missing``, where the engine's
    records ran out (None while they have not). A subclass sets its own fields in
    ``begin``, called before ``compare`` starts."""

    def __init__(
        self,
        path: str,
        sm: StateMachine,
        mine: list[list[Record]],
        move_lists: list[list[list[str]]],
    ) -> None:
        self.path = path
        self.sm = sm
        self.move_lists = move_lists
        self.missing: str | None = None
        self.begin()
        super().__init__(mine)

    def begin(self) -> None:
        """Set the subclass's own fields (called once, before ``compare`` starts)."""
