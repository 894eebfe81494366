"""GDL-II in the front end: ``random``, ``sees`` and ``percept`` read in both syntaxes,
checked (with file:line:col for each error), translated one clause per rule, and a game
recognised as GDL-II while a plain game is not."""

from __future__ import annotations

import pytest
from conftest import EXAMPLES
from prolog_env import require_prolog

from gdl2pl.check import Finding
from gdl2pl.check import check_description
from gdl2pl.check import format_finding
from gdl2pl.infix import parse_infix
from gdl2pl.kif import parse_kif
from gdl2pl.load import read_game
from gdl2pl.pipeline import compile_game
from gdl2pl.translate import is_gdl_ii

#: A small valid GDL-II game: chance flips a coin, the guesser sees it only at the end.
COIN = """\
(role guesser)
(role random)
(side heads) (side tails)
(init (round 0))
(<= (legal random (flip ?s)) (true (round 0)) (side ?s))
(<= (legal guesser wait) (true (round 0)))
(<= (legal guesser (guess ?s)) (true (round 1)) (side ?s))
(<= (legal random wait) (true (round 1)))
(<= (next (coin ?s)) (does random (flip ?s)))
(<= (next (coin ?s)) (true (coin ?s)))
(<= (next (guessed ?s)) (does guesser (guess ?s)))
(<= (next (round 1)) (true (round 0)))
(<= (next (round 2)) (true (round 1)))
(<= (sees guesser (coin ?s)) (true (round 1)) (true (coin ?s)))
(<= (percept guesser (coin ?s)) (side ?s))
(<= terminal (true (round 2)))
(<= right (true (guessed ?s)) (true (coin ?s)))
(<= (goal guesser 100) right)
(<= (goal guesser 0) (not right))
"""


def findings(extra: str, base: str = COIN) -> list[Finding]:
    return check_description(parse_kif(base + extra, "coin.kif"))


def coded(extra: str, code: str, base: str = COIN) -> Finding:
    found = [f for f in findings(extra, base) if f.code == code]
    assert found, f"no {code} in {[f.code for f in findings(extra, base)]}"
    return found[0]


def test_a_valid_gdl_ii_game_has_no_finding() -> None:
    assert findings("") == []


@pytest.mark.parametrize("name", ["montyHall.kif", "montyHall.gdl"])
def test_the_examples_are_valid_gdl_ii_in_both_syntaxes(name: str) -> None:
    path = EXAMPLES / name
    assert check_description(read_game(path), str(path)) == []
    compiled = compile_game(path)
    assert compiled.translation.gdl_ii
    assert compiled.translation.roles == ("contestant", "random")


def test_both_syntaxes_read_the_gdl_ii_keywords() -> None:
    kif = parse_kif("(<= (sees ?r (did ?m)) (role ?r) (does random ?m)) (percept p q)")
    infix = parse_infix("sees(R, did(M)) :- role(R) & does(random, M)\npercept(p, q)")
    assert [c.head.name for c in kif.clauses] == [c.head.name for c in infix.clauses]
    assert [c.head.name for c in kif.clauses] == ["sees", "percept"]


def test_sees_in_a_body_is_an_error_with_its_position() -> None:
    f = coded("(<= (warned ?s) (sees guesser (coin ?s)))\n", "sees-in-body")
    assert f.is_error
    assert f.pos is not None and (f.pos.line, f.pos.column) == (20, 17)
    text = format_finding(f)
    assert text.startswith("coin.kif:20:17: error: sees must not occur in a rule body")


def test_a_relation_that_depends_on_a_percept_is_refused_where_legal_uses_it() -> None:
    f = coded("(<= (legal guesser peek) (sees guesser (coin heads)))\n", "sees-in-body")
    assert (f.pos.line, f.pos.column) == (20, 26)  # type: ignore[union-attr]


def test_sees_for_the_random_role_is_read_with_a_warning_and_percept_for_it_refused() -> None:
    f = coded("(<= (sees random (coin ?s)) (true (coin ?s)))\n", "sees-random")
    assert not f.is_error
    assert (f.pos.line, f.pos.column) == (20, 11)  # type: ignore[union-attr]
    assert "perceives nothing" in f.message and "strict reader refuses" in f.message
    assert coded("(percept random x)\n", "percept-random").is_error


# -- the older GDL-II dialects, read as their authors meant ----------------------------


