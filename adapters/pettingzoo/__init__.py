"""GDL games as PettingZoo environments, with the conventions of the classic ones.

``env(path)`` is an ``AECEnv``: in a turn-taking game (see ``gdl2pl.adapters.game``) only
the role with a choice acts, the others' only move is played for them; in any other game
every role acts in role order and the joint move is played after the last. ``parallel_env``
is a ``ParallelEnv`` for any game: every agent gives an action each step, and the action of
an agent with a single legal move is ignored (that move is played).

Agents are the roles' names. Observations are dicts: ``observation`` (one 0/1 entry per
base proposition, int8), ``action_mask`` (int8, 1 for the agent's legal actions when it
is to act) and, where the fluents form a board (``gdl2pl.adapters.planes``), ``board``
(int8 planes ``[channels, rows, cols]``); read-only arrays. Action spaces are
``Discrete`` over the role's move table.
Rewards come at the end: ``(goal - 50) / 50``. ``render_mode="ansi"``: ``render()``
returns the board. Options are ``GdlGame``'s, e.g. ``engine="compiled"`` to step the game
with its compiled network (default: the reasoner).
Shimmy's OpenSpiel wrapper is not used: it puts the mask in ``infos`` rather than the
observation, has no ParallelEnv, and prints instead of returning the ansi board.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo import ParallelEnv
from pettingzoo.utils import wrappers

from gdl2pl.adapters import GdlGame
from gdl2pl.adapters import Position
from gdl2pl.adapters import find_game
from gdl2pl.adapters.arrays import ActionMasks
from gdl2pl.adapters.arrays import frozen

METADATA = {"render_modes": ["ansi"], "name": "gdl_v0", "is_parallelizable": True}


class _Shared:
    """What both kinds of environment share: the game, spaces, observations."""

    metadata = METADATA

    def _load(self, path: str | os.PathLike[str], render_mode: str | None, **options: Any) -> None:
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', not {render_mode!r}")
        self.render_mode = render_mode
        self.gdl = GdlGame(find_game(path), **options)
        self.possible_agents = [str(r) for r in self.gdl.roles]
        self._index = {a: i for i, a in enumerate(self.possible_agents)}
        n_base = self.gdl.observation_size
        layout = self.gdl.board
        board = {} if layout is None else {"board": spaces.Box(0, 1, layout.shape, np.int8)}
        self._action_spaces = {
            a: spaces.Discrete(self.gdl.action_space_sizes[i]) for a, i in self._index.items()
        }
        self._observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": spaces.Box(0, 1, (n_base,), np.int8),
                    "action_mask": spaces.Box(0, 1, (self.gdl.action_space_sizes[i],), np.int8),
                    **board,
                }
            )
            for a, i in self._index.items()
        }
        self._masks = ActionMasks(list(self.gdl.action_space_sizes))
        self._pos: Position = self.gdl.position(self.gdl.initial_state)
        self._seen_pos: Position | None = None  # the position _observation last saw

    def observation_space(self, agent: str) -> spaces.Space:  # type: ignore[type-arg]
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:  # type: ignore[type-arg]
        return self._action_spaces[agent]

    def _observation(self, agent: str, acting: bool) -> dict[str, np.ndarray]:
        """The agent's observation of the current position. Its arrays are read-only and
        shared by every call until the position changes (agents see the same state)."""
        pos = self._pos
        if pos is not self._seen_pos:
            self._seen_pos = pos
            vec = self.gdl.observation(pos.state)
            self._seen_obs = frozen(np.asarray(vec, np.int8))
            layout = self.gdl.board
            self._seen_board = (
                None if layout is None else frozen(layout.planes(vec).astype(np.int8))
            )
        i = self._index[agent]
        legal = pos.node.legal[i] if acting and not pos.node.terminal else ()
        obs = {"observation": self._seen_obs, "action_mask": self._masks.mask(i, legal)}
        if self._seen_board is not None:
            obs["board"] = self._seen_board
        return obs

    def render(self) -> str | None:
        if self.render_mode == "ansi":
            return self.gdl.draw(self._pos.state)
        return None

    def close(self) -> None:
        """Keeps the game loaded (it may be reset again); ``gdl.close()`` unloads it."""

    def _check(self, agent: str, action: int) -> int:
        i = self._index[agent]
        legal = self._pos.node.legal[i]
        if len(legal) == 1:
            return legal[0]
        if action not in legal:
            raise ValueError(
                f"{self.gdl.name}: action {action} of {agent} is not legal in state "
                f"{self._pos.state} (legal: {list(legal)})"
            )
        return int(action)


class GdlAECEnv(_Shared, AECEnv):  # type: ignore[misc]
    """A GDL game as an agent-environment-cycle environment."""

    def __init__(
        self, path: str | os.PathLike[str], render_mode: str | None = None, **options: Any
    ) -> None:
        super().__init__()
        self._load(path, render_mode, **options)
        self.agents: list[str] = []

    def _actors(self) -> list[str]:
        node = self._pos.node
        if node.terminal:
            return []
        if self.gdl.turn_taking:
            return [self.possible_agents[self.gdl.sequential_mover(self._pos.state, node)]]
        return list(self.possible_agents)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self._pos = self.gdl.position(self.gdl.initial_state)
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._pending: dict[str, int] = {}
        self._queue = self._actors()
        if self._pos.node.terminal:  # a game over before it starts: returns at once
            for a, r in zip(self.agents, self._pos.node.returns, strict=True):
                self.rewards[a] = self._cumulative_rewards[a] = r
                self.terminations[a] = True
        self.agent_selection = self._queue[0] if self._queue else self.agents[0]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        return self._observation(agent, agent in self._queue)

    def step(self, action: int) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        self._pending[agent] = self._check(agent, action)
        self._queue.remove(agent)
        self.rewards = {a: 0.0 for a in self.agents}
        if not self._queue:
            node = self._pos.node
            joint = [
                self._pending.get(a, node.legal[i][0]) for a, i in self._index.items()
            ]
            self._pending = {}
            self._pos = self.gdl.position(self.gdl.next(self._pos.state, joint))
            if self._pos.node.terminal:
                for a, r in zip(self.possible_agents, self._pos.node.returns, strict=True):
                    self.rewards[a] = r
                    self.terminations[a] = True
            self._queue = self._actors()
        if self._queue:
            self.agent_selection = self._queue[0]
        elif self.agents:
            self.agent_selection = self.agents[0]
        self._accumulate_rewards()


class GdlParallelEnv(_Shared, ParallelEnv):  # type: ignore[misc]
    """A GDL game as a parallel environment: every agent acts at every step."""

    def __init__(
        self, path: str | os.PathLike[str], render_mode: str | None = None, **options: Any
    ) -> None:
        self._load(path, render_mode, dynamics="simultaneous", **options)
        self.agents: list[str] = []

    def _observations(self) -> dict[str, dict[str, np.ndarray]]:
        return {a: self._observation(a, True) for a in self.agents}

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        self._pos = self.gdl.position(self.gdl.initial_state)
        self.agents = list(self.possible_agents)
        return self._observations(), {a: {} for a in self.agents}

    def step(self, actions: dict[str, int]) -> tuple[Any, Any, Any, Any, Any]:
        joint = [self._check(a, actions.get(a, -1)) for a in self.possible_agents]
        self._pos = self.gdl.position(self.gdl.next(self._pos.state, joint))
        node = self._pos.node
        agents = self.agents
        rewards = {a: node.returns[self._index[a]] for a in agents}
        terminations = {a: node.terminal for a in agents}
        truncations = {a: False for a in agents}
        infos: dict[str, dict[str, Any]] = {a: {} for a in agents}
        observations = self._observations()
        if node.terminal:
            self.agents = []
        return observations, rewards, terminations, truncations, infos


def raw_env(path: str | os.PathLike[str], render_mode: str | None = None, **options: Any):
    """The AEC environment without PettingZoo's safety wrappers."""
    return GdlAECEnv(path, render_mode, **options)


def env(path: str | os.PathLike[str], render_mode: str | None = None, **options: Any):
    """The AEC environment, wrapped as PettingZoo's classic environments are: an illegal
    action ends the game with reward -1 for its agent; order of calls enforced."""
    e: Any = raw_env(path, render_mode, **options)
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    return wrappers.OrderEnforcingWrapper(e)


def parallel_env(path: str | os.PathLike[str], render_mode: str | None = None, **options: Any):
    """The parallel environment (any game)."""
    return GdlParallelEnv(path, render_mode, **options)


__all__ = ["GdlAECEnv", "GdlParallelEnv", "env", "parallel_env", "raw_env"]
