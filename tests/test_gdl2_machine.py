"""GDL-II in the state machine: percepts, the random role and its chance outcomes,
playouts that sample chance uniformly, and the states a role cannot tell apart (exact
belief, sampling, the bound on the search)."""

from __future__ import annotations

import random
import re
from collections import Counter
from fractions import Fraction

import pytest
from conftest import EXAMPLES
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from prolog_env import require_prolog

from gdl2pl import Const
from gdl2pl import information
from gdl2pl.bridge import GameError
from gdl2pl.bridge import IllegalMoveError
from gdl2pl.bridge import MoveDefinitionError
from gdl2pl.bridge import StateMachine
from gdl2pl.contract import MachineState
from gdl2pl.information import NoConsistentStateError
from gdl2pl.information import Turn
from gdl2pl.kif import parse_kif_term

#: Chance rolls a four-sided die once; the player's goal is 25 times the roll.
DIE = """
(role player) (role random)
(face 1) (face 2) (face 3) (face 4)
(score 1 25) (score 2 50) (score 3 75) (score 4 100)
(init start)
(<= (legal random (roll ?f)) (true start) (face ?f))
(legal player wait)
(<= (next (rolled ?f)) (does random (roll ?f)))
(<= terminal (true (rolled ?f)))
(<= (goal player ?s) (true (rolled ?f)) (score ?f ?s))
(<= (goal player 0) (true start))
"""

#: Chance moves once, then has no legal move while the game goes on.
STUCK = """
(role player) (role random)
(init (step 0))
(<= (legal random go) (true (step 0)))
(legal player wait)
(<= (next (step 1)) (true (step 0)))
(<= (next (step 2)) (true (step 1)))
(<= terminal (true (step 2)))
(goal player 50)
"""


@pytest.fixture(autouse=True)
def _prolog() -> None:
    require_prolog()


@pytest.fixture(scope="module")
def monty() -> StateMachine:
    require_prolog()
    return StateMachine.from_file(EXAMPLES / "montyHall.kif")


@pytest.fixture(scope="module")
def kuhn() -> StateMachine:
    require_prolog()
    return StateMachine.from_file(EXAMPLES / "kuhnPoker.kif")


def term(kif: str) -> object:
    return parse_kif_term(kif)


def test_the_random_role_and_the_players(kuhn: StateMachine) -> None:
    assert kuhn.gdl_ii
    assert kuhn.random_role == Const("random")
    assert kuhn.is_random("random") and not kuhn.is_random("first")
    assert kuhn.players == (Const("first"), Const("second"))


def test_a_plain_game_has_no_chance_and_perceives_nothing() -> None:
    with StateMachine.from_file(EXAMPLES / "ticTacToe.kif") as sm:
        assert not sm.gdl_ii and sm.random_role is None
        assert sm.players == sm.roles
        s = sm.initial_state
        assert sm.percepts(s, sm.legal_joint_moves(s)[0], "xplayer") == []
        with pytest.raises(GameError, match="no random role"):
            sm.chance_outcomes(s)


def test_chance_outcomes_are_uniform_fractions(kuhn: StateMachine) -> None:
    outcomes = kuhn.chance_outcomes(kuhn.initial_state)
    assert len(outcomes) == 6
    assert {p for _, p in outcomes} == {Fraction(1, 6)}
    assert sum(p for _, p in outcomes) == 1
    assert term("(deal king jack)") in [m for m, _ in outcomes]


def test_no_chance_outcome_in_a_terminal_state_and_an_error_when_chance_is_stuck() -> None:
    with StateMachine.from_text(STUCK, name="stuck.kif") as sm:
        s1 = sm.next_state(sm.initial_state, ["wait", "go"])
        with pytest.raises(MoveDefinitionError, match="no legal move for role random"):
            sm.chance_outcomes(s1)
        with pytest.raises(MoveDefinitionError, match="role random during a depth charge"):
            sm.depth_charge(sm.initial_state)
    with StateMachine.from_text(DIE) as sm:
        final = sm.next_state(sm.initial_state, ["wait", "(roll 2)"])
        assert sm.chance_outcomes(final) == []
        assert sm.goals(final) == [50, 0]  # random has no goal: 0