def test_a_percept_written_with_does_is_read_as_that_term_with_a_warning() -> None:
    extra = "(<= (sees guesser (does guesser ?m)) (does guesser ?m))\n"
    found = [f for f in findings(extra) if f.code == "does-in-percept"]
    assert [(f.severity, f.pos.line, f.pos.column) for f in found] == [  # type: ignore[union-attr]
        ("warning", 20, 19)
    ]
    assert "strict reader refuses" in found[0].message
    assert not any(f.is_error for f in findings(extra))


def test_does_as_a_function_outside_a_percept_is_still_refused() -> None:
    f = coded("(<= (next (did (does guesser wait))) (true (round 0)))\n", "keyword-as-function")
    assert f.is_error


def test_a_percept_written_with_another_keyword_is_read_as_that_term_too() -> None:
    """Blind breakthrough (the GameController's) tells a role its capturing moves as
    ``(legal ?p (move ...))``."""
    extra = "(<= (sees guesser (legal guesser wait)) (true (round 0)))\n"
    f = coded(extra, "keyword-in-percept")
    assert not f.is_error and (f.pos.line, f.pos.column) == (20, 19)  # type: ignore[union-attr]
    assert "keyword legal" in f.message and "strict reader refuses" in f.message
    assert not any(x.is_error for x in findings(extra))
    f = coded("(<= (next (did (legal guesser wait))) (true (round 0)))\n", "keyword-as-function")
    assert f.is_error


def test_a_sees_rule_whose_role_nothing_binds_is_read_as_every_role_with_a_warning() -> None:
    """``(<= (sees ?p (control ?r)) (true (control ?r)))``, as the GameController's games
    write it: the managers ask each role's percepts with the role given, so ?p is
    every role: a warning, and ``(role ?p)`` in the flat rule's body."""
    from gdl2pl.flatten import flatten_rules

    extra = "(<= (sees ?p (coin ?s)) (true (round 1)) (or (true (coin ?s)) (does ?p ?s)))\n"
    f = coded(extra, "sees-any-role")
    assert not f.is_error and (f.pos.line, f.pos.column) == (20, 11)  # type: ignore[union-attr]
    assert "as if (role ?p) were in the body" in f.message and "strict reader" in f.message
    assert not any(x.is_error for x in findings(extra))
    flat = [r for r in flatten_rules(parse_kif(COIN + extra)) if r.source.pos.line == 20]  # type: ignore[union-attr]
    # the branch that binds ?p (does) keeps its body; the other reads every role
    assert [sorted(str(lit) for lit in r.body) for r in flat] == [
        ["(role ?p)", "(true (coin ?s))", "(true (round 1))"],
        ["(does ?p ?s)", "(true (round 1))"],
    ]


def test_other_unsafe_variables_of_sees_and_of_other_rules_are_still_errors() -> None:
    # a percept's variable nothing binds: no manager could send it
    found = findings("(<= (sees ?p (coin ?x)) (true (round 1)))\n")
    assert [(x.code, x.severity) for x in found] == [
        ("sees-any-role", "warning"),
        ("unsafe-variable", "error"),
    ]
    assert "?x" in found[1].message
    # the role of another keyword's rule
    assert coded("(<= (legal ?p wait) (true (round 2)))\n", "unsafe-variable").is_error
    assert coded("(<= (goal ?p 50) (true (round 2)))\n", "unsafe-variable").is_error


def test_next_in_a_sees_rule_is_what_the_role_sees_of_the_next_state() -> None:
    extra = "(<= (sees guesser (coin ?s)) (next (coin ?s)))\n"
    f = coded(extra, "next-in-sees")
    assert not f.is_error and (f.pos.line, f.pos.column) == (20, 30)  # type: ignore[union-attr]
    assert "next state" in f.message and "strict reader refuses" in f.message
    assert not any(x.is_error for x in findings(extra))


def test_next_in_another_body_and_sees_in_a_goal_are_still_errors() -> None:
    assert coded("(<= (warned ?s) (next (coin ?s)))\n", "next-in-body").is_error
    f = coded("(<= (goal guesser 50) (sees guesser (coin heads)))\n", "sees-in-body")
    assert f.is_error and (f.pos.line, f.pos.column) == (20, 23)  # type: ignore[union-attr]


def test_the_dialect_readings_play_as_meant() -> None:
    """A percept written with does is perceived as written; next in a sees body reads the
    state the joint move leads to."""
    require_prolog()
    from gdl2pl.bridge import StateMachine

    old = COIN.replace(
        "(<= (sees guesser (coin ?s)) (true (round 1)) (true (coin ?s)))",
        "(<= (sees guesser (coin ?s)) (true (round 0)) (next (coin ?s)))\n"
        "(<= (sees guesser (does guesser ?m)) (does guesser ?m))\n"
        "(<= (sees random (coin ?s)) (next (coin ?s)))",
    )
    with StateMachine(parse_kif(old, "old.kif")) as sm:
        s = sm.initial_state
        seen = sm.percepts(s, ["wait", "(flip tails)"], "guesser")
        assert [str(p) for p in seen] == ["(coin tails)", "(does guesser wait)"]


