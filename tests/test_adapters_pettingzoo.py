"""GDL games as PettingZoo environments: PettingZoo's API tests on them (its conventions:
the classic board games' dict of ``observation`` and ``action_mask`` by default, a NumPy
array with ``form="array"``; the action mask in the infos too; agents named
``<descriptor>_<number>``), without a warning but those it gives any dict observation of an
environment that is not one of its own classic games."""

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


#: What PettingZoo's api_test says of a dict observation unless the environment's name is
#: one of its own classic games' (chess_v6, connect_four_v3, ...): nothing else is let pass.
DICT_WARNINGS = (
    "Observation is not a NumPy array",
    "Observation space for each agent probably should be gymnasium.spaces.box",
)


def strict_warnings(form: str) -> None:
    """Every warning an error, but PettingZoo's words on a dict observation in the dict
    form."""
    warnings.simplefilter("error")
    if form == "dict":
        for text in DICT_WARNINGS:
            warnings.filterwarnings("ignore", message=text)


def forms_and_games() -> list[object]:
    """Every game in the default form (the dict); the quick ones in the array form too."""
    from adapters_support import QUICK_GAMES

    return [pytest.param("dict", *p.values, marks=p.marks) if hasattr(p, "values")
            else ("dict", p) for p in game_params()] + [
        ("array", name) for name in sorted(QUICK_GAMES)]


@pytest.mark.parametrize(("form", "name"), forms_and_games())
def test_api_test(pz_test, name, form):
    """(Before issue 42: every game warned "Observation is not a NumPy array", that the
    observation space should be a Box, and about the agents' names. Issue 52: the dict
    of the classic games is the default again, the array a choice.)"""
    from gdl2pl.pettingzoo import env

    e = env(repository_game(name), render_mode="ansi", form=form)
    with warnings.catch_warnings():
        strict_warnings(form)
        pz_test.api_test(e, num_cycles=30)


@pytest.mark.parametrize(("form", "name"), forms_and_games())
def test_parallel_api_test(pz_test, name, form):
    from gdl2pl.pettingzoo import parallel_env

    e = parallel_env(repository_game(name), form=form)
    with warnings.catch_warnings():
        strict_warnings(form)
        pz_test.parallel_api_test(e, num_cycles=30)


def test_the_classic_games_loop_reads_the_mask_from_the_observation(pz_test):
    """Code written for PettingZoo's classic games (obs["observation"],
    obs["action_mask"]) plays a GDL game: before, the observation was an array and
    obs["action_mask"] raised IndexError. The mask is the info's, zeros off turn."""
    from gdl2pl.pettingzoo import env

    e = env(repository_game("ticTacToe"))
    e.reset(seed=0)
    for i, agent in enumerate(e.possible_agents):
        e.action_space(agent).seed(i)
    moves = 0
    for agent in e.agent_iter():
        obs, _, terminated, truncated, info = e.last()
        assert e.observation_space(agent).contains(obs)
        assert np.array_equal(obs["action_mask"], info["action_mask"])
        for other in e.agents:
            if other != agent:
                assert not e.observe(other)["action_mask"].any()  # not its turn
        state = obs["observation"]
        assert state.shape == (7, 3, 3) and state.dtype == np.int8
        if terminated or truncated:
            e.step(None)
            continue
        e.step(e.action_space(agent).sample(obs["action_mask"]))
        moves += 1
    assert 5 <= moves <= 9


def test_only_a_simultaneous_game_says_it_is_parallelizable(pz_test):
    """metadata["is_parallelizable"]: False where the game takes turns, as PettingZoo's
    own board games (before: True, and aec_to_parallel ended tic-tac-toe on "Illegal
    move made"); where every role moves at once the AEC env converts and passes the
    parallel API test."""
    from pettingzoo.utils.conversions import aec_to_parallel

    from gdl2pl.pettingzoo import env
    from gdl2pl.pettingzoo import parallel_env

    turns = env(repository_game("ticTacToe"))
    assert turns.metadata["is_parallelizable"] is False
    assert len(turns.metadata["tables_hash"]) == 64
    with pytest.raises(AssertionError, match="is_parallelizable"):
        aec_to_parallel(turns)
    assert parallel_env(repository_game("ticTacToe")).metadata["is_parallelizable"] is True
    together = env(repository_game("connectFourSimultaneous"))
    assert together.metadata["is_parallelizable"] is True
    with warnings.catch_warnings():
        strict_warnings("dict")
        pz_test.parallel_api_test(aec_to_parallel(together), num_cycles=20)


def test_ansi_render_draws_the_board_and_masks_follow_turns(pz_test):
    from gdl2pl.pettingzoo import env

    e = env(repository_game("ticTacToe"), render_mode="ansi", form="array")
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

    e = raw_env(repository_game("ticTacToe"), observation="flat", form="array")
    e.reset()
    assert e.observe("xplayer_0").shape == e.observation_space("xplayer_0").shape == (
        e.gdl.observation_size + 2,
    )
    assert e.observe("oplayer_1")[-2:].tolist() == [0, 1]
    with pytest.raises(ValueError, match="observation must be 'planes' or 'flat'"):
        raw_env(repository_game("ticTacToe"), observation="dict")
    with pytest.raises(ValueError, match="form must be 'dict' or 'array'"):
        raw_env(repository_game("ticTacToe"), form="tuple")
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
                    state = aec.observe(agent)["observation"][:-len(agents)]  # less agents
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


@pytest.mark.parametrize("name", ["ticTacToe", "connectFour"])
def test_self_play_batch_sees_from_the_mover_as_the_other_adapters_do(name):
    """``perspective="mover"``: each game's planes reordered from its mover's side by the
    orders PettingZoo's and OpenSpiel's mover views use (``GdlGame.mover_orders``), and
    the batch steps on as the fixed view's."""
    import numpy as np

    from gdl2pl.adapters import AdapterError
    from gdl2pl.adapters.selfplay import SelfPlayBatch

    n = 6
    fixed = SelfPlayBatch(repository_game(name), n, seed=5)
    mover = SelfPlayBatch(fixed.game, n, seed=5, perspective="mover")
    try:
        orders = fixed.game.mover_orders
        assert orders is not None
        second_to_move = 0
        for _ in range(60):
            to_play = fixed.to_play.copy()
            assert np.array_equal(mover.to_play, to_play)
            seen, whole = mover.observations, fixed.observations
            for i in range(n):
                assert np.array_equal(seen[i], whole[i][orders[max(int(to_play[i]), 0)]])
            second_to_move += int((to_play == 1).sum())
            actions = fixed.random_actions()
            returns, ended = fixed.step(actions)
            assert all(np.array_equal(a, b) for a, b in zip(mover.step(actions), (returns, ended),
                                                             strict=True))
        assert second_to_move > 0
        with pytest.raises(AdapterError, match="perspective='mover' needs the board planes"):
            SelfPlayBatch(fixed.game, 2, observation="flat", perspective="mover")
        with pytest.raises(ValueError, match="perspective must be"):
            SelfPlayBatch(fixed.game, 2, perspective="theirs")
    finally:
        mover.close()
        fixed.close()


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
