"""The studio's endpoints as the page uses them (Starlette's TestClient, no browser): each
answer, the errors it gives for bad input, and what keeps a shared server safe (sessions
kept apart, games unloaded past the cap, sizes and time capped, local host names only)."""

from __future__ import annotations

import json
import logging
import shutil
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import EXAMPLES
from conftest import REPO
from conftest import canonical_variables
from conftest import shared_dir
from prolog_env import require_module
from prolog_env import unavailable

from gdl2pl.cli import main
from gdl2pl.infix import print_infix
from gdl2pl.kif import parse_kif

TTT = (EXAMPLES / "ticTacToe.kif").read_text(encoding="utf-8")
TTT_INFIX = (EXAMPLES / "ticTacToe.gdl").read_text(encoding="utf-8")
UNSTRATIFIED = (REPO / "tests" / "games" / "analysis" / "unstratified.kif").read_text(
    encoding="utf-8"
)
BUTTONS = (EXAMPLES / "buttons.kif").read_text(encoding="utf-8")
STUCK = (REPO / "tests" / "games" / "analysis" / "stuck.kif").read_text(encoding="utf-8")
#: xplayer fills the first row while oplayer plays in the second.
X_WINS = [
    ["(mark 1 1)", "noop"],
    ["noop", "(mark 2 1)"],
    ["(mark 1 2)", "noop"],
    ["noop", "(mark 2 2)"],
    ["(mark 1 3)", "noop"],
]


def _client(limits: Any = None) -> Any:
    with warnings.catch_warnings():  # Starlette would rather have httpx2 than httpx
        warnings.simplefilter("ignore")
        require_module("starlette.testclient")
    from starlette.testclient import TestClient

    from gdl2pl.studio.app import create_app
    from gdl2pl.studio.limits import Limits

    return TestClient(create_app(limits or Limits()))


@pytest.fixture
def client() -> Iterator[Any]:
    with _client() as c:
        yield c


def post(client: Any, name: str, /, **body: Any) -> tuple[int, dict[str, Any]]:
    r = client.post(f"/api/{name}", json=body)
    return r.status_code, r.json()


# -- answered in the student's own syntax -----------------------------------------------------


def test_check_quotes_an_infix_game_in_infix(client: Any) -> None:
    text = TTT_INFIX + "next(cell(M,N,Q)) :- true(control(R))\n"
    status, answer = post(client, "check", text=text)
    assert status == 200 and answer["answer_syntax"] == "infix"
    unsafe = [f for f in answer["findings"] if f["code"] == "unsafe-variable"]
    assert unsafe and unsafe[0]["rule"] == "next(cell(M,N,Q)) :- true(control(R))"
    assert "the variable M in the head" in unsafe[0]["message"]
    status, answer = post(client, "check", text=text, answer_syntax="kif")
    unsafe = [f for f in answer["findings"] if f["code"] == "unsafe-variable"]
    assert unsafe[0]["rule"] == "(<= (next (cell ?M ?N ?Q)) (true (control ?R)))"
    status, answer = post(client, "check", text=text, answer_syntax="prolog")
    assert status == 400 and "answer_syntax" in answer["error"]


def test_the_state_and_moves_are_shown_in_infix(client: Any) -> None:
    moves = X_WINS[:2]
    status, view = post(client, "play", text=TTT_INFIX, moves=moves)
    assert status == 200 and view["answer_syntax"] == "infix"
    shown = view["shown"]
    assert "cell(1,1,x)" in shown["state"] and "control(xplayer)" in shown["state"]
    assert view["state"][0].startswith("(")  # what the page sends back stays KIF
    assert shown["legal"][0][0] == "mark(1,2)" and view["legal"][0][0] == "(mark 1 2)"
    assert shown["moves"] == [["mark(1,1)", "noop"], ["noop", "mark(2,1)"]]
    assert shown["roles"] == ["xplayer", "oplayer"]
    status, view = post(client, "play", text=TTT, moves=moves, answer_syntax="infix")
    assert "cell(1,1,x)" in view["shown"]["state"]
    status, view = post(client, "play", text=TTT, moves=moves)
    assert "(cell 1 1 x)" in view["shown"]["state"]
    status, answer = post(
        client, "step", text=TTT_INFIX, moves=moves, chosen={"xplayer": "(mark 1 2)"}
    )
    assert status == 200 and answer["view"]["shown"]["moves"][-1] == ["mark(1,2)", "noop"]


def test_why_takes_a_question_in_either_syntax(client: Any) -> None:
    """The issue's question, legal(xplayer,mark(1,1)), on the built-in infix example: it
    is answered (in infix), and so is the KIF form; a KIF game takes infix questions too."""
    for text in (TTT_INFIX, TTT):
        for atom in ("legal(xplayer,mark(1,1))", "(legal xplayer (mark 1 1))"):
            status, answer = post(client, "explain", text=text, moves=[], atom=atom)
            assert status == 200, answer
            assert answer["holds"] is True
    status, answer = post(client, "explain", text=TTT_INFIX, moves=[], atom="(line x)")
    assert answer["atom"] == "line(x)" and "line(F) :- row(M,F)" in answer["text"]
    rule = answer["tree"]["children"][0]["rule"]
    assert rule["source"] == "line(F) :- row(M,F)" and rule["fact"] is False
    status, answer = post(client, "explain", text=TTT_INFIX, moves=X_WINS, atom="line(x)")
    assert answer["tree"]["rule"]["bindings"] == {"F": "x", "M": "1"}
    status, answer = post(
        client, "explain", text=TTT_INFIX, moves=X_WINS, atom="next(cell(1,3,x))"
    )
    assert answer["joint_move"] == ["mark(1,3)", "noop"]


