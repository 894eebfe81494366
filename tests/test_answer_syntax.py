"""model and explain answer in the syntax of their input (KIF or infix), and
``--answer-syntax`` overrides it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from prolog_env import require_prolog

from gdl2pl.cli import main
from gdl2pl.infix import print_infix
from gdl2pl.load import read_game

ROOT = Path(__file__).resolve().parents[1]
TICTACTOE = ROOT / "gdl2pl/examples/ticTacToe.kif"
OPEN = ROOT / "tests/games/analysis/open_program.kif"
OPEN_INPUT = ROOT / "tests/games/analysis/open_input1.kif"


@pytest.fixture(autouse=True)
def prolog() -> None:
    require_prolog()


@pytest.fixture
def infix_ttt(tmp_path: Path) -> str:
    path = tmp_path / "ttt.gdl"
    path.write_text(print_infix(read_game(TICTACTOE)), encoding="utf-8")
    return str(path)


def run(capsys, *argv: str) -> tuple[int, str]:
    status = main(list(argv))
    return status, capsys.readouterr().out


def test_model_answers_in_infix_for_infix_input(capsys, tmp_path) -> None:
    program = tmp_path / "prog.gdl"
    program.write_text(print_infix(read_game(OPEN)), encoding="utf-8")
    facts = tmp_path / "in.gdl"
    facts.write_text(print_infix(read_game(OPEN_INPUT)), encoding="utf-8")
    assert run(capsys, "model", str(program), "--input", str(facts)) == (
        0,
        "% r/2: 1 atom\nr(a,b)\n",
    )
    status, out = run(
        capsys, "model", str(program), "--input", str(facts), "--answer-syntax", "kif"
    )
    assert (status, out) == (0, "% r/2: 1 atom\n(r a b)\n")


def test_the_herbrand_base_is_written_in_the_answer_syntax(capsys, tmp_path) -> None:
    program = tmp_path / "notes.gdl"
    program.write_text("p(a,b)\nq('C')\nr(X) :- p(X,Y)\n", encoding="utf-8")
    status, out = run(capsys, "model", str(program), "--herbrand")
    assert status == 0
    lines = out.splitlines()
    assert lines[:2] == ["Herbrand universe: 3 object constants", "  'C' a b"]
    assert "  p('C',a)" in lines and "  r(b)" in lines and "(p" not in out
    status, out = run(capsys, "model", str(program), "--herbrand", "--answer-syntax", "kif")
    assert "  (p C a)" in out.splitlines() and "p(" not in out
    status, out = run(capsys, "model", str(program), "--herbrand", "--json")
    assert "q('C')" in json.loads(out)["base"]


def test_model_answers_in_kif_for_kif_input_and_infix_on_request(capsys) -> None:
    assert run(capsys, "model", str(OPEN), "--input", str(OPEN_INPUT)) == (
        0,
        "% r/2: 1 atom\n(r a b)\n",
    )
    status, out = run(
        capsys,
        "model",
        str(TICTACTOE),
        "--state",
        "((control xplayer))",
        "--answer-syntax",
        "infix",
    )
    assert status == 0
    assert "init(cell(1,1,b))" in out and "(init" not in out


def test_explain_infix_question_and_answer(capsys, infix_ttt) -> None:
    status, out = run(capsys, "explain", infix_ttt, "legal(xplayer, mark(2,2))")
    assert status == 0
    lines = out.splitlines()
    assert lines[0] == "legal(xplayer,mark(2,2)) holds"
    assert lines[1].endswith("legal(R,mark(M,N)) :- true(control(R)) & true(cell(M,N,b))")
    assert "with R = xplayer, M = 2, N = 2" in out
    assert "1. true(control(xplayer)) holds: in the state" in out
    assert "?" not in out and "(legal" not in out


def test_explain_infix_failure_tree(capsys, infix_ttt) -> None:
    status, out = run(capsys, "explain", infix_ttt, "terminal", "--depth", "1")
    assert status == 1
    assert "terminal :- ~open" in out and "~open does not hold" in out
    assert "- open holds" in out and "(not open)" not in out


def test_explain_kif_on_request_for_infix_input(capsys, infix_ttt) -> None:
    argv = ["explain", infix_ttt, "(legal xplayer (mark 2 2))", "--answer-syntax", "kif"]
    status, out = run(capsys, *argv)
    assert status == 0
    assert out.startswith("(legal xplayer (mark 2 2)) holds\n")
    assert "(<= (legal ?R (mark ?M ?N))" in out and "with ?R = xplayer" in out


def test_explain_infix_on_request_for_kif_input(capsys) -> None:
    argv = ["explain", str(TICTACTOE), "(legal xplayer (mark 2 2))", "--answer-syntax", "infix"]
    status, out = run(capsys, *argv)
    assert status == 0
    assert out.startswith("legal(xplayer,mark(2,2)) holds\n")
    assert "with R = xplayer" in out  # ?r in the KIF source


def test_bad_infix_atom_says_where(capsys, infix_ttt) -> None:
    assert main(["explain", infix_ttt, "legal(xplayer, mark(2,2)"]) == 2
    err = capsys.readouterr().err
    assert "not an infix atom" in err and "Traceback" not in err


# -- check: findings quote the game as it is written -----------------------------------------

#: The issue's robot: ``X`` occurs only under ``~``, so the rule is unsafe.
UNSAFE_INFIX = """\
role(robot)
init(at(1))
legal(robot,go)
next(at(X)) :- does(robot,go) & ~true(at(X))
terminal :- true(at(2))
goal(robot,100)
"""


def test_check_answers_an_infix_game_in_infix(capsys, tmp_path) -> None:
    game = tmp_path / "robot.gdl"
    game.write_text(UNSAFE_INFIX, encoding="utf-8")
    status = main(["check", str(game)])
    out = capsys.readouterr().out
    assert status == 1
    assert out == (
        f"{game}:4:9: error: unsafe rule: the variable X in the head does not occur in a "
        "positive sentence of the body [rule: next(at(X)) :- does(robot,go) & ~true(at(X))]\n"
    )


def test_check_answers_in_kif_on_request(capsys, tmp_path) -> None:
    game = tmp_path / "robot.gdl"
    game.write_text(UNSAFE_INFIX, encoding="utf-8")
    assert main(["check", str(game), "--answer-syntax", "kif"]) == 1
    out = capsys.readouterr().out
    assert "the variable ?X in the head" in out
    assert "[rule: (<= (next (at ?X)) (does robot go) (not (true (at ?X))))]" in out


def test_check_answers_a_kif_game_in_infix_on_request(capsys) -> None:
    unsafe = ROOT / "tests/games/analysis/unsafe.kif"
    assert main(["check", str(unsafe), "--answer-syntax", "infix"]) == 1
    out = capsys.readouterr().out
    assert "the variable Y in a negation" in out and "[rule: r(X) :- p(X) & ~q(Y)]" in out
    assert "?" not in out and "(<=" not in out


def test_infix_findings_name_every_construct_in_infix() -> None:
    """Each finding that quotes a term or a rule writes it in the game's syntax: no KIF
    parenthesis, '?' or '<=' reaches a student who wrote infix."""
    from gdl2pl.check import check_description
    from gdl2pl.infix import parse_infix

    text = """\
