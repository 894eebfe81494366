"""The ``pyspiel.GameType`` of a GDL game, perfect-information or GDL-II: one
description of what the adapters offer OpenSpiel, for both."""

from __future__ import annotations

from typing import Any

import pyspiel

_Type = pyspiel.GameType


def perfect_game_type(
    short_name: str, sequential: bool, utility: Any, players: int, params: dict[str, Any]
) -> Any:
    """A deterministic game of perfect information (sequential or simultaneous)."""
    return _game_type(
        short_name, "GDL game (gdl2pl)", sequential, False, True, utility, players, False, params
    )


def imperfect_game_type(
    short_name: str, chance: bool, utility: Any, players: int, tensors: bool, params: Any
) -> Any:
    """A sequential GDL-II game of imperfect information, with explicit chance if it has
    a random role, and information-state and observation tensors if ``tensors``."""
    return _game_type(
        short_name, "GDL-II game (gdl2pl)", True, chance, False, utility, players, tensors, params
    )


def _game_type(
    short_name: str,
    long_name: str,
    sequential: bool,
    chance: bool,
    perfect: bool,
    utility: Any,
    players: int,
    tensors: bool,
    params: dict[str, Any],
) -> Any:
    """A game of ``players`` players with terminal rewards whose information state and
    observation are given as strings, and as tensors (the observation always when the
    information is perfect)."""
    return _Type(
        short_name=short_name,
        long_name=long_name,
        dynamics=_Type.Dynamics.SEQUENTIAL if sequential else _Type.Dynamics.SIMULTANEOUS,
        chance_mode=(
            _Type.ChanceMode.EXPLICIT_STOCHASTIC if chance else _Type.ChanceMode.DETERMINISTIC
        ),
        information=(
            _Type.Information.PERFECT_INFORMATION
            if perfect
            else _Type.Information.IMPERFECT_INFORMATION
        ),
        utility=utility,
        reward_model=_Type.RewardModel.TERMINAL,
        max_num_players=players,
        min_num_players=players,
        provides_information_state_string=True,
        provides_information_state_tensor=tensors,
        provides_observation_string=True,
        provides_observation_tensor=perfect or tensors,
        parameter_specification=params,
    )
