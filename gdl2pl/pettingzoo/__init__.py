"""GDL games as PettingZoo environments, with PettingZoo's conventions.

``env(path)`` is an ``AECEnv``: in a turn-taking game (see ``gdl2pl.adapters.game``) only
the role with a choice acts, the others' only move is played for them; in any other game
every role acts in role order and the joint move is played after the last. ``parallel_env``
is a ``ParallelEnv`` for any game: every agent gives an action each step, and the action of
an agent with a single legal move is ignored (that move is played); an illegal action
ends the game with reward -1 for its agent, as ``env()``'s wrapper does.

Agents are named after the roles, numbered in role order (``xplayer_0``, ``oplayer_1``:
``gdl2pl.pettingzoo.agents``); ``agent_roles`` maps each to its role. An observation is,
as in PettingZoo's classic board games (chess, connect four, tic-tac-toe), a dict in the
agent's ``Dict`` space: ``observation``, the state, and ``action_mask`` (int8, 1 for the
agent's legal actions when it is to act, all 0 otherwise), where RLlib's action-masking
modules and code written for the classic games read it. With ``form="array"`` it is the
state array alone, in a ``Box`` space. The state is a read-only int8 NumPy array: planes
``[channels, rows, cols]`` where the fluents form a board (the board's channels, then the
other fluents, as OpenSpiel's observation tensor has them: ``gdl2pl.adapters.planes``),
else (or with ``observation="flat"``) one 0/1 entry per base proposition; then one plane
(or entry) per agent, 1 for the agent observing: which role it plays, so that one policy
can play every role, and no observation is all zeros (PettingZoo's API test takes one
for a broken observation, and a game may start from an empty state). With
``perspective="mover"`` the planes are seen from the observing agent (the mover, when it
is to act), as OpenSpiel's and pgx's board games give them: its board channels first (a
content belongs to the role it names or whose moves alone put it down:
``gdl2pl.adapters.owners``), then the other roles' in turn order, then the rest; its
role-named fluents' planes likewise (``(control r)``); and no agent planes, which that
view makes constant. Either form also
puts the mask in ``infos[agent]["action_mask"]``, where PettingZoo's API test and
``TerminateIllegalWrapper`` look for it beside an array. Action spaces are ``Discrete``
over the role's move table.

``metadata["is_parallelizable"]`` is False where the game takes turns (as in
PettingZoo's own board games: ``aec_to_parallel`` would ask every agent for an action at
every step), True where every role moves at once; ``metadata["tables_hash"]`` names the
game's action and observation tables (``GdlGame.tables_hash``).
Rewards come at the end: ``(goal - 50) / 50``. ``render_mode="ansi"``: ``render()``
returns the board. Other options are ``GdlGame``'s, e.g. ``engine=``: ``"auto"`` by
default (the reasoner at once, the game's compiled network as soon as a background
grounding has it), ``"compiled"`` or ``"prolog"``.
Shimmy's OpenSpiel wrapper is not used: it has no ParallelEnv, and prints instead of
returning the ansi board.
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

from .agents import agent_names

METADATA = {"render_modes": ["ansi"], "name": "gdl_v0", "is_parallelizable": True}


class _Shared:
    """What both kinds of environment share: the game, spaces, observations."""

    metadata = METADATA

    def _load(
        self,
        path: str | os.PathLike[str],
        render_mode: str | None,
        observation: str = "planes",
        form: str = "dict",
        perspective: str = "fixed",
        **options: Any,
    ) -> None:
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', not {render_mode!r}")
        if observation not in ("planes", "flat"):
            raise ValueError(f"observation must be 'planes' or 'flat', not {observation!r}")
        if form not in ("dict", "array"):
            raise ValueError(f"form must be 'dict' or 'array', not {form!r}")
        if perspective not in ("fixed", "mover"):
            raise ValueError(f"perspective must be 'fixed' or 'mover', not {perspective!r}")
        self.render_mode = render_mode
        self.gdl = GdlGame(find_game(path), **options)
        self._dict_form = form == "dict"
        self.possible_agents = agent_names(self.gdl.roles)
        #: Each agent's role, as the game names it.
        self.agent_roles = {a: str(r) for a, r in zip(self.possible_agents, self.gdl.roles,
                                                       strict=True)}
        self._index = {a: i for i, a in enumerate(self.possible_agents)}
        self._layout = self.gdl.board if observation == "planes" else None
        n = len(self.possible_agents)
        #: Per agent, the order of its planes (the mover's point of view), or None.
        self._order: dict[str, np.ndarray] | None = None
        if perspective == "mover":
            if self._layout is None:
                raise ValueError(f"{self.gdl.name}: perspective='mover' needs the board "
                                 "planes (observation='planes' and a game with a board)")
            self._order = self._mover_orders()
        markers = 0 if self._order is not None else n  # the observer's planes come first
        if self._layout is None:
            shape: tuple[int, ...] = (self.gdl.observation_size + n,)
        else:
            channels, rows, cols = self._layout.planes_shape
            shape = (channels + markers, rows, cols)
        space = spaces.Box(0, 1, shape, np.int8)
        self._action_spaces: dict[str, spaces.Discrete] = {
            a: spaces.Discrete(self.gdl.action_space_sizes[i]) for a, i in self._index.items()
        }
        self._observation_spaces: dict[str, spaces.Space] = {  # type: ignore[type-arg]
            a: spaces.Dict({
                "observation": space,
                "action_mask": spaces.Box(0, 1, (self.gdl.action_space_sizes[i],), np.int8),
            }) if self._dict_form else space
            for a, i in self._index.items()
        }
        #: PettingZoo's metadata, this game's: turn-taking games are not parallelizable.
        self.metadata = {**METADATA, "is_parallelizable": self._parallelizable(),
                         "tables_hash": self.gdl.tables_hash}
        self._masks = ActionMasks(list(self.gdl.action_space_sizes))
        self._pos: Position = self.gdl.position(self.gdl.initial_state)
        self._seen_pos: Position | None = None  # the position _observation last saw

    def observation_space(self, agent: str) -> spaces.Space:  # type: ignore[type-arg]
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:  # type: ignore[type-arg]
        return self._action_spaces[agent]

    def _parallelizable(self) -> bool:
        return True

    def _mover_orders(self) -> dict[str, np.ndarray]:
        orders = self.gdl.mover_orders
        assert orders is not None  # the game has a board (checked by the caller)
        return {a: orders[i] for a, i in self._index.items()}

    def _observe(self, agent: str, acting: bool) -> Any:
        """The agent's observation in the environment's form: the state array, or a dict
        of it and the agent's action mask."""
        state = self._observation(agent)
        if not self._dict_form:
            return state
        return {"observation": state, "action_mask": self._info(agent, acting)["action_mask"]}

    def _observation(self, agent: str) -> np.ndarray:
        """The agent's state array of the current position: the state, then which agent
        observes. Read-only, and made once per agent and position."""
        pos = self._pos
        if pos is not self._seen_pos:
            self._seen_pos = pos
            self._seen: dict[str, np.ndarray] = {}
        obs = self._seen.get(agent)
        if obs is None:
            vec = self.gdl.observation(pos.state)
            layout = self._layout
            n = len(self.possible_agents)
            me = np.zeros(n, np.int8)
            me[self._index[agent]] = 1
            if layout is None:
                obs = np.concatenate([np.asarray(vec, np.int8), me])
            elif self._order is not None:
                obs = layout.observation_planes(vec).astype(np.int8)[self._order[agent]]
            else:
                state = layout.observation_planes(vec).astype(np.int8)
                who = np.broadcast_to(me[:, None, None], (n, *state.shape[1:]))
                obs = np.concatenate([state, who])
            obs = self._seen[agent] = frozen(obs)
        return obs

    def _info(self, agent: str, acting: bool) -> dict[str, Any]:
        """The agent's info: its ``action_mask``, all zeros unless it is to act."""
        pos = self._pos
        i = self._index[agent]
        legal = pos.node.legal[i] if acting and not pos.node.terminal else ()
        return {"action_mask": self._masks.mask(i, legal)}

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
        self._pending: dict[str, int] = {}
        self._queue = self._actors()
        self._update_infos()
        if self._pos.node.terminal:  # a game over before it starts: returns at once
            for a, r in zip(self.agents, self._pos.node.returns, strict=True):
                self.rewards[a] = self._cumulative_rewards[a] = r
                self.terminations[a] = True
        self.agent_selection = self._queue[0] if self._queue else self.agents[0]

    def _update_infos(self) -> None:
        self.infos: dict[str, dict[str, Any]] = {
            a: self._info(a, a in self._queue) for a in self.agents
        }

    def _parallelizable(self) -> bool:
        # every role acts at every step only in a game loaded as simultaneous
        return not self.gdl.turn_taking

    def observe(self, agent: str) -> Any:
        return self._observe(agent, agent in self._queue)

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
        self._update_infos()
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

    def _observations(self, acting: bool = True) -> dict[str, Any]:
        return {a: self._observe(a, acting) for a in self.agents}

    def _infos(self) -> dict[str, dict[str, Any]]:
        return {a: self._info(a, True) for a in self.agents}

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        self._pos = self.gdl.position(self.gdl.initial_state)
        self.agents = list(self.possible_agents)
        return self._observations(), self._infos()

    def step(self, actions: dict[str, int]) -> tuple[Any, Any, Any, Any, Any]:
        """One joint move. An agent with a choice whose action is missing or illegal
        ends the game: it gets -1, the others 0, and its info ``illegal_action`` True
        (as PettingZoo's ``TerminateIllegalWrapper`` does in ``env()``)."""
        illegal = [
            a
            for a in self.agents
            if len(legal := self._pos.node.legal[self._index[a]]) > 1
            and actions.get(a) not in legal
        ]
        if illegal:
            agents = self.agents
            self.agents = []
            infos = {a: {**self._info(a, False), "illegal_action": a in illegal} for a in agents}
            return (
                {a: self._observe(a, False) for a in agents},
                {a: -1.0 if a in illegal else 0.0 for a in agents},
                {a: True for a in agents},
                {a: False for a in agents},
                infos,
            )
        joint = [self._check(a, actions.get(a, -1)) for a in self.possible_agents]
        self._pos = self.gdl.position(self.gdl.next(self._pos.state, joint))
        node = self._pos.node
        agents = self.agents
        rewards = {a: node.returns[self._index[a]] for a in agents}
        terminations = {a: node.terminal for a in agents}
        truncations = {a: False for a in agents}
        infos = self._infos()
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


__all__ = ["GdlAECEnv", "GdlParallelEnv", "agent_names", "env", "parallel_env", "raw_env"]
