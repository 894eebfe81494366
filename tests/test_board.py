"""Boards are drawn on the game's whole geometry (its base or reachable fluents), the same
way by ``gdl2pl play``, the studio and the adapters' ``str(state)``: x the column, y the
row with the highest on top; or, when the game's ``row`` and ``column`` rules say its
cells name the row first (the course notes' tic-tac-toe), row then column, row 1 on top.
One test per board a student meets: tic-tac-toe (KIF and infix), chess, connect four,
breakthrough."""

from __future__ import annotations

import random
import warnings
from pathlib import Path
from typing import Any

import pytest
from adapters_support import repository_game
from adapters_support import require_module
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from prolog_env import require_prolog

from gdl2pl.adapters.game_board import game_geometry
from gdl2pl.board import board_geometry
from gdl2pl.board import grid_of
from gdl2pl.board import render_state
from gdl2pl.board_axes import oriented_board
from gdl2pl.board_axes import row_first
from gdl2pl.bridge import StateMachine
from gdl2pl.cli import main
from gdl2pl.infix import parse_infix
from gdl2pl.kif import parse_kif
from gdl2pl.kif import parse_kif_term
from gdl2pl.syntax import Const
from gdl2pl.syntax import Func
from gdl2pl.syntax import Rule

EXAMPLES = Path(__file__).resolve().parents[1] / "gdl2pl" / "examples"


def _steps(out: str) -> list[list[str]]:
    """The picture of each state ``gdl2pl play`` printed."""
    pictures = []
    for chunk in out.split("-- step ")[1:]:
        lines = chunk.splitlines()[1:]
        pictures.append([x for x in lines if x and not x.startswith(("moves:", "terminal"))])
    return pictures


def test_geometry_orders_columns_left_to_right_and_rows_top_down() -> None:
    cells = [parse_kif_term(f"(cell {x} {y} b)") for x in ("a", "b", "c") for y in (1, 2, 10)]
    g = board_geometry([*cells, parse_kif_term("(control white)")])
    assert g is not None and g.relation == "cell"
    assert g.columns == ("a", "b", "c") and g.rows == ("10", "2", "1") and g.contents == ("b",)


def test_no_geometry_without_two_coordinates_each() -> None:
    assert board_geometry([parse_kif_term("(cell 1 1 x)"), parse_kif_term("(cell 1 2 x)")]) is None
    assert board_geometry([parse_kif_term("(step 1)")]) is None


def test_a_state_on_the_board_keeps_its_empty_rows_and_columns() -> None:
    whole = board_geometry(
        [parse_kif_term(f"(cell {x} {y} {v})") for x in (1, 2, 3) for y in (1, 2) for v in "xo"]
    )
    state = [parse_kif_term("(cell 2 1 x)"), parse_kif_term("(control o)")]
    assert render_state(state, whole).splitlines() == [
        "  1 2 3",
        "2 . . .",
        "1 . x .",
        "(control o)",
    ]
    grid = grid_of(state, whole)
    assert grid is not None and grid.table == [[None, None, None], [None, "x", None]]


@settings(max_examples=25, deadline=None)
@given(st.sets(st.tuples(st.integers(1, 4), st.integers(1, 3), st.sampled_from("xo"))))
def test_every_state_is_drawn_on_the_same_board(cells: set[tuple[int, int, str]]) -> None:
    """Law: on a game's geometry, the picture's frame (header and row names) does not
    depend on the state; the cells drawn are exactly the state's."""
    whole = board_geometry(
        [parse_kif_term(f"(cell {x} {y} {v})") for x in range(1, 5) for y in (1, 2, 3)
         for v in "xo"]
    )
    state = [parse_kif_term(f"(cell {x} {y} {v})") for x, y, v in cells]
    lines = render_state(state, whole).splitlines()
    assert lines[0].split() == ["1", "2", "3", "4"]
    assert [row.split()[0] for row in lines[1:4]] == ["3", "2", "1"] and len(lines) == 4
    drawn = {(x, 4 - r, v) for r, row in enumerate(lines[1:4], 1)
             for x, v in enumerate(row.split()[1:], 1) if v != "."}
    single = {(x, y) for x, y, _ in cells}
    assert {(x, y) for x, y, _ in drawn} == single
    assert all(v in "xo" or set(v.split("/")) <= {"x", "o"} for _, _, v in drawn)


