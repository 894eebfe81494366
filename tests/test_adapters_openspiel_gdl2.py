"""GDL-II games as OpenSpiel games of imperfect information: chance as OpenSpiel's chance
player, information states from a player's own moves and percepts, OpenSpiel's own
checks, and known game values reached through the adapter (Monty Hall, Kuhn poker)."""

from __future__ import annotations

import random

import pytest
from adapters_support import require_module
from conftest import EXAMPLES

KUHN = EXAMPLES / "kuhnPoker.kif"
MONTY = EXAMPLES / "montyHall.kif"


@pytest.fixture(scope="module")
def pyspiel():
    return require_module("pyspiel")


@pytest.fixture(scope="module")
def kuhn(pyspiel):
    from gdl2pl.openspiel.imperfect import load_imperfect_game

    return load_imperfect_game(KUHN)


@pytest.fixture(scope="module")
def monty(pyspiel):
    from gdl2pl.openspiel.imperfect import load_imperfect_game

    return load_imperfect_game(MONTY)


def test_kuhn_poker_is_an_imperfect_information_game_with_chance(pyspiel, kuhn):
    kind = kuhn.get_type()
    assert kind.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    assert kind.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert kind.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
    assert kind.utility == pyspiel.GameType.Utility.ZERO_SUM
    assert kuhn.num_players() == 2
    assert kuhn.max_game_length() == 4  # the deal, check, raise, call
    state = kuhn.new_initial_state()
    assert state.is_chance_node()
    outcomes = state.chance_outcomes()
    assert len(outcomes) == 6 and all(p == pytest.approx(1 / 6) for _, p in outcomes)
    assert sum(p for _, p in outcomes) == pytest.approx(1.0)


def test_openspiel_random_simulation_runs_on_both_examples(pyspiel, kuhn, monty):
    pyspiel.random_sim_test(kuhn, num_sims=10, serialize=False, verbose=False)
    pyspiel.random_sim_test(monty, num_sims=10, serialize=False, verbose=False)


def test_the_registered_name_loads_a_gdl_ii_file(pyspiel):
    import gdl2pl.openspiel  # noqa: F401 (registers "gdl_ii")

    game = pyspiel.load_game("gdl_ii", {"game": str(MONTY)})
    # chance's moves: (hide 1..3), (open 1..3) and wait
    assert game.num_players() == 1 and game.max_chance_outcomes() == 7


def test_a_plain_game_is_refused(pyspiel):
    from gdl2pl.adapters import AdapterError
    from gdl2pl.openspiel.imperfect import load_imperfect_game

    with pytest.raises(AdapterError, match="not a GDL-II game"):
        load_imperfect_game(EXAMPLES / "ticTacToe.kif")


def deal(game, kif):
    state = game.new_initial_state()
    (action,) = [a for a, _ in state.chance_outcomes() if state.action_to_string(a) == kif]
    state.apply_action(action)
    return state


def test_information_states_hold_only_own_moves_and_percepts(kuhn):
    king_jack, king_queen = deal(kuhn, "(deal king jack)"), deal(kuhn, "(deal king queen)")
    # the first player holds the king in both: it cannot tell them apart, the second can
    assert king_jack.information_state_string(0) == king_queen.information_state_string(0)
    assert king_jack.information_state_string(1) != king_queen.information_state_string(1)
    assert king_jack.information_state_string(0) == "first\nwait -> (card king)"
    assert "jack" not in king_jack.information_state_string(0)
    assert king_jack.information_state_tensor(0) == king_queen.information_state_tensor(0)
    assert king_jack.observation_tensor(0) == king_queen.observation_tensor(0)
    # after a raise and a call, both cards are shown
    for action in ("(act raise)", "call"):
        mover = king_jack.current_player()
        (a,) = [
            a for a in king_jack.legal_actions() if king_jack.action_to_string(mover, a) == action
        ]
        king_jack.apply_action(a)
    assert king_jack.is_terminal()
    assert king_jack.returns() == [1.0, -1.0]  # +2 chips: goal 100 and 0
    assert king_jack.information_state_string(0).endswith(
        "(act raise) -> ()\nwait -> (did second call) (shows second jack)"
    )
    assert king_jack.observation_string(1) == "round 3: call -> (shows first king)"


#: Matching pennies in one round, both players at once, each seeing the other's coin only
#: after: GDL-II without chance.
PENNIES = """
(role even) (role odd)
(side heads) (side tails)
(player even) (player odd)
(init (round 0))
(<= (legal ?p (show ?s)) (player ?p) (side ?s))
(<= (next (shown ?p ?s)) (does ?p (show ?s)))
(next (round 1))
(<= (sees ?p (showed ?q ?s)) (player ?p) (does ?q (show ?s)) (distinct ?p ?q))
(<= terminal (true (round 1)))
(<= same (true (shown even ?s)) (true (shown odd ?s)))
(<= (goal even 100) same)
(<= (goal even 0) (not same))
(<= (goal odd 100) (not same))
(<= (goal odd 0) same)
"""


