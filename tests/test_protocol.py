"""The match protocol's messages (gdl2pl.ggp.protocol) and the scrambler (gdl2pl.ggp.scramble):
pure Python, no Prolog."""

from __future__ import annotations

import random

import pytest
from conftest import EXAMPLES

from gdl2pl.ggp.protocol import Abort
from gdl2pl.ggp.protocol import Info
from gdl2pl.ggp.protocol import Play
from gdl2pl.ggp.protocol import PlayII
from gdl2pl.ggp.protocol import Preview
from gdl2pl.ggp.protocol import ProtocolError
from gdl2pl.ggp.protocol import Start
from gdl2pl.ggp.protocol import Stop
from gdl2pl.ggp.protocol import format_info_reply
from gdl2pl.ggp.protocol import format_message
from gdl2pl.ggp.protocol import one_line_rules
from gdl2pl.ggp.protocol import parse_info_reply
from gdl2pl.ggp.protocol import parse_message
from gdl2pl.ggp.protocol import parse_move
from gdl2pl.ggp.scramble import CONNECTIVES
from gdl2pl.ggp.scramble import Scrambler
from gdl2pl.ggp.scramble import kept
from gdl2pl.kif import parse_kif
from gdl2pl.kif import parse_kif_term
from gdl2pl.load import read_game
from gdl2pl.syntax import Const
from gdl2pl.syntax import Func
from gdl2pl.syntax import Var

T = parse_kif_term


def test_start_as_ggp_base_sends_it() -> None:
    text = (
        "( START match.1 xplayer ( ( role xplayer ) ( role oplayer ) "
        "( <= ( legal ?r noop ) ( role ?r ) ) ) 30 15)"
    )
    msg = parse_message(text)
    assert isinstance(msg, Start)
    assert (msg.match_id, msg.role, msg.start_clock, msg.play_clock) == (
        "match.1",
        "xplayer",
        30,
        15,
    )
    assert parse_kif(msg.rules) == parse_kif(
        "(role xplayer) (role oplayer) (<= (legal ?r noop) (role ?r))"
    )


def test_start_rules_over_several_lines_with_comments() -> None:
    msg = parse_message("(start m r (\n(role r) ; the role\n(init p)\r\n) 1 2)")
    assert isinstance(msg, Start)
    assert len(parse_kif(msg.rules).clauses) == 2


def test_keywords_in_any_case_and_nil() -> None:
    assert parse_message("(INFO)") == Info()
    assert parse_message("  ( Play  m1  NIL ) ") == Play("m1", None)
    assert parse_message("(stop m1 nil)") == Stop("m1", None)
    assert parse_message("(ABORT m1)") == Abort("m1")
    assert parse_message("(preview ((role a)) 5)") == Preview("(role a)", 5)


def test_play_moves_are_terms_in_role_order() -> None:
    msg = parse_message("(play m ((mark 1 2) noop))")
    assert msg == Play("m", (Func("mark", (Const("1"), Const("2"))), Const("noop")))


def test_match_id_keeps_its_case() -> None:
    assert parse_message("(abort Match.ABC)") == Abort("Match.ABC")


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty"),
        ("(play m nil", "truncated"),
        ("(play m nil))", "unbalanced"),
        ("(dance m)", "unknown message"),
        ("(play m)", "takes 2"),
        ("(abort)", "takes 1"),
        ("(start m r ((role r)) ten 5)", "whole number"),
        ("(start m r role 10 5)", "rules must be a list"),
        ("(start m (r) ((role r)) 10 5)", "role must be a symbol"),
        ("(play m (?x))", "variable"),
        ("(play m yes)", "nil or a list"),
        ("(info) (info)", "one message"),
        ("hello", "a message is a list"),
        ("((play) m nil)", "keyword"),
    ],
)
def test_malformed_messages_say_why(text: str, fragment: str) -> None:
    with pytest.raises(ProtocolError, match=fragment):
        parse_message(text)


def test_extra_start_fields_are_tolerated() -> None:
    msg = parse_message("(start m r ((role r)) 10 5 extra)")
    assert isinstance(msg, Start) and msg.play_clock == 5


