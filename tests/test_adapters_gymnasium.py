"""One-player GDL games as Gymnasium environments."""

from __future__ import annotations

import pytest
from adapters_support import repository_game
from adapters_support import require_module


@pytest.fixture(scope="module")
def gymnasium():
    return require_module("gymnasium")


@pytest.mark.parametrize("name", ["eightPuzzle", "hanoi", "buttons"])
def test_check_env(gymnasium, name, monkeypatch):
    from gymnasium.utils.env_checker import check_env

    import gdl2pl.gymnasium  # noqa: F401 (registers the id)

    monkeypatch.setenv("GDL2PL_GAME_PATH", str(repository_game(name).parent))
    env = gymnasium.make("gdl2pl/Gdl-v0", game=f"{name}.kif", render_mode="ansi")
    check_env(env.unwrapped, skip_render_check=False)


def test_illegal_action_ends_the_episode(gymnasium):
    from gdl2pl.gymnasium import GdlEnv

    env = GdlEnv(repository_game("hanoi"))
    _, info = env.reset(seed=0)
    illegal = int(next(i for i, ok in enumerate(info["action_mask"]) if not ok))
    _, reward, terminated, _, info = env.step(illegal)
    assert terminated and reward == -1.0 and info["illegal_action"]


def test_many_player_games_are_refused(gymnasium):
    from gdl2pl.adapters import AdapterError
    from gdl2pl.gymnasium import GdlEnv

    with pytest.raises(AdapterError, match="one-player"):
        GdlEnv(repository_game("ticTacToe"))


# -- the vector environment (issue 45): many games stepped together in C --------------


def make_vec(gymnasium, name: str, n: int, mode: str, **options):
    import gdl2pl.gymnasium  # noqa: F401 (registers the id)

    return gymnasium.make_vec("gdl2pl/Gdl-v0", num_envs=n, vectorization_mode=mode,
                              game=str(repository_game(name)), **options)


def same(a, b) -> bool:
    import numpy as np

    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return np.array_equal(np.asarray(a), np.asarray(b)) and np.asarray(a).dtype == (
        np.asarray(b).dtype)


@pytest.mark.parametrize("name", ["hanoi", "buttons", "blocks", "eightPuzzle"])
def test_the_vector_env_equals_gymnasiums_sync_vector_env_of_gdl_envs(gymnasium, name):
    """Step for step, with Gymnasium's own SyncVectorEnv over GdlEnv as the reference:
    observations, rewards, ends, truncations, infos (the masks, illegal actions), with
    the episodes restarting by themselves (NEXT_STEP) and some restarted by a mask."""
    import numpy as np

    fast = make_vec(gymnasium, name, 5, "vector_entry_point")
    slow = make_vec(gymnasium, name, 5, "sync")
    try:
        assert fast.metadata["autoreset_mode"] == slow.metadata["autoreset_mode"]
        assert fast.single_observation_space == slow.single_observation_space
        assert fast.single_action_space == slow.single_action_space
        assert fast.observation_space == slow.observation_space
        assert fast.action_space == slow.action_space
        got, want = fast.reset(seed=1), slow.reset(seed=1)
        assert same(got, want)
        rng = np.random.default_rng(0)
        for t in range(150):
            masks = got[-1]["action_mask"]
            acts = np.array([rng.choice(np.flatnonzero(m)) if m.any() and rng.random() < 0.97
                             else rng.integers(0, len(m)) for m in masks])
            if t % 40 == 39:  # restart some episodes
                mask = rng.random(5) < 0.5
                mask[t % 5] = True
                got = fast.reset(options={"reset_mask": mask})
                want = slow.reset(options={"reset_mask": mask})
            else:
                got, want = fast.step(acts), slow.step(acts)
            assert same(got, want), (t, got, want)
            assert fast.observation_space.contains(got[0])
    finally:
        fast.close()
        slow.close()


def first_legal(observations, mask, role):
    import numpy as np

    return np.argmax(mask, axis=1)


@pytest.mark.parametrize(("name", "role"), [("ticTacToe", 0), ("ticTacToe", 1),
                                            ("connectFourSimultaneous", 1),
                                            ("3pConnectFour", 2)])
def test_the_vector_env_plays_one_role_of_many_against_a_policy(gymnasium, name, role):
    """The other roles play the policy given (here their lowest legal action): each
    environment equals the game played one state at a time with the same actions, the
    agent's single legal moves played for it until it has a choice or the game ends."""
    import numpy as np

    from gdl2pl.adapters import GdlGame

    n = 4
    envs = make_vec(gymnasium, name, n, "vector_entry_point", role=role, opponent=first_legal,
                    observation="planes")
    ref = GdlGame(repository_game(name), engine="compiled", dynamics="simultaneous")
    try:
        def advance(state, agent_action=None):
            """(state, reward) after the agent's action, then its forced steps."""
            reward = 0.0
            node = ref.node(state)
            first = True
            while not node.terminal and (first or len(node.legal[role]) <= 1):
                joint = [ids[0] for ids in node.legal]
                if first and agent_action is not None:
                    joint[role] = agent_action
                first = False
                state = ref.next(state, joint)
                node = ref.node(state)
                reward += node.returns[role] if node.terminal else 0.0
            return state, reward

        def check(obs, info, states):
            for i, s in enumerate(states):
                node = ref.node(s)
                vec = ref.observation(s)  # planes where the fluents form a board
                want = vec if ref.board is None else ref.board.observation_planes(vec)
                assert np.array_equal(obs[i], np.asarray(want, np.int8))
                mask = np.zeros(envs.single_action_space.n, np.int8)
                if not node.terminal:
                    mask[list(node.legal[role])] = 1
                    assert len(node.legal[role]) > 1  # the agent's turn
                assert np.array_equal(info["action_mask"][i], mask)

        obs, info = envs.reset(seed=0)
        states = [advance(ref.initial_state, None)[0] if len(
            ref.node(ref.initial_state).legal[role]) <= 1 else ref.initial_state] * n
        check(obs, info, states)
        rng = np.random.default_rng(role)
        ended = [False] * n
        for _ in range(40):
            acts = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0
                             for m in info["action_mask"]])
            obs, rewards, terminated, truncated, info = envs.step(acts)
            for i in range(n):
                if ended[i]:  # restarted at this step
                    s = ref.initial_state
                    states[i], r = (advance(s)[0], 0.0) if len(ref.node(s).legal[role]) <= 1 \
                        else (s, 0.0)
                else:
                    states[i], r = advance(states[i], int(acts[i]))
                assert rewards[i] == r and terminated[i] == ref.node(states[i]).terminal
                ended[i] = bool(terminated[i])
            assert not truncated.any()
            check(obs, info, states)
    finally:
        envs.close()
        ref.close()