def test_play_draws_breakthrough_on_its_whole_board(capsys: Any) -> None:
    require_prolog()
    game = str(repository_game("breakthrough"))
    assert main(["play", game, "--seed", "1", "--max-steps", "4"]) == 0
    pictures = _steps(capsys.readouterr().out)
    assert len(pictures) == 5
    for picture in pictures:
        assert picture[0].split() == [str(x) for x in range(1, 9)]  # 8 columns
        assert [row.split()[0] for row in picture[1:9]] == [str(y) for y in range(8, 0, -1)]
        assert picture[9].startswith("(control ")
    first = pictures[0]
    assert first[1].split()[1:] == ["black"] * 8 and first[8].split()[1:] == ["white"] * 8
    assert first[4].split()[1:] == ["."] * 8  # row 5: empty, still drawn


def test_play_draws_connect_four_upright(capsys: Any) -> None:
    require_prolog()
    game = str(repository_game("connectFour"))
    assert main(["play", game, "--seed", "2", "--max-steps", "1"]) == 0
    before, after = _steps(capsys.readouterr().out)
    assert before[0].split() == [str(x) for x in range(1, 9)]  # x: the columns
    assert [row.split()[0] for row in before[1:7]] == ["6", "5", "4", "3", "2", "1"]
    assert all(set(row.split()[1:]) == {"."} for row in before[1:7])  # empty, drawn
    assert after[6].split()[1:].count("red") == 1  # the first piece lies at the bottom
    assert all(set(row.split()[1:]) == {"."} for row in after[1:6])


def test_studio_draws_connect_four_before_the_first_piece() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        require_module("starlette.testclient")
    from starlette.testclient import TestClient

    from gdl2pl.studio.app import create_app
    from gdl2pl.studio.limits import Limits

    text = repository_game("connectFour").read_text(encoding="utf-8")
    with TestClient(create_app(Limits())) as client:
        view = client.post("/api/play", json={"text": text, "moves": []}).json()
        board = view["board"]
        assert board is not None and board["name"] == "cell"
        assert board["columns"] == [str(x) for x in range(1, 9)]
        assert board["rows"] == ["6", "5", "4", "3", "2", "1"]
        assert board["cells"] == [[None] * 8 for _ in range(6)]
        moves = [["(drop 3)", "noop"], ["noop", "(drop 3)"]]
        board = client.post("/api/play", json={"text": text, "moves": moves}).json()["board"]
        assert board["columns"] == [str(x) for x in range(1, 9)] and len(board["rows"]) == 6
        assert [row[2] for row in board["cells"]][-2:] == ["black", "red"]


def test_str_of_an_openspiel_state_is_the_play_picture() -> None:
    require_module("pyspiel")
    import gdl2pl.openspiel as gos

    path = repository_game("breakthrough")
    game = gos.load_game(path, utility="zero_sum")
    state = game.new_initial_state()
    rng = random.Random(5)
    for _ in range(3):
        state.apply_action(rng.choice(state.legal_actions()))
    with StateMachine.from_file(str(path)) as sm:
        assert game_geometry(sm) == game.gdl.board.geometry
        assert str(state) == render_state(state.machine_state, game_geometry(sm))
    lines = str(state).splitlines()
    assert lines[0].split() == [str(x) for x in range(1, 9)] and len(lines) == 10


# -- which coordinate is the row: the game's own row and column rules ------------------------


def _rules(text: str) -> list[Rule]:
    d = parse_infix(text) if "(" not in text.lstrip()[:1] else parse_kif(text)
    return [c for c in d.clauses if isinstance(c, Rule)]


def test_the_notes_rows_keep_the_first_coordinate() -> None:
    notes = _rules(
        "row(M,P) :- true(cell(M,1,P)) & true(cell(M,2,P)) & true(cell(M,3,P))\n"
        "column(N,P) :- true(cell(1,N,P)) & true(cell(2,N,P)) & true(cell(3,N,P))\n"
    )
    assert row_first(notes, "cell") is True
    assert row_first(notes[:1], "cell") is True and row_first(notes[1:], "cell") is True


def test_connect_four_rows_keep_the_second_coordinate() -> None:
    rules = _rules(
        "(<= (row ?z) (true (cell ?x1 ?y ?z)) (succ ?x1 ?x2) (true (cell ?x2 ?y ?z)))\n"
        "(<= (column ?z) (true (cell ?x ?y1 ?z)) (succ ?y1 ?y2) (true (cell ?x ?y2 ?z)))\n"
    )
    assert row_first(rules, "cell") is False


def test_no_rule_or_rules_that_disagree_say_nothing() -> None:
    line = _rules("(<= (line ?p) (true (cell 1 1 ?p)) (true (cell 1 2 ?p)))")
    assert row_first(line, "cell") is None
    assert row_first(_rules("row(Y) :- number(Y)"), "cell") is None  # no cell in its body
    disagree = _rules(
        "row(M,P) :- true(cell(M,1,P)) & true(cell(M,2,P))\n"
        "row(M,P) :- true(cell(1,M,P)) & true(cell(2,M,P))\n"
    )
    assert row_first(disagree, "cell") is None
    # another relation's rows say nothing about cell
    assert row_first(_rules("row(M) :- true(mark(M,1,x)) & true(mark(M,2,x))"), "cell") is None


