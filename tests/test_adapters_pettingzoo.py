"""GDL games as PettingZoo environments: PettingZoo's API tests on them."""

from __future__ import annotations

import pytest
from adapters_support import game_params
from adapters_support import repository_game
from adapters_support import require_module


@pytest.fixture(scope="module")
def pz_test():
    require_module("pettingzoo")
    return require_module("pettingzoo.test")


@pytest.mark.parametrize("name", game_params())
def test_api_test(pz_test, name):
    from gdl2pl.pettingzoo import env

    pz_test.api_test(env(repository_game(name), render_mode="ansi"), num_cycles=30)


@pytest.mark.parametrize("name", game_params())
def test_parallel_api_test(pz_test, name):
    from gdl2pl.pettingzoo import parallel_env

    pz_test.parallel_api_test(parallel_env(repository_game(name)), num_cycles=30)


def test_ansi_render_draws_the_board_and_masks_follow_turns(pz_test):
    from gdl2pl.pettingzoo import env

    e = env(repository_game("ticTacToe"), render_mode="ansi")
    e.reset()
    assert e.agent_selection == "xplayer"
    assert e.observe("xplayer")["action_mask"].sum() == 9
    assert e.observe("oplayer")["action_mask"].sum() == 0
    e.step(4)
    assert "x" in e.render().splitlines()[2] and e.agent_selection == "oplayer"


@pytest.mark.parametrize(
    ("name", "options"), [("checkers", {}), ("chess", {"analysis_seconds": 1})]
)
def test_flagship_games_play_in_the_aec_loop(name, options):
    """chess and checkers load without input/base (chess with a shorter kind search, else
    default options) and play PettingZoo's documented loop."""
    import warnings

    require_module("pettingzoo")
    from gdl2pl.adapters.errors import MissingGoalWarning
    from gdl2pl.pettingzoo import env

    warnings.simplefilter("ignore", MissingGoalWarning)  # chess's end at move 200
    e = env(repository_game(name), **options)
    e.reset(seed=0)
    for i, agent in enumerate(e.possible_agents):  # PettingZoo leaves this to the user
        e.action_space(agent).seed(i)
    steps = 0
    for agent in e.agent_iter(max_iter=40):
        obs, _, terminated, truncated, _ = e.last()
        mask = obs["action_mask"]
        assert mask.any() or terminated or truncated
        e.step(None if terminated or truncated else e.action_space(agent).sample(mask))
        steps += 1
    # Random checkers may end inside 40 turns (one run in ten does); then every agent has
    # been stepped out of the loop.
    assert steps == 40 or not e.agents
    e.close()


def test_first_seen_moves_get_the_default_action_space():
    require_module("pettingzoo")
    from adapters_support import OWN_GAMES

    from gdl2pl.adapters import GdlGame
    from gdl2pl.adapters.game import LAZY_ACTIONS

    g = GdlGame(OWN_GAMES / "adapter_no_input.kif", max_terms=1)  # the analysis gives up
    try:
        assert g.actions_from == "first-seen"
        assert g.action_space_sizes == (LAZY_ACTIONS,) and LAZY_ACTIONS >= 86_981  # amazons
    finally:
        g.close()
