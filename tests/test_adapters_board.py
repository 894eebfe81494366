"""Board-shaped observations: shapes, determinism, equal states give equal tensors."""

from __future__ import annotations

import numpy as np
import pytest
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


# -- observations a network can use (issue 52 item 4) ----------------------------------


def test_a_board_whose_cells_hold_several_arguments_is_a_board():
    """chess_200's (cell e 2 white pawn): the contents are the arguments after the
    coordinates (before: only relations of arity 3 made a board, and chess_200 got a
    flat vector of 953 entries)."""
    base = [parse_kif_term(t) for t in
            ["(cell a 1 white rook)", "(cell b 1 white knight)", "(cell a 2 white pawn)",
             "(cell a 8 black rook)", "(cell a 1 black rook)", "(cell 3 1 x)", "(step 1)"]]
    layout = board_layout(base)
    assert layout is not None and layout.geometry.arity == 4
    assert layout.contents == ("black rook", "white knight", "white pawn", "white rook")
    assert layout.rows == ("8", "2", "1") and layout.cols == ("a", "b")
    assert [base[i] for i in layout.rest] == [base[5], base[6]]  # other arity: not a cell
    planes = layout.planes([1, 0, 0, 0, 0, 0, 0])
    assert planes[3, 2, 0] == 1 and planes.sum() == 1  # a white rook on a1


def test_chess_200_is_observed_and_drawn_on_its_board():
    require_module("numpy")
    from adapters_support import repository_game

    from gdl2pl.adapters.game_board import game_geometry
    from gdl2pl.adapters.game_board import game_rules
    from gdl2pl.board import render_state
    from gdl2pl.bridge import StateMachine

    with StateMachine.from_file(repository_game("chess_200")) as sm:
        layout = board_layout(sm.base_propositions, game_rules(sm))
        assert layout is not None and layout.shape == (12, 8, 8)
        assert "white pawn" in layout.contents and "black king" in layout.contents
        picture = render_state(sm.initial_state, game_geometry(sm)).splitlines()
        assert "white rook" in picture[-1 - len(picture) + 9] or "white rook" in picture[8]


def test_owners_of_contents_come_from_names_or_from_the_rules():
    from gdl2pl.adapters.owners import content_owners
    from gdl2pl.adapters.owners import fluent_owner
    from gdl2pl.board import board_geometry
    from gdl2pl.flatten import flatten_rules
    from gdl2pl.kif import parse_kif

    rules = flatten_rules(parse_kif("""
        (<= (next (cell ?m ?n x)) (does xplayer (mark ?m ?n)))
        (<= (next (cell ?m ?n o)) (does oplayer (mark ?m ?n)))
        (<= (next (cell ?m ?n ?w)) (true (cell ?m ?n ?w)) (does ?p noop))
        (<= (next (cell ?m ?n b)) (true (cell ?m ?n b)))
        (<= (next (cell 1 1 z)) (does xplayer a)) (<= (next (cell 1 1 z)) (does oplayer a))
    """))
    base = [parse_kif_term(f"(cell {m} {n} {v})") for m in (1, 2) for n in (1, 2)
            for v in ("b", "x", "o", "z", "red")]
    g = board_geometry(base)
    assert g is not None and g.contents == ("b", "o", "red", "x", "z")
    owners = content_owners(g, ["xplayer", "oplayer", "red"], rules)
    # b: no one's; o and x: by the rules; red: by its name; z: by two roles' moves
    assert owners == (None, 1, 2, 0, None)
    assert fluent_owner(parse_kif_term("(control oplayer)"), ["xplayer", "oplayer"]) == 1
    assert fluent_owner(parse_kif_term("(step 3)"), ["xplayer", "oplayer"]) is None


def test_the_movers_point_of_view_puts_its_planes_first():
    """perspective="mover": each agent sees its own marks in the first plane and the
    turn fluents rotated likewise; the agent planes, constant from that view, are
    dropped. PettingZoo's API test passes on it."""
    pz = require_module("pettingzoo")
    import warnings

    import pettingzoo.test
    from adapters_support import repository_game

    from gdl2pl.pettingzoo import env
    from gdl2pl.pettingzoo import raw_env

    game = repository_game("ticTacToe")  # (next (cell ?m ?n x)) needs (does xplayer ...)
    e = raw_env(game, perspective="mover", form="array")
    e.reset(seed=0)
    x, o = e.possible_agents
    assert e.observation_space(x).shape == (5, 3, 3)  # o's, x's or b, control x2, no agents
    e.step(4)  # x marks the centre
    mine, theirs = e.observe(x), e.observe(o)
    assert mine[0, 1, 1] == 1 and mine[0].sum() == 1  # x's own marks first
    assert theirs[1, 1, 1] == 1 and theirs[0].sum() == 0  # o's first: none yet
    assert (mine[2] == theirs[2]).all()  # the blanks, no one's
    assert theirs[3].all() and not theirs[4].any()  # o to move: its control plane first
    assert mine[4].all() and not mine[3].any()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pettingzoo.test.api_test(env(game, perspective="mover", form="array"), num_cycles=20)
    with pytest.raises(ValueError, match="perspective='mover' needs the board planes"):
        raw_env(game, perspective="mover", observation="flat")
    assert pz is not None