# Alike on purpose: each board test draws a state and lists the lines it expects, whole,
# so that a failure shows the picture (``duplicates`` pairs them by shape).
def test_a_row_first_board_is_a_matrix_with_row_one_on_top() -> None:
    cells = [parse_kif_term(f"(cell {r} {c} b)") for r in (1, 2, 3) for c in (1, 2, 3, 4)]
    rules = _rules("row(M,P) :- true(cell(M,1,P)) & true(cell(M,2,P))")
    g = oriented_board(cells, rules)
    assert g is not None and g.row_first
    assert g.rows == ("1", "2", "3") and g.columns == ("1", "2", "3", "4")
    state = [parse_kif_term("(cell 1 3 x)"), parse_kif_term("(cell 3 1 o)")]
    assert render_state(state, g).splitlines() == [
        "  1 2 3 4",
        "1 . . x .",
        "2 . . . .",
        "3 o . . .",
    ]


@pytest.mark.parametrize("example", ["ticTacToe.kif", "ticTacToe.gdl"])
def test_tic_tac_toe_is_drawn_as_the_notes_draw_it(example: str, capsys: Any) -> None:
    """After xplayer completes the notes' (row 1 x), the top row is x x x: row 1 on
    top, (mark m n) in row m and column n, in the studio and in gdl2pl play."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        require_module("starlette.testclient")
    from starlette.testclient import TestClient

    from gdl2pl.studio.app import create_app
    from gdl2pl.studio.limits import Limits

    require_prolog()
    text = (EXAMPLES / example).read_text(encoding="utf-8")
    kif = example.endswith(".kif")
    moves = [
        ["(mark 1 1)", "noop"],
        ["noop", "(mark 2 1)"],
        ["(mark 1 2)", "noop"],
        ["noop", "(mark 3 3)"],
        ["(mark 1 3)", "noop"],
    ]
    with TestClient(create_app(Limits())) as client:
        view = client.post("/api/play", json={"text": text, "moves": moves}).json()
        board = view["board"]
        assert board["rows"] == ["1", "2", "3"] and board["columns"] == ["1", "2", "3"]
        assert board["row_first"] is True
        assert board["cells"] == [["x", "x", "x"], ["o", "b", "b"], ["b", "b", "o"]]
        why = client.post(
            "/api/explain",
            json={"text": text, "moves": moves, "atom": "(row 1 x)" if kif else "row(1,x)"},
        ).json()
        assert why["holds"] is True
    game = str(EXAMPLES / example)
    assert main(["play", game, "--seed", "1", "--max-steps", "1"]) == 0
    out = capsys.readouterr().out
    picture = _steps(out)[0]
    assert picture[:4] == ["  1 2 3", "1 b b b", "2 b b b", "3 b b b"]
    # the other fluents and the moves in the game's syntax
    assert picture[4] == ("(control xplayer)" if kif else "control(xplayer)")
    assert ("moves: xplayer (mark " if kif else "moves: xplayer mark(") in out


def test_chess_is_drawn_white_at_the_bottom() -> None:
    require_prolog()
    with StateMachine.from_file(str(repository_game("chess"))) as sm:
        geometry = game_geometry(sm)
        assert geometry is not None and not geometry.row_first
        assert geometry.columns == tuple("abcdefgh")
        assert geometry.rows == tuple(str(r) for r in range(8, 0, -1))
        grid = grid_of(sm.initial_state, geometry)
        assert grid is not None
        table = grid.table
        assert table[0][4] == "bk" and table[7][4] == "wk"  # kings on the e file
        assert table[1] == ["bp"] * 8 and table[6] == ["wp"] * 8


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(1, 5), min_size=2, max_size=5, unique=True),
    st.lists(st.sampled_from("abcde"), min_size=2, max_size=5, unique=True),
    st.booleans(),
)
def test_a_board_read_the_other_way_is_the_board_read_so(
    firsts: list[int], seconds: list[str], start: bool
) -> None:
    """The studio's row switch: a geometry turned to the other reading is the one read so
    from the fluents, both ways."""
    from gdl2pl.board import with_row_first

    fluents = [Func("cell", (Const(str(a)), Const(b), Const("x"))) for a in firsts for b in seconds]
    g = board_geometry(fluents, row_first=start)
    assert g is not None
    for want in (True, False):
        assert with_row_first(g, want) == board_geometry(fluents, row_first=want)
