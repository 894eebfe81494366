"""The player's search keeps its budget and says what it did (issue 42 item 1): the
budget is a promise (``SEARCH_MARGIN``) on a game whose steps are slow and grow, with
another process taking a core, and with a garbage collector that stalls; each move and
each match is logged with what was searched."""

from __future__ import annotations

import gc
import logging
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from conftest import EXAMPLES
from conftest import REPO

from gdl2pl.bridge import StateMachine
from gdl2pl.ggp import collection
from gdl2pl.ggp.mcts import MctsStrategy
from gdl2pl.ggp.player import GamePlayer
from gdl2pl.ggp.protocol import one_line_rules
from gdl2pl.ggp.strategy import SEARCH_MARGIN
from gdl2pl.ggp.strategy import Budget
from gdl2pl.ggp.strategy import make_strategy
from gdl2pl.load import read_game

SLOW = REPO / "tests" / "games" / "slow_steps.kif"
TTT = EXAMPLES / "ticTacToe.kif"


pytestmark = pytest.mark.usefixtures("prolog_main_thread")


@contextmanager
def another_process_on_a_core() -> Iterator[None]:
    """A CPU-bound process running for the block (the machine under load)."""
    hog = subprocess.Popen([sys.executable, "-P", "-c", "while True: pass"])
    try:
        yield
    finally:
        hog.kill()
        hog.wait()


def _searches(sm: StateMachine, strategy: MctsStrategy, budget: float, moves: int) -> list[float]:
    """Seconds each of ``moves`` searches for the first role took (measured around
    ``select_move``); the others play their first legal move."""
    role = sm.roles[0]
    strategy.metagame(sm, role, Budget.seconds(1))
    state, took = sm.initial_state, []
    try:
        while len(took) < moves and not sm.is_terminal(state):
            joint = [sm.legal_moves(state, r)[0] for r in sm.roles]
            legal = sm.legal_moves(state, role)
            if len(legal) > 1:
                began = time.monotonic()
                joint[0] = strategy.select_move(state, legal, Budget.seconds(budget), print)
                took.append(time.monotonic() - began)
                assert joint[0] in legal
            state = sm.next_state(state, joint)
    finally:
        strategy.finish()
    assert len(took) == moves
    return took


def test_a_search_keeps_its_budget_on_a_slow_game_under_load() -> None:
    """slow_steps' steps take tens of ms and grow as the game goes on, and a random game
    from its start takes seconds: every search returns within its budget and the margin,
    with another process busy. (Before: the first random game ran 16 steps whatever the
    time left, and a later one was sized by an average that the growing steps outran.)"""
    with StateMachine.from_file(SLOW) as sm, another_process_on_a_core():
        budget = 0.6
        took = _searches(sm, MctsStrategy(seed=1), budget, moves=5)
    assert max(took) <= budget + SEARCH_MARGIN, took


