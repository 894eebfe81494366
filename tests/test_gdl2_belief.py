"""A GDL-II player's belief kept from turn to turn (``gdl2pl.ggp.belief_tracker``): every
state it holds agrees with the history, it never holds a terminal state while the game
goes on, it stays within its size and deadline, and it finds its way back by search when
its particles all die."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest
from conftest import EXAMPLES

from gdl2pl.bridge import StateMachine
from gdl2pl.bridge.errors import GameError
from gdl2pl.ggp.belief_tracker import BeliefTracker
from gdl2pl.ggp.hidden import Knowledge
from gdl2pl.ggp.hidden import choose_move
from gdl2pl.ggp.strategy import Budget
from gdl2pl.ggp.strategy import make_strategy
from gdl2pl.ggp.witness import Witness
from gdl2pl.information import Turn
from gdl2pl.information import belief
from gdl2pl.kif import parse_kif_term

GAMES = Path(__file__).parent / "games" / "gdl2"
MARKS = GAMES / "blind_marks_5x5.kif"
ORACLE = GAMES / "dice_oracle.kif"
MONTY = EXAMPLES / "montyHall.kif"

pytestmark = pytest.mark.usefixtures("prolog_main_thread")


def played(sm: StateMachine, role: str, turns: int, seed: int) -> list[Turn]:
    """``role``'s history of a match of random moves, at most ``turns`` long, stopping
    before a terminal state (a play message would not come after it)."""
    rng = random.Random(seed)
    state, history = sm.initial_state, []
    index = [str(r) for r in sm.roles].index(role)
    for _ in range(turns):
        joint = [rng.choice(ms) for ms in sm.all_legal_moves(state)]
        seen = sm.percepts(state, joint, role)
        state = sm.next_state(state, joint)
        if sm.is_terminal(state):
            break
        history.append(Turn(joint[index], tuple(seen)))
    return history


@pytest.mark.parametrize("seed", [1, 3])
def test_particles_hold_only_states_of_the_exact_belief(
    seed: int,
) -> None:
    with StateMachine.from_file(MARKS) as sm:
        role = sm.term("white")
        history = played(sm, "white", 7, seed)
        tracker = BeliefTracker(sm, role, random.Random(seed), exact_limit=4, particles=2)
        for n, turn in enumerate(history, 1):
            tracker.update(turn, time.monotonic() + 30)
            assert tracker.states, f"lost at turn {n}"
            if n in (4, len(history)):  # the exact belief costs seconds a turn
                exact = belief(sm, history[:n], role, budget=20_000)
                assert set(tracker.states) <= set(exact), f"turn {n}"
            assert len(tracker.states) <= 4
            assert abs(sum(tracker.states.values()) - 1.0) < 1e-9
        assert not tracker.exact  # the belief outgrew 4 states


def test_an_exact_belief_is_the_belief_while_it_fits() -> None:
    with StateMachine.from_file(MARKS) as sm:
        role = sm.term("black")
        history = played(sm, "black", 5, 4)
        tracker = BeliefTracker(sm, role, random.Random(0), exact_limit=10_000)
        for turn in history:
            tracker.update(turn, time.monotonic() + 30)
        exact = belief(sm, history, role, budget=20_000)
        assert tracker.exact
        assert tracker.states.keys() == exact.keys()
        for s, p in exact.items():
            assert tracker.states[s] == pytest.approx(float(p))


def test_an_update_with_no_time_keeps_one_consistent_state_and_the_next_finds_more() -> None:
    """An update past its deadline expands nothing but the witness's children: one
    state consistent with the whole history is still known (the player's move is legal
    there), and the next update with time holds the belief again."""
    with StateMachine.from_file(MARKS) as sm:
        role = sm.term("white")
        history = played(sm, "white", 7, 1)
        assert len(history) == 7
        tracker = BeliefTracker(sm, role, random.Random(1), exact_limit=10_000)
        for turn in history[:5]:
            tracker.update(turn, time.monotonic() + 30)
        start = time.monotonic()
        expanded = tracker.witness.expansions
        tracker.update(history[5], start - 1)  # no time at all: only the witness's turn
        assert tracker.witness.expansions - expanded <= 1
        assert time.monotonic() - start < 2.0
        assert not tracker.exact
        exact6 = belief(sm, history[:6], role, budget=50_000)
        assert tracker.states and set(tracker.states) <= set(exact6)
        assert tracker.witness.state in exact6
        tracker.update(history[6], time.monotonic() + 30)
        assert tracker.states
        assert set(tracker.states) <= set(belief(sm, history, role, budget=50_000))


def test_a_belief_lost_for_want_of_time_is_found_again_by_the_next_update() -> None:
    """When the witness dies on a turn with no time (and so do the states held), the
    belief is lost; the next update's depth-first search finds it again."""
    with StateMachine.from_file(MARKS) as sm:
        role = sm.term("white")
        history = played(sm, "white", 7, 1)
        tracker = BeliefTracker(sm, role, random.Random(1), exact_limit=10_000)
        for turn in history[:4]:
            tracker.update(turn, time.monotonic() + 30)

        def dies(state: object) -> bool:
            try:
                kids = sm.consistent_successors(state, role, *history[4])  # type: ignore[arg-type]
            except GameError:
                return True
            return not kids

        doomed = next(s for s in sorted(tracker.states, key=str) if dies(s))
        tracker.states = {doomed: 1.0}
        tracker.witness.adopt(doomed)
        tracker.update(history[4], time.monotonic() - 1)
        assert tracker.lost and not tracker.exact
        tracker.update(history[5], time.monotonic() + 30)
        assert tracker.states and tracker.witness.state in tracker.states
        assert set(tracker.states) <= set(belief(sm, history[:6], role, budget=50_000))


