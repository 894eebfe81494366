"""The adapters' shared core: action tables, static domain analysis, errors."""

from __future__ import annotations

import pytest
from adapters_support import OWN_GAMES
from adapters_support import repository_game
from prolog_env import require_prolog

from gdl2pl import parse_game
from gdl2pl import read_game
from gdl2pl.adapters import AdapterError
from gdl2pl.adapters import DomainExplosionError
from gdl2pl.adapters import GdlGame
from gdl2pl.adapters import UnrepresentableStateError
from gdl2pl.adapters import analyse_domains
from gdl2pl.adapters import goal_return
from gdl2pl.bridge import StateMachine
from gdl2pl.kif import parse_kif_term


def test_domains_of_a_game_without_input_or_base():
    d = analyse_domains(read_game(OWN_GAMES / "adapter_no_input.kif"), [parse_kif_term("walker")])
    moves = {str(m) for m in d.moves[parse_kif_term("walker")]}
    assert moves == {"(walk a)", "(walk b)", "(walk c)", "stay"}
    assert {str(f) for f in d.fluents} == {"(at a)", "(at b)", "(at c)"}


@pytest.mark.parametrize("name", ["ticTacToe", "hanoi", "connectFourSimultaneous", "pacman3p"])
def test_domains_cover_declared_input_and_base(name):
    require_prolog()
    path = repository_game(name)
    with StateMachine.from_file(path) as sm:
        d = analyse_domains(read_game(path), sm.roles, name)
        for role in sm.roles:
            assert set(sm.input_moves(role)) <= d.moves[role]
        assert set(sm.base_propositions) <= d.fluents


def test_domain_explosion_is_a_clear_error():
    text = """(role r) (init (n z)) (<= (next (n (s ?x))) (true (n ?x)))
              (<= (legal r (go ?x)) (true (n ?x))) (<= terminal (true (n z)))"""
    with pytest.raises(DomainExplosionError, match="cannot bound"):
        analyse_domains(parse_game(text), [parse_kif_term("r")], "counter", max_terms=50)


def test_goal_return_mapping():
    assert [goal_return(g) for g in (0, 50, 100)] == [-1.0, 0.0, 1.0]


def test_action_ids_are_stable_and_analysed_when_input_is_missing():
    require_prolog()
    g = GdlGame(OWN_GAMES / "adapter_no_input.kif")
    try:
        assert g.actions_from == "reachability" and g.base_from == "reachability"
        assert [str(m) for m in g.moves[0]] == ["(walk a)", "(walk b)", "(walk c)", "stay"]
        node = g.node(g.initial_state)
        assert node.legal == ((1, 3),)  # (walk b), stay
        after = g.next(g.initial_state, [1])
        assert g.node(after).legal == ((0, 2),)  # (walk a), (walk c): b has an edge to a
        assert g.kind.proved and g.kind.turn_taking
    finally:
        g.close()


def test_terminal_state_without_goal_names_game_state_and_role():
    require_prolog()
    with pytest.raises(UnrepresentableStateError) as e:
        GdlGame(OWN_GAMES / "adapter_no_goal.kif", missing_goal="error")
    text = str(e.value)
    assert "adapter_no_goal.kif" in text and "solver" in text and "(count 1)" in text


def test_terminal_state_without_goal_is_assumed_with_a_warning_by_default():
    from gdl2pl.adapters.errors import MissingGoalWarning

    require_prolog()
    with pytest.warns(MissingGoalWarning, match=r"adapter_no_goal.kif.*\(count 1\).*50"):
        g = GdlGame(OWN_GAMES / "adapter_no_goal.kif")
    try:
        end = g.next(g.initial_state, [0])
        assert g.node(end).returns == (0.0,)
        claim = g.gdl_metadata()["missing_goal"]
        assert (claim.value, claim.status) == (50, "assumed") and "(count 1)" in claim.how
        assert "missing_goal" in g.gdl_metadata()["utility"].how  # the sum counts the 50
    finally:
        g.close()


