"""GDL games as PettingZoo environments: PettingZoo's API tests on them, without a
warning (its conventions: NumPy observations in the space's dtype, the action mask in the
infos, agents named ``<descriptor>_<number>``)."""

from __future__ import annotations

import warnings

import numpy as np
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
    """(Before: every game warned "Observation is not a NumPy array", that the
    observation space should be a Box, and about the agents' names.)"""
    from gdl2pl.pettingzoo import env

    e = env(repository_game(name), render_mode="ansi")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pz_test.api_test(e, num_cycles=30)


@pytest.mark.parametrize("name", game_params())
def test_parallel_api_test(pz_test, name):
    from gdl2pl.pettingzoo import parallel_env

    e = parallel_env(repository_game(name))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pz_test.parallel_api_test(e, num_cycles=30)


def test_ansi_render_draws_the_board_and_masks_follow_turns(pz_test):
    from gdl2pl.pettingzoo import env

    e = env(repository_game("ticTacToe"), render_mode="ansi")
    e.reset()
    assert e.possible_agents == ["xplayer_0", "oplayer_1"]
    assert e.unwrapped.agent_roles == {"xplayer_0": "xplayer", "oplayer_1": "oplayer"}
    assert e.agent_selection == "xplayer_0"
    assert e.infos["xplayer_0"]["action_mask"].sum() == 9
    assert e.infos["oplayer_1"]["action_mask"].sum() == 0
    obs = e.observe("xplayer_0")
    space = e.observation_space("xplayer_0")
    assert isinstance(obs, np.ndarray) and obs.dtype == space.dtype == np.int8
    # b, o, x; (control oplayer), (control xplayer); observed by x, by o
    assert obs.shape == (7, 3, 3) and space.contains(obs)
    assert obs[4].all() and not obs[3].any()  # x is to move
    assert obs[5].all() and not obs[6].any()  # and observes
    assert (e.observe("oplayer_1")[:5] == obs[:5]).all() and e.observe("oplayer_1")[6].all()
    e.step(4)
    assert "x" in e.render().splitlines()[2] and e.agent_selection == "oplayer_1"
    assert e.infos["xplayer_0"]["action_mask"].sum() == 0
    assert e.infos["oplayer_1"]["action_mask"].sum() == 8


def test_flat_observations_and_names_of_every_kind_of_role(pz_test):
    from gdl2pl.pettingzoo import agent_names
    from gdl2pl.pettingzoo import raw_env

    e = raw_env(repository_game("ticTacToe"), observation="flat")
    e.reset()
    assert e.observe("xplayer_0").shape == e.observation_space("xplayer_0").shape == (
        e.gdl.observation_size + 2,
    )
    assert e.observe("oplayer_1")[-2:].tolist() == [0, 1]
    with pytest.raises(ValueError, match="observation must be 'planes' or 'flat'"):
        raw_env(repository_game("ticTacToe"), observation="dict")
    assert agent_names(["Red", "player2", "7", "b_x"]) == ["red_0", "player_1", "player_2", "bx_3"]


def test_an_illegal_action_ends_a_parallel_game_with_a_penalty(pz_test):
    from gdl2pl.pettingzoo import parallel_env

    e = parallel_env(repository_game("ticTacToe"))
    _, infos = e.reset()
    taken = int(np.flatnonzero(infos["xplayer_0"]["action_mask"])[0])
    e.step({"xplayer_0": taken, "oplayer_1": 0})  # O's action is ignored: its only move
    _, rewards, terminations, _, infos = e.step({"xplayer_0": 0, "oplayer_1": taken})
    assert rewards == {"xplayer_0": 0.0, "oplayer_1": -1.0}  # that cell is taken
    assert all(terminations.values()) and e.agents == []
    assert infos["oplayer_1"]["illegal_action"] and not infos["xplayer_0"]["illegal_action"]


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
        _, _, terminated, truncated, info = e.last()
        mask = info["action_mask"]
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


# -- self-play on a batch (issue 45) ---------------------------------------------------


@pytest.mark.parametrize("name", ["ticTacToe", "connectFour", "dotsAndBoxes"])
def test_self_play_batch_equals_the_aec_env_game_by_game(name):
    """Every game of a self-play batch, replayed action by action on PettingZoo's AEC
    environment (with its wrappers): the same agent to move, observation, board, action
    mask, rewards and ends."""
    import numpy as np

    require_module("pettingzoo")
    from gdl2pl.adapters.selfplay import SelfPlayBatch
    from gdl2pl.pettingzoo import env

    n = 6
    flat = SelfPlayBatch(repository_game(name), n, observation="flat", dtype=np.int8, seed=5)
    planes = SelfPlayBatch(flat.game, n, seed=5)
    aec = env(repository_game(name))
    try:
        episodes: list[list[list[object]]] = [[[]] for _ in range(n)]
        for _ in range(120):
            mask, to_play = flat.legal_mask, flat.to_play.copy()
            assert np.array_equal(planes.legal_mask, mask)
            actions = flat.random_actions()
            for i in range(n):
                if to_play[i] >= 0:
                    episodes[i][-1].append((flat.observations[i].copy(),
                                            planes.observations[i].copy(), mask[i],
                                            int(to_play[i]), int(actions[i])))
            returns, ended = flat.step(actions)
            assert np.array_equal(planes.step(actions)[0], returns)
            for i in np.flatnonzero(ended):
                episodes[i][-1].append(returns[i])
                episodes[i].append([])
        agents = aec.possible_agents
        board = flat.game.board
        finished = 0
        for game in episodes:
            for steps in game:
                aec.reset()
                for step in steps:
                    if not isinstance(step, tuple):  # the end: its returns
                        assert [aec.rewards[a] for a in agents] == step.tolist()
                        assert all(aec.terminations.values())
                        finished += 1
                        continue
                    obs_flat, obs_planes, mask, to_play, action = step
                    agent = agents[to_play]
                    assert aec.agent_selection == agent
                    state = aec.observe(agent)[:-len(agents)]  # less the agent planes
                    if board is None:
                        assert np.array_equal(state, obs_flat)
                    else:
                        assert np.array_equal(state, obs_planes)
                    seen_mask = aec.infos[agent]["action_mask"]
                    width = len(seen_mask)
                    assert np.array_equal(seen_mask, mask[:width])
                    assert not mask[width:].any()
                    aec.step(action)
        assert finished > 0
    finally:
        planes.close()
        flat.close()
        aec.close()


def test_self_play_takes_two_player_turn_taking_games_and_its_seed():
    import numpy as np

    require_module("pettingzoo")
    from gdl2pl.adapters import AdapterError
    from gdl2pl.adapters.selfplay import SelfPlayBatch

    for name in ("connectFourSimultaneous", "3pConnectFour"):
        with pytest.raises(AdapterError, match="two-player turn-taking"):
            SelfPlayBatch(repository_game(name), 2)

    def run(seed: int) -> list[bytes]:
        sp = SelfPlayBatch(repository_game("ticTacToe"), 8, seed=seed)
        try:
            out = []
            for _ in range(20):
                sp.step(sp.random_actions())
                out.append(sp.states().tobytes())
            saved, to_play = sp.states(), sp.to_play.copy()
            sp.step(sp.random_actions())
            sp.set_states(saved)
            assert np.array_equal(sp.to_play, to_play)
            return out
        finally:
            sp.close()

    assert run(1) == run(1) and run(1) != run(2)