def test_the_vector_env_is_reproducible_from_its_seed_and_refuses_bad_opponents(gymnasium):
    import numpy as np

    def run(seed: int) -> list[float]:
        envs = make_vec(gymnasium, "ticTacToe", 32, "vector_entry_point")
        try:
            _, info = envs.reset(seed=seed)
            out = []
            for _ in range(30):
                acts = np.argmax(info["action_mask"], axis=1)
                obs, rewards, _, _, info = envs.step(acts)
                out.append(float(obs.sum() + rewards.sum()))
            return out
        finally:
            envs.close()

    assert run(3) == run(3) and run(3) != run(4)
    envs = make_vec(gymnasium, "ticTacToe", 2, "vector_entry_point", role=1,
                    opponent=lambda obs, mask, role: np.full(len(mask), 9))
    try:
        with pytest.raises(ValueError, match="opponent policy gave role xplayer the illegal "
                                             "action 9 in environment 0"):
            envs.reset()
    finally:
        envs.close()


def test_gymnasiums_vector_wrappers_take_the_vector_env(gymnasium):
    """Gymnasium's own vector wrappers (episode statistics, observations cast to float)
    accept it: its metadata, spaces and infos are as they expect."""
    import numpy as np
    from gymnasium.utils.passive_env_checker import check_obs
    from gymnasium.wrappers.vector import DtypeObservation
    from gymnasium.wrappers.vector import RecordEpisodeStatistics

    envs = make_vec(gymnasium, "ticTacToe", 8, "vector_entry_point")
    wrapped = RecordEpisodeStatistics(DtypeObservation(envs, np.float32))
    try:
        obs, info = wrapped.reset(seed=0)
        episodes = 0
        for _ in range(40):
            obs, _, _, _, info = wrapped.step(np.argmax(info["action_mask"], axis=1))
            assert obs.dtype == np.float32
            for o in envs.batch.observations:
                check_obs(o, envs.single_observation_space, "step")
            episodes += int(info.get("_episode", np.zeros(8, bool)).sum())
        assert episodes > 0
        assert len(envs.render() or ()) == 0  # no render_mode
    finally:
        wrapped.close()


# -- Gymnasium's seeding and closing rules (issue 52 item 3) ---------------------------


def test_seeds_follow_gymnasiums_rules_and_a_closed_env_refuses_to_step(gymnasium):
    """reset(seed=s) sets np_random_seed to s; the first reset without a seed draws one
    from entropy, so two unseeded vector environments play different random opponents
    (before: the batch's generator stayed at seed 0, every unseeded run the same, and
    np_random_seed was a random value whatever the seed); step and reset after close()
    raise (before: play went on)."""
    import numpy as np
    from gymnasium.error import ClosedEnvironmentError

    from gdl2pl.gymnasium import GdlEnv

    def opponents_moves(envs, seed):
        envs.reset(seed=seed)
        seen = []
        for _ in range(12):
            obs, *_ = envs.step(np.argmax(envs.unwrapped._infos()["action_mask"], axis=1))
            seen.append(obs.copy())
        return np.stack(seen)

    envs = make_vec(gymnasium, "ticTacToe", 16, "vector_entry_point")
    other = make_vec(gymnasium, "ticTacToe", 16, "vector_entry_point")
    try:
        envs.reset(seed=0)
        assert envs.unwrapped.np_random_seed == 0
        envs.reset(seed=7)
        assert envs.unwrapped.np_random_seed == 7
        envs.reset()  # not the first reset: the generator goes on, the seed stays
        assert envs.unwrapped.np_random_seed == 7
        assert np.array_equal(opponents_moves(envs, 3), opponents_moves(other, 3))
        fresh = [make_vec(gymnasium, "ticTacToe", 16, "vector_entry_point") for _ in range(2)]
        try:
            runs = [opponents_moves(e, None) for e in fresh]
            seeds = [e.unwrapped.np_random_seed for e in fresh]
        finally:
            for e in fresh:
                e.close()
        assert seeds[0] != seeds[1] and not np.array_equal(*runs)
        envs.close()
        with pytest.raises(ClosedEnvironmentError):
            envs.step(np.zeros(16, np.int64))
        with pytest.raises(ClosedEnvironmentError):
            envs.reset()
    finally:
        envs.close()
        other.close()

    env = GdlEnv(repository_game("buttons"))
    env.reset(seed=0)
    assert env.np_random_seed == 0
    env.close()
    with pytest.raises(ClosedEnvironmentError):
        env.step(0)
    with pytest.raises(ClosedEnvironmentError):
        env.reset()
    env.close()  # twice: nothing more
