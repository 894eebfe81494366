"""GDL games as OpenSpiel games: OpenSpiel's own tests and algorithms on them."""

from __future__ import annotations

import numpy as np
import pytest
from adapters_support import game_params
from adapters_support import repository_game
from adapters_support import require_module


@pytest.fixture(scope="module")
def pyspiel():
    return require_module("pyspiel")


@pytest.mark.parametrize("name", game_params())
def test_random_sim_test(pyspiel, name):
    from gdl2pl.openspiel import load_game

    game = load_game(repository_game(name))
    pyspiel.random_sim_test(game, num_sims=1, serialize=False, verbose=False)


def test_kinds_of_games(pyspiel):
    from gdl2pl.openspiel import load_game

    Dyn = pyspiel.GameType.Dynamics
    simultaneous = load_game(repository_game("connectFourSimultaneous"))
    assert simultaneous.get_type().dynamics == Dyn.SIMULTANEOUS
    three = load_game(repository_game("3pConnectFour"))
    assert three.num_players() == 3 and three.get_type().dynamics == Dyn.SEQUENTIAL


def test_registered_name_loads_a_file(pyspiel):
    import gdl2pl.openspiel  # noqa: F401 (registers "gdl")

    game = pyspiel.load_game("gdl", {"game": str(repository_game("ticTacToe"))})
    state = game.new_initial_state()
    assert state.action_to_string(0) == "(mark 1 1)"
    assert "x" not in str(state).splitlines()[1] and "(control xplayer)" in str(state)
    state.apply_action(4)
    assert " x " in str(state)
    assert len(state.observation_tensor(0)) == game.observation_tensor_size()


def test_tic_tac_toe_matches_openspiel_native(pyspiel):
    from open_spiel.python.algorithms import get_all_states
    from open_spiel.python.algorithms import minimax

    from gdl2pl.openspiel import load_game

    counts = {}
    for label, game in (
        ("gdl", load_game(repository_game("ticTacToe"))),
        ("native", pyspiel.load_game("tic_tac_toe")),
    ):
        states = get_all_states.get_all_states(
            game,
            depth_limit=-1,
            include_terminals=True,
            include_chance_states=False,
            to_string=str,  # one entry per position, as in OpenSpiel's own count
        )
        terminal = sum(s.is_terminal() for s in states.values())
        value, _ = minimax.alpha_beta_search(game)
        counts[label] = (len(states), terminal, value)
    assert counts["gdl"] == counts["native"] == (5478, 958, 0.0)


@pytest.mark.slow
def test_mcts_never_loses_to_random_on_tic_tac_toe(pyspiel):
    from open_spiel.python.algorithms import mcts

    from gdl2pl.openspiel import load_game

    game = load_game(repository_game("ticTacToe"))
    rng = np.random.RandomState(7)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rng)
    bot = mcts.MCTSBot(game, uct_c=2, max_simulations=1000, evaluator=evaluator, random_state=rng)
    wins = 0
    for i in range(16):  # seeded: the same 16 games every run, 8 from each seat
        side = i % 2
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.current_player() == side:
                action = bot.step(state)
            else:
                action = rng.choice(state.legal_actions())
            state.apply_action(action)
        result = state.returns()[side]
        assert result >= 0, f"game {i}: MCTS lost as player {side}"
        wins += result > 0
    assert wins > 8
