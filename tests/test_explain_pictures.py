"""gdl2pl explain --format dot | mermaid | svg: proof trees as pictures, with every name
of a hostile game shown as text."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import example
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from prolog_env import require_prolog
from test_analysis_graph_model import require_program

from gdl2pl.cli import main
from gdl2pl.drawing import dot_string
from gdl2pl.drawing import svg_of_dot

ROOT = Path(__file__).resolve().parents[1]
TICTACTOE = str(ROOT / "gdl2pl/examples/ticTacToe.kif")
MOVES = str(ROOT / "tests/games/analysis/ttt_moves.jsonl")
SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = 'x"]#[<b>&amp;\\\\'  # as written in infix: x"]#[<b>&amp;\ once read


@pytest.fixture
def hostile_game(tmp_path: Path) -> str:
    path = tmp_path / "hostile.gdl"
    path.write_text(
        f"role(r)\ninit(c)\nlegal(r, go)\nnext(c) :- '{HOSTILE}' & ~'--> }}'\n"
        f"'{HOSTILE}' :- true(c)\nterminal :- true(d)\ngoal(r, 0) :- true(c)\n",
        encoding="utf-8",
    )
    return str(path)


def picture(capsys, *argv: str) -> tuple[int, str]:
    require_prolog()
    status = main(["explain", *argv])
    return status, capsys.readouterr().out


def svg_texts(svg: str) -> list[str]:
    root = ET.fromstring(svg)  # raises if it is not well-formed XML
    assert root.tag == f"{SVG}svg"
    return [t.text or "" for t in root.iter(f"{SVG}text")]


def test_dot_proof_tree(capsys) -> None:
    status, dot = picture(capsys, TICTACTOE, "(legal xplayer (mark 2 2))", "--format", "dot")
    assert status == 0
    assert dot.startswith('digraph "explanation" {')
    root = next(line for line in dot.splitlines() if line.startswith("  n0 ["))
    assert '[label="(legal xplayer (mark 2 2)) holds\\nby rule ' in root
    assert "ticTacToe.kif:23:1\\n(<= (legal ?r (mark ?m ?n))" in root
    assert 'fillcolor="#d1e7dd"' in root  # holds: green
    assert '  n0 -> n1 [label="1"];' in dot and '  n0 -> n2 [label="2"];' in dot
    assert 'n2 [label="(true (cell 2 2 b)) holds: in the state"' in dot


def test_mermaid_marks_failures(capsys) -> None:
    argv = [TICTACTOE, "terminal", "--moves", MOVES, "--depth", "1", "--format", "mermaid"]
    status, out = picture(capsys, *argv)
    assert status == 1  # terminal does not hold, as with text
    lines = out.splitlines()
    assert lines[0] == "flowchart TD"
    assert lines[1] == '  n0["terminal does not hold: no rule derives it"]'
    assert "ticTacToe.kif:55:1 fails at literal 1" in out
    assert "  class n0,n2,n4,n6 fails" in lines and "  class n1,n3,n5 attempt" in lines
    assert "  class n7,n8 holds" in lines
    assert "  n7 -- 1 --> n8" in lines


def test_svg_is_xml_with_the_tree(capsys) -> None:
    require_program("dot")
    argv = [TICTACTOE, "terminal", "--moves", MOVES, "--depth", "1", "--format", "svg"]
    status, svg = picture(capsys, *argv)
    assert status == 1
    texts = svg_texts(svg)
    assert "terminal does not hold: no rule derives it" in texts
    assert "(true (cell 1 2 b)) holds: in the state" in texts


def test_svg_without_graphviz_says_so(capsys, monkeypatch) -> None:
    import shutil

    monkeypatch.setattr(shutil, "which", lambda name: None)
    require_prolog()
    assert main(["explain", TICTACTOE, "terminal", "--format", "svg"]) == 2
    assert "needs Graphviz's dot program" in capsys.readouterr().err


def test_hostile_names_in_dot_and_svg(capsys, hostile_game) -> None:
    require_program("dot")
    status, dot = picture(capsys, hostile_game, "(next c)", "--state", "(c)", "--format", "dot")
    assert status == 0
    for line in dot.splitlines()[3:-1]:  # every statement: ids, then quoted strings only
        rest = re.sub(r'"(?:[^"\\]|\\.)*"', "S", line)
        assert re.fullmatch(r"  n\d+( -> n\d+)?( \[[a-z]+=S(, [a-z]+=S)*\])?;", rest), line
    name = 'x"]#[<b>&amp;\\'  # the relation's name as the game defines it
    texts = svg_texts(svg_of_dot(dot))
    assert any(name.replace("\\", "\\\\") in t for t in texts)  # infix writes \ as \\
    assert "~'--> }' holds" in texts


def test_hostile_names_in_mermaid(capsys, hostile_game) -> None:
    argv = [hostile_game, "(next c)", "--state", "(c)", "--format", "mermaid"]
    status, out = picture(capsys, *argv)
    assert status == 0
    for line in out.splitlines()[1:]:
        label = re.fullmatch(r'  n\d+\["(.*)"\]', line)
        if label:
            text = label.group(1).replace("<br/>", "")
            assert re.fullmatch(r"(?:[A-Za-z0-9 _.,:()+\-]|#\d+;)*", text), line
    assert "#60;b#62;" in out and "<b>" not in out


@settings(max_examples=30, deadline=None)
@example('&lt;b&gt; "q" \\N\\n\n-->\x01\r]#[')
@given(
    st.text(
        st.characters(blacklist_categories=("Cs", "Zs", "Zl", "Zp"), whitelist_characters=" "),
        min_size=1,
        max_size=30,
    )
)
def test_dot_string_shows_any_text(text: str) -> None:
    """Any text, as a DOT label, gives well-formed SVG that shows it (line breaks as
    separate lines, control characters as \\xNN)."""
    require_program("dot")
    svg = svg_of_dot(f"digraph g {{ a [label={dot_string(text)}]; }}")
    shown = "".join(svg_texts(svg)).replace(" ", "")
    expected = re.sub(
        r"[\x00-\x09\x0b\x0c\x0e-\x1f\x7f]", lambda m: f"\\x{ord(m.group()):02x}", text
    )
    expected = re.sub(r"[ \n\r]", "", expected)  # spaces and line breaks aside
    assert shown == expected
