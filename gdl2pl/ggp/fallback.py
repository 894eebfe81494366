"""A move for a play whose match worker has none in time: found by another thread
(``Rescue``), or guessed from the rules while the game is not loaded yet (``guess_move``).

A player answers every ``play`` with a move, whatever its worker is doing: searching past
its clock, stuck in a question nothing interrupts, still loading the game, or dead. The
player's handler gives its worker until half the time of the reply to offer a move (it
offers the first legal move as soon as it knows the state, before any search); if none
came by then, it asks the ``Rescue`` thread, which has a Prolog engine of its own: from
the last state the worker reached, it applies the joint moves of the plays since and
takes the role's first legal move (sorted, as the worker's first offer). A game that is
not loaded yet has no state to start from: the handler then sends ``guess_move``'s move,
the first ground move a ``legal`` rule of the role names, which is legal when that rule's
body holds (a guess, logged as such) -- still better than ``nil``, which never is.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field

from gdl2pl.contract import GameMachine
from gdl2pl.contract import MachineState
from gdl2pl.kif import kif_term
from gdl2pl.syntax import Const
from gdl2pl.syntax import Description
from gdl2pl.syntax import Fact
from gdl2pl.syntax import Func
from gdl2pl.syntax import Rule
from gdl2pl.syntax import Term
from gdl2pl.syntax import Var
from gdl2pl.syntax import is_ground

from .protocol import shown

log = logging.getLogger("gdl2pl.player")

#: The joint moves of one play as received (``None`` for the first play's ``nil``).
PlayMoves = tuple[Term, ...] | None


@dataclass
class RescueRequest:
    """One question to the rescue thread; ``done`` is set once ``move`` is known (``None``:
    the state reached is terminal, or the question failed, ``error`` says why)."""

    sm: GameMachine
    role: Term
    state: MachineState
    plays: Sequence[PlayMoves]
    done: threading.Event = field(default_factory=threading.Event)
    move: Term | None = None
    error: str | None = None


class Rescue:
    """A thread that finds a legal move for a late play (see the module doc). It starts
    with its first request and serves one request at a time, in order."""

    def __init__(self) -> None:
        self._requests: queue.Queue[RescueRequest | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def ask(
        self, sm: GameMachine, role: Term, state: MachineState, plays: Sequence[PlayMoves]
    ) -> RescueRequest:
        """The role's first legal move after ``plays`` from ``state``, found in the
        background: wait on the request's ``done`` for as long as the reply can."""
        request = RescueRequest(sm, role, state, tuple(plays))
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="gdl2pl-rescue", daemon=True)
                self._thread.start()
        self._requests.put(request)
        return request

    def _run(self) -> None:
        while (request := self._requests.get()) is not None:
            try:
                request.move = first_legal_after(
                    request.sm, request.role, request.state, request.plays
                )
            except Exception as e:  # the game was closed, a move did not apply, ...
                text = str(e).strip()
                request.error = shown(text.splitlines()[0] if text else type(e).__name__, 300)
            finally:
                request.done.set()

    def close(self) -> None:
        if self._thread is not None:
            self._requests.put(None)
            self._thread.join(timeout=5)


def first_legal_after(
    sm: GameMachine, role: Term, state: MachineState, plays: Sequence[PlayMoves]
) -> Term | None:
    """``role``'s first legal move in the state ``plays`` lead to from ``state`` (``None``
    if that state is terminal or the role has no move there)."""
    for moves in plays:
        if moves is not None:
            state = sm.next_state(state, [sm.term(kif_term(m)) for m in moves])
    if sm.is_terminal(state):
        return None
    legal = sm.legal_moves(state, role)
    return legal[0] if legal else None


def guess_move(description: Description | None, role_name: str) -> Term | None:
    """The first ground move a ``legal`` rule (or fact) of the role ``role_name`` names,
    in the order of the rules (``None`` if there is none): legal wherever that rule's
    body holds, a guess anywhere else."""
    if description is None:
        return None
    role = role_name.casefold()
    for clause in description.clauses:
        if not isinstance(clause, Fact | Rule):
            continue
        head = clause.head
        if not (isinstance(head, Func) and head.name.casefold() == "legal" and len(head.args) == 2):
            continue
        who, move = head.args
        mine = isinstance(who, Var) or (isinstance(who, Const) and who.name.casefold() == role)
        if mine and is_ground(move):
            return move
    return None