def test_a_question_that_cannot_be_read_is_the_questions_fault(client: Any) -> None:
    for atom in ("legal(xplayer,mark(1,1)", "legal xplayer", "(legal xplayer"):
        status, answer = post(client, "explain", text=TTT_INFIX, moves=[], atom=atom)
        assert status == 422
        assert "line" not in answer and "column" not in answer  # nothing in the game
        assert answer["error"].startswith(f"the question {atom!r} could not be read")
        assert "the game is not at fault" in answer["error"]


def test_the_prolog_tab_offers_the_standalone_module(client: Any) -> None:
    status, answer = post(client, "translate", text=TTT_INFIX, standalone=True)
    assert status == 200 and answer["standalone"] is True
    prolog = answer["prolog"]
    assert "load it in plain SWI-Prolog" in prolog and "step(JointMove) :-" in prolog
    lines = prolog.split("\n")
    for c in answer["clauses"]:
        comment = lines[c["prolog_start"] - 2]
        assert comment.startswith(f"% game:{c['gdl_line']}"), comment
    (row,) = [c for c in answer["clauses"] if c["relation"] == "row"]
    assert lines[row["prolog_start"] - 1] == "row(M, F) :-"
    assert lines[row["prolog_start"] - 2].endswith("row(M,F) :- true(cell(M,1,F)) & "
                                                   "true(cell(M,2,F)) & true(cell(M,3,F))")
    status, answer = post(client, "translate", text=TTT, standalone=True, name="ticTacToe.kif")
    from gdl2pl.pipeline import compile_game
    from gdl2pl.standalone import standalone

    module = standalone(compile_game(EXAMPLES / "ticTacToe.kif", translate=False).normalized,
                        "game", "ticTacToe.kif")
    assert answer["prolog"] == module  # what translate --standalone writes
    status, answer = post(client, "translate", text=TTT, standalone="yes")
    assert status == 400


def test_graph_draws_a_game_with_errors_and_marks_its_cycle(client: Any) -> None:
    status, answer = post(client, "check", text=UNSTRATIFIED)
    assert answer["errors"] >= 1
    status, answer = post(client, "graph", text=UNSTRATIFIED)
    assert status == 200 and answer["strata"] is None
    assert answer["cycle"]["relations"] == ["p", "q"]
    assert {(e["body"], e["head"]) for e in answer["cycle"]["edges"]} == {("p", "q"), ("q", "p")}
    assert "drawn in red" in answer["dot"] and "penwidth=3" in answer["dot"]
    status, answer = post(client, "graph", text=TTT)
    assert answer["cycle"] == {
        "relations": [],
        "note": "",
        "ground_stratified": True,
        "edges": [],
    }


# -- the text -------------------------------------------------------------------------------


def test_check_marks_a_syntax_error_at_its_line(client: Any) -> None:
    text = TTT.replace("(role oplayer)", "(role oplayer))", 1)
    status, answer = post(client, "check", text=text)
    assert status == 200
    assert answer["errors"] == 1
    (f,) = answer["findings"]
    assert (f["code"], f["line"]) == ("syntax", 7)
    assert "syntax error" in f["message"]


def test_check_gives_the_checkers_findings_with_line_and_column(client: Any) -> None:
    text = TTT + "(<= (next (cell ?m ?n ?q)) (true (control ?r)))\n"
    last = text.count("\n")
    status, answer = post(client, "check", text=text)
    assert status == 200 and answer["errors"] >= 1
    unsafe = [f for f in answer["findings"] if f["code"] == "unsafe-variable"]
    assert unsafe and all(f["line"] == last for f in unsafe)
    assert all(f["column"] >= 1 for f in unsafe)
    status, answer = post(client, "check", text=TTT)
    assert (status, answer["errors"], answer["syntax"]) == (200, 0, "kif")


def test_convert_both_ways_keeps_the_game(client: Any) -> None:
    status, infix = post(client, "convert", text=TTT, to="infix")
    assert status == 200 and ":-" in infix["text"]
    status, kif = post(client, "convert", text=infix["text"], to="kif")
    status2, direct = post(client, "convert", text=TTT, to="kif")
    assert status == status2 == 200
    same = canonical_variables(parse_kif(kif["text"])) == canonical_variables(
        parse_kif(direct["text"])
    )
    assert same  # the same clauses, up to the names of variables
    status, answer = post(client, "convert", text=TTT, to="prolog")
    assert status == 400 and "to" in answer["error"]


