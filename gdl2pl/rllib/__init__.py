"""GDL games as RLlib multi-agent environments, for training on a Ray cluster.

Importing this module registers ``ENV_NAME`` (``"gdl2pl/gdl"``) with RLlib (Ray Tune's
registry); ``GdlMultiAgentEnv`` may be given to ``config.environment`` directly too. Its
``env_config`` is what ``env_config(game, **options)`` returns: the game (a file, or a
name found by ``gdl2pl.adapters.find_game``, that every node of the cluster must find by
the same name), the adapters' options, and the game's analyses (``GdlGame.travel_pack``:
the reachability tables and the game kind, as JSON-able data), so that an env runner on
any node loads the game without analysing it again and checks that its tables are the
driver's (``tables_hash``; a node whose tables differ raises ``AdapterError``).

The environment is PettingZoo's AEC environment (``gdl2pl.pettingzoo.env``) seen as
RLlib's ``MultiAgentEnv``: agents ``<role>_<index>``; in a turn-taking game only the
agent to move gets an observation and acts, in any other every agent acts in role order
(the joint move is played after the last); rewards ``(goal - 50) / 50`` at the end, -1
for an illegal action (which ends the game). An observation is the dict RLlib's
action-masking modules read (``ActionMaskingTorchRLModule`` of RLlib's examples):
``observations``, the state as float32 (the board planes of ``gdl2pl.adapters.planes``
flattened, or with ``flatten=False`` as planes ``[channels, rows, cols]`` for a network of
one's own), and ``action_mask``, float32, 1 for the agent's legal actions. Needs the
``rllib`` extra (``pip install "gdl2pl[rllib]"``: RLlib and a CPU build of torch).
"""

from __future__ import annotations

import os
import threading
from typing import Any

import numpy as np
from gymnasium import spaces
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.tune.registry import register_env

from gdl2pl.adapters import AdapterError
from gdl2pl.adapters import GdlGame
from gdl2pl.adapters import find_game
from gdl2pl.pettingzoo import env as aec_env

#: The name the environment is registered under with RLlib.
ENV_NAME = "gdl2pl/gdl"

#: The PettingZoo environment's own options (the others are ``GdlGame``'s).
_ENV_OPTIONS = ("observation", "form", "perspective", "render_mode")

_made: list[dict[str, Any]] = []
_made_lock = threading.Lock()


def env_config(game: str | os.PathLike[str], **options: Any) -> dict[str, Any]:
    """The ``env_config`` of ``GdlMultiAgentEnv`` for ``game`` loaded with ``options``
    (``GdlGame``'s and the PettingZoo environment's, and ``flatten``): loads the game
    here once (analysing it, or finding its kept tables) and packs its analyses with it."""
    flatten = options.pop("flatten", True)
    path = os.path.abspath(find_game(game))
    adapter_options = {k: v for k, v in options.items() if k not in _ENV_OPTIONS}
    g = GdlGame(path, **adapter_options)
    try:
        pack = g.travel_pack()
    finally:
        g.close()
    return {"game": path, "options": options, "flatten": flatten, "travel_pack": pack}


def envs_made_here() -> list[dict[str, Any]]:
    """What each ``GdlMultiAgentEnv`` made in this process found: the game, its tables'
    hash, and the analyses its load ran (none when its config brought them)."""
    with _made_lock:
        return [dict(m) for m in _made]


