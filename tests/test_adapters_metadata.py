"""What the adapters prove about a game: a step counter's length bound, goal ranges."""

from __future__ import annotations

import pytest
from adapters_support import repository_game
from adapters_support import require_module
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from gdl2pl import parse_game
from gdl2pl.rule_shapes import step_counter_bound

COUNTED = """(role r) (init (step 0)) (init (at a))
(succ 0 1) (succ 1 2) (succ 2 3)
(<= (next (step ?y)) (true (step ?x)) (succ ?x ?y))
(legal r go) (<= (next (at b)) (does r go))
(<= terminal (true (step 3))) (<= terminal (true (at c)))
(<= (goal r 60) (true (at b))) (<= (goal r 40) (not (true (at b))))"""


def test_step_counter_proves_a_bound():
    assert step_counter_bound(parse_game(COUNTED)) == (3, "step")


def test_no_bound_where_the_counter_can_stall_or_branch():
    stall = COUNTED.replace("(succ 2 3)", "")
    assert step_counter_bound(parse_game(stall)) is None
    branch = COUNTED + " (succ 1 3)"
    assert step_counter_bound(parse_game(branch)) is None
    guarded = COUNTED.replace("(succ ?x ?y))", "(succ ?x ?y) (true (at a)))")
    assert step_counter_bound(parse_game(guarded)) is None
    second = COUNTED + " (<= (next (step 0)) (does r go))"
    assert step_counter_bound(parse_game(second)) is None


def test_openspiel_game_length_and_utilities_from_the_rules(tmp_path):
    require_module("pyspiel")
    import gdl2pl.openspiel as gos

    path = tmp_path / "counted.kif"
    path.write_text(COUNTED)
    game = gos.load_game(path, dynamics="simultaneous")
    meta = game.gdl_metadata()
    assert meta["max_game_length"].value == 3 and meta["max_game_length"].status == "proved"
    assert game.max_game_length() == 3
    assert meta["utility_range"].value == (-0.2, 0.2)
    assert (game.min_utility(), game.max_utility()) == (-0.2, 0.2)
    assert meta["dynamics"].status == "chosen"


def test_chess_length_and_turns_are_proved_from_its_rules():
    pyspiel = require_module("pyspiel")
    import gdl2pl.openspiel as gos

    # missing_goal chosen, not assumed; a 1 s game-kind search (it cannot finish on chess)
    game = gos.load_game(repository_game("chess"), missing_goal=50, analysis_seconds=1)
    assert game.gdl.analysis_seconds == 1 and not game.gdl.kind.proved
    assert game.gdl_metadata()["missing_goal"].status == "chosen"
    assert game.max_game_length() == 200
    assert game.gdl_metadata()["max_game_length"].status == "proved"
    claim = game.gdl_metadata()["dynamics"]  # the enumeration is cut off: rules prove it
    assert (claim.value, claim.status) == ("sequential", "proved")
    assert "control" in claim.how
    # white's and black's goal rules share their bodies and sum to 100; missing_goal=50 too
    assert game.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM


TURNS = """(role a) (role b) (init (control a)) (init (n 0))
(<= (next (control b)) (true (control a)))
(<= (next (control a)) (true (control b)))
(<= (legal ?p (push ?x)) (true (control ?p)) (true (n ?x)))
(<= (legal ?p noop) (role ?p) (not (true (control ?p))))"""


def test_control_fluent_proves_turn_taking():
    from gdl2pl.rule_shapes import turn_control

    assert turn_control(parse_game(TURNS)) == "control"
    # a second free move, a control that may double, a move not tied to control: no proof
    assert turn_control(parse_game(TURNS + " (legal b pass)")) is None
    assert turn_control(parse_game(TURNS + " (<= (next (control b)) (true (n 0)))")) is None
    assert turn_control(parse_game(TURNS + " (<= (legal a (pull ?x)) (true (n ?x)))")) is None
    assert turn_control(parse_game(TURNS + " (init (control b))")) is None



def test_goal_rules_of_one_body_prove_a_constant_sum():
    from gdl2pl.rule_shapes import goal_sum

    game = """(role a) (role b)
    (<= (goal a 100) (true (won a))) (<= (goal b 0) (true (won a)))
    (<= (goal a 30) (not (true (won a)))) (<= (goal b 70) (not (true (won a))))"""
    assert goal_sum(parse_game(game)) == 100
    assert goal_sum(parse_game(game.replace("(goal b 70)", "(goal b 60)"))) is None
    assert goal_sum(parse_game(game.replace("(<= (goal b 0) (true (won a)))", ""))) is None
    assert goal_sum(parse_game(game + " (<= (goal ?r 50) (true (tie)) (role ?r))")) is None


