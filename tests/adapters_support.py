"""Helpers of the adapter tests: optional libraries, shared games."""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from types import ModuleType

import pytest
from conftest import shared_dir
from prolog_env import require_prolog


def require_module(name: str) -> ModuleType:
    """The module; skipped when missing, except under CI=true where the import fails."""
    require_prolog()
    if os.environ.get("CI") == "true":
        return importlib.import_module(name)
    return pytest.importorskip(name)


def repository_game(name: str) -> Path:
    """A game of ../shared/games/ggp-repository (read in place)."""
    return shared_dir() / "games" / "ggp-repository" / f"{name}.kif"


OWN_GAMES = Path(__file__).resolve().parent / "games"

#: The adapters' 20 shared games (OpenSpiel's random_sim_test, PettingZoo's api tests):
#: simultaneous (battle, pacman3p, connectFourSimultaneous, gt_two_thirds_4p), three or
#: more players (3pConnectFour, pacman3p, cubicup_3player, smallest_4player,
#: tictactoe_3d_6player), one-player puzzles (eightPuzzle, hanoi, sudokuGrade1, blocks,
#: buttons), and two-player board games. Not 3pffa, 4pffa or 3pttc: random play reaches
#: states of theirs where a role has no legal move (a defect of those games, which the
#: adapters report as an error), so random tests on them fail now and then.
TWENTY_GAMES = [
    "ticTacToe", "connectFour", "breakthrough", "knightThrough", "hex", "nineBoardTicTacToe",
    "3pConnectFour", "eightPuzzle", "hanoi", "pacman3p", "connectFourSimultaneous",
    "dotsAndBoxes", "sudokuGrade1", "cubicup_3player", "smallest_4player", "battle", "blocks",
    "buttons", "tictactoe_3d_6player", "gt_two_thirds_4p",
]
#: Six of them that show every kind (simultaneous, 3+ players, puzzle): the quick runs.
QUICK_GAMES = {"ticTacToe", "connectFourSimultaneous", "3pConnectFour", "pacman3p", "hanoi",
               "battle"}


def game_params() -> list[object]:
    """TWENTY_GAMES as pytest parameters, those outside QUICK_GAMES marked slow."""
    return [
        name if name in QUICK_GAMES else pytest.param(name, marks=pytest.mark.slow)
        for name in TWENTY_GAMES
    ]