def test_translate_links_each_clause_to_its_rule(client: Any) -> None:
    status, answer = post(client, "translate", text=TTT)
    assert status == 200
    lines = answer["prolog"].split("\n")
    gdl = TTT.split("\n")
    for c in answer["clauses"]:
        assert lines[c["prolog_end"] - 1].rstrip().endswith(".")
        assert gdl[c["gdl_line"] - 1].startswith("(")  # a clause starts at column 1 here
        assert c["gdl_line"] <= c["gdl_end"]
    legal = [c for c in answer["clauses"] if c["gdl_line"] == 23]
    assert len(legal) == 1 and legal[0]["gdl_end"] == 25  # the three lines of the rule
    assert lines[legal[0]["prolog_start"] - 1].startswith("legal(")


def test_translate_of_a_broken_game_says_where(client: Any) -> None:
    status, answer = post(client, "translate", text="(role r)\n(<= (p ?x) (q ?x)\n")
    assert status == 422
    assert (answer["line"], answer["column"]) == (2, 1)
    assert answer["error"].startswith("syntax error")


def test_a_text_without_roles_is_checked_as_a_program(client: Any) -> None:
    status, answer = post(client, "check", text="(p a)\n(<= (q ?x) (p ?x))\n")
    assert (status, answer["kind"], answer["findings"]) == (200, "program", [])
    status, answer = post(client, "check", text="(role r)\n(<= (q ?x) (p ?x))\n")
    assert answer["kind"] == "game"
    assert {"missing-legal", "missing-goal"} <= {f["code"] for f in answer["findings"]}


def test_the_notes_recursion_example_is_checked_and_modelled_in_infix(client: Any) -> None:
    """Issue 53: /api/check and /api/model answered 500 on it (a finding printed a variable
    through the infix printer)."""
    notes = "p(a,b)\np(b,c)\nq(c)\nr(X,Y) :- p(X,Y)\nr(X,Z) :- r(X,Y) & r(Y,Z)\n"
    status, answer = post(client, "check", text=notes)
    assert (status, answer["kind"], answer["errors"]) == (200, "program", 0)
    assert [f["code"] for f in answer["findings"]] == ["recursion-restriction"] * 2
    assert "the argument Y of r(X,Y)" in answer["findings"][0]["message"]
    assert answer["findings"][0]["rule"] == "r(X,Z) :- r(X,Y) & r(Y,Z)"
    status, answer = post(client, "model", text=notes)
    assert status == 200
    (r,) = [rel for rel in answer["relations"] if rel["name"] == "r"]
    assert r["atoms"] == ["r(a,b)", "r(a,c)", "r(b,c)"]
    # a text with a legal rule but no role is a game missing its role, said so
    status, answer = post(client, "check", text="legal(r,go)\nterminal\ngoal(r,0)\n")
    assert answer["kind"] == "game" and "missing-role" in {f["code"] for f in answer["findings"]}


def test_graph_is_an_svg_with_the_rules_of_each_relation(client: Any) -> None:
    if shutil.which("dot") is None:
        unavailable("Graphviz's dot is not installed (scripts/install-extras)")
    status, answer = post(client, "graph", text=TTT)
    assert status == 200
    assert answer["svg"].lstrip().startswith(("<?xml", "<svg", "<!DOCTYPE"))
    assert "<title>legal</title>" in answer["svg"]
    assert answer["rules"]["legal"] == [23, 26, 27]
    assert answer["strata"]["terminal"] == 1 and answer["rules"]["does"] == []
    # the strata table names each line once: (index 1) (index 2) (index 3) share line 9
    assert answer["rules"]["index"] == [9] and answer["rules"]["filler"] == [10]


def test_graph_and_model_tell_w_from_parenthesized_w(client: Any) -> None:
    """Two relations, two rows of the strata table, each with its own rules and labelled
    as the game writes it; two relations of the model, each with its own atoms."""
    text = (REPO / "tests/games/zero_arity/both.kif").read_text(encoding="utf-8")
    status, answer = post(client, "graph", text=text)
    assert status == 200 and answer["labels"] == {"u()": "(u)", "w()": "(w)"}
    assert answer["rules"]["w()"] == [11, 12] and answer["rules"]["w"] == [13]
    assert answer["strata"]["w()"] < answer["strata"]["w"] and not answer["cycle"]["relations"]
    status, answer = post(client, "graph", text=print_infix(parse_kif(text)))
    assert answer["labels"] == {"u()": "u()", "w()": "w()"}
    alone = (REPO / "tests/games/zero_arity/parenthesized.kif").read_text(encoding="utf-8")
    infix = print_infix(parse_kif(alone))
    status, answer = post(client, "graph", text=infix)
    assert status == 200 and answer["labels"] == {"w()": "w()"} and "w" not in answer["rules"]
    lines = infix.splitlines()
    assert answer["rules"]["w()"] == [i + 1 for i, x in enumerate(lines) if x.startswith("w()")]
    program = "(v a)\n(<= (w) (v a))\n(<= z (w))\n(<= (z) (v b))\n"
    for syntax, paren in (("kif", "(w)"), ("infix", "w()")):
        status, answer = post(client, "model", text=program, answer_syntax=syntax)
        assert status == 200
        shown = {(r["name"], r["label"]): r["atoms"] for r in answer["relations"]}
        assert shown[("w()", paren)] == [paren] and shown[("z", "z")] == ["z"]
        assert shown[("z()", paren.replace("w", "z"))] == []


