"""KIF reading as users rely on it: comments, CRLF, keyword case, wrapped descriptions, error
positions, and every public game of the GGP repository."""

from __future__ import annotations

import pytest
from conftest import shared_dir
from conftest import shared_files

from gdl2pl.errors import GdlSyntaxError
from gdl2pl.kif import kif_term
from gdl2pl.kif import parse_kif
from gdl2pl.kif import parse_kif_term
from gdl2pl.kif import print_kif
from gdl2pl.load import read_game
from gdl2pl.load import read_text
from gdl2pl.normalize import normalize_case
from gdl2pl.syntax import And
from gdl2pl.syntax import Const
from gdl2pl.syntax import Distinct
from gdl2pl.syntax import Fact
from gdl2pl.syntax import Func
from gdl2pl.syntax import Not
from gdl2pl.syntax import Or
from gdl2pl.syntax import Rule
from gdl2pl.syntax import Var


def test_facts_rules_and_variables() -> None:
    d = parse_kif("(role white)\n(<= (legal ?p noop) (role ?p) (true (control ?q)))")
    assert d.clauses[0] == Fact(Func("role", (Const("white"),)))
    rule = d.clauses[1]
    assert isinstance(rule, Rule)
    assert rule.head == Func("legal", (Var("p"), Const("noop")))
    assert rule.body[1] == Func("true", (Func("control", (Var("q"),)),))


def test_comments_anywhere_and_at_end_of_file_without_newline() -> None:
    d = parse_kif("; heading\n(role x) ; after a clause\n(<= terminal ; inside\n (true p)) ;; last")
    assert [type(c) for c in d.clauses] == [Fact, Rule]
    assert d.clauses[1].body == (Func("true", (Const("p"),)),)
    assert parse_kif(";;;").clauses == ()


def test_crlf_line_endings_give_the_same_clauses_and_right_lines() -> None:
    unix = "(role x)\n(<= terminal\n    (true p))\n"
    d = parse_kif(unix.replace("\n", "\r\n"))
    assert d == parse_kif(unix)
    assert d.clauses[1].body[0].pos.line == 3
    assert d.clauses[1].body[0].pos.column == 5


def test_connectives_in_any_case() -> None:
    d = parse_kif("(<= (P ?X) (Q ?X) (NOT (R ?X)) (DISTINCT ?X a) (Or (s) (t)) (AND (u)))")
    body = d.clauses[0].body
    assert isinstance(body[1], Not)
    assert isinstance(body[2], Distinct)
    assert isinstance(body[3], Or) and len(body[3].disjuncts) == 2
    assert isinstance(body[4], And)


def test_uppercase_keywords_are_one_symbol_with_lowercase_after_normalizing() -> None:
    d = parse_kif("(ROLE white) (<= (LEGAL white noop) (TRUE (Control white)))")
    assert d.clauses[0].head.name == "ROLE"  # kept as written by the reader
    n = normalize_case(d)
    assert n == parse_kif("(role white) (<= (legal white noop) (true (Control white)))")


def test_description_wrapped_in_one_pair_of_parentheses() -> None:
    plain = "(role x) (<= terminal (true p)) (init p)"
    assert parse_kif("(" + plain + ")") == parse_kif(plain)
    assert len(parse_kif("((role x))").clauses) == 1


def test_empty_or_parses_so_that_the_checker_can_flag_it() -> None:
    (rule,) = parse_kif("(<= (legal you bar) (role you) (or ))").clauses
    assert rule.body[1] == Or(())
    assert rule.body[1].pos.column == 32


def test_empty_body_rule_parses() -> None:
    assert parse_kif("(<= (p a))").clauses == (Rule(Func("p", (Const("a"),)), ()),)


def error_of(text: str, file: str | None = "g.kif") -> GdlSyntaxError:
    with pytest.raises(GdlSyntaxError) as info:
        parse_kif(text, file)
    return info.value


def test_lone_question_mark_is_an_error_with_its_position() -> None:
    e = error_of("(role x)\n(<= (p ?x) (q ? ))")
    assert (e.file, e.line, e.column) == ("g.kif", 2, 15)
    assert "?" in e.message
    assert str(e).startswith("g.kif:2:15: ")
    assert e.excerpt.splitlines()[1] == " " * 14 + "^"


@pytest.mark.parametrize(
    ("text", "line", "column"),
    [
        ("(role x))", 1, 9),  # the stray ')'
        ("(role x)\n(<= (p ?x)\n  (q ?x)", 2, 1),  # the '(' left open
        ("(role x)\n(<= (p ?x) (q (r ?x))", 2, 1),
        ("0123(5;(8\n01)345)", 2, 7),  # after a comment that hides a '('
    ],
)
def test_unbalanced_parentheses_report_where(text: str, line: int, column: int) -> None:
    e = error_of(text)
    assert (e.line, e.column) == (line, column)
    assert "unbalanced" in e.message


def test_conformance_bad_parens_files_fail_at_the_validator_positions() -> None:
    folder = shared_dir() / "games" / "conformance" / "gdl-validation"
    # ValidatorTest.java.txt gives 0-based offsets 4, 8, 16 (LF), 3 and 2.
    expected = {1: (1, 5), 2: (1, 9), 3: (2, 7), 4: (1, 4), 5: (1, 3)}
    for n, (line, column) in expected.items():
        path = folder / f"badparens{n}.kif"
        with pytest.raises(GdlSyntaxError) as info:
            parse_kif(read_text(path).replace("\r\n", "\n"), str(path))
        assert (info.value.line, info.value.column) == (line, column), path.name


def test_variables_are_not_names() -> None:
    assert "variable" in error_of("(?x a)").message
    assert "variable" in error_of("(<= (p) (?r a))").message


def test_term_reading_and_printing() -> None:
    t = parse_kif_term("(mark 1 ?y)")
    assert t == Func("mark", (Const("1"), Var("y")))
    assert kif_term(t) == "(mark 1 ?y)"
    with pytest.raises(GdlSyntaxError):
        parse_kif_term("a b")


def test_numerals_are_kept_as_text() -> None:
    assert parse_kif("(p 01)").clauses[0].head.args[0] == Const("01")


REPOSITORY = shared_files("games/ggp-repository", "*.kif")


def test_repository_corpus_is_present() -> None:
    shared_dir()
    assert len(REPOSITORY) > 300


@pytest.mark.parametrize("name", REPOSITORY)
def test_every_repository_game_parses_and_round_trips(name: str) -> None:
    path = shared_dir() / name
    d = read_game(path, syntax="kif")
    assert d.clauses, "a game without clauses"
    assert any(isinstance(c.head, Func) and c.head.name.lower() == "role" for c in d.clauses)
    again = parse_kif(print_kif(d))
    assert again == d