class GdlMultiAgentEnv(MultiAgentEnv):  # type: ignore[misc]
    """A GDL game as an RLlib ``MultiAgentEnv`` (see the module's docstring)."""

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        config = dict(config or {})
        if "game" not in config:
            raise AdapterError("GdlMultiAgentEnv needs env_config=gdl2pl.rllib.env_config(game)")
        pack = config.get("travel_pack")
        if pack is not None:
            GdlGame.unpack(pack)
        options = dict(config.get("options") or {})
        options["form"] = "dict"
        self._flatten = bool(config.get("flatten", True))
        self.env = aec_env(config["game"], **options)
        raw = self.env.unwrapped
        self.game: GdlGame = raw.gdl
        if pack is not None and pack.get("tables_hash") != self.game.tables_hash:
            name = self.game.name
            self.game.close()
            raise AdapterError(
                f"{name}: its action and observation tables differ here from the driver's "
                f"(tables hash {self.game.tables_hash} here, {pack.get('tables_hash')} there)")
        with _made_lock:
            _made.append({"game": self.game.name, "tables_hash": self.game.tables_hash,
                          "analysed": list(self.game.analysed), "pid": os.getpid()})
        names: list[str] = list(raw.possible_agents)
        self.possible_agents = list(names)
        self.agents = list(names)
        observed: dict[str, spaces.Space[Any]] = {a: self._space(a) for a in names}
        acting: dict[str, spaces.Space[Any]] = {a: raw.action_space(a) for a in names}
        self.observation_spaces = dict(observed.items())  # RLlib's: keys any Hashable
        self.action_spaces = dict(acting.items())
        self.observation_space = spaces.Dict(observed)
        self.action_space = spaces.Dict(acting)

    def _space(self, agent: str) -> spaces.Dict:
        inner = self.env.observation_space(agent)
        shape = inner["observation"].shape
        if self._flatten:
            shape = (int(np.prod(shape)),)
        return spaces.Dict({
            "observations": spaces.Box(0.0, 1.0, shape, np.float32),
            "action_mask": spaces.Box(0.0, 1.0, inner["action_mask"].shape, np.float32),
        })

    def _obs(self, obs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        state = obs["observation"].astype(np.float32)
        return {
            "observations": state.reshape(-1) if self._flatten else state,
            "action_mask": obs["action_mask"].astype(np.float32),
        }

    def reset(  # type: ignore[override]
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        self.env.reset(seed=seed, options=options)
        self.agents = list(self.possible_agents)
        out: dict[str, Any] = {}
        infos: dict[str, Any] = {}
        self._collect(out, {}, {}, {}, infos)
        return out, infos

    def step(  # type: ignore[override]
        self, action_dict: dict[str, Any]
    ) -> tuple[Any, Any, Any, Any, Any]:
        agent = self.env.agent_selection
        self.env.step(int(action_dict[agent]))
        obs: dict[str, Any] = {}
        rewards: dict[str, float] = {}
        terminated: dict[str, bool] = {}
        truncated: dict[str, bool] = {}
        infos: dict[str, Any] = {}
        self._collect(obs, rewards, terminated, truncated, infos)
        ended = not self.env.agents
        terminated["__all__"] = ended and all(terminated.values())
        truncated["__all__"] = ended and not terminated["__all__"]
        # ``agents`` keeps the episode's agents on its last step: RLlib checks every key
        # of what a step returns (each agent's last observation) against it
        return obs, rewards, terminated, truncated, infos

    def _collect(self, obs: dict[str, Any], rewards: dict[str, float],
                 terminated: dict[str, bool], truncated: dict[str, bool],
                 infos: dict[str, Any]) -> None:
        """The agent to act next (its observation and reward so far), after stepping out
        every agent whose game has ended (each with its last observation and reward)."""
        env = self.env
        while env.agents:
            agent = env.agent_selection
            o, r, term, trunc, info = env.last()
            obs[agent] = self._obs(o)
            rewards[agent] = rewards.get(agent, 0.0) + float(r)
            terminated[agent] = bool(term)
            truncated[agent] = bool(trunc)
            infos[agent] = {k: v for k, v in info.items() if k != "action_mask"}
            if term or trunc:
                env.step(None)
            else:
                break

    def close(self) -> None:
        """Unload the game."""
        self.game.close()


def register(name: str = ENV_NAME) -> None:
    """Register ``GdlMultiAgentEnv`` with RLlib under ``name`` (done on import)."""
    register_env(name, GdlMultiAgentEnv)


register()

__all__ = ["ENV_NAME", "GdlMultiAgentEnv", "env_config", "envs_made_here", "register"]
