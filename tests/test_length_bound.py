"""Game lengths proved from the rules (issue 42 item 2): connectFour's cells fill up (48),
breakthrough's pawns only go forward (208), and OpenSpiel is told so; a bound is never
claimed where none exists (a pass, a way back, a mark that can be wiped out), and never
below a play's length: checked against the exact longest play of our own small games
(searched here, every state) and against random matches of the corpus games."""

from __future__ import annotations

import random

import pytest
from adapters_support import OWN_GAMES
from adapters_support import repository_game
from adapters_support import require_module
from prolog_env import require_prolog

from gdl2pl.adapters import GdlGame
from gdl2pl.adapters.reach import reachable_domains
from gdl2pl.bridge import StateMachine
from gdl2pl.depgraph import dependency_graph
from gdl2pl.length_bound import prove_length_bound
from gdl2pl.load import read_game
from gdl2pl.normalize import normalize_case
from gdl2pl.rule_eval import Unproved
from gdl2pl.rule_eval import check_readable
from gdl2pl.rule_shapes import step_counter_bound

LENGTH = OWN_GAMES / "length"


@pytest.fixture(autouse=True)
def _needs_prolog() -> None:
    require_prolog()


def longest_play(sm: StateMachine) -> int | None:
    """The most steps of any play of the game, every reachable state searched; None if
    a play can go on for ever (a state can be met again)."""
    memo: dict[object, int] = {}
    path: set[object] = set()

    def go(s: object) -> int:
        if s in memo:
            return memo[s]
        if s in path:
            raise RecursionError("a cycle")
        if sm.is_terminal(s):  # type: ignore[arg-type]
            memo[s] = 0
            return 0
        path.add(s)
        n = 1 + max(go(sm.next_state(s, jm)) for jm in sm.legal_joint_moves(s))  # type: ignore[arg-type]
        path.discard(s)
        memo[s] = n
        return n

    try:
        return go(sm.initial_state)
    except RecursionError:
        return None


@pytest.mark.parametrize(
    ("name", "claimed", "exact"),
    [
        ("fill", 9, 9),  # 3x3 cells filled one a move (6,046 states: past the enumeration)
        ("pawns", 18, 13),  # three pawns a side, three rows each to go
        ("fill_pass", None, None),  # a pass: plays can go on for ever
        ("shuttle", None, None),  # back to the start: plays can go on for ever
        ("fill_erase", None, 9),  # a mark can be wiped out: filling proves nothing
    ],
)
def test_a_bound_is_claimed_only_where_it_holds(name: str, claimed: int | None, exact: int | None):
    path = LENGTH / f"{name}.kif"
    with StateMachine.from_file(path) as sm:
        assert longest_play(sm) == exact
    game = GdlGame(path)
    try:
        claim = game.gdl_metadata()["max_game_length"]
        if claimed is None:
            assert (claim.value, claim.status) == (None, "assumed"), claim
        else:
            assert (claim.value, claim.status) == (claimed, "proved"), claim
            assert exact is not None and claimed >= exact
    finally:
        game.close()


def test_an_enumeration_with_a_way_back_proves_no_length():
    """Every state of shuttle and fill_pass is enumerated, and the deepest level of the
    search is no play's length: a move goes back. (Before: "proved" 2 and 8, the search's
    depth, for games whose plays can go on for ever.)"""
    for name in ("shuttle", "fill_pass"):
        game = GdlGame(LENGTH / f"{name}.kif")
        try:
            assert game.kind.proved and not game.kind.layered
            claim = game.gdl_metadata()["max_game_length"]
            assert claim.status == "assumed" and "leads back" in claim.how, claim
        finally:
            game.close()
    game = GdlGame(repository_game("ticTacToe"))
    try:  # every move one level deeper: the deepest level is the longest play
        assert game.kind.layered
        assert game.gdl_metadata()["max_game_length"].value == 9
    finally:
        game.close()


@pytest.mark.parametrize(
    ("name", "steps", "why"),
    [
        ("connectFour", 48, "of the 48 positions a move can fill, 48 are empty"),
        ("breakthrough", 208, "each cellHolds fluent is worth the moves its argument 2"),
        ("breakthroughSmall", 108, "each cell fluent is worth"),
    ],
)
def test_connect_four_fills_and_breakthrough_advances(name: str, steps: int, why: str):
    game = GdlGame(repository_game(name))
    try:
        claim = game.gdl_metadata()["max_game_length"]
        assert (claim.value, claim.status) == (steps, "proved") and why in claim.how, claim
    finally:
        game.close()


def test_openspiel_is_told_the_proved_lengths():
    require_module("pyspiel")
    from gdl2pl.openspiel import load_game

    for name, steps in (("connectFour", 48), ("breakthrough", 208)):
        game = load_game(repository_game(name))
        assert game.max_game_length() == steps  # it was the parameter's 10,000


#: Corpus games the measures bound, and matches of each played to the end at random.
CORPUS = ["connectFour", "breakthrough", "breakthroughSmall", "atariGo_7x7", "knightThrough"]