def test_goal_groups_that_contradict_every_terminal_rule_are_left_out():
    from gdl2pl.rule_shapes import goal_sum

    # connectFour's shape: while the board is open and nobody has won, both goals are 0,
    # but every terminal rule needs a line or a full board, so that group is never final
    game = """(role a) (role b)
    (<= terminal (true (line))) (<= terminal (not open))
    (<= (goal a 100) (true (line))) (<= (goal b 0) (true (line)))
    (<= (goal a 50) (not (true (line))) (not open))
    (<= (goal b 50) (not (true (line))) (not open))
    (<= (goal a 0) (not (true (line))) open) (<= (goal b 0) (not (true (line))) open)"""
    assert goal_sum(parse_game(game)) == 100
    # a terminal rule the group does not contradict: the group counts, sums differ
    assert goal_sum(parse_game(game + " (<= terminal (true (bored)))")) is None
    # a complement only up to variables is not a contradiction
    with_var = game.replace("(<= terminal (not open))", "(<= terminal (not (full ?x)))")
    assert goal_sum(parse_game(with_var.replace("open", "(full ?x)"))) is None


@pytest.mark.parametrize("name", ["connectFour", "simultaneousWin2"])
def test_goal_sum_from_the_rules_holds_in_random_terminal_states(name):
    """Soundness on real games: the proved sum is the sum of goals where plays end."""
    from gdl2pl import read_game
    from gdl2pl.bridge import StateMachine
    from gdl2pl.rule_shapes import goal_sum

    path = repository_game(name)
    total = goal_sum(read_game(path))
    assert total is not None
    with StateMachine.from_file(path) as sm:
        for _ in range(20):
            end, _ = sm.depth_charge(sm.initial_state)
            assert sum(sm.goals(end)) == total


def test_connect_four_is_zero_sum_from_its_goal_rules():
    pyspiel = require_module("pyspiel")
    import gdl2pl.openspiel as gos

    game = gos.load_game(repository_game("connectFour"))
    claim = game.gdl_metadata()["utility"]
    assert (claim.value, claim.status) == ("zero-sum", "proved")
    assert game.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM


ATOMS = ("p", "q", "r")
_literal = st.tuples(st.sampled_from(ATOMS), st.booleans())
_body = st.lists(_literal, max_size=3, unique_by=lambda lit: lit[0])
# goal rules in groups of one body, one rule per role: the shape goal_sum looks for,
# mostly summing to 100, sometimes not (a group that must never end a play)
_group = st.tuples(_body, st.sampled_from(((100, 0), (0, 100), (50, 50), (0, 0))))


def _kif_body(body):
    return " ".join(atom if positive else f"(not {atom})" for atom, positive in body)


def _holds(body, world):
    return all((atom in world) == positive for atom, positive in body)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(_group, min_size=1, max_size=4, unique_by=lambda g: frozenset(g[0])),
    st.lists(_body, min_size=1, max_size=2),
)
def test_proved_goal_sum_holds_in_every_well_formed_end(groups, terminals):
    """The law behind ``goal_sum``: over propositional games (atoms p, q, r), in every
    world where some terminal rule holds and each role has exactly one goal value, the
    goal values add up to the proved sum."""
    from itertools import combinations

    from gdl2pl.rule_shapes import goal_sum

    goals = [(who, v, b) for b, vs in groups for who, v in zip("ab", vs, strict=True)]
    text = "(role a) (role b) " + " ".join(
        [f"(<= (goal {who} {v}) {_kif_body(b)})" if b else f"(goal {who} {v})"
         for who, v, b in goals]
        + [f"(<= terminal {_kif_body(b)})" if b else "terminal" for b in terminals]
    )
    total = goal_sum(parse_game(text))
    if total is None:
        return
    for n in range(len(ATOMS) + 1):
        for world in map(set, combinations(ATOMS, n)):
            if not any(_holds(b, world) for b in terminals):
                continue
            values = {who: [v for w, v, b in goals if w == who and _holds(b, world)]
                      for who in ("a", "b")}
            if all(len(vs) == 1 for vs in values.values()):
                assert values["a"][0] + values["b"][0] == total, (text, world)


def test_shapes_read_each_relation_with_its_arity():
    """A relation is its name and arity: ``(control)``, ``(control a b)`` and ``(role)``
    are no ``(control r)`` or ``(role r)`` (once an IndexError, or a control fluent that
    two could hold), and ``(next ?f)`` may make a second control fluent."""
    from gdl2pl.rule_shapes import goal_sum
    from gdl2pl.rule_shapes import turn_control

    assert turn_control(parse_game(TURNS + " (<= (next (control)) (true (n 0)))")) == "control"
    assert turn_control(parse_game(TURNS + " (init (control a b))")) == "control"
    assert turn_control(parse_game(TURNS + " (<= (next ?f) (true ?f))")) is None
    assert turn_control(parse_game(TURNS + " (<= (role) (true (n 0)))")) is None
    # (terminal) is a relation of its own: no terminal rule, no step counter
    ends_early = COUNTED.replace("(<= terminal (true (step 3)))", "(<= (terminal) (true (step 1)))")
    assert step_counter_bound(parse_game(ends_early)) is None
    game = """(role a) (role b) (<= (goal a 100) (true w)) (<= (goal b 0) (true w))"""
    assert goal_sum(parse_game(game)) == 100
    assert goal_sum(parse_game(game + " (<= (role) (true w))")) is None
