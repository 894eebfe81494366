"""One-player GDL games as Gymnasium environments."""

from __future__ import annotations

import pytest
from adapters_support import repository_game
from adapters_support import require_module


@pytest.fixture(scope="module")
def gymnasium():
    return require_module("gymnasium")


@pytest.mark.parametrize("name", ["eightPuzzle", "hanoi", "buttons"])
def test_check_env(gymnasium, name, monkeypatch):
    from gymnasium.utils.env_checker import check_env

    import gdl2pl.gymnasium  # noqa: F401 (registers the id)

    monkeypatch.setenv("GDL2PL_GAME_PATH", str(repository_game(name).parent))
    env = gymnasium.make("gdl2pl/Gdl-v0", game=f"{name}.kif", render_mode="ansi")
    check_env(env.unwrapped, skip_render_check=False)


def test_illegal_action_ends_the_episode(gymnasium):
    from gdl2pl.gymnasium import GdlEnv

    env = GdlEnv(repository_game("hanoi"))
    _, info = env.reset(seed=0)
    illegal = int(next(i for i, ok in enumerate(info["action_mask"]) if not ok))
    _, reward, terminated, _, info = env.step(illegal)
    assert terminated and reward == -1.0 and info["illegal_action"]


def test_many_player_games_are_refused(gymnasium):
    from gdl2pl.adapters import AdapterError
    from gdl2pl.gymnasium import GdlEnv

    with pytest.raises(AdapterError, match="one-player"):
        GdlEnv(repository_game("ticTacToe"))
