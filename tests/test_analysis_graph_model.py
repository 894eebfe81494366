"""gdl2pl graph (dot, mermaid, svg) and gdl2pl model (minimal models, open programs,
Herbrand universe and base, errors for unsafe and unstratified programs)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import layered_game
from prolog_env import require_prolog

from gdl2pl.cli import main
from gdl2pl.depgraph import GROUND_NOT_STRATIFIED
from gdl2pl.depgraph import GROUND_STRATIFIED
from gdl2pl.depgraph import NOT_STRATIFIED

ROOT = Path(__file__).resolve().parents[1]
TICTACTOE = str(ROOT / "gdl2pl/examples/ticTacToe.kif")
BUTTONS = str(ROOT / "gdl2pl/examples/buttons.kif")
GAMES = ROOT / "tests/games/analysis"


def require_program(name: str) -> str:
    """The path of an external program; skipped when missing, except in CI."""
    path = shutil.which(name)
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{name} is not installed (the CI setup installs it)")
        pytest.skip(f"{name} is not installed")
    return path


# -- graph ------------------------------------------------------------------------------


def test_dot_marks_negation_strata_keywords_and_recursion(capsys) -> None:
    assert main(["graph", TICTACTOE]) == 0
    dot = capsys.readouterr().out
    assert dot.startswith('digraph "ticTacToe.kif" {')
    assert '"open" -> "terminal" [style=dashed' in dot  # (not open)
    assert '"line" -> "goal" [style=dashed' in dot
    assert '"goal" [label="goal\\nstratum 1", shape=box' in dot  # keyword relation
    assert '"true" [label="true\\nstratum 0", shape=box, style="filled"' in dot
    assert '"row" [label="row\\nstratum 0", shape=ellipse]' in dot
    assert "cluster" not in dot  # tic-tac-toe has no recursion


def test_recursive_components_are_boxed(capsys) -> None:
    assert main(["graph", str(GAMES / "unstratified.kif"), "--format", "mermaid"]) == 0
    mermaid = capsys.readouterr().out
    assert "subgraph rec1 [recursive 1]" in mermaid
    assert "-. not .->" in mermaid
    assert "no strata: negation is not stratified by the notes' definition" in mermaid


def test_the_cycle_through_not_is_marked(capsys, tmp_path) -> None:
    """An unstratified game is drawn, its cycle through not in red and bold: the edge
    under not and the way back (here through a positive edge), and only those."""
    game = tmp_path / "cycle.kif"
    game.write_text(
        "(role r) (s a)\n"
        "(<= (p ?x) (s ?x) (not (q ?x)))\n"
        "(<= (q ?x) (t ?x))\n"
        "(<= (t ?x) (s ?x) (p ?x))\n"
        "(<= (u ?x) (s ?x) (not (p ?x)))\n",
        encoding="utf-8",
    )
    from gdl2pl.analysis.relgraph import relation_graph
    from gdl2pl.load import read_game

    g = relation_graph(read_game(game))
    assert set(g.negative_cycles) == {("q", "p", True), ("p", "t", False), ("t", "q", False)}
    assert g.cycle_relations == ("p", "q", "t")
    assert main(["graph", str(game)]) == 0
    dot = capsys.readouterr().out
    assert "(a cycle of relations through not), drawn in red, and a ground atom may" in dot
    assert '"q" -> "p" [style=dashed, color="#c00000", label="not", penwidth=3];' in dot
    assert '"t" -> "q" [color="#c00000", penwidth=3];' in dot
    assert '"p" -> "u" [style=dashed, color="#c00000", label="not"];' in dot  # not on it
    assert '"s" -> "p";' in dot
    assert '"t" [label="t", shape=ellipse, color="#c00000", penwidth=2.5];' in dot
    assert '"u" [label="u", shape=ellipse];' in dot
    assert main(["graph", str(game), "--format", "mermaid"]) == 0
    mermaid = capsys.readouterr().out
    ids = {line.split('["')[1][:-2]: line.split("[")[0].strip()
           for line in mermaid.splitlines() if '["' in line}
    links = [line.strip() for line in mermaid.splitlines() if "-->" in line or ".->" in line]
    (marked,) = [line for line in mermaid.splitlines() if "linkStyle" in line]
    indices = [int(i) for i in marked.split()[1].split(",")]
    p, q, t = ids["p"], ids["q"], ids["t"]
    assert sorted(links[i] for i in indices) == sorted(
        [f"{q} -. not .-> {p}", f"{p} --> {t}", f"{t} --> {q}"]
    )
    assert f"  class {p},{q},{t} cycle" in mermaid.splitlines()


#: The course notes' robot: goal depends on its own negation by name, never on the ground.
ROBOT = """\
role(robot)
init(p)
legal(robot,a)
next(p) :- does(robot,a)
terminal :- true(p)
goal(robot,100) :- true(p)
goal(robot,0) :- ~goal(robot,100)
"""


@pytest.mark.parametrize(
    ("rule", "ground", "severity"),
    [
        ("goal(robot,0) :- ~goal(robot,100)", GROUND_STRATIFIED, "warning"),
        ("goal(robot,0) :- role(robot) & ~goal(robot,0)", GROUND_NOT_STRATIFIED, "error"),
    ],
)
def test_check_and_graph_say_the_same_of_a_cycle_through_not(
    capsys, tmp_path, rule: str, ground: str, severity: str
) -> None:
    """Both say what the notes' definition says (a cycle of relations through not: not
    stratified), and both whether a ground atom may depend on its own negation."""
    game = tmp_path / "robot.gdl"
    game.write_text(ROBOT.replace("goal(robot,0) :- ~goal(robot,100)", rule), encoding="utf-8")
    main(["check", str(game)])
    (finding,) = [line for line in capsys.readouterr().out.splitlines() if "stratified" in line]
    assert f"{severity}: {NOT_STRATIFIED}, {ground}" in finding
    for form in ("dot", "mermaid"):
        assert main(["graph", str(game), "--format", form]) == 0
        out = capsys.readouterr().out
        assert f"no strata: {NOT_STRATIFIED}, drawn in red, {ground}" in out


def test_mermaid_classes(capsys) -> None:
    assert main(["graph", BUTTONS, "--format", "mermaid"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("flowchart BT")
    assert "class " in out and "keyword" in out


def test_svg_without_graphviz_says_so(capsys, monkeypatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert main(["graph", BUTTONS, "--format", "svg"]) == 2
    err = capsys.readouterr().err
    assert "needs Graphviz's dot program" in err and "apt-get install graphviz" in err


def test_svg_with_graphviz(capsys) -> None:
    require_program("dot")
    assert main(["graph", BUTTONS, "--format", "svg"]) == 0
    assert "<svg" in capsys.readouterr().out


def test_a_graph_too_large_to_draw_says_so_and_offers_the_text(tmp_path, capsys) -> None:
    require_program("dot")
    game = tmp_path / "layers.kif"
    game.write_text(layered_game(400))  # 2,384 edges: dot ran to its 60 s timeout
    assert main(["graph", str(game), "--format", "svg"]) == 2  # as for a missing dot
    err = capsys.readouterr().err
    assert "the graph is too large to draw" in err and "--format dot" in err
    assert "internal error" not in err
    assert main(["graph", str(game), "--format", "mermaid"]) == 0  # the offered text form


def test_a_drawing_past_its_time_is_stopped_with_its_dot_process() -> None:
    dot = require_program("dot")
    from gdl2pl.analysis.relgraph import relation_graph
    from gdl2pl.analysis.relgraph import to_svg
    from gdl2pl.drawing import GraphTooLargeError
    from gdl2pl.kif import parse_kif

    # 585 edges: about a second of layout on a quiet machine, far more than 20 ms
    g = relation_graph(parse_kif(layered_game(100)))
    with pytest.raises(GraphTooLargeError, match=r"took longer than 0\.02 seconds"):
        to_svg(g, dot, seconds=0.02)
    children = Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children")
    if children.exists():  # Linux: no dot left running
        names = [Path(f"/proc/{c}/comm").read_text().strip() for c in children.read_text().split()]
        assert "dot" not in names


def test_drawings_wait_for_a_free_dot_within_their_time() -> None:
    dot = require_program("dot")
    from gdl2pl import drawing

    taken = 0
    while drawing._dot_slots.acquire(blocking=False):  # every dot busy
        taken += 1
    try:
        assert taken == drawing.DOT_AT_ONCE
        with pytest.raises(drawing.GraphTooLargeError, match="too large to draw"):
            drawing.svg_of_dot("digraph { a -> b; }", dot, seconds=0.2)
    finally:
        for _ in range(taken):
            drawing._dot_slots.release()
    assert "<svg" in drawing.svg_of_dot("digraph { a -> b; }", dot, seconds=20)


# -- model ------------------------------------------------------------------------------


@pytest.fixture
def prolog() -> None:
    require_prolog()


def model_json(capsys, *argv: str) -> dict:
    assert main(["model", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_open_program_outputs(capsys, prolog) -> None:
    program = str(GAMES / "open_program.kif")
    out1 = model_json(capsys, program, "--input", str(GAMES / "open_input1.kif"))
    out2 = model_json(capsys, program, "--input", str(GAMES / "open_input2.kif"))
    assert out1 == {"r": ["(r a b)"]}
    assert out2 == {"r": ["(r a b)", "(r b b)"]}


def test_closed_program_whole_model(capsys, prolog) -> None:
    m = model_json(capsys, BUTTONS)
    assert m["succ"][:2] == ["(succ 0 1)", "(succ 1 2)"]
    assert m["legal"] == ["(legal robot a)", "(legal robot b)", "(legal robot c)"]
    assert m["goal"] == ["(goal robot 0)"]  # no light is on without a state
    assert m["terminal"] == [] and m["allOn"] == []


def test_game_state_as_input(capsys, prolog) -> None:
    state = "((cell 1 1 x) (cell 1 2 x) (cell 1 3 x) (control oplayer))"
    m = model_json(capsys, TICTACTOE, "--state", state)
    assert "true" not in m and "does" not in m  # input relations are not output
    assert m["terminal"] == ["terminal"]
    assert m["goal"] == ["(goal oplayer 0)", "(goal xplayer 100)"]
    assert m["line"] == ["(line x)"]


def test_game_moves_give_does(tmp_path, capsys, prolog) -> None:
    moves = tmp_path / "m.jsonl"
    moves.write_text('["(mark 2 2)", "noop"]\n')
    m = model_json(capsys, TICTACTOE, "--moves", str(moves))
    assert "(next (cell 2 2 x))" in m["next"] and "(next (control oplayer))" in m["next"]


def test_text_output(capsys, prolog) -> None:
    program = str(GAMES / "open_program.kif")
    assert main(["model", program, "--input", str(GAMES / "open_input1.kif")]) == 0
    assert capsys.readouterr().out == "% r/2: 1 atom\n(r a b)\n"


def test_herbrand(capsys) -> None:
    program = str(GAMES / "open_program.kif")
    h = model_json(capsys, program, "--input", str(GAMES / "open_input1.kif"), "--herbrand")
    assert h["universe"] == ["a", "b"] and h["universe_size"] == 2
    assert h["base_size"] == 2**2 + 2**2 + 2  # binary r and p, unary q, over {a, b}
    assert "(q b)" in h["base"] and "(r b a)" in h["base"] and len(h["base"]) == 10
    inf = model_json(capsys, TICTACTOE, "--herbrand")
    assert inf["universe_size"] is None and "cell/3" in inf["function_constants"]


def test_unsafe_named(capsys) -> None:
    assert main(["model", str(GAMES / "unsafe.kif")]) == 2
    err = capsys.readouterr().err
    assert "unsafe.kif:3:" in err and "Traceback" not in err


def test_input_facts_must_be_input_relations(tmp_path, capsys) -> None:
    facts = tmp_path / "in.kif"
    facts.write_text("(p a b)\n(r a a)\n")
    assert main(["model", str(GAMES / "open_program.kif"), "--input", str(facts)]) == 2
    err = capsys.readouterr().err
    assert "in.kif:2" in err and "not an atom of an input relation" in err


def test_state_on_a_non_game(capsys) -> None:
    argv = ["model", str(GAMES / "open_program.kif"), "--state", "((a))"]
    assert main(argv) == 2
    assert "not a game" in capsys.readouterr().err


def test_named_inputs(tmp_path, capsys, prolog) -> None:
    program = tmp_path / "prog.kif"
    program.write_text("(p a) (p b)\n(<= (r ?x) (p ?x) (not (q ?x)))\n")
    facts = tmp_path / "in.kif"
    facts.write_text("(p c) (q a)\n")
    # p has facts in the program, so it is an input only when named; the output is that
    # of the program with the input model: (p a) (p b) (p c), (q a)
    m = model_json(capsys, str(program), "--inputs", "p", "--input", str(facts))
    assert m == {"r": ["(r b)", "(r c)"]}
    assert main(["model", str(program), "--inputs", "r"]) == 2
    assert "defined by a rule" in capsys.readouterr().err
    assert main(["model", str(program), "--inputs", "nosuch"]) == 2
    assert "no relation named nosuch" in capsys.readouterr().err