def test_a_goal_for_random_is_a_warning() -> None:
    f = coded("(goal random 50)\n", "random-goal")
    assert not f.is_error


def test_random_without_any_legal_move_is_an_error_at_its_declaration() -> None:
    game = COIN.replace("(<= (legal random (flip ?s)) (true (round 0)) (side ?s))", "")
    game = game.replace("(<= (legal random wait) (true (round 1)))", "")
    found = [f for f in check_description(parse_kif(game, "c.kif")) if f.is_error]
    assert [f.code for f in found] == ["random-without-moves"]
    assert (found[0].pos.line, found[0].pos.column) == (2, 1)  # type: ignore[union-attr]


def test_a_legal_rule_for_every_role_counts_as_moves_for_random() -> None:
    game = COIN.replace("(<= (legal random wait) (true (round 1)))", "")
    game = game.replace(
        "(<= (legal random (flip ?s)) (true (round 0)) (side ?s))",
        "(<= (legal ?r noop) (role ?r))",
    )
    assert "random-without-moves" not in [f.code for f in check_description(parse_kif(game))]


def test_percept_may_not_depend_on_the_state() -> None:
    f = coded("(<= (percept guesser (seen ?s)) (true (coin ?s)))\n", "keyword-dependency")
    assert f.is_error and "percept must not depend on true" in f.message


def test_sees_with_another_arity_is_an_ordinary_relation() -> None:
    plain = "(<= (sees ?x) (true (coin ?x)))\n(<= (legal guesser peek) (sees heads))\n"
    f = coded(plain, "pre-gdl-ii")
    assert not f.is_error
    assert not [f for f in findings(plain) if f.is_error]
    text = compile_game(text=COIN + plain).translation.text
    assert "r_sees(" in text


def test_a_sees_rule_is_one_clause_with_its_source_line() -> None:
    compiled = compile_game(text=COIN, name="coin.kif")
    sees = [(line, r) for line, r in compiled.translation.origins if r.head.name == "sees"]
    assert len(sees) == 1
    line, rule = sees[0]
    assert rule.source.pos is not None and rule.source.pos.line == 14
    lines = compiled.translation.text.splitlines()
    assert lines[line - 1].startswith("sees(guesser, coin(")
    assert lines[line - 2].startswith("% coin.kif:14 ")


def test_a_plain_game_is_not_gdl_ii_and_declares_no_gdl_ii_relation() -> None:
    compiled = compile_game(EXAMPLES / "ticTacToe.kif")
    assert not compiled.translation.gdl_ii
    assert "sees(" not in compiled.translation.text
    assert "sees/2" not in compiled.translation.text
    assert "percept" not in compiled.translation.text


def test_a_gdl_ii_game_declares_its_undefined_gdl_ii_relations() -> None:
    text = compile_game(text=COIN.replace("(<= (percept guesser (coin ?s)) (side ?s))", ""))
    assert ":- dynamic" in text.translation.text and "percept/2" in text.translation.text


@pytest.mark.parametrize(
    ("roles", "relations", "expected"),
    [
        (("white", "black"), [("legal", 2), ("next", 1)], False),
        (("white", "Random"), [], True),
        (("white",), [("sees", 2)], True),
        (("white",), [("percept", 2)], True),
        (("white",), [("sees", 3), ("percept", 1)], False),
    ],
)
def test_what_makes_a_game_gdl_ii(
    roles: tuple[str, ...], relations: list[tuple[str, int]], expected: bool
) -> None:
    assert is_gdl_ii(roles, relations) is expected


def test_random_is_a_keyword_spelled_in_lowercase() -> None:
    game = COIN.replace("(role random)", "(role RANDOM)")
    assert compile_game(text=game).translation.roles == ("guesser", "random")


def test_a_scrambler_keeps_the_gdl_ii_keywords() -> None:
    from gdl2pl.ggp.scramble import Scrambler

    scrambler = Scrambler()
    assert [scrambler.symbol(s) for s in ("random", "sees", "percept")] == [
        "random",
        "sees",
        "percept",
    ]
    assert scrambler.symbol("contestant") != "contestant"