def test_percepts_are_the_sorted_sees_of_one_role(kuhn: StateMachine) -> None:
    s = kuhn.initial_state
    deal = ["wait", "wait", "(deal king jack)"]
    assert kuhn.percepts(s, deal, "first") == [term("(card king)")]
    assert kuhn.percepts(s, deal, "second") == [term("(card jack)")]
    s1 = kuhn.next_state(s, deal)
    s2 = kuhn.next_state(s1, ["(act check)", "wait", "wait"])
    both_check = ["wait", "(act check)", "wait"]
    assert kuhn.percepts(s2, both_check, "first") == [
        term("(did second (act check))"),
        term("(shows second jack)"),
    ]
    with pytest.raises(GameError, match="perceives nothing"):
        kuhn.percepts(s2, both_check, "random")
    with pytest.raises(IllegalMoveError):
        kuhn.percepts(s2, ["wait", "fold", "wait"], "first")


def test_playouts_sample_chance_uniformly() -> None:
    # 4,000 rolls: the mean goal is 62.5 with a standard error of 27.95 / sqrt(4000) =
    # 0.44; the bound is 5 standard errors (seeded, so the test is repeatable)
    with StateMachine.from_text(DIE) as sm:
        sm.seed(27)
        per_role, steps = sm.playouts(sm.initial_state, 4000)
        assert steps == 4000
        counts = Counter(v for v, _ in per_role[0])
        assert set(counts) == {25, 50, 75, 100}
        assert all(800 <= c <= 1200 for c in counts.values())  # 1000 +- 6.3 sd each
        mean = sum(v for v, _ in per_role[0]) / 4000
        assert abs(mean - 62.5) < 5 * 0.44
        assert sm.average_scores(sm.initial_state, 400)[1] == 0.0


def monty_history(pick: int, opened: int) -> list[Turn]:
    return [Turn("wait", []), Turn(f"(pick {pick})", []), Turn("wait", [f"(opened {opened})"])]


def test_the_belief_of_monty_halls_contestant_is_one_third_two_thirds(
    monty: StateMachine,
) -> None:
    belief = information.belief(monty, monty_history(1, 3), "contestant")
    by_car = {next(str(f) for f in s if f.name == "car"): p for s, p in belief.items()}
    assert by_car == {"(car 1)": Fraction(1, 3), "(car 2)": Fraction(2, 3)}


def test_sampled_states_follow_the_belief(monty: StateMachine) -> None:
    # 600 draws of a 2/3 event: sd = sqrt(600 * 2/9) = 11.5; bound 5 sd around 400
    states = information.sample_states(
        monty, monty_history(2, 1), "contestant", 600, rng=random.Random(4)
    )
    cars = Counter(next(str(f) for f in s if f.name == "car") for s in states)
    assert set(cars) == {"(car 2)", "(car 3)"}
    assert abs(cars["(car 3)"] - 400) < 5 * 11.5


def test_an_impossible_history_is_refused(monty: StateMachine) -> None:
    with pytest.raises(NoConsistentStateError, match="cannot have happened") as e:
        information.sample_states(monty, monty_history(1, 1), "contestant")
    assert e.value.exhausted
    with pytest.raises(NoConsistentStateError) as e2:
        information.sample_states(monty, [("(pick 1)", [])], "contestant")  # not legal at step 1
    assert e2.value.exhausted


def test_the_search_is_bounded_by_its_budget(monty: StateMachine) -> None:
    with pytest.raises(NoConsistentStateError, match="budget of 2 states") as e:
        information.sample_states(monty, monty_history(1, 3), "contestant", 3, budget=2)
    assert not e.value.exhausted
    with pytest.raises(ValueError, match="budget"):
        information.sample_states(monty, monty_history(1, 3), "contestant", budget=0)
    with pytest.raises(GameError, match="no view"):
        information.sample_states(monty, [], "random")


