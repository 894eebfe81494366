"""GDL-II games as PettingZoo environments: PettingZoo's API test, observations that are
the agent's own percepts (never the state), chance drawn from the seeded generator; and
the perfect-information adapters refuse a game with hidden information."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from adapters_support import require_module
from conftest import EXAMPLES

KUHN = EXAMPLES / "kuhnPoker.kif"


@pytest.fixture(scope="module")
def pettingzoo():
    return require_module("pettingzoo")


def test_pettingzoo_api_test_passes_without_a_warning(pettingzoo):
    """(Before: "Observation is not a NumPy array", "...should be gymnasium.spaces.box",
    the agents' names, and an all-zero observation when nothing was perceived.)"""
    from pettingzoo.test import api_test

    from gdl2pl.pettingzoo.imperfect import imperfect_env

    env = imperfect_env(KUHN)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        api_test(env, num_cycles=30, verbose_progress=False)


def card(env, agent):
    """The card an agent was dealt, read from its own observation."""
    (i,) = np.flatnonzero(env.observe(agent)[:-1])
    return str(env.game.percepts[env.possible_agents.index(agent)][i])


def test_observations_are_own_percepts_and_chance_follows_the_seed(pettingzoo):
    from gdl2pl.pettingzoo.imperfect import raw_imperfect_env

    env = raw_imperfect_env(KUHN)
    deals = set()
    for seed in range(12):
        env.reset(seed=seed)
        mine, theirs = card(env, "first_0"), card(env, "second_1")
        assert mine != theirs and mine.startswith("(card ")
        deals.add((mine, theirs))
        env.reset(seed=seed)
        assert (card(env, "first_0"), card(env, "second_1")) == (mine, theirs)  # repeatable
    assert len(deals) >= 4  # chance is drawn, not fixed
    env.reset(seed=1)
    assert env.agent_roles == {"first_0": "first", "second_1": "second"}
    assert env.agent_selection == "first_0"
    assert env.infos["first_0"]["action_mask"].tolist() == [1, 1, 0, 0, 0]
    assert env.infos["second_1"]["action_mask"].sum() == 0
    # the first player raises, the second folds: the fold is all the first one sees
    env.step(1)
    assert env.agent_selection == "second_1"
    assert env.observe("first_0")[-1] == 1  # it perceived nothing of the raise
    env.step(3)  # fold (moves: (act check), (act raise), call, fold, wait)
    assert all(env.terminations.values())
    assert env.rewards == {"first_0": 0.5, "second_1": -0.5}
    seen = env.observe("first_0")
    assert seen.dtype == env.observation_space("first_0").dtype == np.int8
    declared = env.game.percepts[0]
    assert [str(declared[i]) for i in np.flatnonzero(seen[:-1])] == ["(did second fold)"]
    assert seen[-1] == 0
    assert env.infos["second_1"]["history"][-1] == ("fold", [])


def test_perfect_information_adapters_refuse_hidden_information(pettingzoo):
    from gdl2pl.adapters import AdapterError
    from gdl2pl.adapters import GdlGame

    with pytest.raises(AdapterError, match="hidden information"):
        GdlGame(KUHN)