def test_graph_without_graphviz_falls_back_to_dot_text(client: Any, monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("PATH", str(tmp_path))  # the worker process finds no dot
    status, answer = post(client, "graph", text=TTT)
    assert status == 200
    assert answer["svg"] is None and "Graphviz" in answer["note"]
    assert answer["dot"].startswith("digraph") and "legal" in answer["relations"]


# -- playing --------------------------------------------------------------------------------


def test_play_shows_the_board_and_the_legal_moves(client: Any) -> None:
    status, view = post(client, "play", text=TTT, moves=[])
    assert status == 200
    assert view["roles"] == ["xplayer", "oplayer"]
    assert view["board"]["cells"] == [["b"] * 3] * 3
    assert len(view["legal"][0]) == 9 and view["legal"][1] == ["noop"]
    assert "(control xplayer)" in view["state"] and not view["terminal"]


def test_a_match_played_to_the_end_by_the_page(client: Any) -> None:
    moves: list[list[str]] = []
    for jm in X_WINS:
        mover = 0 if jm[0] != "noop" else 1
        role = ["xplayer", "oplayer"][mover]
        status, answer = post(
            client, "step", text=TTT, moves=moves, chosen={role: jm[mover]}, players={}
        )
        assert status == 200, answer
        assert answer["joint_move"] == jm  # the other role's only move, noop, was forced
        moves = answer["moves"]
    view = answer["view"]
    assert view["terminal"] and view["goals"] == [["100"], ["0"]]
    # (cell m n ...) is row m, column n, as the game's row rule says: row 1 on top
    assert view["board"]["cells"][0] == ["x", "x", "x"]
    assert view["legal"] == [[], []]
    status, answer = post(client, "step", text=TTT, moves=moves, chosen={}, players={})
    assert status == 422 and "over" in answer["error"]
    # back in the history: the page sends a shorter list
    status, view = post(client, "play", text=TTT, moves=moves[:2])
    assert status == 200 and view["step"] == 2 and not view["terminal"]


#: A board game without row or column rules: (cell a b v), which coordinate is the row is
#: the student's to say. The first move marks (cell 1 3 x).
NO_AXES = """\
(role x) (init (cell 1 1 b)) (init (cell 1 2 b)) (init (cell 1 3 b)) (init (cell 2 1 b))
(init (cell 2 2 b)) (init (cell 2 3 b))
(legal x mark)
(<= (next (cell 1 3 x)) (does x mark))
(<= (next (cell ?a ?b b)) (true (cell ?a ?b b)) (distinct ?b 3))
(<= (next (cell 2 3 b)) (true (cell 2 3 b)))
(<= terminal (true (cell 1 3 x)))
(goal x 100)
"""


def test_the_student_says_which_argument_is_the_row(client: Any) -> None:
    status, view = post(client, "play", text=NO_AXES, moves=[["mark"]])
    assert status == 200, view
    board = view["board"]
    assert not board["row_first_said"] and not board["row_first"]
    # Cartesian: x the first argument (columns 1, 2), y the second, the highest on top
    assert (board["columns"], board["rows"]) == (["1", "2"], ["3", "2", "1"])
    assert board["cells"][0] == ["x", "b"]
    status, view = post(client, "play", text=NO_AXES, moves=[["mark"]], row_first=True)
    board = view["board"]
    assert board["row_first"] and (board["columns"], board["rows"]) == (["1", "2", "3"], ["1", "2"])
    assert board["cells"][0] == ["b", "b", "x"]
    status, answer = post(client, "step", text=NO_AXES, moves=[], chosen={}, players={},
                          row_first=True)
    assert status == 200 and answer["view"]["board"]["row_first"]
    # the game's own row rule decides where it says: the switch is not offered, nor obeyed
    status, view = post(client, "play", text=TTT, moves=[], row_first=False)
    assert view["board"]["row_first_said"] and view["board"]["row_first"]
    status, answer = post(client, "play", text=NO_AXES, moves=[], row_first="yes")
    assert status == 400 and "row_first" in answer["error"]


@pytest.mark.parametrize("player", ["random", "mcts", "legal"])
def test_a_computer_opponent_answers_with_a_legal_move(client: Any, player: str) -> None:
    status, first = post(
        client, "step", text=TTT, moves=[], chosen={"xplayer": "(mark 2 2)"}, players={}
    )
    assert status == 200
    status, answer = post(
        client, "step", text=TTT, moves=first["moves"], chosen={}, players={"oplayer": player}
    )
    assert status == 200, answer
    xmove, omove = answer["joint_move"]
    assert xmove == "noop" and omove in first["view"]["legal"][1]


def test_step_refuses_what_cannot_be_played(client: Any) -> None:
    status, answer = post(client, "step", text=TTT, moves=[], chosen={"xplayer": "(mark 4 4)"})
    assert status == 422 and "not a legal move" in answer["error"]
    status, answer = post(client, "step", text=TTT, moves=[], chosen={})
    assert status == 422 and "xplayer has to choose" in answer["error"]
    status, answer = post(client, "step", text=TTT, moves=[], chosen={"nobody": "noop"})
    assert status == 400 and "nobody" in answer["error"]
    status, answer = post(client, "step", text=TTT, moves=[], players={"oplayer": "oracle"})
    assert status == 400
    status, answer = post(client, "play", text=TTT, moves=[["(mark 1 1)", "(mark 2 2)"]])
    assert status == 422 and answer["error"].startswith("move 1")


# -- why ------------------------------------------------------------------------------------


def test_why_a_fluent_holds_after_a_move(client: Any) -> None:
    status, answer = post(
        client, "explain", text=TTT, moves=X_WINS[:1], atom="(next (cell 1 1 x))", depth=3
    )
    assert status == 200 and answer["holds"]
    assert answer["joint_move"] == X_WINS[0] and answer["state"] == 0
    rule = answer["tree"]["rule"]
    assert rule["line"] == 30 and rule["fact"] is False
    # each variable as the rule writes it
    assert rule["bindings"] == {"?m": "1", "?n": "1", "?f": "x", "?r": "xplayer"}
    assert rule["prolog_line"] and rule["prolog_text"].startswith("next(")
    assert [c["holds"] for c in answer["tree"]["children"]] == [True, True]


def test_why_not_names_the_failing_literal(client: Any) -> None:
    status, answer = post(
        client, "explain", text=TTT, moves=X_WINS[:2], atom="(legal xplayer (mark 1 1))"
    )
    assert status == 200 and not answer["holds"]
    (attempt,) = answer["tree"]["children"]
    assert attempt["kind"] == "attempt" and attempt["rule"]["failing"] == 2
    assert attempt["children"][0]["text"] == "(true (cell 1 1 b))"


def test_why_a_line_holds_at_the_end(client: Any) -> None:
    status, answer = post(client, "explain", text=TTT, moves=X_WINS, atom="(line x)")
    assert status == 200 and answer["holds"]
    assert answer["tree"]["children"][0]["text"] == "(row 1 x)"


def test_why_refuses_what_it_cannot_explain(client: Any) -> None:
    status, answer = post(client, "explain", text=TTT, moves=[], atom="(next (control oplayer))")
    assert status == 422 and "last move" in answer["error"]
    status, answer = post(client, "explain", text=TTT, moves=[], atom="(halt)")
    assert status == 422 and "unknown relation (halt) (the game's" in answer["error"]
    status, answer = post(client, "explain", text=TTT, moves=[], atom="(legal ?r noop)")
    assert status == 422 and "not ground" in answer["error"]


# -- analyze and model ----------------------------------------------------------------------


def test_analyze_reports_with_replayable_counterexamples(client: Any) -> None:
    status, answer = post(client, "analyze", text=STUCK)
    assert status == 200
    playability = answer["report"]["properties"]["playability"]
    assert playability["verdict"] == "refuted"
    moves = playability["counterexample"]
    status, view = post(client, "play", text=STUCK, moves=moves)
    assert status == 200 and not view["terminal"] and view["legal"][1] == []


def test_analyze_makes_the_commands_report(capsys) -> None:  # type: ignore[no-untyped-def]
    """One implementation, one report: under the same budget the page's Analyze and
    ``gdl2pl analyze`` print the same text and the same verdicts, what the rules' shape
    proves (counted.kif's step counter and its move legal in every state) included."""
    from gdl2pl.studio.limits import Limits

    path = REPO / "tests" / "games" / "analysis" / "counted.kif"
    assert main(["analyze", str(path), "--max-states", "3", "--walks", "5"]) == 0
    printed = capsys.readouterr().out
    assert main(["analyze", str(path), "--max-states", "3", "--walks", "5", "--json"]) == 0
    command = json.loads(capsys.readouterr().out)
    limits = Limits(analyze_states=3, analyze_walks=5, max_moves=2_000)
    with _client(limits) as c:
        status, answer = post(c, "analyze", text=path.read_text(), name="counted.kif")
    assert status == 200
    assert answer["text"] == printed.rstrip("\n")
    page = answer["report"]
    assert page["properties"] == command["properties"]
    assert page["properties"]["termination"]["verdict"] == "proved"
    assert "proved from the rules" in page["properties"]["termination"]["note"]
    assert "proved from the rules" in page["properties"]["playability"]["note"]


def test_the_page_names_the_game_by_its_file(client: Any) -> None:
    """The Prolog header and the analysis report say the name the page sends (the file's
    or example's), "game" when it sends none; a name that is not a file name is refused
    (it would reach the Prolog comments)."""
    status, answer = post(client, "translate", text=BUTTONS, name="buttons.kif")
    assert status == 200
    assert answer["prolog"].startswith("%   game: translated by gdl2pl from buttons.kif.")
    status, answer = post(client, "analyze", text=BUTTONS, name="buttons.kif")
    assert status == 200 and answer["report"]["game"] == "buttons.kif"
    assert answer["text"].startswith("game: buttons.kif  roles: robot")
    status, answer = post(client, "analyze", text=BUTTONS)
    assert status == 200 and answer["report"]["game"] == "game"
    for bad in ["a\n:- halt.", "", "../x.kif", 7, "x" * 101]:
        status, answer = post(client, "translate", text=BUTTONS, name=bad)
        assert status == 400 and "'name' must be a file name" in answer["error"], bad


def test_analyze_keeps_the_servers_budget_on_a_big_game() -> None:
    """Analyze on chess (slow states, 200-step matches) ends within the server's budget
    for analyze plus a generous margin for a busy machine (the whole request, loading
    and checks included: it once took 131 s against 6), and says what the time cut."""
    import time

    from gdl2pl.studio.limits import Limits

    chess = shared_dir() / "games" / "ggp-repository" / "chess.kif"
    limits = Limits(analyze_seconds=3.0, seconds=60.0)
    with _client(limits) as c:
        began = time.monotonic()
        status, answer = post(c, "analyze", text=chess.read_text(), name="chess.kif")
        took = time.monotonic() - began
    assert status == 200, answer
    assert took < limits.analyze_seconds + 5.0
    report = answer["report"]
    assert report["game"] == "chess.kif"
    assert report["properties"]["termination"]["verdict"] == "proved"  # from the counter
    assert "the search" in report["time"]["cut"]
    assert "time budget (3 s) cut: the search" in answer["text"]


def test_analyze_ends_within_the_requests_own_limit() -> None:
    """A server whose requests may take less than its analyze budget still answers
    Analyze with a report (made within that limit), not with the watchdog's 503."""
    from gdl2pl.studio.limits import Limits

    chess = shared_dir() / "games" / "ggp-repository" / "chess.kif"
    limits = Limits(analyze_seconds=6.0, seconds=4.0)
    with _client(limits) as c:
        status, answer = post(c, "analyze", text=chess.read_text(), name="chess.kif")
    assert status == 200, answer
    assert answer["report"]["time"]["seconds"] == 0.8 * limits.seconds


def test_model_of_an_open_program_with_an_input(client: Any) -> None:
    program = "(<= (r ?x ?y) (p ?x ?y) (not (q ?x)))\n"
    status, answer = post(client, "model", text=program, input="(p a b) (p b b) (q b)")
    assert status == 200
    assert answer["relations"] == [
        {"name": "r", "label": "r", "arity": 2, "atoms": ["(r a b)"], "input": False}
    ]
    status, answer = post(client, "model", text=program, input="(p a b) (p b b)")
    assert answer["relations"][0]["atoms"] == ["(r a b)", "(r b b)"]
    status, answer = post(client, "model", text="(p a)\n(<= (r ?x) (p ?x) (not (q ?y)))\n")
    assert status == 422 and "unsafe" in answer["error"]


def test_model_of_a_program_not_stratified_is_well_founded(client: Any) -> None:
    program = "(move a b) (move b a) (move b c)\n(<= (win ?x) (move ?x ?y) (not (win ?y)))\n"
    status, answer = post(client, "model", text=program)
    assert status == 200 and answer["semantics"] == "well-founded"
    assert answer["two_valued"]  # b wins by moving to c, so a loses: no atom undefined
    (win,) = [r for r in answer["relations"] if r["name"] == "win"]
    assert (win["atoms"], win["undefined"]) == (["(win b)"], [])
    program = "(move a b) (move b a)\n(<= (win ?x) (move ?x ?y) (not (win ?y)))\n"
    status, answer = post(client, "model", text=program)
    (win,) = [r for r in answer["relations"] if r["name"] == "win"]
    assert not answer["two_valued"]  # a 2-cycle: each wins if the other does not
    assert (win["atoms"], win["undefined"]) == ([], ["(win a)", "(win b)"])


def test_the_examples_are_one_request_away(client: Any) -> None:
    info = client.get("/api/info").json()
    names = [e["name"] for e in info["examples"]]
    assert {"ticTacToe.kif", "buttons.kif", "paths.kif"} <= set(names)
    for name in names:
        r = client.get(f"/api/examples/{name}")
        assert r.status_code == 200
        status, answer = post(client, "check", text=r.json()["text"])
        assert (status, answer["errors"]) == (200, 0), name
    assert client.get("/api/examples/..%2Fapp.py").status_code == 404


# -- safety ---------------------------------------------------------------------------------


def test_sessions_are_kept_apart() -> None:
    _client()  # what it needs is there
    from starlette.testclient import TestClient

    from gdl2pl.studio.app import create_app

    app = create_app()
    studio = app.state.studio
    with TestClient(app) as alice, TestClient(app) as bob:
        assert post(alice, "play", text=TTT, moves=X_WINS[:1])[0] == 200
        assert post(bob, "play", text=TTT, moves=[])[0] == 200
        a = alice.cookies.get("gdl2pl_studio")
        b = bob.cookies.get("gdl2pl_studio")
        assert a and b and a != b
        assert studio.loaded_games(studio.session(a)[0]) == 1
        assert studio.loaded_games(studio.session(b)[0]) == 1
        assert studio.loaded_games() == 2  # the same text, loaded once for each
    with TestClient(app, cookies={"gdl2pl_studio": "forged-by-the-page"}) as eve:
        assert post(eve, "check", text=TTT)[0] == 200
        issued = [c.value for c in eve.cookies.jar if c.name == "gdl2pl_studio"]
        assert len(issued) == 2  # the forged one, and the one the server made instead
        assert not {"forged-by-the-page", a, b} >= set(issued)
        assert studio.session("forged-by-the-page")[0].id != "forged-by-the-page"


def test_the_least_recently_used_game_is_unloaded() -> None:
    from gdl2pl.studio.limits import Limits

    with _client(Limits(max_games=2)) as c:
        games = [TTT, BUTTONS, STUCK]
        for text in games:
            assert post(c, "play", text=text, moves=[])[0] == 200
        studio = c.app.state.studio
        assert studio.loaded_games() == 2
        status, view = post(c, "play", text=TTT, moves=X_WINS[:1])  # loaded again
        assert status == 200 and view["step"] == 1
        assert studio.loaded_games() == 2


def test_requests_are_capped_in_size_and_kind(client: Any) -> None:
    from gdl2pl.studio.limits import Limits

    big = "(role r)\n" + ";" * Limits().max_text
    status, answer = post(client, "check", text=big)
    assert status == 413 and "longer than" in answer["error"]
    too_many = [["noop", "noop"]] * (Limits().max_moves + 1)
    assert post(client, "play", text=TTT, moves=too_many)[0] == 413
    r = client.post("/api/check", content="text=x", headers={"Content-Type": "text/plain"})
    assert r.status_code == 415
    r = client.post("/api/check", content="[1, 2]", headers={"Content-Type": "application/json"})
    assert r.status_code == 400
    assert post(client, "check", text=TTT, syntax="lisp")[0] == 400
    assert post(client, "play", text="(p a)", moves=[])[0] == 422  # no role: not a game


def test_each_endpoint_says_which_kind_of_work_it_is() -> None:
    """The endpoints served are those docs/studio.md lists; the front-end ones are the
    questions a worker process answers, and the docs name them as running there."""
    require_module("starlette")
    import re

    from gdl2pl.studio.endpoints import ENDPOINTS
    from gdl2pl.studio.pipeline import FrontEndWork
    from gdl2pl.studio.pipeline import ReasonerWork
    from gdl2pl.studio.worker import OPS

    docs = (REPO / "docs" / "studio.md").read_text(encoding="utf-8")
    assert {e.name for e in ENDPOINTS} == set(re.findall(r"`POST /api/(\w+)`", docs))
    front_end = {e.name for e in ENDPOINTS if isinstance(e, FrontEndWork)}
    assert front_end == set(OPS)
    assert "`check`, `convert`, `translate` and\n  `graph` run in worker processes" in docs
    assert {e.name for e in ENDPOINTS if isinstance(e, ReasonerWork)} == {
        "play", "step", "explain", "analyze", "model"
    }  # fmt: skip


def test_the_page_is_served_with_a_strict_policy(client: Any) -> None:
    r = client.get("/")
    assert r.status_code == 200 and "gdl2pl studio" in r.text
    assert "script-src 'self'" in r.headers["content-security-policy"]
    assert client.get("/static/studio.js").status_code == 200
    assert client.get("/static/../app.py").status_code == 404
    assert client.get("/static/app.py").status_code == 404


def test_a_local_server_answers_only_to_local_host_names(client: Any) -> None:
    r = client.get("/api/info", headers={"Host": "attacker.example"})
    assert r.status_code == 400
    assert client.get("/api/info", headers={"Host": "127.0.0.1:8080"}).status_code == 200
    assert client.get("/api/info", headers={"Host": "[::1]:8080"}).status_code == 200
    assert (
        client.get("/api/info", headers={"Host": "localhost.attacker.example"}).status_code == 400
    )


#: A game whose terminal test takes long: 60**5 combinations of a state-dependent rule.
SLOW_GAME = (
    "(role r) (init on) (<= (legal r wait) (true on)) (<= (next on) (true on))\n"
    + " ".join(f"(n {i})" for i in range(60))
    + "\n(<= (big ?a ?b ?c ?d ?e) (true on) (n ?a) (n ?b) (n ?c) (n ?d) (n ?e))\n"
    "(p5 x x x x x)\n(<= terminal (big ?a ?b ?c ?d ?e) (p5 ?a ?b ?c ?d ?e))\n"
    "(<= (goal r 0) (true on))\n"
)


def test_a_request_is_stopped_at_the_time_limit() -> None:
    from gdl2pl.studio.limits import Limits

    with _client(Limits(seconds=0.5, inference_limit=10**10)) as c:
        status, answer = post(c, "play", text=SLOW_GAME, moves=[])
        assert status == 503 and "0.5 seconds" in answer["error"]
        status, answer = post(c, "step", text=SLOW_GAME, moves=[], players={})
        assert status == 503, answer  # stopped in the middle of a match too
        assert post(c, "play", text=TTT, moves=[])[0] == 200  # and the server goes on


def test_a_request_is_stopped_at_the_inference_limit() -> None:
    from gdl2pl.studio.limits import Limits

    with _client(Limits(inference_limit=100_000)) as c:
        status, answer = post(c, "play", text=SLOW_GAME, moves=[])
        assert status == 422 and "inference" in answer["error"]
        program = (
            " ".join(f"(n {i})" for i in range(40)) + "\n(<= (t ?a ?b ?c) (n ?a) (n ?b) (n ?c))\n"
        )
        status, answer = post(c, "model", text=program)  # 64,000 atoms: over the limit
        assert status == 422 and "too large" in answer["error"]


# -- the command -----------------------------------------------------------------------------


def test_the_command_prints_the_url_and_warns_off_this_machine(capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    uvicorn = require_module("uvicorn")

    served: list[Any] = []
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: served.append(sockets))
    # Another library's log handler survives: the command leaves the process's logging
    # alone (uvicorn's default configuration closes every handler, and its stream).
    closed: list[bool] = []

    class Handler(logging.Handler):
        def close(self) -> None:
            closed.append(True)
            super().close()

    handler = Handler()
    logging.getLogger().addHandler(handler)
    try:
        assert main(["studio", "--port", "0", str(EXAMPLES / "ticTacToe.kif")]) == 0
        assert not closed
    finally:
        logging.getLogger().removeHandler(handler)
    out = capsys.readouterr()
    assert out.out.startswith("gdl2pl studio: open http://127.0.0.1:") and not out.err
    assert main(["studio", "--port", "0", "--host", "0.0.0.0"]) == 0
    assert "warning: listening on 0.0.0.0" in capsys.readouterr().err
    assert len(served) == 2
    for sockets in served:
        sockets[0].close()
    assert main(["studio", "no/such/game.kif"]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_a_server_bound_elsewhere_still_checks_the_host(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # `studio --host 127.0.0.2` (any host but the default) turned the Host check off:
    # a foreign Host then read the loaded game
    import socket

    uvicorn = require_module("uvicorn")
    with warnings.catch_warnings():  # Starlette would rather have httpx2 than httpx
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    served: list[Any] = []
    monkeypatch.setattr(
        uvicorn.Server, "run", lambda self, sockets=None: served.append((self, sockets))
    )
    assert main(["studio", "--port", "0", "--host", "127.0.0.2"]) == 0
    assert (
        main(["studio", "--port", "0", "--host", "0.0.0.0", "--allow-host", "Class.Example"]) == 0
    )
    for _, sockets in served:
        sockets[0].close()
    bound, anywhere = (TestClient(srv.config.app) for srv, _ in served)
    for client, host in [(bound, "127.0.0.2:8080"), (anywhere, f"{socket.gethostname()}:80")]:
        assert client.get("/api/info", headers={"Host": host}).status_code == 200
        assert client.get("/api/info", headers={"Host": "localhost"}).status_code == 200
        r = client.get("/api/info", headers={"Host": "attacker.example"})
        assert r.status_code == 400, host
    assert anywhere.get("/api/info", headers={"Host": "class.example"}).status_code == 200
    assert bound.get("/api/info", headers={"Host": "class.example"}).status_code == 400


_NO_WRITES = r"""
import json, os, sys, warnings
writes = []
def audit(event, args):
    if event == "open":
        path, mode, flags = args
        wants = (mode and any(c in mode for c in "wax+")) or (
            isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT))
        if wants and path is not None and not isinstance(path, int):
            writes.append(str(path))
    elif event in ("os.rename", "os.remove", "os.mkdir", "shutil.copyfile", "os.truncate"):
        writes.append(f"{event} {args[0]}")
warnings.simplefilter("ignore")
from starlette.testclient import TestClient
from gdl2pl.studio.app import create_app
with TestClient(create_app()) as c:
    sys.addaudithook(audit)
    game = sys.stdin.read()
    moves = [["(mark 1 1)", "noop"], ["noop", "(mark 2 2)"]]
    asked = [
        ("check", {"text": game}), ("convert", {"text": game, "to": "infix"}),
        ("translate", {"text": game}), ("graph", {"text": game}),
        ("play", {"text": game, "moves": moves}),
        ("step", {"text": game, "moves": moves, "chosen": {}, "players": {"xplayer": "mcts"}}),
        ("explain", {"text": game, "moves": moves, "atom": "(true (cell 1 1 x))"}),
        ("analyze", {"text": game}),
        ("model", {"text": "(p a)\n(<= (q ?x) (p ?x))\n"}),
    ]
    for name, body in asked:
        r = c.post(f"/api/{name}", json=body)
        assert r.status_code == 200, (name, r.text)
print(json.dumps(writes))
"""


def _assert_writes_nothing(tmp_path: Any, script: str, given: str) -> None:
    """Run ``script`` in a fresh Python with ``given`` on its stdin, its home and temporary
    folder in the empty ``tmp_path``: it must end well, report no audited write, and leave
    ``tmp_path`` empty."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "TMPDIR": str(tmp_path), "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-P", "-c", script],
        input=given,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.splitlines()[-1]) == []
    assert list(tmp_path.iterdir()) == []


def test_the_server_writes_no_file(tmp_path: Any) -> None:
    """Every endpoint answers without writing a file anywhere (Python's audit events)."""
    _client()  # what it needs is there
    _assert_writes_nothing(tmp_path, _NO_WRITES, TTT)
    # the front end's questions are answered in worker processes: audit one too
    questions = [
        {"op": op, "text": TTT, "syntax": "auto", "to": "infix"}
        for op in ("check", "convert", "translate", "graph")
    ]
    worker = _NO_WRITES.split("warnings.simplefilter")[0] + (
        "sys.addaudithook(audit)\n"
        "from gdl2pl.studio.worker import serve\n"
        "out = []\n"
        "class Sink:\n"
        "    def write(self, text): out.append(text)\n"
        "    def flush(self): pass\n"
        "serve(sys.stdin, Sink(), 5.0)\n"
        "assert all('answer' in json.loads(line) for line in ''.join(out).splitlines())\n"
        "print(json.dumps(writes))\n"
    )
    _assert_writes_nothing(tmp_path, worker, "".join(json.dumps(q) + "\n" for q in questions))
