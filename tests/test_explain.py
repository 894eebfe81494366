"""Explanations: proof trees for atoms that hold, first failing literals for atoms that
do not, the mapping from each Prolog clause back to its GDL rule, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from prolog_env import require_prolog

from gdl2pl.cli import main
from gdl2pl.contract import MachineState
from gdl2pl.syntax import Not

ROOT = Path(__file__).resolve().parents[1]
TICTACTOE = str(ROOT / "gdl2pl/examples/ticTacToe.kif")


@pytest.fixture(autouse=True)
def _prolog() -> None:
    require_prolog()


@pytest.fixture(scope="module")
def sm():
    require_prolog()
    from gdl2pl.bridge import StateMachine

    with StateMachine.from_file(TICTACTOE) as machine:
        yield machine


def _nodes(node):
    yield node
    for child in node.children:
        yield from _nodes(child)


def test_legal_holds_with_rule_clause_and_bindings(sm) -> None:
    from gdl2pl.explain import explain

    e = explain(sm, sm.initial_state, "(legal xplayer (mark 1 1))")
    assert e.holds
    root = e.tree
    assert root.rule is not None and root.rule.pos is not None
    assert root.rule.source.startswith("(<= (legal ?r (mark ?m ?n))")
    assert root.rule.prolog_text.startswith("legal(R, mark(M, N))")
    assert {k: str(v) for k, v in root.rule.bindings.items()} == {
        "r": "xplayer",
        "m": "1",
        "n": "1",
    }
    assert [c.text for c in root.children] == ["(true (control xplayer))", "(true (cell 1 1 b))"]
    assert all(c.holds and c.kind == "state" for c in root.children)


def test_every_clause_line_maps_back_to_its_gdl_rule(sm) -> None:
    """SWI's line_count of each clause used is the line translate.py recorded for the
    rule: the comment above the clause names the same source line."""
    from gdl2pl.explain import explain

    state = sm.next_state(sm.initial_state, ["(mark 2 2)", "noop"])
    lines = sm.translation.text.split("\n")
    checked = 0
    for atom in [
        "(goal xplayer 50)",
        "terminal",
        "(legal oplayer (mark 1 1))",
        "(base (cell 1 1 x))",
    ]:
        for node in _nodes(explain(sm, state, atom, depth=4).tree):
            if node.rule is None:
                continue
            assert node.rule.source != "?", node.text
            comment = lines[node.rule.prolog_line - 2]
            assert comment.startswith(f"% ticTacToe.kif:{node.rule.pos.line} "), comment
            checked += 1
    assert checked > 10


def test_not_holding_names_the_first_failing_literal(sm) -> None:
    from gdl2pl.explain import explain

    state = sm.next_state(sm.initial_state, ["(mark 1 1)", "noop"])
    e = explain(sm, state, "(legal oplayer (mark 1 1))")
    assert not e.holds
    (attempt,) = e.tree.children
    assert attempt.kind == "attempt" and attempt.rule.failing == 2
    assert attempt.rule.solutions == 1
    (why,) = attempt.children
    assert why.text == "(true (cell 1 1 b))" and why.kind == "no_state"


#: The issue's rule: its clause tests the ground negation first, the rule writes it second.
REORDERED = """\
role(blue)
role(red)
init(pos(blue,4))
init(pos(red,3))
legal(R,wait) :- role(R)
next(pos(R,N)) :- true(pos(R,N))
terminal :- true(pos(blue,4))
goal(blue,100) :- true(pos(blue,4)) & ~true(pos(red,3))
goal(blue,0) :- true(pos(red,N)) & true(pos(blue,4)) & ~true(pos(red,5))
goal(red,0) :- role(red)
"""


@pytest.fixture(scope="module")
def reordered():
    require_prolog()
    from gdl2pl.bridge import StateMachine

    with StateMachine.from_text(REORDERED, name="blue.gdl") as machine:
        yield machine


def test_literals_are_numbered_as_the_rule_writes_them(reordered) -> None:
    from gdl2pl.explain import explain

    sm = reordered
    rule = next(r for _, r in sm.translation.origins if "100" in str(r.head))
    assert isinstance(rule.body[0], Not)  # the clause tests the negation first
    e = explain(sm, sm.initial_state, "(goal blue 100)", syntax="infix")
    (attempt,) = e.tree.children
    assert attempt.rule.failing == 2 and attempt.rule.tried_before == ()
    assert "fails at literal 2 of the rule:" in str(e)
    assert attempt.children[0].text == "~true(pos(red,3))"
    # blue elsewhere: the clause tried the negation (literal 2) first, and it held
    state = MachineState.from_fluents([sm.term("(pos blue 5)")])
    (attempt,) = explain(sm, state, "(goal blue 100)", syntax="infix").tree.children
    assert (attempt.rule.failing, attempt.rule.tried_before) == (1, (2,))
    assert "fails at literal 1 of the rule, given the one solution of literal 2 (tried first)" in (
        str(attempt)
    )
    assert attempt.children[0].text == "true(pos(blue,4))"


def test_a_rule_that_holds_lists_its_literals_as_written(reordered) -> None:
    from gdl2pl.explain import explain

    e = explain(reordered, reordered.initial_state, "(goal blue 0)", syntax="infix")
    assert e.holds
    kids = [(c.place, c.text) for c in e.tree.children]
    assert kids == [
        (1, "true(pos(red,3))"),
        (2, "true(pos(blue,4))"),
        (3, "~true(pos(red,5))"),
    ]
    text = str(e)
    assert text.index("1. true(pos(red,3))") < text.index("3. ~true(pos(red,5))")
    assert e.tree.as_json()["children"][2]["place"] == 3


def test_negation_and_depth(sm) -> None:
    from gdl2pl.explain import explain

    e = explain(sm, sm.initial_state, "terminal", depth=1)
    assert not e.holds
    assert len(e.tree.children) == 3  # three terminal rules, each fails
    text = str(e)
    assert "not explained further" in text
    not_open = e.tree.children[2]
    assert not_open.rule.source == "(<= terminal (not open))"
    assert not_open.children[0].kind == "holds"  # (not open) fails: open holds
    deeper = str(explain(sm, sm.initial_state, "terminal", depth=3))
    assert "(true (cell 1 1 o)) does not hold: not in the state" in deeper


def test_next_uses_the_joint_move(sm) -> None:
    from gdl2pl.explain import explain

    e = explain(sm, sm.initial_state, "(next (cell 1 1 x))", joint_move=["(mark 1 1)", "noop"])
    assert e.holds
    assert e.tree.children[0].text == "(does xplayer (mark 1 1))"
    # the state installed for the state machine is left as it was
    assert sm.legal_moves(sm.initial_state, "xplayer")[0] is not None
    assert not explain(sm, sm.initial_state, "(next (cell 1 1 x))").holds


def test_static_relation_is_proved_by_its_rules(sm) -> None:
    from gdl2pl.explain import explain

    e = explain(sm, sm.initial_state, "(input oplayer noop)")
    assert e.holds and e.tree.rule.prolog_text.startswith("static_input(")


def test_state_machine_queries_unaffected(sm) -> None:
    from gdl2pl.explain import explain

    s1 = sm.next_state(sm.initial_state, ["(mark 1 1)", "noop"])
    before = sm.legal_moves(s1, "oplayer")
    explain(sm, sm.initial_state, "(line x)")
    assert sm.legal_moves(s1, "oplayer") == before


def test_cli_holds_and_fails(tmp_path, capsys) -> None:
    moves = tmp_path / "m.jsonl"
    moves.write_text('["(mark 1 1)", "noop"]\n["noop", "(mark 2 2)"]\n')
    assert main(["explain", TICTACTOE, "(next (cell 2 2 o))", "--moves", str(moves)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("(next (cell 2 2 o)) holds")
    assert "ticTacToe.kif:30" in out and "clause at line" in out
    state = "((cell 1 1 x) (control oplayer))"
    assert main(["explain", TICTACTOE, "(legal oplayer (mark 1 1))", "--state", state]) == 1
    assert "fails at literal 2" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("atom", "extra", "message"),
    [
        ("(foo 1)", [], "unknown relation foo"),
        ("(legal ?r noop)", [], "not ground"),
        ("(legal xplayer)", [], "takes 2 argument(s)"),
        ("(next (cell 1 1 x))", [], "depends on the joint move"),
        ("(legal x", [], "error"),
    ],
)
def test_cli_bad_atoms(capsys, atom: str, extra: list[str], message: str) -> None:
    assert main(["explain", TICTACTOE, atom, *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("atom", "where", "caret"),
    [
        ("(cell 1 1", "<atom>:1:1: error: unbalanced '('", "^"),
        ("(cell 1 1))", "<atom>:1:11: error: unbalanced ')'", " " * 10 + "^"),
        ("(legal xplayer noop) x", "<atom>:1:1: error: expected exactly one term", "^"),
    ],
)
def test_cli_malformed_atom_points_into_the_atom(
    capsys, atom: str, where: str, caret: str
) -> None:
    """A syntax error in the atom typed on the command line is placed in that text, with
    the atom and a caret under the column, never at a line of the game file."""
    assert main(["explain", TICTACTOE, atom]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(where), err
    assert err[1:3] == [atom, caret]
    assert not any(TICTACTOE in line for line in err)


@pytest.mark.parametrize(
    ("state", "where", "caret"),
    [
        ("((cell 1 1 x)))", "<state>:1:15: error: unbalanced ')'", 14),
        ("((cell 1 1 x) (control oplayer)", "<state>:1:1: error: unbalanced '('", 0),
        ("(control oplayer) x", "<state>:1:19: error: expected one list of terms", 18),
    ],
)
def test_cli_malformed_state_points_into_the_state(
    capsys, state: str, where: str, caret: int
) -> None:
    assert main(["explain", TICTACTOE, "terminal", "--state", state]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(where), err
    assert err[1:3] == [state, " " * caret + "^"]
    assert not any(TICTACTOE in line for line in err)


def test_cli_illegal_move_names_the_step(tmp_path, capsys) -> None:
    moves = tmp_path / "m.jsonl"
    moves.write_text(json.dumps({"moves": [["(mark 1 1)", "noop"], ["noop", "(mark 1 1)"]]}))
    assert main(["explain", TICTACTOE, "terminal", "--moves", str(moves)]) == 2
    err = capsys.readouterr().err
    assert "m.jsonl:1: move 2:" in err and "not a legal move" in err


def test_recursive_relation_has_a_well_founded_proof() -> None:
    """Left recursion over a state with a cycle: the proof never uses an atom to prove
    itself, and the failure of a recursive atom is explained."""
    from gdl2pl.bridge import StateMachine
    from gdl2pl.explain import explain

    with StateMachine.from_file(ROOT / "tests/games/analysis/paths.kif") as machine:
        s = machine.initial_state
        e = explain(machine, s, "(path a d)")
        assert e.holds
        for node in _nodes(e.tree):
            inner = [n.text for c in node.children for n in _nodes(c)]
            assert node.kind != "rule" or node.text not in inner
        assert "(path a c)" in [c.text for c in e.tree.children]
        assert explain(machine, s, "(path a a)").holds
        no = explain(machine, s, "(path d a)", depth=2)
        assert not no.holds and len(no.tree.children) == 2
        assert no.tree.children[1].children[0].kind == "no_instance"


def test_terminal_holds_through_a_ground_literal(sm) -> None:
    """The translator may wrap a literal that is ground when called (\\+ \\+ G); its proof
    is the proof of G."""
    from gdl2pl.explain import explain

    s = sm.initial_state
    for jm in (["(mark 1 1)", "noop"], ["noop", "(mark 2 1)"], ["(mark 1 2)", "noop"]):
        s = sm.next_state(s, jm)
    s = sm.next_state(s, ["noop", "(mark 2 2)"])
    s = sm.next_state(s, ["(mark 1 3)", "noop"])
    e = explain(sm, s, "terminal")
    assert e.holds
    assert e.tree.rule.source == "(<= terminal (line x))"
    (line,) = e.tree.children
    assert line.text == "(line x)" and line.holds and line.kind == "rule"
    assert "(row 1 x) holds" in str(e)


#: ``big`` holds in no state, but deciding so joins 40^5 rows: a "why not" that would
#: run for hours unless the reasoner's limits stop it.
COSTLY = (
    "(role r) (init (s)) (<= (legal r go) (true (s))) (<= (next (s)) (true (s)))\n"
    "(<= terminal (true (t))) (<= (goal r 0) (not (big)))\n"
    + " ".join(f"(n {i})" for i in range(40))
    + "\n(<= (all ?a ?b ?c ?d ?e) (true (s)) (n ?a) (n ?b) (n ?c) (n ?d) (n ?e))"
    + "\n(<= (big) (true (s)) (n ?a) (n ?b) (n ?c) (n ?d) (n ?e) (not (all ?a ?b ?c ?d ?e)))\n"
)


def test_a_why_runs_under_the_games_inference_limit() -> None:
    from gdl2pl.bridge import ReasonerError
    from gdl2pl.bridge import StateMachine
    from gdl2pl.explain import explain
    from gdl2pl.load import parse_game

    with StateMachine(parse_game(COSTLY), "costly", inference_limit=1_000_000) as sm:
        with pytest.raises(ReasonerError, match="inference"):
            explain(sm, sm.initial_state, "(big)")
        assert [str(m) for m in sm.legal_moves(sm.initial_state, "r")] == ["go"]
        tree = explain(sm, sm.initial_state, "(legal r go)")  # the game is still usable
        assert tree.holds


def test_terms_and_relations_of_arity_zero_are_explained() -> None:
    """``(s)`` is the term s() and ``(p)`` the relation p() (not the constant s or the
    proposition p), in the explanation as in the translation."""
    from gdl2pl.bridge import StateMachine
    from gdl2pl.explain import explain
    from gdl2pl.load import parse_game

    game = "(role r) (init (s)) (<= (legal r go) (true (s))) (<= (p) (true (s)))\n"
    game += "(<= (next (s)) (true (s)) (p)) (<= terminal (not (p))) (goal r 0)\n"
    with StateMachine(parse_game(game), "zero") as sm:
        state = sm.initial_state
        assert explain(sm, state, "(true (s))").holds
        why = explain(sm, state, "(legal r go)")
        assert why.holds and why.tree.children[0].text == "(true (s))"
        assert explain(sm, state, "(p)").holds
        assert not explain(sm, state, "terminal").holds


def test_a_why_can_be_stopped_from_another_thread() -> None:
    import threading

    from gdl2pl.bridge import QueryInterrupted
    from gdl2pl.bridge import StateMachine
    from gdl2pl.bridge.swipl import interrupt
    from gdl2pl.bridge.swipl import prolog_thread_id
    from gdl2pl.explain import explain
    from gdl2pl.load import parse_game

    box: dict[str, object] = {}
    ready = threading.Event()
    with StateMachine(parse_game(COSTLY), "costly", inference_limit=10**12) as sm:

        def work() -> None:
            box["id"] = prolog_thread_id()
            ready.set()
            try:
                explain(sm, sm.initial_state, "(big)")
            except QueryInterrupted as e:
                box["error"] = e
            box["after"] = explain(sm, sm.initial_state, "(legal r go)").holds

        t = threading.Thread(target=work)
        t.start()
        assert ready.wait(10)
        while t.is_alive() and "error" not in box:
            interrupt(box["id"])  # type: ignore[arg-type]
            t.join(0.2)
        t.join(10)
    assert "error" in box and box["after"] is True
