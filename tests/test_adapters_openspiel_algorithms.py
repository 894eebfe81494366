"""What OpenSpiel's own algorithms ask of a GDL game, answered: the kind of game
(alpha-beta wants ZERO_SUM, declared with ``utility=`` where the rules do not prove it),
the game type's fields as attributes, an observation shaped as planes, the registry, and
fluents the declared ``base`` leaves out."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from adapters_support import repository_game
from adapters_support import require_module
from conftest import REPO

from gdl2pl.adapters import AdapterError
from gdl2pl.adapters import GdlGame
from gdl2pl.adapters import UndeclaredFluentWarning
from gdl2pl.adapters import UnrepresentableStateError


def _three_steps(tmp_path: Path, goal_a: int, goal_b: int) -> Path:
    """Two roles, three steps; ``base`` declares (step 1) and (step 2), not (step 3)."""
    path = tmp_path / "three_steps.kif"
    path.write_text(
        "(role a) (role b) (init (step 1)) (succ 1 2) (succ 2 3)\n"
        "(<= (base (step ?x)) (succ ?x ?y))\n"
        "(input a go) (input b go) (legal a go) (legal b go)\n"
        "(<= (next (step ?y)) (true (step ?x)) (succ ?x ?y))\n"
        "(<= terminal (true (step 3)))\n"
        f"(goal a {goal_a}) (goal b {goal_b})\n",
        encoding="utf-8",
    )
    return path


# -- item: zero-sum for alpha-beta -----------------------------------------------------------


def test_alpha_beta_refuses_an_unproved_game_with_openspiels_message(tmp_path: Path) -> None:
    require_module("pyspiel")
    from open_spiel.python.algorithms import minimax

    import gdl2pl.openspiel as gos

    # a coin: heads gives both 100, tails gives a 0 and b 100: general-sum
    coin = tmp_path / "coin.kif"
    coin.write_text(
        "(role a) (role b) (init (step 1)) (legal a heads) (legal a tails) (legal b wait)\n"
        "(<= (next (side ?s)) (does a ?s)) (<= (next (step 2)) (true (step 1)))\n"
        "(<= terminal (true (step 2)))\n"
        "(<= (goal a 100) (true (side heads))) (<= (goal a 0) (true (side tails)))\n"
        "(goal b 100)\n",
        encoding="utf-8",
    )
    game = gos.load_game(coin)
    assert game.gdl_metadata()["utility"].value == "general-sum"
    # OpenSpiel formats its refusal with game.utility: an answer, not an AttributeError
    with pytest.raises(ValueError, match=r"must be 0-sum, not Utility\.GENERAL_SUM"):
        minimax.alpha_beta_search(game, maximum_depth=1, value_function=lambda s: 0.0)
    assert game.utility == game.get_type().utility
    assert game.dynamics == game.get_type().dynamics
    assert game.chance_mode == game.get_type().chance_mode
    assert game.information == game.get_type().information


def test_alpha_beta_runs_on_breakthrough_declared_zero_sum() -> None:
    pyspiel = require_module("pyspiel")
    from open_spiel.python.algorithms import minimax

    import gdl2pl.openspiel as gos

    game = gos.load_game(repository_game("breakthrough"), utility="zero_sum")
    assert game.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM
    claim = game.gdl_metadata()["utility"]
    assert (claim.value, claim.status) == ("zero-sum", "chosen")
    state = game.new_initial_state()

    contents = game.gdl.board.contents
    black, white = contents.index("black"), contents.index("white")

    def material(s: Any) -> float:  # white's pieces minus black's, from the planes
        planes = np.asarray(s.observation_tensor(0)).reshape(game.observation_tensor_shape())
        return float(planes[white].sum() - planes[black].sum()) / 16

    value, action = minimax.alpha_beta_search(
        game, state, value_function=material, maximum_depth=2
    )
    assert action in state.legal_actions()
    assert value == 0.0  # no capture is possible within two plies
    same = pyspiel.load_game("gdl", {"game": str(repository_game("breakthrough")),
                                     "utility": "zero_sum"})
    assert same.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM


def test_a_declared_zero_sum_is_checked_at_load_and_in_play(tmp_path: Path) -> None:
    require_module("numpy")
    both_win = _three_steps(tmp_path, 100, 100)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndeclaredFluentWarning)
        with pytest.raises(AdapterError, match=r"utility='zero_sum'.*summing to \[2\.0\]"):
            GdlGame(both_win, utility="zero_sum")
        game = GdlGame(both_win, utility="zero_sum", analysis_states=0)  # nothing enumerated
        try:
            state = game.next(game.initial_state, [0, 0])
            assert not game.node(state).terminal
            with pytest.raises(UnrepresentableStateError, match=r"\(\(step 3\)\) sum to 2"):
                game.next(state, [0, 0])  # into the terminal state
        finally:
            game.close()
        with pytest.raises(AdapterError, match="utility must be"):
            GdlGame(both_win, utility="zerosum")  # type: ignore[arg-type]


# -- item: the observation as planes ---------------------------------------------------------


def test_observation_tensor_shape_is_the_board_as_planes() -> None:
    pyspiel = require_module("pyspiel")
    import gdl2pl.openspiel as gos

    game = gos.load_game(repository_game("connectFour"))
    # black, red, then (control black), (control red): 8 columns, 6 rows
    assert game.observation_tensor_shape() == [4, 6, 8]
    assert game.observation_tensor_layout() == pyspiel.TensorLayout.CHW
    state = game.new_initial_state()
    state.apply_action(state.legal_actions()[2])  # red drops in column 3
    planes = np.asarray(state.observation_tensor(0)).reshape(4, 6, 8)
    red = game.gdl.board.contents.index("red")
    assert planes[red].sum() == 1 and planes[red, 5, 2] == 1  # the bottom row, column 3
    assert (planes[2] == 1).all() and (planes[3] == 0).all()  # black is to move
    flat = gos.load_game(repository_game("connectFour"), observation="flat")
    assert flat.observation_tensor_shape() == [len(game.gdl.base)] == [98]
    with pytest.raises(AdapterError, match="observation must be"):
        gos.load_game(repository_game("connectFour"), observation="cube")


# -- item: the registry ----------------------------------------------------------------------


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-P", "-c", code], capture_output=True, text=True, timeout=300,
        env={**os.environ}, check=False,
    )


def test_the_gdl_game_is_registered_by_importing_gdl2pl_openspiel() -> None:
    require_module("pyspiel")
    load = "pyspiel.load_game('gdl', {'game': 'ticTacToe.kif'})"
    before = _python(f"import pyspiel\n{load}")
    assert before.returncode != 0 and "Unknown game 'gdl'" in before.stderr
    after = _python(f"import pyspiel\nimport gdl2pl.openspiel\nprint({load}.num_players())")
    assert after.returncode == 0, after.stderr
    assert after.stdout.strip() == "2"


@pytest.mark.parametrize("doc", ["README.md", "docs/adapters.md"])
def test_docs_say_the_import_registers_where_the_pyspiel_form_first_appears(doc: str) -> None:
    text = (REPO / doc).read_text(encoding="utf-8")
    first = text.index('pyspiel.load_game("gdl"')
    block = text[text.rindex("```python", 0, first):first]
    assert "gdl2pl.openspiel" in block
    assert "Unknown game 'gdl'" in text


# -- item: fluents the declared base leaves out ----------------------------------------------


def test_fluents_the_base_omits_come_from_the_reachability_analysis(tmp_path: Path) -> None:
    require_module("numpy")
    path = _three_steps(tmp_path, 100, 0)
    with pytest.warns(UndeclaredFluentWarning, match=r"omits 1 fluents.*\(step 3\)"):
        game = GdlGame(path)
    try:
        claim = game.gdl_metadata()["observation"]
        assert (claim.value, claim.status) == ("base+reachability", "proved")
        assert [str(f) for f in game.base] == ["(step 1)", "(step 2)", "(step 3)"]
        state = game.next(game.next(game.initial_state, [0, 0]), [0, 0])
        assert game.node(state).terminal and game.observation(state) == (0, 0, 1)
    finally:
        game.close()


def test_hex_plays_past_its_declared_steps() -> None:
    pyspiel = require_module("pyspiel")
    import gdl2pl.openspiel as gos

    with pytest.warns(UndeclaredFluentWarning, match=r"hex.kif: .*\(connected 82 "):
        alone = GdlGame(repository_game("hex"))
    alone.close()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndeclaredFluentWarning)
        game = gos.load_game(repository_game("hex"))
    base = {str(f) for f in game.gdl.base}
    assert "(step 82)" in base and "(step 81)" in base
    pyspiel.random_sim_test(game, num_sims=2, serialize=False, verbose=False)