def test_terminal_states_leave_the_belief_of_a_game_that_goes_on() -> None:
    with StateMachine.from_file(ORACLE) as sm:
        seer = sm.term("seer")
        tracker = BeliefTracker(sm, seer, random.Random(0))
        tracker.update(Turn(parse_kif_term("(call 2)"), ()), time.monotonic() + 30)
        # the call was right (a terminal state) or chance threw 1, 3 or 4 (one state)
        assert len(belief(sm, [("(call 2)", ())], seer)) == 2
        assert [str(s) for s in tracker.states] == ["((turn 2))"]
        assert sum(tracker.states.values()) == pytest.approx(1.0)


def test_a_move_is_chosen_when_the_belief_held_terminal_states() -> None:
    """The player's move is legal although one state the history allows has ended."""
    with StateMachine.from_file(ORACLE) as sm:
        seer = sm.term("seer")
        knowledge = Knowledge()
        knowledge.learn(sm, 0, None, None)
        strategy = make_strategy("mcts", 1)
        strategy.metagame(sm, seer, Budget.seconds(1))
        for turn in (1, 2, 3):
            knowledge.learn(sm, turn, parse_kif_term("(call 1)"), ())
            move = choose_move(
                sm, seer, knowledge, strategy, Budget.seconds(0.3), lambda m: None, random.Random(1)
            )
            assert move is not None and str(move).startswith("(call ")


def test_a_lost_belief_still_gives_a_guess_legal_in_the_nearest_state() -> None:
    with StateMachine.from_file(MARKS) as sm:
        white = sm.term("white")
        tracker = BeliefTracker(sm, white, random.Random(0))
        # white's first try cannot be taken: nothing is marked yet
        tracker.update(Turn(parse_kif_term("(try 1 1)"), ("(taken 1 1)",)), time.monotonic() + 5)
        assert tracker.lost
        # nearest: the try marked the cell, and black has the turn
        after = sm.next_state(sm.initial_state, ["(try 1 1)", "noop"])
        assert [str(m) for m in tracker.guess_moves()] == ["noop"]
        assert [str(m) for m in sm.legal_moves(after, white)] == ["noop"]


def test_a_guess_leaves_out_the_moves_the_manager_did_not_take() -> None:
    with StateMachine.from_file(MARKS) as sm:
        black = sm.term("black")
        tracker = BeliefTracker(sm, black, random.Random(0))
        # white's first try always marks a cell and black is told so: silence cannot be
        tracker.update(Turn(sm.term("noop"), ()), time.monotonic() + 5)
        assert tracker.lost
        guesses = [str(m) for m in tracker.guess_moves()]
        assert len(guesses) == 25 and "(try 1 1)" in guesses
        tracker.refuse(parse_kif_term("(try 1 1)"))
        assert [str(m) for m in tracker.guess_moves()] == [g for g in guesses if g != "(try 1 1)"]