def test_within_a_round_a_player_does_not_learn_the_others_move(pyspiel, tmp_path):
    from gdl2pl.openspiel.imperfect import load_imperfect_game

    path = tmp_path / "pennies.kif"
    path.write_text(PENNIES)
    game = load_imperfect_game(path)
    assert game.get_type().chance_mode == pyspiel.GameType.ChanceMode.DETERMINISTIC
    heads, tails = game.new_initial_state(), game.new_initial_state()
    assert heads.current_player() == 0
    heads.apply_action(0)
    tails.apply_action(1)
    assert heads.current_player() == tails.current_player() == 1
    # the odd player decides without knowing even's coin; even remembers its own
    assert heads.information_state_string(1) == tails.information_state_string(1) == "odd"
    assert heads.information_state_string(0) == "even\n(show heads) -> ?"
    heads.apply_action(1)
    assert heads.is_terminal() and heads.returns() == [-1.0, 1.0]
    assert heads.information_state_string(1) == "odd\n(show tails) -> (showed even heads)"
    assert game.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM


def test_cfr_reaches_kuhn_pokers_value_through_the_adapter(kuhn):
    from open_spiel.python.algorithms import cfr
    from open_spiel.python.algorithms import expected_game_score
    from open_spiel.python.algorithms import exploitability

    solver = cfr.CFRPlusSolver(kuhn)
    for _ in range(60):
        solver.evaluate_and_update_policy()
    policy = solver.average_policy()
    values = expected_game_score.policy_value(kuhn.new_initial_state(), [policy, policy])
    # returns are chips / 2 (goal 50 + 25 * chips, return (goal - 50) / 50): the first
    # player's equilibrium value is -1/18 chip; 60 CFR+ iterations bring it within 0.002
    assert 2 * values[0] == pytest.approx(-1 / 18, abs=0.002)
    assert exploitability.exploitability(kuhn, policy) < 0.005


def test_always_switching_wins_two_thirds_of_monty_hall(pyspiel, monty):
    from open_spiel.python import policy as policy_lib
    from open_spiel.python.algorithms import expected_game_score

    def always(move: str):
        def choose(state):
            return {
                a: (1.0 if state.action_to_string(a) in (move, "(pick 1)") else 0.0)
                for a in state.legal_actions()
            }

        return policy_lib.tabular_policy_from_callable(monty, choose)

    # exactly, over OpenSpiel's game tree: return = 2 * P(win) - 1
    switch = expected_game_score.policy_value(monty.new_initial_state(), [always("switch")])
    stay = expected_game_score.policy_value(monty.new_initial_state(), [always("stay")])
    assert (switch[0] + 1) / 2 == pytest.approx(2 / 3)
    assert (stay[0] + 1) / 2 == pytest.approx(1 / 3)


def test_a_seeded_simulation_of_switching_wins_two_thirds(pyspiel, monty):
    # 3,000 plays: the share of wins has a standard deviation of sqrt(2/9 / 3000) = 0.0086;
    # the bound is 4 of them (seeded, so the outcome is repeatable)
    rng = random.Random(2026)
    wins = 0
    for _ in range(3000):
        state = monty.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                actions, probs = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(rng.choices(actions, probs)[0])
            else:
                names = {state.action_to_string(a): a for a in state.legal_actions()}
                state.apply_action(names.get("switch", rng.choice(list(names.values()))))
        wins += state.returns()[0] > 0
    assert abs(wins / 3000 - 2 / 3) < 4 * 0.0086


@pytest.mark.parametrize("example", ["kuhnPoker.kif", "montyHall.kif"])
def test_the_compiled_engine_plays_the_gdl_ii_adapter_as_the_reasoner(pyspiel, example):
    """With ``engine="compiled"`` (percepts from the network) every random play-through
    shows every player the same information states, legal actions and returns as on
    the reasoner."""
    from gdl2pl.openspiel.imperfect import load_imperfect_game

    compiled = load_imperfect_game(EXAMPLES / example, engine="compiled")
    reasoner = load_imperfect_game(EXAMPLES / example, engine="prolog")
    assert compiled.tables.sm.engine_choice.engine == "compiled"
    for seed in range(12):
        rng = random.Random(seed)
        a, b = compiled.new_initial_state(), reasoner.new_initial_state()
        while not a.is_terminal():
            assert a.current_player() == b.current_player()
            for p in range(compiled.num_players()):
                assert a.information_state_string(p) == b.information_state_string(p)
            if a.is_chance_node():
                outcomes = a.chance_outcomes()
                assert outcomes == b.chance_outcomes()
                action = rng.choice([o for o, _ in outcomes])
            else:
                assert a.legal_actions() == b.legal_actions()
                action = rng.choice(a.legal_actions())
            a.apply_action(action)
            b.apply_action(action)
        assert b.is_terminal() and a.returns() == b.returns()
