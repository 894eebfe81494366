"""One-player GDL games (puzzles) as Gymnasium environments.

Importing this module registers ``gdl2pl/Gdl-v0``:

>>> env = gymnasium.make("gdl2pl/Gdl-v0", game="eightPuzzle.kif")

``game`` is a file, or a name found by ``gdl2pl.adapters.find_game`` (``$GDL2PL_GAME_PATH``,
then gdl2pl's examples). Observation: one 0/1 entry per base proposition (int8). Action:
``Discrete`` over the role's move table; ``info["action_mask"]`` marks the legal ones.
Reward 0 until the end, then ``(goal - 50) / 50``. An illegal action ends the episode
(``terminated``) with reward -1 and ``info["illegal_action"] = True``. Other options are
``GdlGame``'s, e.g. ``engine=``: ``"auto"`` by default (the reasoner at once, the game's
compiled network as soon as a background grounding has it), ``"compiled"`` or ``"prolog"``.

The tables of action ids and observation entries are a function of the game's rules
(``gdl2pl.adapters.game``): ``env.spec.kwargs["tables_hash"]`` names them, and an
environment made with ``tables_hash=`` (as ``gymnasium.make(env.spec)`` does) refuses a
game whose tables differ.

Seeding follows Gymnasium's rules: ``reset(seed=s)`` sets ``np_random_seed`` to ``s``; a
first ``reset()`` without a seed seeds from entropy. ``close()`` unloads the game; a later
``reset`` or ``step`` raises ``gymnasium.error.ClosedEnvironmentError``.

Many copies at once, stepped together in C (``gdl2pl.gymnasium.vector.GdlVectorEnv``,
games of any number of roles):

>>> envs = gymnasium.make_vec("gdl2pl/Gdl-v0", num_envs=1024,
...                           vectorization_mode="vector_entry_point", game="ticTacToe.kif")
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.envs.registration import EnvSpec
from gymnasium.error import ClosedEnvironmentError

from gdl2pl.adapters import AdapterError
from gdl2pl.adapters import GdlGame
from gdl2pl.adapters import Position
from gdl2pl.adapters import find_game
from gdl2pl.adapters.arrays import ActionMasks

ENV_ID = "gdl2pl/Gdl-v0"


class GdlEnv(gymnasium.Env):  # type: ignore[type-arg]
    """A one-player GDL game."""

    metadata = {"render_modes": ["ansi"], "render_fps": 1}  # noqa: RUF012
    _spec: EnvSpec | None = None

    def __init__(
        self,
        game: str | os.PathLike[str],
        render_mode: str | None = None,
        tables_hash: str | None = None,
        **options: Any,
    ) -> None:
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', not {render_mode!r}")
        self.render_mode = render_mode
        self.gdl = GdlGame(find_game(game), dynamics="simultaneous", **options)
        problem = None
        if self.gdl.num_roles != 1:
            problem = (f"has {self.gdl.num_roles} roles; the Gymnasium environment takes "
                       "one-player games (use gdl2pl.pettingzoo or gdl2pl.openspiel)")
        elif tables_hash is not None and tables_hash != self.gdl.tables_hash:
            problem = (f"its action and observation tables differ from the spec's (tables "
                       f"hash {self.gdl.tables_hash} here, {tables_hash} in the spec)")
        if problem is not None:
            name = self.gdl.name
            self.gdl.close()
            raise AdapterError(f"{name}: {problem}")
        self.action_space = spaces.Discrete(self.gdl.action_space_sizes[0])
        self._masks = ActionMasks([self.gdl.action_space_sizes[0]])
        self.observation_space = spaces.Box(0, 1, (self.gdl.observation_size,), np.int8)
        self._pos: Position = self.gdl.position(self.gdl.initial_state)
        self._closed = False

    @property  # type: ignore[override]
    def spec(self) -> EnvSpec | None:
        """The spec ``gymnasium.make`` gave, its ``kwargs`` holding ``tables_hash``: an
        environment made again from it (``gymnasium.make(env.spec)``, on another machine
        too) checks that its tables are the same."""
        return self._spec

    @spec.setter
    def spec(self, value: EnvSpec | None) -> None:
        if value is not None and "tables_hash" not in value.kwargs:
            value = dataclasses.replace(
                value, kwargs={**value.kwargs, "tables_hash": self.gdl.tables_hash})
        self._spec = value

    def close(self) -> None:
        """Unload the game (once); later calls of ``reset`` and ``step`` raise."""
        if not self._closed:
            self._closed = True
            self.gdl.close()

    def _check_open(self) -> None:
        if self._closed:
            raise ClosedEnvironmentError(f"{self.gdl.name}: the environment is closed")

    def _obs(self) -> np.ndarray:
        return np.asarray(self.gdl.observation(self._pos.state), np.int8)

    def _info(self, **extra: Any) -> dict[str, Any]:
        node = self._pos.node
        mask = self._masks.mask(0, () if node.terminal else node.legal[0])
        return {"action_mask": mask.copy(), **extra}  # Gymnasium: fresh data every call

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        self._check_open()
        super().reset(seed=seed)
        self._pos = self.gdl.position(self.gdl.initial_state)
        return self._obs(), self._info()

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        self._check_open()
        node = self._pos.node
        if node.terminal:
            raise AdapterError(f"{self.gdl.name}: step after the end; call reset()")
        if int(action) not in node.legal[0]:
            return self._obs(), -1.0, True, False, self._info(illegal_action=True)
        self._pos = self.gdl.position(self.gdl.next(self._pos.state, [int(action)]))
        node = self._pos.node
        reward = node.returns[0] if node.terminal else 0.0
        return self._obs(), reward, node.terminal, False, self._info()

    def render(self) -> str | None:  # type: ignore[override]
        if self.render_mode == "ansi":
            return self.gdl.draw(self._pos.state)
        return None


if ENV_ID not in gymnasium.registry:
    gymnasium.register(
        id=ENV_ID,
        entry_point="gdl2pl.gymnasium:GdlEnv",
        vector_entry_point="gdl2pl.gymnasium.vector:GdlVectorEnv",
    )

__all__ = ["ENV_ID", "GdlEnv"]
