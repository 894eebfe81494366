"""Many copies of a GDL game as one Gymnasium ``VectorEnv``, stepped together in C.

>>> envs = gymnasium.make_vec("gdl2pl/Gdl-v0", num_envs=1024,
...                           vectorization_mode="vector_entry_point", game="ticTacToe.kif")

``GdlVectorEnv`` is ``GdlEnv`` (``gdl2pl.gymnasium``) ``num_envs`` times over one
``gdl2pl.adapters.batch.GdlBatch`` (the game's compiled network, loaded with
``engine="compiled"``): the same observation (one 0/1 entry per base proposition, int8;
or ``observation="planes"``, the board planes), the same ``Discrete`` actions, reward
``(goal - 50) / 50`` at the end, ``info["action_mask"]`` (int8, one row per environment),
and an illegal action ends its episode with reward -1 and ``info["illegal_action"]``; an
episode that ends in a terminal state the adapters cannot score (``GdlBatch``'s
``unrepresentable``) ends with reward 0 and ``info["unrepresentable"]``.
Episodes restart by themselves at the step after their end (``AutoresetMode.NEXT_STEP``,
as ``SyncVectorEnv``); ``reset(options={"reset_mask": mask})`` restarts some.

Games of more roles are played as ``role`` (an index or a role's name, default the
first): the other roles are played by ``opponent``, a policy called as
``opponent(observations, action_mask, role)`` with the batch's observations
``(num_envs, ...)`` and that role's masks ``(num_envs, actions)``, returning one action
id per environment (random legal actions by default, drawn in C from the generator that
``reset(seed=...)`` seeds). The environment hands the turn back when the agent has a
choice (two or more legal actions) or the episode has ended; meanwhile its single legal
actions are played for it. An opponent's illegal action raises ``ValueError``. An
episode whose agent gets no choice in ``MAX_FORCED_STEPS`` steps is truncated.

``reset(seed=...)`` takes any integer (Python's or numpy's) or a list of them (the first
seeds the batch's one generator). After ``close()``, ``step``, ``reset`` and ``render``
raise Gymnasium's ``ClosedEnvironmentError``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from collections.abc import Sequence
from numbers import Integral
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.error import ClosedEnvironmentError
from gymnasium.vector import AutoresetMode
from gymnasium.vector import VectorEnv
from gymnasium.vector.utils import batch_space

from gdl2pl.adapters import AdapterError
from gdl2pl.adapters import find_game
from gdl2pl.adapters.batch import GdlBatch
from gdl2pl.adapters.batch import Observation

#: ``opponent(observations, action_mask, role) -> action ids``, one per environment.
Policy = Callable[[np.ndarray, np.ndarray, int], Any]

#: Steps an episode may take without giving the agent a choice before it is truncated.
MAX_FORCED_STEPS = 10_000


class GdlVectorEnv(VectorEnv):  # type: ignore[type-arg]
    """``num_envs`` copies of a GDL game (see the module's docstring)."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP,  # noqa: RUF012
                "render_modes": ["ansi"]}

    def __init__(
        self,
        num_envs: int = 1,
        game: str | os.PathLike[str] | None = None,
        *,
        role: int | str = 0,
        opponent: Policy | None = None,
        observation: Observation = "flat",
        render_mode: str | None = None,
        **options: Any,
    ) -> None:
        if game is None:
            raise AdapterError("GdlVectorEnv needs game=<a GDL file or name>")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', not {render_mode!r}")
        self.render_mode = render_mode
        options.setdefault("dynamics", "simultaneous")  # as GdlEnv: no game-kind search
        self.batch = GdlBatch(find_game(game), num_envs, observation=observation,
                              dtype=np.int8, reward_dtype=np.float64, **options)
        self.gdl = self.batch.game
        try:
            self.role = self._role_index(role)
        except BaseException:
            self.batch.close()
            raise
        self.opponent = opponent
        self.num_envs = num_envs
        shape = self.batch.observation_shape
        self.single_observation_space = spaces.Box(0, 1, shape, np.int8)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.single_action_space = spaces.Discrete(self.gdl.action_space_sizes[self.role])
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._joint = np.zeros((num_envs, self.gdl.num_roles), np.int64)
        self._restart = np.zeros(num_envs, np.bool_)  # truncated: restarts at the next step
        self._seeded = False  # the batch's generator seeded by a reset

    def _role_index(self, role: int | str) -> int:
        names = [str(r) for r in self.gdl.roles]
        if isinstance(role, str):
            if role not in names:
                raise AdapterError(f"{self.gdl.name}: no role {role!r} (roles: {names})")
            return names.index(role)
        if not 0 <= int(role) < len(names):
            raise AdapterError(f"{self.gdl.name}: role index {role} out of range "
                               f"(roles: {names})")
        return int(role)

    # -- the VectorEnv API --------------------------------------------------------------

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        self._check_open()
        if seed is not None or not self._seeded:
            # Gymnasium's rule: a seed sets np_random_seed; none at the first reset seeds
            # from entropy (np_random_seed draws it), so unseeded runs differ.
            super().reset(seed=None if seed is None else _seed(seed))
            self.batch.seed(int(self.np_random_seed or 0))  # (never None once drawn)
            self._seeded = True
        mask = None if options is None else options.get("reset_mask")
        games = None if mask is None else self._reset_mask(mask)
        self.batch.reset(games)
        restarted = np.ones(self.num_envs, np.bool_) if games is None else games
        self._restart &= ~restarted
        if self.gdl.num_roles > 1:
            rewards = np.zeros(self.num_envs)
            truncated = self._advance(rewards, restarted)
            self._restart |= truncated
        infos = self._infos()
        if games is not None:  # as SyncVectorEnv: infos of the environments reset only
            infos = {"action_mask": np.where(games[:, None], infos["action_mask"], 0),
                     "_action_mask": games.copy()}
        return self.batch.observations.copy(), infos

    def _reset_mask(self, mask: Any) -> np.ndarray:
        """``options["reset_mask"]`` checked as ``SyncVectorEnv`` checks it."""
        if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_:
            raise TypeError(f"options['reset_mask'] must be a numpy array of np.bool_, not "
                            f"{type(mask).__name__} {getattr(mask, 'dtype', '')}")
        if mask.shape != (self.num_envs,):
            raise ValueError(f"options['reset_mask'] must have shape ({self.num_envs},), not "
                             f"{mask.shape}")
        if not mask.any():
            raise ValueError("options['reset_mask'] must hold at least one True")
        return mask

    def step(
        self, actions: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        self._check_open()
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,) or acts.dtype.kind not in "iu":
            raise ValueError(f"actions: {self.num_envs} integer action ids, not "
                             f"{acts.dtype} of shape {acts.shape}")
        batch, role = self.batch, self.role
        restart = self._restart
        if restart.any():  # truncated last step: restart as an ended game would
            batch.reset(restart)
        moving = ~restart
        # (a game that ended last step restarts in the batch: its actions are not read)
        self._opponents(moving & ~batch.terminated)
        self._joint[:, role] = acts
        batch.step(self._joint, moving, illegal="end", strict=role)
        rewards = np.where(moving, batch.rewards[:, role], 0.0)
        truncated = np.zeros(self.num_envs, np.bool_)
        if self.gdl.num_roles > 1:
            truncated = self._advance(rewards, np.ones(self.num_envs, np.bool_))
        self._restart = truncated
        infos = self._infos()
        return (batch.observations.copy(), rewards, batch.terminated.copy(), truncated, infos)

    def render(self) -> tuple[str, ...] | None:  # type: ignore[override]
        self._check_open()
        if self.render_mode != "ansi":
            return None
        return tuple(self.gdl.draw(self.batch.machine_state(i)) for i in range(self.num_envs))

    def close_extras(self, **kwargs: Any) -> None:
        self.batch.close()

    def _check_open(self) -> None:
        if self.closed:
            raise ClosedEnvironmentError(
                f"{self.gdl.name}: the GdlVectorEnv is closed (close() was called)"
            )

    # -- the other roles ----------------------------------------------------------------

    def _infos(self) -> dict[str, Any]:
        batch = self.batch
        infos: dict[str, Any] = {
            "action_mask": batch.action_masks[:, self.role].copy(),
            "_action_mask": np.ones(self.num_envs, np.bool_),
        }
        if batch.illegal.any():
            infos["illegal_action"] = batch.illegal.copy()
            infos["_illegal_action"] = batch.illegal.copy()
        if batch.unrepresentable.any():
            infos["unrepresentable"] = batch.unrepresentable.copy()
            infos["_unrepresentable"] = batch.unrepresentable.copy()
        return infos

    def _opponents(self, games: np.ndarray) -> None:
        """The other roles' actions in ``games`` into the joint actions."""
        batch, role = self.batch, self.role
        if self.gdl.num_roles == 1:
            return
        if self.opponent is None:
            batch.sample_actions(self._joint)
            return
        for r in range(self.gdl.num_roles):
            if r == role:
                continue
            acts = np.asarray(self.opponent(batch.observations, batch.action_masks[:, r], r))
            if acts.shape != (self.num_envs,) or acts.dtype.kind not in "iu":
                raise ValueError(f"the opponent policy gave role {r} {acts.dtype} of shape "
                                 f"{acts.shape}, not {self.num_envs} integer action ids")
            masks = batch.action_masks[:, r]
            choosing = games & (masks.sum(axis=1) > 1)
            inside = (acts >= 0) & (acts < masks.shape[1])
            legal = np.zeros(self.num_envs, np.bool_)
            legal[inside] = masks[np.flatnonzero(inside), acts[inside]] == 1
            bad = np.flatnonzero(choosing & ~legal)
            if len(bad):
                i = int(bad[0])
                raise ValueError(
                    f"{self.gdl.name}: the opponent policy gave role {self.gdl.roles[r]} "
                    f"the illegal action {int(acts[i])} in environment {i}"
                )
            self._joint[:, r] = acts

    def _advance(self, rewards: np.ndarray, games: np.ndarray) -> np.ndarray:
        """Step ``games`` until the agent has a choice or the episode ends (its single
        legal actions played for it), adding its rewards; the games truncated."""
        batch, role = self.batch, self.role
        for _ in range(MAX_FORCED_STEPS):
            pending = games & ~batch.terminated & (batch.action_masks[:, role].sum(axis=1) <= 1)
            if not pending.any():
                return np.zeros(self.num_envs, np.bool_)
            self._opponents(pending)
            self._joint[:, role] = 0  # its one legal move is played whatever this says
            batch.step(self._joint, pending)
            rewards[pending] += batch.rewards[pending, role]
        return games & ~batch.terminated & (batch.action_masks[:, role].sum(axis=1) <= 1)


def _seed(seed: Any) -> int:
    """The batch's seed from ``reset(seed=...)``: an integer (Python's or numpy's), or a
    sequence of them (one per environment, as ``SyncVectorEnv`` takes them), whose first
    seeds the one generator of the batch."""
    if isinstance(seed, Integral) and not isinstance(seed, bool):
        return int(seed)
    if isinstance(seed, Sequence | np.ndarray) and not isinstance(seed, str) and len(seed):
        first = seed[0]
        if isinstance(first, Integral) and not isinstance(first, bool):
            return int(first)
    raise TypeError(f"seed: an integer or a list of integers, not {type(seed).__name__}")


__all__ = ["MAX_FORCED_STEPS", "GdlVectorEnv", "Policy"]