def test_no_garbage_collection_stalls_a_search() -> None:
    """A collection scans the whole heap, the tree included (100-450 ms seen on
    connectFour): here every collection takes 0.2 s, and no search may run past its
    budget and the margin for it. (Before: the searches on this game overran by up to
    0.2 s, collections coming every few dozen iterations.)"""

    def stall(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            time.sleep(0.2)

    with StateMachine.from_file(TTT) as sm:
        strategy = MctsStrategy(seed=2)
        gc.callbacks.append(stall)
        try:
            took = _searches(sm, strategy, 0.3, moves=3)
        finally:
            gc.callbacks.remove(stall)
    assert max(took) <= 0.3 + SEARCH_MARGIN, took


def test_each_search_reports_what_it_did() -> None:
    with StateMachine.from_file(TTT) as sm:
        s = MctsStrategy(seed=3)
        x = sm.roles[0]
        s.metagame(sm, x, Budget.seconds(1))
        state = sm.initial_state
        legal = sm.legal_moves(state, x)
        move = s.select_move(state, legal, Budget.seconds(0.3), lambda m: None)
        [report] = s.take_reports()
        assert s.take_reports() == []  # taken once
        assert report.move == move and report.iterations == s.iterations > 50
        assert 1 <= report.depth <= 9  # ticTacToe has 9 moves at most
        assert 0 < report.visits <= report.iterations and 0 <= report.value <= 100
        assert report.nodes == s.nodes and 0.25 < report.budget <= 0.3
        assert report.seconds <= report.budget + SEARCH_MARGIN and report.over <= SEARCH_MARGIN
        s.finish()


def test_collection_is_paused_for_searches_and_given_back_after_the_match() -> None:
    assert gc.isenabled()
    hold = collection.Hold()
    frozen = gc.get_freeze_count()
    with collection.paused():
        assert not gc.isenabled()
        with collection.paused():  # nested, as a GDL-II move searches several states
            assert not gc.isenabled()
        assert not gc.isenabled()
        kept = [[i] for i in range(1000)]  # made during the search: frozen after it
    assert gc.isenabled()
    assert gc.get_freeze_count() >= frozen + len(kept)
    hold.release()
    hold.release()  # idempotent
    assert gc.get_freeze_count() == 0  # nothing else froze objects in this process
    gc.disable()  # a user's own choice is left alone
    try:
        with collection.paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def move_line(match: str, clock: int) -> re.Pattern[str]:
    """A move's log line after a search (``gdl2pl.ggp.search_log``)."""
    return re.compile(
        rf"{match}: play (\d+): (\S+|\(.*\)): ([\d,]+) iterations"
        r"(?: \(on ([\d,]+) visits kept from before\))?, depth (\d+), "
        r"the move ([\d,]+) visits, (?:value (\d+\.\d)|proved worth (\d+)); "
        r"searched (\d+\.\d\d) s of its "
        rf"(\d+\.\d\d) s; replied (\d+\.\d\d) s into the {clock} s clock"
    )


def match_line(match: str, clock: int) -> re.Pattern[str]:
    """A match's log line at its end."""
    return re.compile(
        rf"{match}: searched (\d+) of (\d+) moves: ([\d,]+) iterations \(([\d,]+) a move\), "
        r"deepest (\d+), longest (\d+\.\d\d) s of its (\d+\.\d\d) s, none past its budget "
        r"by more than 0\.05 s \(at most (\d+\.\d\d) s\); slowest reply (\d+\.\d\d) s "
        rf"into the {clock} s clock"
    )


def test_the_player_logs_every_move_and_the_match(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="gdl2pl.player")
    p = GamePlayer(lambda: make_strategy("mcts", 4), name="logged")
    try:
        text = one_line_rules(read_game(TTT))
        assert p.handle(f"(start m1 xplayer ({text}) 5 2)").body == "ready"
        replies = [p.handle("(play m1 nil)").body]
        # O's turn: X's only move is noop; then O takes a cell X did not
        replies.append(p.handle(f"(play m1 ({replies[0]} noop))").body)
        cell = next(c for c in ("(mark 1 1)", "(mark 2 2)") if c != replies[0])
        replies.append(p.handle(f"(play m1 (noop {cell}))").body)
        assert p.handle("(stop m1 nil)").body == "done"
    finally:
        p.close()
    lines = [r.getMessage() for r in caplog.records]
    searched = [m for line in lines if (m := move_line('m1', 2).fullmatch(line))]
    forced = [line for line in lines if line.endswith("into the 2 s clock") and "nothing" in line]
    assert [int(m[1]) for m in searched] == [1, 3]  # O's turn (play 2): X's only move, noop
    assert forced == [
        next(line for line in lines if line.startswith("m1: play 2: noop, nothing searched"))
    ]
    for m, reply in zip(searched, [replies[0], replies[2]], strict=True):
        assert m[2] == reply
        iterations, kept, depth, visits = (int((m[i] or "0").replace(",", "")) for i in range(3, 7))
        # tree reuse: the root's visits are this search's iterations plus those kept
        # a root the solver proved is not searched again: no iterations, depth 0
        assert iterations + kept > 0 and depth <= 9 and (depth >= 1 or iterations == 0)
        assert 0 < visits <= iterations + kept
        assert float(m[9]) <= float(m[10]) + SEARCH_MARGIN  # searched within its budget
        assert float(m[11]) < 2.0  # replied within the play clock
    [summary] = [m for line in lines if (m := match_line('m1', 2).fullmatch(line))]
    assert (int(summary[1]), int(summary[2])) == (2, 3)
    total = sum(int(m[3].replace(",", "")) for m in searched)
    assert int(summary[3].replace(",", "")) == total
    assert int(summary[5]) == max(int(m[5]) for m in searched)


def test_the_readme_shows_the_log_lines_the_player_writes() -> None:
    """The README's example match is written in the format of the lines above."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    lines = [
        line.removeprefix("gdl2pl.player INFO: ")
        for line in text.splitlines()
        if line.startswith("gdl2pl.player INFO: demo: ")
    ]
    moves = [line for line in lines if move_line("demo", 3).fullmatch(line)]
    forced = [line for line in lines if "nothing searched; replied" in line]
    ends = [line for line in lines if match_line("demo", 3).fullmatch(line)]
    assert len(moves) >= 2 and forced and len(ends) == 1
    assert len(moves) + len(forced) + len(ends) + 1 == len(lines)  # and the goal's line


def test_a_gdl2_move_line_sums_the_searches_of_its_sampled_states() -> None:
    """A GDL-II move searches several sampled states: its line sums their iterations and
    times, and averages the value over the searches that chose the move sent."""
    from gdl2pl.ggp.search_log import move_line
    from gdl2pl.ggp.strategy import SearchReport
    from gdl2pl.kif import parse_kif_term

    a, b = parse_kif_term("(act raise)"), parse_kif_term("(act check)")
    reports = [
        SearchReport(a, 100, 3, 60, 80.0, 0.4, 0.45, 120),
        SearchReport(b, 200, 5, 90, 40.0, 0.5, 0.45, 220),
        SearchReport(a, 300, 4, 20, 20.0, 0.4, 0.45, 310),
    ]
    line = move_line(reports, "(act raise)", 1.31, 2)
    assert line == (
        "(act raise) over 3 states: 600 iterations, depth 5, the move 80 visits, value 65.0; "
        "searched 1.30 s of its 1.35 s; replied 1.31 s into the 2 s clock"
    )
    forced = move_line([], "noop", 0.0, 2)
    assert forced == "noop, nothing searched; replied 0.00 s into the 2 s clock"


def test_a_move_line_names_the_visits_its_tree_kept_from_the_moves_before() -> None:
    """With tree reuse the move may have more visits than this search's iterations: the
    line says how many visits the root had before the search began."""
    from gdl2pl.ggp.search_log import move_line as written
    from gdl2pl.ggp.strategy import SearchReport
    from gdl2pl.kif import parse_kif_term

    move = parse_kif_term("(mark 1 2)")
    report = SearchReport(move, 899, 5, 932, 64.2, 0.01, 0.89, 2000, reused=1034)
    line = written([report], "(mark 1 2)", 0.02, 2)
    assert line == (
        "(mark 1 2): 899 iterations (on 1,034 visits kept from before), depth 5, "
        "the move 932 visits, value 64.2; searched 0.01 s of its 0.89 s; "
        "replied 0.02 s into the 2 s clock"
    )
    assert move_line("m1", 2).fullmatch(f"m1: play 3: {line}")
    proved = SearchReport(move, 0, 0, 49, 93.9, 0.0, 1.87, 400, reused=217, proven=100.0)
    line = written([proved], "(mark 1 2)", 0.04, 2)
    assert ": 0 iterations (on 217 visits kept from before), depth 0," in line
    assert "the move 49 visits, proved worth 100;" in line  # not its average so far
    assert move_line("m1", 2).fullmatch(f"m1: play 5: {line}")