THREE_COLOURS = """
(role red) (role green) (role blue)
(index 1) (index 2) (index 3) (index 4)
(init (control red))
(<= (taken ?x ?y) (true (cell ?x ?y ?c)))
(<= open (index ?x) (index ?y) (not (taken ?x ?y)))
(<= (legal ?r (place ?x ?y)) (true (control ?r)) (index ?x) (index ?y) (not (taken ?x ?y)))
(<= (legal ?r noop) (role ?r) (not (true (control ?r))))
(<= (next (cell ?x ?y ?r)) (does ?r (place ?x ?y)))
(<= (next (cell ?x ?y ?c)) (true (cell ?x ?y ?c)))
(<= (next (control green)) (true (control red)))
(<= (next (control blue)) (true (control green)))
(<= (next (control red)) (true (control blue)))
(<= terminal (not open))
(<= (goal ?r 50) (role ?r))
"""


def test_three_players_each_see_their_stones_first(tmp_path):
    """A three-player placement game (as a three-player hex lays its stones): the board
    is planes, and each agent's view rotates the colours to start from its own."""
    require_module("pettingzoo")
    from gdl2pl.pettingzoo import raw_env

    path = tmp_path / "three_colours.kif"
    path.write_text(THREE_COLOURS)
    fixed = raw_env(path, form="array", engine="prolog")
    e = raw_env(path, perspective="mover", form="array", engine="prolog")
    try:
        assert fixed.gdl.board is not None and fixed.gdl.board.contents == (
            "blue", "green", "red")
        assert fixed.observation_space("red_0").shape == (9, 4, 4)  # 3 + 3 controls + 3
        assert e.observation_space("red_0").shape == (6, 4, 4)
        e.reset(seed=0)
        e.step(0)  # red places the first stone
        seen = {a: e.observe(a) for a in e.possible_agents}
        # red's stones: its own first; green's third (red is two after green); blue's
        # second
        assert [int(seen[a][:3].sum(axis=(1, 2)).argmax()) for a in e.possible_agents] == [
            0, 2, 1]
        for agent, view in seen.items():
            assert view[:3].sum() == 1
            mover = 3 + {"red_0": 1, "green_1": 0, "blue_2": 2}[agent]  # green to move
            assert view[mover].all() and view[3:].sum() == 16
    finally:
        fixed.gdl.close()
        e.gdl.close()


@pytest.mark.parametrize("name", ["ticTacToe", "connectFour"])
def test_openspiel_sees_from_the_mover_as_pettingzoo_does(name):
    """OpenSpiel's ``perspective="mover"``: ``observation_tensor(p)`` is the planes seen
    from player p's side, equal to PettingZoo's mover view of the same agent along a
    random match (and to the fixed view reordered); without a board it is refused."""
    import random

    require_module("pettingzoo")
    require_module("pyspiel")
    from adapters_support import repository_game

    from gdl2pl.adapters import AdapterError
    from gdl2pl.openspiel import load_game
    from gdl2pl.pettingzoo import raw_env

    game = repository_game(name)
    mover = load_game(game, perspective="mover", engine="prolog")
    fixed = load_game(game, engine="prolog")
    pz = raw_env(game, perspective="mover", form="array", engine="prolog")
    pz.reset(seed=0)
    state, plain = mover.new_initial_state(), fixed.new_initial_state()
    rng = random.Random(1)
    shape = tuple(mover.observation_tensor_shape())
    assert shape == tuple(fixed.observation_tensor_shape())
    views_differ = False
    while not state.is_terminal():
        first = np.array(state.observation_tensor(0)).reshape(shape)
        whole = np.array(plain.observation_tensor(0)).reshape(shape)
        for p, agent in enumerate(pz.possible_agents):
            mine = np.array(state.observation_tensor(p)).reshape(shape)
            assert (mine == pz.observe(agent)).all()
            assert (mine == whole[mover.gdl.mover_orders[p]]).all()
            views_differ |= not (mine == first).all()
        action = rng.choice(state.legal_actions())
        assert pz.agent_selection == pz.possible_agents[state.current_player()]
        pz.step(action)
        state.apply_action(action)
        plain.apply_action(action)
    assert views_differ  # the second player does not see the first player's view
    with pytest.raises(AdapterError, match="perspective='mover' needs the board planes"):
        load_game(game, perspective="mover", observation="flat", engine="prolog")
