"""The command line's reasoner commands as users run them: translate, play, simulate,
trace and replay (exit status and what they print), and the board drawing of play."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from conftest import EXAMPLES
from prolog_env import require_prolog

from gdl2pl import Const
from gdl2pl import Func
from gdl2pl.board import board_geometry
from gdl2pl.board import render_state
from gdl2pl.cli import main

TTT = EXAMPLES / "ticTacToe.kif"
PENNIES = EXAMPLES / "matchingPennies.kif"


@pytest.fixture(autouse=True)
def _prolog() -> None:
    require_prolog()


def test_version(capsys) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit) as done:
        from gdl2pl.cli.main import _parser

        _parser().parse_args(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.startswith("gdl2pl ")


def test_translate_prints_the_module(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["translate", str(TTT), "--module", "ttt"]) == 0
    text = capsys.readouterr().out
    assert ":- module(ttt, [])." in text
    assert "legal(R, mark(M, N)) :-" in text
    assert "% ticTacToe.kif:23" in text


def test_play_prints_every_state_and_the_result(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["play", str(TTT), "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ticTacToe.kif: roles xplayer, oplayer")
    # row 1 on top: the game's row rule keeps the cell's first argument
    assert "-- step 0\n  1 2 3\n1 b b b\n2 b b b\n3 b b b\n(control xplayer)\n" in out
    assert "terminal; goals: xplayer" in out


def test_play_stops_at_max_steps(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["play", str(TTT), "--seed", "3", "--max-steps", "2"]) == 0
    assert "stopped after 2 steps (not terminal)" in capsys.readouterr().out


def test_simulate_reports_rates_and_goals(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["simulate", str(PENNIES), "-n", "20", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "20 playouts, 60 states" in out
    assert "playouts/s" in out and "mean goal" in out


def test_simulate_is_reproducible_with_a_seed(capsys) -> None:  # type: ignore[no-untyped-def]
    runs = []
    for _ in range(2):
        assert main(["simulate", str(TTT), "-n", "30", "--seed", "5"]) == 0
        runs.append([line for line in capsys.readouterr().out.splitlines() if "mean" in line])
    assert runs[0][1:] == runs[1][1:]


def test_trace_then_replay_gives_the_same_records(capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    assert main(["trace", str(TTT), "--seed", "2", "-n", "2"]) == 0
    traced = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert {r["match"] for r in traced} == {0, 1}
    assert all(r["terminal"] for r in traced if r["move"] is None)
    moves = {m: [r["move"] for r in traced if r["match"] == m and r["move"]] for m in (0, 1)}
    stdin = "".join(json.dumps({"moves": moves[m]}) + "\n" for m in (0, 1))
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    assert main(["replay", str(TTT)]) == 0
    replayed = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert replayed == traced


def test_replay_reports_bad_lines_and_illegal_moves(capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    stdin = 'not json\n{"moves": [["(mark 9 9)", "noop"]]}\n'
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    assert main(["replay", str(TTT)]) == 0
    records = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    errors = [r for r in records if "error" in r]
    assert [e["match"] for e in errors] == [0, 1]
    assert "bad input line" in errors[0]["error"]
    assert "not a legal move" in errors[1]["error"]


def test_commands_on_a_missing_file_exit_2(capsys, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    missing = str(tmp_path / "nope.kif")
    for command in (["play", missing], ["simulate", missing], ["translate", missing]):
        assert main(command) == 2
    assert "cannot read" in capsys.readouterr().err


def test_board_drawing_finds_the_grid() -> None:
    grid = [(str(x), str(y)) for x in (1, 2) for y in (1, 2)]
    cells = [Func("cell", (Const(x), Const(y), Const("b"))) for x, y in grid]
    fluents = [*cells, Func("control", (Const("xplayer"),))]
    geometry = board_geometry(fluents)
    assert geometry is not None and geometry.relation == "cell"
    picture = render_state(fluents).splitlines()
    assert picture[0].split() == ["1", "2"]  # the columns: x
    assert picture[1].split() == ["2", "b", "b"]  # the rows: y, the highest on top
    assert picture[-1] == "(control xplayer)"


def test_board_drawing_without_a_grid_lists_the_fluents() -> None:
    fluents = [Const("on"), Func("step", (Const("1"),))]
    assert board_geometry(fluents) is None
    assert render_state(fluents).splitlines() == ["(step 1)", "on"]  # sorted as KIF text


@pytest.mark.parametrize("command", ["play", "simulate", "trace", "replay"])
def test_commands_refuse_a_game_without_a_role(
    command: str, tmp_path: Path, capsys, monkeypatch  # type: ignore[no-untyped-def]
) -> None:
    game = tmp_path / "norole.kif"
    game.write_text("(init s)\n(<= (legal r go) (true s))\n(<= terminal (true t))\n(goal r 0)\n")
    monkeypatch.setattr("sys.stdin", io.StringIO('{"moves": []}\n'))
    assert main([command, str(game)]) == 1
    out = capsys.readouterr()
    assert out.out == ""
    assert "error: the game defines no role" in out.err  # as gdl2pl check says it


# -- every command checks its game first ------------------------------------------------

UNSAFE = """(role a)
(init (c 1))
(<= (legal a (go ?x)) (true (c 1)))
(<= (next (c 2)) (does a go))
(<= terminal (true (c 2)))
(<= (goal a 100) (true (c 2)))
"""

CHECKED_COMMANDS = [
    ["translate"],
    ["play"],
    ["simulate", "-n", "2"],
    ["trace"],
    ["replay"],
    ["analyze"],
    ["explain", "terminal"],
]


@pytest.mark.parametrize("command", CHECKED_COMMANDS, ids=lambda c: c[0])
def test_every_command_refuses_a_game_check_rejects(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    command: list[str],
) -> None:
    require_prolog()
    game = tmp_path / "unsafe.kif"
    game.write_text(UNSAFE, encoding="utf-8")
    monkeypatch.setattr("sys.stdin", io.StringIO('{"moves": [["(go 1)"]]}\n'))
    assert main([command[0], str(game), *command[1:]]) == 1
    err = capsys.readouterr().err
    assert f"{game}:3:18: error: unsafe rule" in err
    assert "--accept-errors" in err and "internal error" not in err


def test_accept_errors_runs_the_game_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    require_prolog()
    game = tmp_path / "unsafe.kif"
    game.write_text(UNSAFE, encoding="utf-8")
    assert main(["translate", str(game), "--accept-errors"]) == 0
    out = capsys.readouterr()
    assert ":- module(game" in out.out
    assert f"{game}: warning: the game has 1 check error; running anyway" in out.err


def test_graph_draws_a_game_with_errors_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # graph is made to show what is wrong (e.g. recursion through negation): it accepts
    game = tmp_path / "unsafe.kif"
    game.write_text(UNSAFE, encoding="utf-8")
    assert main(["graph", str(game)]) == 0
    out = capsys.readouterr()
    assert "digraph" in out.out
    assert f"{game}: warning: the game has 1 check error; drawn anyway" in out.err


def test_a_sound_game_runs_without_a_warning(capsys: pytest.CaptureFixture[str]) -> None:
    require_prolog()
    assert main(["simulate", str(TTT), "-n", "2", "--seed", "1"]) == 0
    assert "warning" not in capsys.readouterr().err
