"""The player thinks on time nobody waits for (issue 51 item 2): between plays its worker
grows the MCTS tree of the state reached, and stops for the next message; with
``think_at_start`` it searches the first state before answering ``ready``. Both keep the
clocks (replies within them, with margins), and the next search starts from the tree."""

from __future__ import annotations

import time
from typing import Any

import pytest
from conftest import EXAMPLES

from gdl2pl.ggp.player import GamePlayer
from gdl2pl.ggp.protocol import one_line_rules
from gdl2pl.ggp.strategy import make_strategy
from gdl2pl.load import read_game

TTT = EXAMPLES / "ticTacToe.kif"

pytestmark = pytest.mark.usefixtures("prolog_main_thread")


def start(match_id: str, role: str, clocks: tuple[int, int]) -> str:
    return f"(start {match_id} {role} ({one_line_rules(read_game(TTT))}) {clocks[0]} {clocks[1]})"


def timed(p: GamePlayer, message: str, clock: float) -> str:
    t0 = time.monotonic()
    reply = p.handle(message, received=t0)
    assert time.monotonic() - t0 < clock
    assert reply.status == 200
    return reply.body


def root_visits(p: GamePlayer) -> int:
    match = p._match
    assert match is not None
    root: Any = match.strategy.root  # type: ignore[attr-defined]
    return 0 if root is None else int(root.n)


def test_the_worker_ponders_between_plays_and_stops_for_the_next() -> None:
    p = GamePlayer(lambda: make_strategy("mcts", 1), margin=0.3, engine="prolog")
    try:
        assert timed(p, start("m", "oplayer", (2, 2)), 2) == "ready"
        assert timed(p, "(play m nil)", 2) == "noop"  # forced: nothing searched
        time.sleep(0.3)
        before = root_visits(p)
        time.sleep(1.0)  # x thinks: o's worker searches the state it is in
        after = root_visits(p)
        assert after > before > 0
        # the ponder stops for the play, which is answered in time from the tree
        move = timed(p, "(play m ((mark 2 2) noop))", 2)
        assert move.startswith("(mark ")
        assert timed(p, "(abort m)", 1) == "aborted"
    finally:
        p.close()


def test_think_at_start_searches_the_first_state_before_ready() -> None:
    p = GamePlayer(
        lambda: make_strategy("mcts", 2), margin=0.3, engine="prolog", think_at_start=True
    )
    try:
        t0 = time.monotonic()
        assert timed(p, start("s", "xplayer", (3, 2)), 3) == "ready"
        # the start clock was used: the reply came near its deadline, the tree grown
        assert time.monotonic() - t0 > 1.0
        assert root_visits(p) > 0
        assert timed(p, "(play s nil)", 2).startswith("(mark ")
        assert timed(p, "(abort s)", 1) == "aborted"
    finally:
        p.close()


def test_a_strategy_that_does_not_search_answers_ready_at_once() -> None:
    p = GamePlayer(lambda: make_strategy("legal"), engine="prolog", think_at_start=True)
    try:
        t0 = time.monotonic()
        assert timed(p, start("l", "xplayer", (30, 2)), 30) == "ready"
        assert time.monotonic() - t0 < 15  # nothing to think about: no start clock used
        assert timed(p, "(abort l)", 1) == "aborted"
    finally:
        p.close()


@pytest.mark.parametrize(("start_clock", "least", "most"), [(5, 60.0, 60.0), (120, 95.0, 108.0)])
def test_the_background_grounding_gets_the_start_clock_when_it_is_longer(
    monkeypatch: pytest.MonkeyPatch, start_clock: int, least: float, most: float
) -> None:
    """On ``auto`` the network is ground in the background within the start clock left
    before ``ready`` (120 s less its 12 s margin), or ``AUTO_SECONDS`` (60 s) where that
    is longer: a long start clock is time the player has for it."""
    from gdl2pl.ggp import player as player_module

    asked: list[float] = []
    real = player_module.on_engine

    def recording(sm: Any, engine: Any, *, budget: Any = None) -> Any:
        asked.append(budget.seconds)
        return real(sm, engine, budget=budget)

    monkeypatch.setattr(player_module, "on_engine", recording)
    p = GamePlayer(lambda: make_strategy("legal"), engine="auto")
    try:
        assert timed(p, start("g", "xplayer", (start_clock, 2)), start_clock) == "ready"
        assert timed(p, "(abort g)", 2) == "aborted"
    finally:
        p.close()
    [seconds] = asked
    assert least <= seconds <= most
