"""GDL games as RLlib multi-agent environments (issue 52 item 6): the observation dict
RLlib's action-masking modules read, the game's analyses shipped in the env config (an env
runner does not analyse again, and refuses other tables), and PPO trained with env runners
on two nodes of a local Ray cluster (the plumbing, not the learning)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from adapters_support import repository_game
from adapters_support import require_module
from conftest import REPO

from gdl2pl.adapters import table_cache


@pytest.fixture(scope="module")
def rllib():
    require_module("ray.rllib")
    return require_module("gdl2pl.rllib")


def test_the_env_gives_what_rllibs_masking_modules_read(rllib):
    from ray.rllib.env.multi_agent_env import MultiAgentEnv

    from gdl2pl.adapters import AdapterError

    config = rllib.env_config(repository_game("ticTacToe"), engine="prolog")
    env = rllib.GdlMultiAgentEnv(config)
    try:
        assert isinstance(env, MultiAgentEnv)
        assert env.possible_agents == ["xplayer_0", "oplayer_1"]
        space = env.observation_spaces["xplayer_0"]
        assert set(space) == {"observations", "action_mask"}
        assert space["observations"].dtype == space["action_mask"].dtype == np.float32
        rng = np.random.default_rng(0)
        obs, _ = env.reset(seed=0)
        steps = 0
        while True:
            ((agent, seen),) = obs.items()  # turn-taking: only the mover observes
            assert space.contains(seen) or env.observation_spaces[agent].contains(seen)
            action = int(rng.choice(np.flatnonzero(seen["action_mask"])))
            obs, rewards, terminated, truncated, _ = env.step({agent: action})
            steps += 1
            if terminated["__all__"]:
                break
            assert not truncated["__all__"]
        assert set(rewards) == {"xplayer_0", "oplayer_1"}  # both see the end
        assert sorted(rewards.values()) in ([-1.0, 1.0], [0.0, 0.0]) and 5 <= steps <= 9
    finally:
        env.close()
    spoilt = {**config, "travel_pack": {**config["travel_pack"], "tables_hash": "0" * 64}}
    with pytest.raises(AdapterError, match="tables differ here from the driver's"):
        rllib.GdlMultiAgentEnv(spoilt)


def test_rllibs_own_check_passes_whatever_the_first_action(rllib):
    """RLlib checks an env by a step with sampled actions; one that ends the game (an
    illegal action) returns both agents' last observations, which must be among
    ``env.agents`` (before: ``agents`` was emptied, and the env runners died at
    creation whenever the sample was illegal)."""
    from ray.rllib.utils.pre_checks.env import check_multiagent_environments

    env = rllib.GdlMultiAgentEnv(rllib.env_config(repository_game("ticTacToe"),
                                                  engine="prolog"))
    try:
        space = env.action_spaces["xplayer_0"]
        legal = np.flatnonzero(env.reset(seed=0)[0]["xplayer_0"]["action_mask"])
        for action in range(space.n):
            env.get_action_space = lambda aid, a=action: _Fixed(a)
            check_multiagent_environments(env)
            env.reset(seed=0)
            obs, _, terminated, _, _ = env.step({"xplayer_0": action})
            assert set(obs) <= set(env.agents)
            assert terminated["__all__"] == (action not in legal)
    finally:
        env.close()


class _Fixed:
    """An action space whose sample is always one action."""

    def __init__(self, action: int) -> None:
        self.action = action

    def sample(self) -> int:
        return self.action


def test_an_env_made_from_its_config_does_not_analyse_the_game(rllib, monkeypatch, tmp_path):
    """As on an env runner of another node: no cache, the game not loaded, and still no
    analysis (before: every worker ran the reachability analysis and the kind search,
    under a clock, and could number the moves differently)."""
    config = rllib.env_config(repository_game("ticTacToe"), engine="prolog",
                              perspective="mover", flatten=False)
    monkeypatch.setenv(table_cache.CACHE_VARIABLE, "off")
    monkeypatch.setattr(table_cache, "_remembered", table_cache.OrderedDict())
    env = rllib.GdlMultiAgentEnv(config)
    try:
        assert env.game.analysed == []
        assert env.game.tables_hash == config["travel_pack"]["tables_hash"]
        assert rllib.envs_made_here()[-1]["analysed"] == []
        # the mover's planes, unflattened: x's marks, o's, blanks, 2 controls
        assert env.observation_spaces["xplayer_0"]["observations"].shape == (5, 3, 3)
    finally:
        env.close()


@pytest.mark.slow
def test_ppo_trains_with_env_runners_on_two_nodes_of_a_ray_cluster(rllib, tmp_path):
    """examples/rllib_cluster.py on a local cluster of two one-CPU nodes: two env
    runners, one on each node, each loading the game from the shipped config without
    analysing it, and two training iterations that collect episodes."""
    require_module("torch")
    env = {**os.environ, "RAY_raylet_start_wait_time_s": "300",
           table_cache.CACHE_VARIABLE: "off"}
    run = subprocess.run(
        [sys.executable, "-P", str(REPO / "examples" / "rllib_cluster.py"), "--local-nodes",
         "2", "--iterations", "2", "--batch", "200", "--engine", "prolog", "--game",
         str(repository_game("ticTacToe"))],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1500, check=False,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    summary = json.loads(run.stdout.strip().splitlines()[-1])
    assert summary["nodes"] == 2
    assert [r["iteration"] for r in summary["iterations"]] == [1, 2]
    assert all(r["episodes"] > 0 for r in summary["iterations"])
    runners = summary["env_runners"]
    assert len(runners) == 2 and len({r["node"] for r in runners}) == 2
    for r in runners:
        assert r["envs"] and all(e["analysed"] == [] for e in r["envs"])
        assert {e["tables_hash"] for e in r["envs"]} == {summary["tables_hash"]}
