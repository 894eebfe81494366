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