def test_the_nearest_states_of_a_lost_belief_allow_the_move_the_role_played() -> None:
    """The manager took the role's move, so the true state allows it: a state where it is
    not legal is farther from the history than any difference of percepts."""
    with StateMachine.from_file(MARKS) as sm:
        black = sm.term("black")
        start = sm.initial_state  # white's turn: black's try is not legal
        marked = sm.next_state(start, ["(try 1 1)", "noop"])  # black's turn, (1 1) white's
        tracker = BeliefTracker(sm, black, random.Random(0))
        tracker.states = {start: 0.5, marked: 0.5}
        # no state agrees: from `marked` black is told (taken 1 1), from `start` yourturn
        tracker.update(Turn(sm.term("(try 1 1)"), ("(ok 1 1)",)), time.monotonic() + 5)
        assert tracker.lost
        # the nearest came from `marked`: black tried (1 1) there and may not try it again
        guesses = [str(m) for m in tracker.guess_moves()]
        assert guesses and "(try 1 1)" not in guesses and "noop" not in guesses


def test_a_guess_is_for_this_turn_when_no_nearest_state_was_reached(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """When not even a near miss of this turn was reached in time, the guess comes from
    the last turn's states advanced by the role's move, not from them as they are (at
    tic-tac-toe-like turns, the last turn's legal moves are exactly the wrong ones)."""
    with StateMachine.from_file(MARKS) as sm:
        white = sm.term("white")
        tracker = BeliefTracker(sm, white, random.Random(0))
        monkeypatch.setattr(tracker, "_near_misses", lambda *args: {})
        tracker.update(Turn(parse_kif_term("(try 1 1)"), ("(taken 1 1)",)), time.monotonic() + 5)
        assert tracker.lost
        # the initial state, where white may try any cell, advanced by white's try
        assert [str(m) for m in tracker.guess_moves()] == ["noop"]


def test_a_move_started_too_late_is_legal_in_the_witness_not_a_guess() -> None:
    """No time at all for a turn (the turn before ran over): the move comes from the
    witness followed through the turn, legal in a state consistent with the whole
    history. The guess of old, the heaviest state of the turn before advanced at random,
    has black on (1 2): there white's try of (1 2) is taken and white tries again, while
    the manager said it was ok, so black has the turn and white's only move is noop."""
    with StateMachine.from_file(MARKS) as sm:
        white = sm.term("white")
        knowledge = Knowledge()
        knowledge.learn(sm, 0, None, None)
        rng = random.Random(1)
        tracker = knowledge.tracker(sm, white, rng)
        history = [("(try 1 1)", ["(ok 1 1)"]), ("noop", ["yourturn"]), ("(try 1 2)", ["(ok 1 2)"])]
        for turn, (move, seen) in enumerate(history, 1):
            learned = knowledge.learn(sm, turn, parse_kif_term(move), tuple(map(sm.term, seen)))
            if turn < len(history):
                tracker.update(learned, time.monotonic() + 30)  # type: ignore[arg-type]
        # black's 24 marks are equally likely: the guess of old comes from the first of
        # them, here one with black on (1 2)
        assert len(set(tracker.states.values())) == 1
        pinned = next(s for s in tracker.states if "(mark 1 2 black)" in str(s))
        tracker.states = {pinned: tracker.states[pinned]} | tracker.states
        heaviest = max(tracker.states, key=tracker.states.__getitem__)
        assert "(mark 1 2 black)" in str(heaviest)  # where a guess would come from
        # the witness, one of the 23 others (one in 24 leaves no child for the try of
        # (1 2) that was ok: then a guess is all there is, rightly)
        tracker.witness.adopt(next(s for s in tracker.states if "(mark 1 2 black)" not in str(s)))
        strategy = make_strategy("random", 1)
        late = Budget(time.monotonic() - 1)
        move = choose_move(sm, white, knowledge, strategy, late, lambda m: None, rng)
        consistent = belief(sm, knowledge.history, white)
        assert any(move in sm.legal_moves(s, white) for s in consistent), move
        assert str(move) == "noop"


def test_the_witness_search_finds_states_is_complete_and_remembers_dead_ends() -> None:
    """With no root but the initial state, the search finds states consistent with the
    history; for a history that cannot have happened it ends, having searched
    everything, well before its deadline; dead ends found once are not expanded again."""
    with StateMachine.from_file(MARKS) as sm:
        white = sm.term("white")
        history = played(sm, "white", 6, 2)
        witness = Witness(sm, white, list(history), random.Random(0))
        found = witness.search([], time.monotonic() + 30, want=5)
        assert len(found) == 5 and witness.state == found[0]
        assert set(found) <= set(belief(sm, history, white, budget=50_000))
        assert all(not sm.is_terminal(s) for s in found)
        with StateMachine.from_file(ORACLE) as oracle:
            seer = oracle.term("seer")
            # the game is over after four turns in every reading: no fifth comes
            impossible = [Turn(oracle.term("(call 1)"), ())] * 5
            lost = Witness(oracle, seer, impossible, random.Random(0))
            start = time.monotonic()
            assert lost.search([], start + 30, want=3) == []
            assert time.monotonic() - start < 5
            spent = lost.expansions
            assert lost.search([], time.monotonic() + 30) == [] and lost.expansions == spent


def test_a_search_that_found_every_state_leaves_their_ancestors_alive() -> None:
    """A search that finds all the states there are must not take their ancestors for
    dead ends: once the witness dies on the next turn, the search finds the others."""
    with StateMachine.from_file(MONTY) as sm:
        contestant = sm.term("contestant")
        history = [Turn(sm.term("wait"), ()), Turn(sm.term("(pick 1)"), ())]
        for seed in range(20):  # a witness with the car behind door 2 or 3
            witness = Witness(sm, contestant, list(history), random.Random(seed))
            found = witness.search([], time.monotonic() + 30, want=5)
            assert len(found) == 3  # the car behind each door
            car = next(str(f) for f in witness.state.fluents if "car" in str(f))  # type: ignore[union-attr]
            if car != "(car 1)":
                break
        door = car.removeprefix("(car ").rstrip(")")
        # the host opens the door the witness hides the car behind: the witness dies
        witness.history.append(Turn(sm.term("wait"), (sm.term(f"(opened {door})"),)))
        again = witness.search([], time.monotonic() + 30, want=1)
        assert again and car not in str(again[0]) and witness.state == again[0]


#: White's history in a blind marks match whose belief was lost on a slow machine:
#: black's three marks are pinned only at the end, by three tries of white's taken.
PINNED = [
    ("(try 1 5)", "(ok 1 5)"),
    ("noop", "yourturn"),
    ("(try 4 2)", "(ok 4 2)"),
    ("noop", "yourturn"),
    ("(try 3 4)", "(ok 3 4)"),
    ("noop", "yourturn"),
    ("(try 1 1)", "(taken 1 1)"),
    ("(try 1 2)", "(taken 1 2)"),
    ("(try 1 3)", "(taken 1 3)"),
]


class _Counted:
    """A state machine whose clock is its own: each expansion (a state's consistent
    children asked for) takes a millisecond."""

    def __init__(self, sm: StateMachine) -> None:
        self.sm = sm
        self.now = 0.0
        self.expansions = 0

    def monotonic(self) -> float:
        return self.now

    def consistent_children(self, *args: object, **kwargs: object) -> object:
        self.now += 0.001
        self.expansions += 1
        return self.sm.consistent_children(*args, **kwargs)  # type: ignore[arg-type]

    def __getattr__(self, name: str) -> object:
        return getattr(self.sm, name)


def test_a_belief_pinned_late_is_kept_within_a_budget_of_expansions(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The particles of turn 6 hold a few hundred of black's 1,771 possible marks; turns
    7 to 9 pin them to one. With 600 expansions a turn for the filter and 1,000 in all
    (a clock that counts expansions, not seconds: the rule, not the machine), the belief
    holds a consistent state after turn 9 for at least seven of ten seeds. It was lost
    for 7 of them before the witness, and for 2 before the filter spent its spare time on
    the states left out of the particles and the search drew on the last exact belief.
    Over 140 seeds it is lost for about one in five (27 with whole expansions, 29 with
    lazy ones: the same rate), so ten seeds are not all kept but by luck."""
    from gdl2pl.ggp import belief_tracker
    from gdl2pl.ggp import witness

    with StateMachine.from_file(MARKS) as sm:
        white = sm.term("white")
        history = [Turn(sm.term(m), (sm.term(p),)) for m, p in PINNED]
        exact = belief(sm, history, white, budget=50_000)
        counted = _Counted(sm)
        monkeypatch.setattr(belief_tracker, "time", counted)
        monkeypatch.setattr(witness, "time", counted)
        lost = []
        for seed in range(10):
            tracker = BeliefTracker(counted, white, random.Random(seed))  # type: ignore[arg-type]
            for turn in history:
                tracker.update(turn, counted.now + 0.6, counted.now + 1.0)
            if not tracker.states:
                lost.append(seed)
            assert set(tracker.states) <= set(exact)
        assert len(lost) <= 3, lost
        assert counted.expansions > 10 * len(history)  # the clock did count them
