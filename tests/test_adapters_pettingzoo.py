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
        channels = 0 if board is None else len(board.contents)
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
                    seen = aec.observe(agent)
                    assert np.array_equal(seen["observation"], obs_flat)
                    if board is not None:
                        assert np.array_equal(seen["board"], obs_planes[:channels])
                    width = len(seen["action_mask"])
                    assert np.array_equal(seen["action_mask"], mask[:width])
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