def test_past_the_exact_budget_the_search_still_finds_consistent_states(
    kuhn: StateMachine,
) -> None:
    # the exact belief expands 1 + 2 + 2 states here (the deal, then the two deals that
    # give the first player the queen, twice); a budget of 4 is too small for it, and
    # enough for a depth-first search that goes straight down (3 states)
    history = [
        Turn("wait", ["(card queen)"]),
        Turn("(act check)", []),
        Turn("wait", ["(did second (act raise))"]),
    ]
    exact = information.belief(kuhn, history, "first")
    assert len(exact) == 2 and set(exact.values()) == {Fraction(1, 2)}
    found = information.sample_states(kuhn, history, "first", 5, budget=4, rng=random.Random(1))
    assert found and all(s in exact for s in found)
    with pytest.raises(NoConsistentStateError):
        information.belief(kuhn, history, "first", budget=4)


def replay(sm: StateMachine, rng: random.Random, role: str) -> tuple[MachineState, list[Turn]]:
    """A random match so far, and the role's own history of it."""
    s = sm.initial_state
    history: list[Turn] = []
    index = sm.roles.index(Const(role))
    for _ in range(rng.randrange(0, 6)):
        if sm.is_terminal(s):
            break
        joint = sm.random_joint_move(s, rng)
        history.append(Turn(joint[index], sm.percepts(s, joint, role)))
        s = sm.next_state(s, joint)
    return s, history


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), role=st.sampled_from(["first", "second"]))
def test_the_true_state_is_always_in_the_players_belief(seed: int, role: str) -> None:
    with StateMachine.from_file(EXAMPLES / "kuhnPoker.kif") as sm:
        state, history = replay(sm, random.Random(seed), role)
        belief = information.belief(sm, history, role)
        assert state in belief
        assert sum(belief.values()) == 1
        # the other player's card is never known before a showdown, and the own card is
        if history and not sm.is_terminal(state):
            assert len(belief) == 2


@pytest.mark.parametrize(("choice", "share"), [("switch", 2 / 3), ("stay", 1 / 3)])
def test_switching_wins_monty_hall_two_times_in_three(
    monty: StateMachine, choice: str, share: float
) -> None:
    # 2,000 seeded plays, chance drawn from chance_outcomes: the share of wins has a
    # standard deviation of at most sqrt(2/9 / 2000) = 0.0105; the bound is 4 of them
    rng = random.Random(7)
    wins = 0
    for _ in range(2000):
        s = monty.initial_state
        while not monty.is_terminal(s):
            outcomes = monty.chance_outcomes(s)
            chance = rng.choices([m for m, _ in outcomes], [float(p) for _, p in outcomes])[0]
            own = monty.legal_moves(s, "contestant")
            mine = next((m for m in own if str(m) == choice), rng.choice(own))
            s = monty.next_state(s, [mine, chance])
        wins += monty.goal(s, "contestant") == 100
    assert abs(wins / 2000 - share) < 4 * 0.0105


@pytest.mark.parametrize(
    ("percept", "error"),
    [
        ("?x", "not a ground GDL term"),
        ("(halt ?x)", "not a ground GDL term"),
        ("(f " * 250 + "a" + ")" * 250, "nested deeper than"),
        ("(shell \ud800)", "lone surrogate"),
        ("((", "not a GDL term"),
    ],
)
def test_hostile_percepts_from_outside_are_refused_before_prolog(
    monty: StateMachine, percept: str, error: str
) -> None:
    from gdl2pl.bridge import TransitionDefinitionError

    with pytest.raises(TransitionDefinitionError, match=re.escape(error)):
        information.sample_states(monty, [("wait", [percept])], "contestant")
    with pytest.raises(TransitionDefinitionError, match=re.escape(error)):
        monty.consistent_successors(monty.initial_state, "contestant", "wait", [percept])
    # a well-formed term the game never perceives is data: it matches nothing
    with pytest.raises(NoConsistentStateError, match="cannot have happened"):
        information.sample_states(monty, [("wait", ["(halt)", "(shell (rm x))"])], "contestant")
    assert monty.chance_outcomes(monty.initial_state)  # the machine still answers
