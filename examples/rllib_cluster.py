"""Train a policy per role on a GDL game with RLlib's PPO, its env runners spread over a
Ray cluster (docs/adapters.md, *RLlib*).

    python examples/rllib_cluster.py --game ticTacToe.kif --iterations 20
    python examples/rllib_cluster.py --address auto        # a running cluster (ray start)
    python examples/rllib_cluster.py --local-nodes 2       # a cluster of two nodes, here

The game is loaded (and analysed) once, here; ``gdl2pl.rllib.env_config`` packs its
analyses into the env config, so that every env runner, on any node, loads it without
analysing it again. Each role is played by its own module, RLlib's action-masking PPO
module (``observations`` and ``action_mask``, as ``GdlMultiAgentEnv`` gives them), so
illegal moves are never sampled. The last line printed is a JSON summary: per iteration
the episodes and their mean length, and per env runner its node and what its env's load
analysed (nothing: ``[]``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from typing import Any


def build(game: str, env_runners: int, batch: int, engine: str) -> Any:
    """The PPO algorithm: one action-masking module per role, ``env_runners`` runners of
    one CPU each, the learner in this process."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    import gdl2pl.rllib as gr

    config = gr.env_config(game, engine=engine)  # analysed once, its analyses packed
    probe = gr.GdlMultiAgentEnv(config)
    agents = list(probe.possible_agents)
    probe.close()
    modules = {a: RLModuleSpec(module_class=ActionMaskingTorchRLModule,
                               model_config={"fcnet_hiddens": [64], "head_fcnet_hiddens": [64]})
               for a in agents}
    return (
        PPOConfig()
        .environment(gr.ENV_NAME, env_config=config)
        .env_runners(num_env_runners=env_runners, num_cpus_per_env_runner=1,
                     rollout_fragment_length="auto")
        .learners(num_learners=0)
        .multi_agent(policies=set(agents), policy_mapping_fn=lambda aid, *a, **k: aid)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=modules))
        .training(train_batch_size_per_learner=batch, minibatch_size=max(batch // 2, 1),
                  num_epochs=2)
        .build_algo()
    ), config


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--game", default="ticTacToe.kif")
    p.add_argument("--iterations", type=int, default=20)
    p.add_argument("--env-runners", type=int, default=2)
    p.add_argument("--batch", type=int, default=400, help="env steps per training batch")
    p.add_argument("--engine", default="auto", choices=["auto", "compiled", "prolog"])
    p.add_argument("--address", help="a running Ray cluster's address (e.g. auto)")
    p.add_argument("--local-nodes", type=int, default=0,
                   help="start a cluster of this many one-CPU nodes here, and train on it")
    args = p.parse_args(argv)

    import ray

    game = os.path.abspath(args.game) if os.path.exists(args.game) else args.game
    # Ray puts the driver's working directory on its workers' path: from a source
    # checkout, the checkout's gdl2pl/ would shadow the installed package there.
    os.chdir(tempfile.gettempdir())
    cluster = None
    if args.local_nodes:
        cluster = local_cluster(args.local_nodes)
        address: str | None = cluster.address
    else:
        address = args.address
    ray.init(address=address, include_dashboard=False, log_to_driver=False)
    summary: dict[str, Any] = {"nodes": len(ray.nodes()), "iterations": []}
    try:
        algo, config = build(game, args.env_runners, args.batch, args.engine)
        summary["tables_hash"] = config["travel_pack"]["tables_hash"]
        for i in range(args.iterations):
            result = algo.train()
            runners = result.get("env_runners", {})
            length = runners.get("episode_len_mean")
            row = {"iteration": i + 1, "episodes": int(runners.get("num_episodes", 0)),
                   "episode_len_mean": None if length is None else float(length)}
            summary["iterations"].append(row)
            print(f"iteration {row['iteration']}: {row['episodes']} episodes, "
                  f"mean length {row['episode_len_mean']}", flush=True)
        summary["env_runners"] = algo.env_runner_group.foreach_env_runner(
            _where_and_what, local_env_runner=False)
        algo.stop()
    finally:
        ray.shutdown()
        if cluster is not None:
            cluster.shutdown()
    print(json.dumps(summary))
    return 0


def local_cluster(nodes: int, attempts: int = 3) -> Any:
    """A Ray cluster of ``nodes`` one-CPU nodes on this machine. Ray gives a starting
    node 30 s to register, which a machine busy with other work can exceed: the start is
    tried ``attempts`` times."""
    from ray.cluster_utils import Cluster

    for attempt in range(1, attempts + 1):
        cluster = Cluster()
        try:
            for _ in range(nodes):
                cluster.add_node(num_cpus=1)  # the first is the head
            cluster.wait_for_nodes()
            return cluster
        except Exception as e:  # Ray raises a bare Exception for a node's time-out
            cluster.shutdown()
            if attempt == attempts:
                raise
            print(f"the local cluster did not start ({e}); trying again", file=sys.stderr)
    raise AssertionError("unreachable")


def _where_and_what(runner: Any) -> dict[str, Any]:
    """In an env runner: its node, and what the envs made in its process found."""
    import ray

    import gdl2pl.rllib

    return {"node": ray.get_runtime_context().get_node_id(),
            "envs": gdl2pl.rllib.envs_made_here()}


if __name__ == "__main__":
    sys.exit(main())