@pytest.mark.parametrize(
    "msg",
    [
        Info(),
        Start("m.1", "white", "(role white) (<= (legal white noop) (true p))", 10, 5),
        Play("m.1", None),
        Play("m.1", (T("(mark 1 1)"), T("noop"))),
        Stop("m.1", (T("(move a (b c))"),)),
        Abort("m.1"),
        Preview("(role a)", 3),
    ],
)
def test_format_then_parse_is_identity(msg: object) -> None:
    assert parse_message(format_message(msg)) == msg  # type: ignore[arg-type]


def test_one_line_rules_reparse_to_the_same_game() -> None:
    d = read_game(EXAMPLES / "ticTacToe.kif")
    text = one_line_rules(d)
    assert "\n" not in text
    assert parse_kif(text) == d


def test_move_replies() -> None:
    assert parse_move(" ( mark 1 1 ) \n") == T("(mark 1 1)")
    assert parse_move("noop") == Const("noop")
    for bad in ("", "(mark 1", "a b", "?x", "()"):
        with pytest.raises(ProtocolError):
            parse_move(bad)


def test_info_replies() -> None:
    assert format_info_reply("p1", "available") == "((name p1) (status available))"
    r = parse_info_reply("( ( name gamer ) ( status busy ) ( species alien ) )")
    assert (r.name, r.status, r.species, r.available) == ("gamer", "busy", "alien", False)
    assert parse_info_reply("READY").available
    assert parse_info_reply('{"name": "j", "status": "available"}').name == "j"
    assert parse_info_reply("(((").status == ""
    assert parse_info_reply('{"status": ').status == ""
    assert parse_info_reply("a b").status == ""


# -- scrambling ---------------------------------------------------------------------------


def _symbols(d: object) -> set[str]:
    """Every symbol and variable name in a description's KIF text."""
    from gdl2pl.kif import print_kif

    text = print_kif(d)  # type: ignore[arg-type]
    return set(text.replace("(", " ").replace(")", " ").split())


def test_scrambling_renames_everything_but_keywords_and_numbers() -> None:
    d = read_game(EXAMPLES / "ticTacToe.kif")
    s = Scrambler(random.Random(7))
    scrambled = s.description(d)
    before, after = _symbols(d), _symbols(scrambled)
    # the connectives in the text are syntax (Not, Distinct, Or nodes), not symbols
    survivors = {n for n in before & after if not kept(n) and n not in CONNECTIVES | {"<="}}
    assert survivors == set()
    assert {"role", "true", "legal", "1", "2", "3", "100"} <= after
    assert len(scrambled.clauses) == len(d.clauses)


def test_scrambling_is_consistent_case_insensitive_and_reversible() -> None:
    s = Scrambler(random.Random(1))
    a = s.term(T("(Cell 1 x)"))
    b = s.term(T("(cell 1 X)"))
    assert a == b and isinstance(a, Func) and a.args[0] == Const("1")
    assert s.unterm(a) == T("(Cell 1 x)")
    assert s.unterm(T(str(a).upper())) == T("(Cell 1 x)")  # players may change the case
    with pytest.raises(KeyError):
        s.unterm(T("(cell 1 x)"))  # the original names are not scrambled names


def test_scrambling_renames_variables_consistently() -> None:
    s = Scrambler(random.Random(3))
    d = s.description(parse_kif("(<= (p ?x ?Y) (q ?x) (r ?y))"))
    head, (q, r) = d.clauses[0].head, d.clauses[0].body  # type: ignore[union-attr]
    x, y = head.args
    assert isinstance(x, Var) and x.name != "x"
    assert q.args == (x,) and r.args == (y,) and x != y


def test_different_seeds_give_different_names() -> None:
    d = read_game(EXAMPLES / "ticTacToe.kif")
    assert Scrambler(random.Random(1)).description(d) != Scrambler(random.Random(2)).description(d)


# -- limits and log text (hostile input) -----------------------------------------------------


