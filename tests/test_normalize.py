"""Case-insensitive symbols: one spelling per symbol, keywords in lowercase, variables per
clause, and the example games equal in both syntaxes once normalized."""

from __future__ import annotations

import pytest
from conftest import EXAMPLES
from conftest import canonical_variables
from conftest import shared_dir
from conftest import shared_files
from hypothesis import given
from hypothesis import strategies as st

from gdl2pl.infix import parse_infix
from gdl2pl.kif import parse_kif
from gdl2pl.kif import parse_kif_term
from gdl2pl.kif import print_kif
from gdl2pl.load import read_game
from gdl2pl.normalize import KEYWORDS
from gdl2pl.normalize import SymbolTable
from gdl2pl.normalize import fold
from gdl2pl.normalize import normalize_case
from gdl2pl.normalize import symbol_table
from gdl2pl.syntax import Const
from gdl2pl.syntax import Description
from gdl2pl.syntax import Func
from gdl2pl.syntax import Rule
from gdl2pl.syntax import Var


def test_first_spelling_wins_for_every_symbol() -> None:
    d = parse_kif("(Cell 1 B) (<= (p ?x) (CELL ?x b) (cell ?x Foo)) (foo)")
    n = normalize_case(d)
    assert n == parse_kif("(Cell 1 B) (<= (p ?x) (Cell ?x B) (Cell ?x Foo)) (Foo)")


def test_constants_functions_and_relations_share_one_namespace() -> None:
    n = normalize_case(parse_kif("(p Mark) (<= (mark ?x) (p ?x))"))
    assert n.clauses[1].head.name == "Mark"


def test_keywords_are_lowercase_wherever_and_however_they_appear() -> None:
    d = parse_kif("(ROLE White) (Init (Control WHITE)) (<= TERMINAL (True (DOES x)) (NEXT))")
    n = normalize_case(d)
    assert n == parse_kif(
        "(role White) (init (Control White)) (<= terminal (true (does x)) (next))"
    )
    assert all(k == k.lower() for k in KEYWORDS)


def test_variables_take_their_first_spelling_within_each_clause() -> None:
    d = parse_kif("(<= (p ?X) (q ?x ?Y) (not (r ?y))) (<= (s ?x) (t ?X))")
    n = normalize_case(d)
    first, second = n.clauses
    assert isinstance(first, Rule) and isinstance(second, Rule)
    assert first == parse_kif("(<= (p ?X) (q ?X ?Y) (not (r ?Y)))").clauses[0]
    assert second.head == Func("s", (Var("x"),))  # its own clause: its own first spelling
    assert second.body[0] == Func("t", (Var("x"),))


def test_connectives_inside_are_respelled_too() -> None:
    d = parse_kif("(<= (p) (OR (Q a) (and (q A) (distinct A b))) (not (Q b)))")
    n = normalize_case(d)
    assert print_kif(n) == "(<= (p)\n    (or (Q a) (and (Q a) (distinct a b)))\n    (not (Q b)))\n"


def test_normalizing_is_pure_and_keeps_positions() -> None:
    text = "(ROLE x)\n(<= (P ?A) (p ?a))"
    d = parse_kif(text, "g.kif")
    before = print_kif(d)
    n = normalize_case(d)
    assert print_kif(d) == before  # the input is untouched
    assert n.clauses[1].body[0].pos == d.clauses[1].body[0].pos
    assert n.clauses[1].body[0].pos.line == 2
    assert n.source == text


def test_symbol_table_maps_outside_names_to_the_game_spelling() -> None:
    table = symbol_table(parse_kif("(role xPlayer) (<= (legal xPlayer (Mark ?x)) (index ?x))"))
    move = table.term(parse_kif_term("(MARK 1 ?y)"))
    assert move == Func("Mark", (Const("1"), Var("y")))
    assert table.spelling("XPLAYER") == "xPlayer"
    assert table.spelling("LEGAL") == "legal"
    assert table.spelling("unknown") == "unknown"
    assert "MARK" in table and "nothing" not in table and 5 not in table
    assert len(table) == 5
    assert SymbolTable({"a": "A"}).spelling("a") == "A"
    with pytest.raises(TypeError):
        table.spellings["x"] = "y"  # type: ignore[index]


def test_fold_is_casefold() -> None:
    assert fold("CELL") == fold("cell") == "cell"
    assert fold("STRASSE") == fold("straße")


@pytest.mark.parametrize("game", ["ticTacToe", "buttons", "matchingPennies", "montyHall"])
def test_example_games_are_the_same_in_both_syntaxes(game: str) -> None:
    kif = normalize_case(read_game(EXAMPLES / f"{game}.kif"))
    infix = normalize_case(read_game(EXAMPLES / f"{game}.gdl"))
    assert len(kif.clauses) > 10
    assert canonical_variables(kif) == canonical_variables(infix)
    # the comparison can fail: one clause less, or one symbol changed, breaks it
    assert canonical_variables(Description(infix.clauses[:-1])) != canonical_variables(kif)
    text = (EXAMPLES / f"{game}.gdl").read_text(encoding="utf-8")
    changed = normalize_case(parse_infix(text.replace("robot", "droid").replace("oplayer", "o")))
    if game in ("ticTacToe", "buttons"):
        assert canonical_variables(changed) != canonical_variables(kif)


names = st.sampled_from(["cell", "CELL", "Cell", "mark", "MARK", "role", "ROLE", "x", "X"])


@given(st.lists(st.tuples(names, names), min_size=1, max_size=8))
def test_one_spelling_per_symbol_and_idempotent(pairs: list[tuple[str, str]]) -> None:
    d = Description(tuple(parse_kif(f"({a} {b})").clauses[0] for a, b in pairs))
    n = normalize_case(d)
    seen: dict[str, str] = {}
    for c in n.clauses:
        for name in (c.head.name, c.head.args[0].name):
            assert seen.setdefault(fold(name), name) == name
            if fold(name) in KEYWORDS:
                assert name == fold(name)
    assert normalize_case(n) == n
    for before, after in zip(d.clauses, n.clauses, strict=True):  # only the spelling changes
        assert fold(print_kif(Description((before,)))) == fold(print_kif(Description((after,))))


CORPUS = shared_files("games/ggp-repository", "*.kif")[::10]


@pytest.mark.parametrize("name", CORPUS)
def test_normalizing_public_games_is_idempotent(name: str) -> None:
    d = read_game(shared_dir() / name, syntax="kif")
    n = normalize_case(d)
    assert normalize_case(n) == n
    assert len(n.clauses) == len(d.clauses)
