"""Self-play on a batch of two-player turn-taking games: what AlphaZero-style code reads.

``SelfPlayBatch(game, num_games)`` is a ``GdlBatch`` seen from the player to move: per
game the observation (board planes where the fluents form one, float32 by default),
``legal_mask`` (the mover's legal action ids, ``num_actions`` wide: the larger of the two
roles' action spaces), ``to_play`` (the mover's role index, -1 once the game has ended),
and ``step(actions)`` with one action per game, the mover's (the other role's single
legal move is played for it). ``step`` returns ``(returns, terminated)``: per game and
role ``(goal - 50) / 50`` in the games that ended at this step, 0 elsewhere. A game that
has ended restarts at the next step (its action is not read). ``states()`` and
``set_states()`` save and restore the games, for a search. With ``perspective="mover"``
the board planes are seen from the mover's side (its pieces first, ``GdlGame.mover_orders``,
as OpenSpiel's and pgx's board games give them). The game must be loaded as
turn-taking (proved or sampled by ``GdlGame``'s analysis); a state where both roles have
a choice raises ``UnrepresentableStateError``.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from .batch import GdlBatch
from .batch import Observation
from .errors import AdapterError
from .errors import UnrepresentableStateError
from .game import GdlGame


# Alike on purpose: the constructor takes ``GdlBatch``'s arguments, as a user of one expects
# of the other.
class SelfPlayBatch:
    """``num_games`` two-player turn-taking games seen from the player to move (see the
    module's docstring). ``game``: a ``GdlGame`` or a file (loaded with ``options``)."""

    def __init__(
        self,
        game: GdlGame | str | os.PathLike[str],
        num_games: int,
        *,
        observation: Observation = "planes",
        perspective: str = "fixed",
        dtype: Any = np.float32,
        seed: int = 0,
        **options: Any,
    ) -> None:
        if perspective not in ("fixed", "mover"):
            raise ValueError(f"perspective must be 'fixed' or 'mover', not {perspective!r}")
        self.batch = GdlBatch(game, num_games, observation=observation, dtype=dtype,
                              seed=seed, **options)
        self.game = self.batch.game
        #: Per role, the order of the planes seen from its side; None: one order for all.
        self._orders: tuple[np.ndarray, ...] | None = None
        try:
            if self.game.num_roles != 2 or not self.game.turn_taking:
                kind = "turn-taking" if self.game.turn_taking else "simultaneous"
                raise AdapterError(
                    f"{self.game.name}: self-play takes two-player turn-taking games; this one "
                    f"has {self.game.num_roles} roles and is {kind}"
                )
            if perspective == "mover":
                if observation != "planes" or self.game.board is None:
                    raise AdapterError(
                        f"{self.game.name}: perspective='mover' needs the board planes "
                        "(observation='planes' and a game with a board)"
                    )
                self._orders = self.game.mover_orders
        except BaseException:
            self.batch.close()
            raise
        self.num_games = num_games
        self.num_actions = self.batch.num_actions
        self.observation_shape = self.batch.observation_shape
        self._rows = np.arange(num_games)
        self._check_movers()

    @property
    def observations(self) -> np.ndarray:
        """``(N, *observation_shape)``: read-only and overwritten by every step; with
        ``perspective="mover"`` a new array, each game's planes from its mover's side
        (an ended game's from the first role's)."""
        obs = self.batch.observations
        if self._orders is None:
            return obs
        seen = np.empty_like(obs)
        mover = self.batch.mover
        for role, order in enumerate(self._orders):
            games = mover == role if role else mover <= 0
            seen[games] = obs[games][:, order]
        return seen

    @property
    def to_play(self) -> np.ndarray:
        """The role to move in each game (-1: the game has ended)."""
        return self.batch.mover

    @property
    def legal_mask(self) -> np.ndarray:
        """``(N, num_actions)`` int8: the legal action ids of the player to move (a new
        array; zeros where the game has ended)."""
        mover = self.batch.mover
        masks = self.batch.action_masks[self._rows, np.maximum(mover, 0)]
        return np.where((mover >= 0)[:, None], masks, 0).astype(np.int8)

    def reset(self, games: Any = None) -> None:
        """Restart the games ``games`` names (a boolean mask; None: all)."""
        self.batch.reset(games)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray]:
        """The mover's action in each game: ``(returns, terminated)``, new arrays."""
        self.batch.step(np.asarray(actions))
        self._check_movers()
        return self.batch.rewards.copy(), self.batch.terminated.copy()

    def random_actions(self) -> np.ndarray:
        """A uniformly random legal action of the mover in each game (the batch's seeded
        generator)."""
        joint = self.batch.sample_actions()
        return joint[self._rows, np.maximum(self.batch.mover, 0)]

    def states(self) -> np.ndarray:
        """Every game's state, packed (``GdlBatch.states``)."""
        return self.batch.states()

    def set_states(self, states: Any, games: Any = None) -> None:
        """Restore the games ``games`` names from ``states()``."""
        self.batch.set_states(states, games)
        self._check_movers()

    def close(self) -> None:
        self.batch.close()

    def _check_movers(self) -> None:
        both = np.flatnonzero(~self.batch.terminated & (self.batch.mover < 0))
        if len(both):
            i = int(both[0])
            raise UnrepresentableStateError(
                f"{self.game.name}: game {i} of the batch: both roles have a choice in "
                f"state {self.batch.machine_state(i)} (self-play needs a turn-taking game)"
            )


__all__ = ["SelfPlayBatch"]
