"""The translation of the project's tic-tac-toe, compared with a file kept in the repository:
any change to the generated Prolog shows up here and is reviewed as a diff."""

from __future__ import annotations

from pathlib import Path

from gdl2pl.pipeline import compile_game

HERE = Path(__file__).resolve().parent
GAME = HERE.parent / "gdl2pl" / "examples" / "ticTacToe.kif"
GOLDEN = HERE / "golden" / "ticTacToe.pl.expected"


def test_tic_tac_toe_translates_to_the_golden_file() -> None:
    text = compile_game(GAME).translation.text
    expected = GOLDEN.read_text(encoding="utf-8")
    assert text == expected, (
        "the translation of gdl2pl/examples/ticTacToe.kif differs from tests/golden/"
        "ticTacToe.pl; if the change is intended, regenerate it with\n"
        "    gdl2pl translate gdl2pl/examples/ticTacToe.kif > tests/golden/ticTacToe.pl.expected\n"
        "and review the diff"
    )


def test_the_golden_file_explains_itself() -> None:
    text = GOLDEN.read_text(encoding="utf-8")
    for phrase in ("set_module(base(system))", "class(temporary)", "static_r", "true_/1"):
        assert phrase in text.split(":- module(")[0], phrase
