"""Board-shaped observations: shapes, determinism, equal states give equal tensors."""

from __future__ import annotations

import numpy as np
from adapters_support import require_module
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from gdl2pl.adapters.planes import board_layout
from gdl2pl.kif import parse_kif_term


def test_layout_of_a_board_and_of_the_rest():
    base = [parse_kif_term(t) for t in
            ["(cell 1 1 x)", "(cell 1 2 o)", "(cell 2 1 b)", "(cell 10 2 x)", "(control x)"]]
    layout = board_layout(base)
    assert layout is not None and layout.relation == "cell"
    # x is the column (numeric order), y the row (the highest on top)
    assert layout.cols == ("1", "2", "10") and layout.rows == ("2", "1")
    assert layout.contents == ("b", "o", "x") and layout.shape == (3, 2, 3)
    planes = layout.planes([1, 0, 1, 1, 1])
    assert planes[2, 1, 0] == 1 and planes[0, 1, 1] == 1 and planes[2, 0, 2] == 1
    assert planes.sum() == 3
    assert list(layout.rest_of([1, 0, 1, 1, 1])) == [1.0]
    whole = layout.observation_planes([1, 0, 1, 1, 1])
    assert whole.shape == layout.planes_shape == (4, 2, 3)
    assert (whole[:3] == planes).all() and (whole[3] == 1).all()  # (control x) holds
    assert (layout.observation_planes([1, 0, 1, 1, 0])[3] == 0).all()


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 100), st.data())
def test_observation_planes_hold_every_entry(others: int, data: st.DataObject) -> None:
    """Law: the whole observation holds the board's planes and every other fluent's
    entry: one constant plane each, or packed row by row past MAX_CONSTANT_PLANES."""
    from gdl2pl.adapters.planes import MAX_CONSTANT_PLANES

    cells = [f"(cell {x} {y} {v})" for x in (1, 2, 3) for y in (1, 2) for v in "xo"]
    base = [parse_kif_term(t) for t in [*cells, *(f"(step {k})" for k in range(others))]]
    layout = board_layout(base)
    assert layout is not None and len(layout.rest) == others
    vec = data.draw(st.lists(st.integers(0, 1), min_size=len(base), max_size=len(base)))
    whole = layout.observation_planes(vec)
    assert whole.shape == layout.planes_shape and whole.shape[1:] == (2, 3)
    assert (whole[:2] == layout.planes(vec)).all()
    rest = layout.rest_of(vec)
    if others <= MAX_CONSTANT_PLANES:
        assert whole.shape[0] == 2 + others
        assert all((whole[2 + i] == rest[i]).all() for i in range(others))
    else:
        assert whole.shape[0] == 2 + -(-others // 6)  # 6 cells a plane
        tail = whole[2:].reshape(-1)
        assert (tail[:others] == rest).all() and not tail[others:].any()


def test_no_board_without_two_coordinates():
    assert board_layout([parse_kif_term("(step 1)"), parse_kif_term("(at a)")]) is None


def _openspiel_tensor(game, actions):
    from open_spiel.python.observation import make_observation

    obs = make_observation(game)
    state = game.new_initial_state()
    for a in actions:
        state.apply_action(a)
    obs.set_from(state, 0)
    return obs.dict["observation"].copy(), obs.tensor.copy()


def test_openspiel_board_shape_and_transpositions():
    require_module("pyspiel")
    import gdl2pl.openspiel as gos

    game = gos.load_game("ticTacToe.kif")
    planes, flat = _openspiel_tensor(game, [0, 4, 8])
    # b, o, x, then a constant plane per control fluent
    assert planes.shape == (5, 3, 3) == tuple(game.observation_tensor_shape())
    assert flat.size == game.observation_tensor_size()
    board = planes[:3]
    assert board.sum() == 9  # one content per cell
    assert planes[3].sum() == 9 and planes[4].sum() == 0  # (control oplayer): it is o's turn
    again, _ = _openspiel_tensor(game, [0, 4, 8])
    assert (again == planes).all()
    other, other_flat = _openspiel_tensor(game, [8, 4, 0])  # same position, other order
    assert (other == planes).all() and (other_flat == flat).all()


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(0, 8), max_size=9))
def test_equal_states_give_equal_tensors(picks):
    require_module("pyspiel")
    import gdl2pl.openspiel as gos

    game = gos.load_game("ticTacToe.kif")
    state = game.new_initial_state()
    for p in picks:
        if state.is_terminal():
            break
        legal = state.legal_actions()
        state.apply_action(legal[p % len(legal)])
    twin = game.new_initial_state()
    for a in state.history():
        twin.apply_action(a)
    assert np.array_equal(
        np.asarray(state.observation_tensor(0)), np.asarray(twin.observation_tensor(0))
    )


def test_pettingzoo_observations_carry_the_board():
    require_module("pettingzoo")
    from gdl2pl.pettingzoo import raw_env

    e = raw_env("ticTacToe.kif")
    e.reset(seed=0)
    agent = e.agent_selection
    # b, o, x, 2 controls, 2 observers
    assert e.observation_space(agent)["observation"].shape == (7, 3, 3)
    e.step(4)
    board = e.observe(e.agent_selection)["observation"][:3]
    assert e.observation_space(agent).contains(e.observe(e.agent_selection))
    assert board.sum() == 9