role(robot)
p() :- .
q(X) :- r(f(), Y)
legal(robot,go) :- true(lamp(W)) & ~s(W, Z)
goal(robot, 200)
terminal
"""
    found = check_description(parse_infix(text))
    assert found
    for f in found:
        for part in (f.message, f.rule):
            assert "?" not in part and "(<=" not in part, f
            assert "'<='" not in part, f
    messages = " | ".join(f.message for f in found)
    assert "p() :- . is a rule with an empty body" in messages and "drop the ':-'" in messages
    assert "goal value 200" in messages and "the variable Z in a negation" in messages


def test_a_long_infix_rule_is_quoted_whole(capsys, tmp_path) -> None:
    body = " & ".join(f"true(cell(X{i},Y{i},b))" for i in range(12))
    rule = f"next(at(Z)) :- {body}"
    game = tmp_path / "long.gdl"
    game.write_text(UNSAFE_INFIX + rule + "\n", encoding="utf-8")
    main(["check", str(game)])
    out = capsys.readouterr().out
    assert f"[rule: {rule}]" in out and len(rule) > 200


def test_a_state_and_moves_written_in_infix(capsys, infix_ttt, tmp_path) -> None:
    """An infix writer gives the state and the moves in infix too, and gets the same
    answers as from KIF."""
    kif_state = "((cell 1 1 x) (cell 1 2 x) (cell 1 3 x) (control oplayer))"
    infix_state = "cell(1,1,x) cell(1,2,x) cell(1,3,x) control(oplayer)"
    _, from_kif = run(capsys, "model", infix_ttt, "--state", kif_state)
    status, from_infix = run(capsys, "model", infix_ttt, "--state", infix_state)
    assert status == 0 and from_infix == from_kif and "row(1,x)" in from_infix
    assert main(["model", infix_ttt, "--state", "cell(1,1,x) p :- q"]) == 2
    assert "a state holds fluents, not rules" in capsys.readouterr().err
    moves = tmp_path / "moves.jsonl"
    moves.write_text('["mark(2,2)", "noop"]\n["noop", "(mark 1 1)"]\n', encoding="utf-8")
    status, out = run(capsys, "explain", infix_ttt, "true(cell(1,1,o))", "--moves", str(moves))
    assert status == 0 and out.startswith("true(cell(1,1,o)) holds")
    moves.write_text('["mark(2,2", "noop"]\n', encoding="utf-8")
    assert main(["explain", infix_ttt, "terminal", "--moves", str(moves)]) == 2
    assert "not a move in KIF or infix" in capsys.readouterr().err