@pytest.mark.slow
@pytest.mark.parametrize("name", CORPUS)
def test_no_random_match_is_longer_than_the_bound(name: str):
    path = repository_game(name)
    d = read_game(path)
    with StateMachine.from_file(path) as sm:
        reach = reachable_domains(d, sm.roles, name, 100_000)
        bound = prove_length_bound(d, reach.fluents, reach.moves)
        assert bound is not None
        rng = random.Random(7)
        for _ in range(6):
            state, steps = sm.initial_state, 0
            while not sm.is_terminal(state):
                state = sm.next_state(state, rng.choice(sm.legal_joint_moves(state)))
                steps += 1
                assert steps <= bound.steps, (name, bound)


def test_the_proof_fails_where_its_work_runs_out():
    """The verdict depends on a fixed amount of work, not on the machine: 3pConnectFour
    (three colours per cell) needs more, and is assumed."""
    path = repository_game("3pConnectFour")
    d = read_game(path)
    with StateMachine.from_file(path) as sm:
        reach = reachable_domains(d, sm.roles, "3pConnectFour", 100_000)
    assert prove_length_bound(d, reach.fluents, reach.moves, seconds=600) is None


def _bound(path) -> int | None:
    """The bound ``prove_length_bound`` proves for a game file, or None."""
    d = read_game(path)
    with StateMachine.from_file(path) as sm:
        reach = reachable_domains(d, sm.roles, path.name, 100_000)
    found = prove_length_bound(d, reach.fluents, reach.moves)
    return None if found is None else found.steps


def test_a_variable_relation_under_true_proves_nothing(tmp_path):
    """read_any's legal moves read ``(true ?f)``: which fluents that matches is no
    relation's, so no measure is proved (it was "1", from a flag's one position, while
    every play lasts 5 steps). A ``?f`` bound before it is read is a fluent like any
    other: fill, whose marks are read as ``(cellof ?x ?y ?f) (true ?f)``, is proved 9 as
    before; read the other way round, ``(true ?f)`` first, it is not proved."""
    path = LENGTH / "read_any.kif"
    with StateMachine.from_file(path) as sm:
        assert longest_play(sm) == 5
    assert _bound(path) is None
    fill = (LENGTH / "fill.kif").read_text()
    taken = "(<= (taken ?x ?y) (true (cell ?x ?y ?p)))"
    assert taken in fill
    cellof = "(<= (cellof ?x ?y (cell ?x ?y ?p)) (index ?x) (index ?y) (role ?p))"
    for body, bound in (("(cellof ?x ?y ?f) (true ?f)", 9), ("(true ?f) (cellof ?x ?y ?f)", None)):
        variant = tmp_path / "fill_any.kif"
        variant.write_text(fill.replace(taken, f"(<= (taken ?x ?y) {body}) {cellof}"))
        assert _bound(variant) == bound, body


def test_the_counter_is_told_apart_from_a_fluent_of_another_arity():
    """counter_arity starts with ``(step 1 go)``, which is no ``(step 1)``: the counter of
    one argument never runs, and the game ends by ``t`` after 8 steps (it was "proved" 3).
    Loaded as simultaneous, the game-kind search is skipped, so no play could refute a
    wrong bound: the claim is the proof's alone."""
    path = LENGTH / "counter_arity.kif"
    with StateMachine.from_file(path) as sm:
        assert longest_play(sm) == 8
    assert step_counter_bound(read_game(path)) == (8, "t")
    game = GdlGame(path, dynamics="simultaneous")
    try:
        assert game.kind.max_depth == 0
        claim = game.gdl_metadata()["max_game_length"]
        assert (claim.value, claim.status) == (8, "proved"), claim
    finally:
        game.close()
    game = GdlGame(LENGTH / "read_any.kif", dynamics="simultaneous")
    try:
        claim = game.gdl_metadata()["max_game_length"]
        assert (claim.value, claim.status) == (None, "assumed"), claim
    finally:
        game.close()


def test_a_wrong_bound_is_refuted_by_a_match_where_the_search_played_none(monkeypatch):
    """The second guard, behind proofs that are sound on their own: loaded as
    simultaneous the game-kind search plays nothing, so one random match is played to one
    step past the bound. A step-counter proof made wrong on purpose (3 for plays of 8) is
    refuted by it and not claimed."""
    import gdl2pl.adapters.game as adapter_game

    monkeypatch.setattr(adapter_game, "step_counter_bound", lambda d: (3, "step"))
    game = GdlGame(LENGTH / "counter_arity.kif", dynamics="simultaneous")
    try:
        assert game.kind.max_depth == 0
        with pytest.warns(RuntimeWarning, match="longer than the bound proved"):
            claim = game.gdl_metadata()["max_game_length"]
        assert (claim.value, claim.status) == (None, "assumed"), claim
        assert "refuted by a play of 4 steps" in claim.how
    finally:
        game.close()


def test_a_parenthesised_keyword_is_named_as_what_it_is(tmp_path):
    """``(terminal)`` is a relation of no arguments, not the keyword: the proof does not
    read it and proves nothing (sound), saying so rather than "used with 0 arguments",
    which the keyword is too."""
    variant = tmp_path / "fill_paren.kif"
    variant.write_text((LENGTH / "fill.kif").read_text() + "\n(<= (terminal) (true (control a)))\n")
    d = normalize_case(read_game(variant))
    with pytest.raises(Unproved, match=r"\(terminal\) is written with parentheses"):
        check_readable(d, dependency_graph(d))
    assert _bound(variant) is None