def test_nesting_beyond_the_limit_is_refused_without_recursion() -> None:
    from gdl2pl.ggp.protocol import MAX_DEPTH

    def nested(n: int) -> str:
        return "(f " * n + "a" + ")" * n

    assert parse_move(nested(MAX_DEPTH)) is not None
    with pytest.raises(ProtocolError, match=f"nested deeper than {MAX_DEPTH} lists"):
        parse_move(nested(MAX_DEPTH + 1))
    with pytest.raises(ProtocolError, match="nested deeper"):
        parse_message("(play m (" + nested(MAX_DEPTH + 1) + "))")
    # far beyond Python's recursion limit (and MAX_PLAY: in the rules of a start)
    with pytest.raises(ProtocolError, match="nested deeper"):
        parse_message("(start m r ((role " + nested(100_000) + ")) 10 5)")
    assert parse_info_reply("(" * 100_000).status == ""


def test_sizes_beyond_the_limits_are_refused() -> None:
    from gdl2pl.ggp.protocol import MAX_MESSAGE
    from gdl2pl.ggp.protocol import MAX_MOVE

    with pytest.raises(ProtocolError, match=f"at most {MAX_MOVE}"):
        parse_move("(mark " + "1" * MAX_MOVE + ")")
    with pytest.raises(ProtocolError, match=f"at most {MAX_MESSAGE}"):
        parse_message("(info" + " " * MAX_MESSAGE + ")")


def test_play_and_stop_messages_have_a_limit_of_their_own() -> None:
    """A play must be read and answered within a play clock: one of megabytes took
    seconds just to read. Its keyword is found by a scan (white space, comments, one
    parenthesis), so the check costs nothing whatever comes before it."""
    from gdl2pl.ggp.protocol import MAX_PLAY

    with pytest.raises(ProtocolError, match=f"a play message is at most {MAX_PLAY} characters"):
        parse_message("(play m 1 a (" + "(p)" * MAX_PLAY + "))")
    with pytest.raises(ProtocolError, match=f"a stop message is at most {MAX_PLAY} characters"):
        parse_message(" ; a comment\n ( STOP m nil" + " " * MAX_PLAY + ")")
    assert isinstance(parse_message("(play m 1 a (" + "(p) " * 1000 + "))"), PlayII)
    # the other messages keep the larger limit: a start carries the rules
    assert isinstance(parse_message("(info" + " " * MAX_PLAY + ")"), Info)
    assert isinstance(parse_message(" " * 100_000 + ";" * 100_000 + "\n(info)"), Info)


def test_shown_escapes_what_could_forge_a_log_line() -> None:
    from gdl2pl.ggp.protocol import shown

    assert shown("a\\b") == "a\\\\b"  # a backslash is doubled: escapes stay unambiguous
    assert shown("a\nb\r\x1b[31m\x00") == "a\\x0ab\\x0d\\x1b[31m\\x00"
    assert shown("\u2028\U000e0001 \u00e9") == "\\u2028\\U000e0001 \u00e9"
    assert shown("x" * 10, 4) == "xxxx..."
    assert all(c.isprintable() for c in shown("".join(map(chr, range(0x2100)))))


def test_connective_names_used_as_symbols_are_scrambled() -> None:
    """Infix can quote 'distinct' or 'not' as ordinary names; KIF would read them back as
    the connectives, so the scrambler renames them like any symbol."""
    s = Scrambler(random.Random(2))
    t = Func("distinct", (Const("p"), Const("q"), Const("r")))
    out = s.term(t)
    assert isinstance(out, Func) and out.name not in CONNECTIVES
    assert s.term(Const("not")).name != "not" and s.term(Const("OR")).name != "OR"
    assert s.unterm(out) == t
    assert not kept("distinct") and kept("legal") and kept("Legal") and kept("100")


def test_quoted_infix_names_scramble_into_rules_that_parse_back() -> None:
    from pathlib import Path

    quoted = Path(__file__).parent / "games" / "network" / "quoted_names.gdl"
    games = [quoted, *EXAMPLES.glob("*.gdl")]
    for path in games:
        d = read_game(path)
        scrambled = Scrambler(random.Random(5)).description(d)
        text = one_line_rules(scrambled)
        assert parse_kif(text).clauses == scrambled.clauses, path
