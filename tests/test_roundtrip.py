"""Printing then parsing gives back what was printed: exactly for KIF and for infix-born
descriptions, and up to a renaming of variables for KIF-born descriptions written in infix.
Random descriptions (hypothesis), the public games, and the ``convert`` command."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import EXAMPLES
from conftest import canonical_variables
from conftest import shared_dir
from conftest import shared_files
from hypothesis import given
from hypothesis import strategies as st

from gdl2pl.cli import main
from gdl2pl.errors import GdlSyntaxError
from gdl2pl.infix import parse_infix
from gdl2pl.infix import print_infix
from gdl2pl.kif import parse_kif
from gdl2pl.kif import print_kif
from gdl2pl.load import read_game
from gdl2pl.normalize import normalize_case
from gdl2pl.syntax import And
from gdl2pl.syntax import Clause
from gdl2pl.syntax import Const
from gdl2pl.syntax import Description
from gdl2pl.syntax import Distinct
from gdl2pl.syntax import Fact
from gdl2pl.syntax import Func
from gdl2pl.syntax import Literal
from gdl2pl.syntax import Not
from gdl2pl.syntax import Or
from gdl2pl.syntax import Rule
from gdl2pl.syntax import Term
from gdl2pl.syntax import Var
from gdl2pl.vocabulary import CONNECTIVES

# -- random descriptions ------------------------------------------------------------------------


def descriptions(
    names: st.SearchStrategy[str],
    var_names: st.SearchStrategy[str],
    relation_names: st.SearchStrategy[str],
) -> st.SearchStrategy[Description]:
    """Random descriptions; ``relation_names`` name the sentences that are body literals."""
    terms: st.SearchStrategy[Term] = st.recursive(
        st.builds(Const, names) | st.builds(Var, var_names),
        lambda inner: st.builds(Func, names, st.lists(inner, max_size=3).map(tuple)),
        max_leaves=5,
    )
    args = st.lists(terms, max_size=3).map(tuple)
    heads = st.builds(Const, names) | st.builds(Func, names, args)
    atoms = (
        st.builds(Const, names)
        | st.builds(Func, relation_names, args)
        | st.builds(Distinct, terms, terms)
    )
    literals: st.SearchStrategy[Literal] = st.recursive(
        atoms,
        lambda inner: (
            st.builds(Not, inner)
            | st.builds(Or, st.lists(inner, max_size=3).map(tuple))
            | st.builds(And, st.lists(inner, max_size=3).map(tuple))
        ),
        max_leaves=6,
    )
    clauses: st.SearchStrategy[Clause] = st.builds(Fact, heads) | st.builds(
        Rule, heads, st.lists(literals, max_size=4).map(tuple)
    )
    return st.lists(clauses, max_size=5).map(lambda cs: Description(tuple(cs)))


def text_without(forbidden: str, min_size: int = 1) -> st.SearchStrategy[str]:
    # lone surrogates and NUL are no characters a game text may hold (source.py)
    chars = st.characters(
        exclude_categories=("Cs",),
        exclude_characters=forbidden + "\x00",
    )
    return st.text(chars, min_size=min_size, max_size=6)


# Infix: bare or quotable names (anything without a line break), valid variable names.
INFIX_NAMES = st.from_regex(r"[a-z0-9][A-Za-z0-9_]{0,4}", fullmatch=True) | text_without("\r\n")
INFIX_VARS = st.from_regex(r"[A-Z_][A-Za-z0-9_]{0,4}", fullmatch=True)
INFIX = descriptions(INFIX_NAMES, INFIX_VARS, INFIX_NAMES | st.just("distinct"))

# KIF: symbols have no white space, parentheses or ';'; names do not start with '?' and are not
# '<='; a body sentence is not named like a connective (KIF would read it as one).
_KIF_CHARS = "".join(chr(c) for c in range(0x110000) if chr(c).isspace()) + "();"
KIF_NAMES = st.from_regex(r"[a-z0-9][a-z0-9+\-*<>=]{0,4}", fullmatch=True) | text_without(
    _KIF_CHARS
).filter(lambda s: not s.startswith("?") and s != "<=")
KIF_VARS = text_without(_KIF_CHARS)
KIF = descriptions(KIF_NAMES, KIF_VARS, KIF_NAMES.filter(lambda s: s.lower() not in CONNECTIVES))


@given(INFIX)
def test_infix_print_then_parse_is_identity(d: Description) -> None:
    assert parse_infix(print_infix(d)) == d


@given(KIF)
def test_kif_print_then_parse_is_identity(d: Description) -> None:
    assert parse_kif(print_kif(d)) == d


@given(KIF)
def test_kif_born_descriptions_survive_infix_up_to_variable_names(d: Description) -> None:
    assert canonical_variables(parse_infix(print_infix(d))) == canonical_variables(d)


def test_the_variable_comparison_can_fail() -> None:
    a = parse_kif("(<= (p ?x ?y) (q ?x ?y))")
    assert canonical_variables(a) == canonical_variables(parse_infix("p(A,B) :- q(A,B)"))
    assert canonical_variables(a) != canonical_variables(parse_infix("p(A,B) :- q(B,A)"))
    assert canonical_variables(a) != canonical_variables(parse_infix("p(A,A) :- q(A,A)"))


# -- the public games ---------------------------------------------------------------------------

ALL_KIF = shared_files("games", "**/*.kif")
CONFORMANCE = shared_files("games/conformance", "**/*.kif")  # test_kif does ggp-repository
BAD_ON_PURPOSE = {"badparens1", "badparens2", "badparens3", "badparens4", "badparens5"}


@pytest.mark.parametrize("name", CONFORMANCE)
def test_conformance_games_round_trip_through_kif(name: str) -> None:
    path = shared_dir() / name
    if path.stem in BAD_ON_PURPOSE:
        with pytest.raises(GdlSyntaxError):
            read_game(path)
        return
    d = read_game(path)
    assert parse_kif(print_kif(d)) == d


WELL_FORMED_KIF = [n for n in ALL_KIF if Path(n).stem not in BAD_ON_PURPOSE]


@pytest.mark.parametrize("name", WELL_FORMED_KIF[::3])
def test_public_games_survive_infix_up_to_variable_names(name: str) -> None:
    path = shared_dir() / name
    d = read_game(path)
    again = parse_infix(print_infix(d), name)
    assert canonical_variables(again) == canonical_variables(d)


# -- the convert command -------------------------------------------------------------------------


@pytest.mark.parametrize("game", ["ticTacToe", "buttons", "matchingPennies"])
def test_convert_examples_both_ways(game: str, capsys: pytest.CaptureFixture[str]) -> None:
    kif = normalize_case(read_game(EXAMPLES / f"{game}.kif"))
    assert main(["convert", "--to", "infix", str(EXAMPLES / f"{game}.kif")]) == 0
    out = capsys.readouterr().out
    assert canonical_variables(parse_infix(out)) == canonical_variables(kif)
    assert main(["convert", "--to", "kif", "--syntax", "infix", str(EXAMPLES / f"{game}.gdl")]) == 0
    out = capsys.readouterr().out
    assert canonical_variables(parse_kif(out)) == canonical_variables(kif)


def test_convert_spells_each_symbol_one_way(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    game = tmp_path / "g.kif"
    game.write_text("(ROLE Robot) (<= (LEGAL robot (PRESS ?b)) (button ?B))\n", encoding="utf-8")
    assert main(["convert", "--to", "infix", str(game)]) == 0
    assert capsys.readouterr().out == "role('Robot')\n\nlegal('Robot','PRESS'(B)) :- button(B)\n"


def test_convert_reports_syntax_errors_without_traceback(
    tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    game = tmp_path / "bad.gdl"
    game.write_text("role(x)\nlegal(x,noop) :- true(p) &\n", encoding="utf-8")
    assert main(["convert", "--to", "kif", str(game)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    first, excerpt, caret = captured.err.splitlines()
    assert first == f"{game}:2:27: error: expected a literal, found end of input"
    assert excerpt == "legal(x,noop) :- true(p) &" and caret == " " * 26 + "^"
    assert "Traceback" not in captured.err


def test_convert_reports_io_errors(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "missing.kif"
    assert main(["convert", "--to", "infix", str(missing)]) == 2
    err = capsys.readouterr().err
    assert str(missing) in err and "No such file" in err and "Traceback" not in err
    assert main(["convert", "--to", "infix", str(tmp_path)]) == 2
    assert "error" in capsys.readouterr().err
