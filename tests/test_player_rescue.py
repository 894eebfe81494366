"""A legal move for every play, whatever the match's worker is doing (``gdl2pl.ggp.fallback``).

The worker here is stuck for good (a strategy's metagame, or the load itself, waits on an
event nothing sets until the test ends): the plays must still be answered in time, with a
legal move found by the rescue thread from the state the worker last reached and the joint
moves since, or, while the game is not loaded at all, with the rules' guess -- never ``nil``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import prolog_env
import pytest
from conftest import EXAMPLES

from gdl2pl.ggp.fallback import guess_move
from gdl2pl.ggp.protocol import one_line_rules
from gdl2pl.load import read_game

TTT = EXAMPLES / "ticTacToe.kif"


@pytest.fixture(autouse=True)
def prolog() -> None:
    prolog_env.require_prolog()
    from gdl2pl.bridge.swipl import attach_thread

    attach_thread()


def start(match_id: str, role: str, clocks: tuple[int, int] = (1, 1)) -> str:
    return f"(start {match_id} {role} ({one_line_rules(read_game(TTT))}) {clocks[0]} {clocks[1]})"


class _StuckMetagame:
    """A strategy whose metagame waits for ``release``, ignoring its budget: the worker
    has the game loaded, then answers nothing."""

    name = "stuck"
    searches = True

    def __init__(self, release: threading.Event) -> None:
        self.release = release

    def metagame(self, sm: Any, role: Any, budget: Any) -> None:
        self.release.wait(timeout=60)

    def select_move(self, state: Any, legal: list[Any], budget: Any, offer: Any) -> Any:
        return legal[-1]

    def take_reports(self) -> list[Any]:
        return []

    def finish(self) -> None:
        pass


@contextmanager
def stuck_player(cls: Any = None) -> Iterator[Any]:
    from gdl2pl.ggp.player import GamePlayer

    release = threading.Event()
    make = cls or GamePlayer
    p = make(lambda: _StuckMetagame(release), margin=0.2, engine="prolog")
    try:
        yield p
    finally:
        release.set()
        p.close()


def timed(p: Any, message: str, clock: float = 1.0) -> str:
    """The reply to ``message``, asserted to leave within ``clock`` seconds."""
    t0 = time.monotonic()
    reply = p.handle(message, received=t0)
    assert time.monotonic() - t0 < clock
    assert reply.status == 200
    return str(reply.body)


def test_a_stuck_worker_still_gets_legal_moves_that_follow_the_match() -> None:
    with stuck_player() as p:
        assert timed(p, start("m", "xplayer")) == "ready"  # sent while the metagame hangs
        # every move is the first legal one of the state the joint moves lead to, found
        # by the rescue thread: the worker never applies any of them
        assert timed(p, "(play m nil)") == "(mark 1 1)"
        assert timed(p, "(play m ((mark 1 1) noop))") == "noop"
        assert timed(p, "(play m (noop (mark 1 2)))") == "(mark 1 3)"
        assert timed(p, "(play m ((mark 1 3) noop))") == "noop"
        assert timed(p, "(play m (noop (mark 2 2)))") == "(mark 2 1)"
        assert timed(p, "(abort m)") == "aborted"


def test_the_other_seat_of_a_stuck_worker_moves_too() -> None:
    with stuck_player() as p:
        assert timed(p, start("o", "oplayer")) == "ready"
        assert timed(p, "(play o nil)") == "noop"
        assert timed(p, "(play o ((mark 2 2) noop))") == "(mark 1 1)"


def test_a_worker_stuck_loading_sends_the_rules_guess() -> None:
    from gdl2pl.ggp.player import GamePlayer

    class LoadsForever(GamePlayer):
        """The network is never built: the machine is never handed to the match."""

        gate = threading.Event()

        def _compiled(self, sm: Any, budget: Any) -> Any:
            self.gate.wait(timeout=60)
            return sm

    from gdl2pl.ggp.strategy import make_strategy

    p = LoadsForever(lambda: make_strategy("legal"), margin=0.2, engine="compiled")
    try:
        assert timed(p, start("g", "oplayer")) == "ready"
        # no state is known: the first ground move of oplayer's legal rules, which holds
        assert timed(p, "(play g nil)") == "noop"
    finally:
        LoadsForever.gate.set()
        p.close()


def test_the_guess_is_the_roles_first_ground_legal_move() -> None:
    d = read_game(TTT)
    assert str(guess_move(d, "oplayer")) == "noop"
    assert str(guess_move(d, "XPLAYER")) == "noop"  # KIF names are case-insensitive
    assert guess_move(d, "nobody") is None
    assert guess_move(None, "oplayer") is None


def test_a_play_the_worker_refuses_is_answered_at_once() -> None:
    """No move is offered for a play whose joint move is illegal: the refusal is sent as
    soon as the worker has it, not when the rescue would start (half the clock)."""
    from gdl2pl.ggp.player import GamePlayer
    from gdl2pl.ggp.strategy import make_strategy

    p = GamePlayer(lambda: make_strategy("legal"), engine="prolog")
    try:
        assert timed(p, start("r", "xplayer", (5, 20)), 5) == "ready"
        assert timed(p, "(play r nil)", 20) == "(mark 1 1)"
        t0 = time.monotonic()
        reply = p.handle("(play r ((mark 9 9) noop))", received=t0)
        assert reply.status == 400
        assert time.monotonic() - t0 < 5  # the rescue would wait until 9 s
        assert timed(p, "(play r ((mark 1 1) noop))", 20) == "noop"  # the match goes on
    finally:
        p.close()