def test_well_formed_game_proves_no_goal_is_missing():
    require_prolog()
    g = GdlGame(OWN_GAMES / "adapter_no_input.kif")
    try:
        claim = g.gdl_metadata()["missing_goal"]
        assert (claim.value, claim.status) == (None, "proved")
    finally:
        g.close()


def test_role_without_legal_move_names_game_state_and_role():
    require_prolog()
    with pytest.raises(UnrepresentableStateError) as e:
        GdlGame(OWN_GAMES / "adapter_stuck.kif")
    text = str(e.value)
    assert "adapter_stuck.kif" in text and "blue" in text and "(phase 1)" in text


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("adapter_stuck.kif", ["blue", "(phase 1)"]),
        ("adapter_no_goal.kif", ["solver", "(count 1)"]),
    ],
)
def test_a_step_into_a_bad_state_names_game_state_and_role(name, words):
    # loaded without the reachability analysis, the bad state shows at the step into it
    require_prolog()
    g = GdlGame(OWN_GAMES / name, dynamics="simultaneous", missing_goal="error")
    try:
        s = g.initial_state
        with pytest.raises(UnrepresentableStateError) as e:
            for _ in range(10):
                s = g.next(s, [legal[0] for legal in g.node(s).legal])
        assert all(w in str(e.value) for w in [name, *words]), str(e.value)
    finally:
        g.close()


@pytest.mark.parametrize("name", ["ticTacToe", "connectFourSimultaneous", "eightPuzzle"])
def test_what_a_step_tells_of_a_child_is_what_asking_about_it_tells(name):
    # nodes and observations learnt from step_symbols' ids equal those built from terms
    import random

    require_prolog()
    g = GdlGame(repository_game(name), dynamics="simultaneous", seed=1)
    try:
        rng = random.Random(2)
        for _ in range(3):
            s = g.initial_state
            g.observation(s)
            while not g.node(s).terminal:
                child = g.next(s, [rng.choice(ids) for ids in g.node(s).legal])
                learnt_node, learnt_vec = g.node(child), g.observation(child)
                del g._nodes[child], g._observations[child]
                assert g.node(child) == learnt_node
                assert g.observation(child) == learnt_vec
                s = child
    finally:
        g.close()


def test_too_many_moves_for_an_action_space(monkeypatch):
    require_prolog()
    import gdl2pl.adapters.game as game_module

    monkeypatch.setattr(game_module, "MAX_ACTIONS", 5)
    with pytest.raises(AdapterError, match="more than an action space may hold"):
        GdlGame(repository_game("ticTacToe"))


def test_a_choice_for_two_roles_deep_in_the_game_makes_it_simultaneous():
    require_prolog()
    for budget in (20_000, 1):  # enumerated, or past the budget found by random matches
        g = GdlGame(OWN_GAMES / "adapter_late_choice.kif", analysis_edges=budget)
        try:
            assert not g.turn_taking and not g.kind.turn_taking
        finally:
            g.close()


def test_kind_past_the_budget_is_sampled_not_proved():
    require_prolog()
    g = GdlGame(repository_game("ticTacToe"), analysis_edges=100)
    try:
        assert g.turn_taking and not g.kind.proved
        assert g.kind.max_depth == 9  # the random matches reach the end
        # zero-sum still proved, from the goal rules rather than the enumeration
        assert g.zero_sum and "goal rules" in g.gdl_metadata()["utility"].how
    finally:
        g.close()


def test_kind_search_leaves_the_bridge_state_alone():
    """The search installs states in Prolog; the bridge's idea of the installed state
    must still hold afterwards."""
    require_prolog()
    g = GdlGame(repository_game("ticTacToe"))
    try:
        s = g.initial_state
        after = g.sm.next_state(s, ["(mark 2 2)", "noop"])  # the bridge installs it
        g.analyse(6_000, 20_000, 100, 0)
        assert len(g.sm.all_legal_moves(after)[1]) == 8
        assert g.kind.proved and g.zero_sum
    finally:
        g.close()
