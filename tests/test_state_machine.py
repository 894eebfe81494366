"""The state machine: ggp-base's ProverStateMachineTest facts, and the contract users rely
on (values, errors, several games, threads, unloading, hostile names)."""

from __future__ import annotations

import re
import threading

import pytest
from conftest import EXAMPLES
from conftest import shared_dir
from prolog_env import require_prolog

from gdl2pl import Const
from gdl2pl import Func
from gdl2pl.bridge import GoalDefinitionError
from gdl2pl.bridge import IllegalMoveError
from gdl2pl.bridge import MoveDefinitionError
from gdl2pl.bridge import ReasonerError
from gdl2pl.bridge import StateMachine
from gdl2pl.bridge import TransitionDefinitionError
from gdl2pl.contract import MachineState
from gdl2pl.kif import parse_kif_term
from gdl2pl.load import parse_game


@pytest.fixture(autouse=True)
def _prolog() -> None:
    require_prolog()


def conformance(name: str) -> StateMachine:
    return StateMachine.from_file(shared_dir() / "games/conformance/ggp-base" / f"{name}.kif")


def move(kif: str) -> Func | Const:
    t = parse_kif_term(f"({kif})" if " " in kif else kif)
    assert isinstance(t, Func | Const)
    return t


# -- ggp-base's ProverStateMachineTest ------------------------------------------------------


def test_prover_on_tic_tac_toe() -> None:
    with conformance("ticTacToe") as sm:
        s = sm.initial_state
        assert not sm.is_terminal(s)
        x, o = sm.roles
        assert [str(r) for r in sm.roles] == ["xplayer", "oplayer"]
        assert len(sm.legal_joint_moves(s)) == 9
        assert len(sm.legal_moves(s, x)) == 9
        assert sm.legal_moves(s, o) == [Const("noop")]
        noop = move("noop")
        for mover, m in [(x, "mark 1 1"), (o, "mark 1 3"), (x, "mark 3 1"), (o, "mark 2 2")]:
            assert move(m) in sm.legal_moves(s, mover)
            s = sm.next_state(s, [move(m), noop] if mover == x else [noop, move(m)])
            assert not sm.is_terminal(s)
        assert move("mark 2 1") in sm.legal_moves(s, x)
        s = sm.next_state(s, [move("mark 2 1"), noop])
        assert sm.is_terminal(s)
        assert sm.goal(s, x) == 100
        assert sm.goal(s, o) == 0
        assert sm.goals(s) == [100, 0]


@pytest.mark.parametrize("name", ["test_case_1a", "test_case_5a", "test_case_5c", "test_case_5d"])
def test_prover_single_step_games(name: str) -> None:
    with conformance(name) as sm:
        s = sm.initial_state
        assert not sm.is_terminal(s)
        if name != "test_case_1a":
            assert sm.legal_moves(s, "you") == [move("proceed")]
        else:
            assert sm.goal(s, "you") == 100
        s = sm.next_state(s, [move("proceed")])
        assert sm.is_terminal(s)
        assert sm.goal(s, "you") == 100
        assert sm.goals(s) == [100]


def test_prover_case_3c() -> None:
    with conformance("test_case_3c") as sm:
        s = sm.initial_state
        assert not sm.is_terminal(s)
        assert sm.legal_moves(s, "xplayer") == [move("win")]
        s = sm.next_state(s, ["win"])
        assert sm.is_terminal(s)
        assert sm.goals(s) == [100]


def test_prover_case_5b() -> None:
    with conformance("test_case_5b") as sm:
        s = sm.initial_state
        assert sm.legal_moves(s, "you") == [move("draw 1 1 1 2")]
        assert sm.is_terminal(sm.next_state(s, [move("draw 1 1 1 2")]))


def test_prover_case_5e() -> None:
    with conformance("test_case_5e") as sm:
        legal = set(sm.legal_moves(sm.initial_state, "robot"))
        expected = {"reduce a 0", "reduce a 1"} | {f"reduce c {i}" for i in range(5)}
        assert legal == {move(m) for m in expected}


def test_prover_distinct_at_beginning_of_rule() -> None:
    with conformance("test_distinct_beginning_rule") as sm:
        s = sm.initial_state
        assert len(sm.legal_moves(s, "you")) == 2
        s = sm.next_state(s, [move("do a b")])
        assert sm.is_terminal(s)
        assert sm.goals(s) == [100]


# -- the contract ----------------------------------------------------------------------------


@pytest.fixture
def ttt() -> StateMachine:
    sm = StateMachine.from_file(EXAMPLES / "ticTacToe.kif")
    yield sm
    sm.close()


def test_terms_print_as_kif_and_compare_by_value(ttt: StateMachine) -> None:
    s = ttt.initial_state
    moves = ttt.legal_moves(s, ttt.roles[0])
    assert str(moves[0]) == "(mark 1 1)"
    assert moves[0] == parse_kif_term("(mark 1 1)")
    assert "(control xplayer)" in s
    assert str(s).startswith("((cell 1 1 b)")


def test_states_are_values(ttt: StateMachine) -> None:
    s = ttt.initial_state
    a = ttt.next_state(s, ["(mark 2 2)", "noop"])
    b = ttt.next_state(s, ["(mark 2 2)", "noop"])
    assert a == b and hash(a) == hash(b) and a is not b
    assert {a: 1}[b] == 1
    assert a != s
    assert MachineState.from_fluents(list(map(str, a))) == a
    with pytest.raises(AttributeError):
        a._key = frozenset()  # type: ignore[misc]
    assert ttt.initial_state == s  # the initial state was not changed by moving on


def test_states_can_be_revisited_in_any_order(ttt: StateMachine) -> None:
    s0 = ttt.initial_state
    s1 = ttt.next_state(s0, ["(mark 1 1)", "noop"])
    s2 = ttt.next_state(s1, ["noop", "(mark 2 2)"])
    assert ttt.legal_moves(s0, "xplayer").__len__() == 9
    assert len(ttt.legal_moves(s2, "xplayer")) == 7
    assert len(ttt.legal_moves(s1, "oplayer")) == 8
    assert ttt.next_state(s0, ["(mark 1 1)", "noop"]) == s1


def test_illegal_and_ill_formed_joint_moves(ttt: StateMachine) -> None:
    s = ttt.initial_state
    with pytest.raises(
        IllegalMoveError, match=r"\(mark 1 1\) is not a legal move for role oplayer"
    ):
        ttt.next_state(s, ["(mark 1 1)", "(mark 1 1)"])
    with pytest.raises(TransitionDefinitionError, match="one move per role"):
        ttt.next_state(s, ["(mark 1 1)"])
    with pytest.raises(TransitionDefinitionError):
        ttt.next_state(s, ["(mark ?x 1)", "noop"])
    with pytest.raises(TransitionDefinitionError, match="not a role"):
        ttt.legal_moves(s, "nobody")
    # the machine stays usable after errors
    assert len(ttt.legal_moves(s, "xplayer")) == 9


def test_goal_errors() -> None:
    game = """(role r) (init a) (legal r go) (<= (next b) (true a))
              (<= (goal r 10) (true b)) (<= (goal r 20) (true b)) (<= terminal (true b))"""
    with StateMachine.from_text(game) as sm:
        s = sm.initial_state
        with pytest.raises(GoalDefinitionError, match="role r has no goal value"):
            sm.goal(s, "r")
        s = sm.next_state(s, ["go"])
        with pytest.raises(GoalDefinitionError, match="2 goal values"):
            sm.goals(s)


def test_no_legal_move_raises() -> None:
    game = """(role r) (init p) (<= (legal r go) (true q)) (<= (next q) (true p))
              (<= terminal (true z)) (goal r 0)"""
    with StateMachine.from_text(game) as sm:
        with pytest.raises(MoveDefinitionError, match="no legal move for role r"):
            sm.legal_moves(sm.initial_state, "r")
        with pytest.raises(MoveDefinitionError):
            sm.depth_charge(sm.initial_state)


def test_depth_charge_and_average_scores(ttt: StateMachine) -> None:
    final, depth = ttt.depth_charge(ttt.initial_state)
    assert ttt.is_terminal(final)
    assert 5 <= depth <= 9
    scores = ttt.average_scores(ttt.initial_state, 200)
    assert all(0 <= x <= 100 for x in scores)
    assert 90 <= sum(scores) <= 110  # tic-tac-toe is zero-sum with 100 points in all


@pytest.mark.parametrize("n", [0, -1, True, 1.5, "3"])
def test_playouts_and_average_scores_refuse_a_count_below_one(ttt: StateMachine, n: object) -> None:
    for call in (ttt.playouts, ttt.average_scores):
        with pytest.raises(ValueError, match="number of playouts must be a whole number >= 1"):
            call(ttt.initial_state, n)  # type: ignore[operator]
    assert ttt.playouts(ttt.initial_state, 1)[1] >= 5  # the machine still answers


def test_a_state_of_another_game_is_refused(ttt: StateMachine) -> None:
    other = StateMachine.from_text(
        "(role a) (init (cell 1 1 b)) (<= (legal a go) (true (cell 1 1 b))) "
        "(<= (next (cell 1 1 x)) (does a go)) (<= terminal (true (cell 1 1 x))) (goal a 100)",
        name="other",
    )
    with other:
        foreign = other.initial_state
        for ask in (
            ttt.is_terminal,
            ttt.goals,
            ttt.expand,
            lambda s: ttt.next_state(s, ["(mark 1 1)", "noop"]),
            lambda s: ttt.legal_moves(s, "xplayer"),
            ttt.legal_joint_moves,
            ttt.state_info,
            ttt.depth_charge,
            lambda s: ttt.playouts(s, 1),
        ):
            with pytest.raises(
                ValueError,
                match=r"ticTacToe.kif: the state comes from the machine for another game \(other\)",
            ):
                ask(foreign)
    # a machine of the same game (even written in infix), and a state built from fluents,
    # are answered
    with StateMachine.from_file(EXAMPLES / "ticTacToe.gdl") as twin:
        assert not ttt.is_terminal(twin.initial_state)
        assert not ttt.is_terminal(MachineState.from_fluents(map(str, foreign)))


def test_case_insensitive_symbols_keep_the_file_spelling() -> None:
    game = """(ROLE Robot) (INIT (Cell A)) (<= (LEGAL robot (PUSH ?x)) (TRUE (cell ?x)))
              (<= (NEXT (CELL b)) (DOES ROBOT (push a))) (<= TERMINAL (true (cell B)))
              (<= (GOAL ROBOT 100) (true (CELL b))) (<= (goal robot 0) (true (cell a)))"""
    with StateMachine.from_text(game) as sm:
        assert [str(r) for r in sm.roles] == ["Robot"]
        s = sm.initial_state
        assert str(s) == "((Cell A))"
        assert [str(m) for m in sm.legal_moves(s, "ROBOT")] == ["(PUSH A)"]
        s = sm.next_state(s, ["(push a)"])
        assert sm.is_terminal(s) and sm.goals(s) == [100]


def test_names_of_builtins_are_just_names() -> None:
    """Relations named like Prolog builtins (and hostile ones) are ordinary relations."""
    game = """(role p) (init (count 0))
      (succ 0 1) (succ 1 2) (number 1) (member a b) (plus 1 1 2) (not-really x)
      (<= (shell ?x) (succ ?x ?y)) (<= (halt ?x) (number ?x)) (<= (call ?x) (member ?x b))
      (<= (assert ?x) (true (count ?x)))
      (<= (legal p (inc ?y)) (true (count ?x)) (succ ?x ?y) (call a) (assert ?x))
      (<= (next (count ?y)) (does p (inc ?y)))
      (<= terminal (true (count 2)) (halt 1) (shell 0) (plus 1 1 2))
      (<= (goal p 100) (true (count 2))) (<= (goal p 0) (not (true (count 2))))"""
    with StateMachine.from_text(game) as sm:
        s = sm.random_next_state(sm.initial_state)
        s = sm.random_next_state(s)
        assert sm.is_terminal(s) and sm.goals(s) == [100]
        text = sm.translation.text
        for builtin in ("shell", "halt", "call", "assert", "succ", "number", "member", "plus"):
            assert not re.search(rf"(?<![\w']){builtin}\(", text), builtin


def test_constants_keep_their_identity() -> None:
    game = """(role p) (init (v 01)) (<= (legal p a) (true (v 1))) (<= (legal p b) (true (v 01)))
              (<= (next (v 1)) (does p b)) (<= terminal (true (v 1))) (goal p 100)"""
    with StateMachine.from_text(game) as sm:
        assert sm.legal_moves(sm.initial_state, "p") == [Const("b")]


def test_several_games_at_once_and_unloading() -> None:
    a = StateMachine.from_file(EXAMPLES / "ticTacToe.kif")
    b = StateMachine.from_file(EXAMPLES / "buttons.kif")
    try:
        assert a.module != b.module
        sa, sb = a.initial_state, b.initial_state
        assert len(a.legal_moves(sa, a.roles[0])) == 9
        assert b.legal_moves(sb, b.roles[0])
        assert len(a.legal_moves(sa, a.roles[0])) == 9
    finally:
        b.close()
    assert len(a.legal_moves(a.initial_state, a.roles[0])) == 9
    a.close()
    with pytest.raises(Exception, match="closed"):
        a.legal_moves(sa, a.roles[0])


def test_threads_have_their_own_state(ttt: StateMachine) -> None:
    errors: list[BaseException] = []
    results: list[int] = []

    def work(seed: int) -> None:
        import random

        try:
            rng = random.Random(seed)
            for _ in range(20):
                s = ttt.initial_state
                while not ttt.is_terminal(s):
                    s = ttt.next_state(s, ttt.random_joint_move(s, rng))
                results.append(sum(ttt.goals(s)))
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert results == [100] * 60


def test_prolog_errors_become_python_errors() -> None:
    # An endless recursion through a function symbol: stopped by a resource limit.
    game = """(role p) (init (n z)) (<= (num (s ?x)) (num ?x)) (num z)
              (<= (legal p go) (num ?x) (true (n ?x)) (num (s (s ?x))))
              (<= (next (n z)) (does p go)) (<= terminal (true (n q))) (goal p 0)"""
    with StateMachine.from_text(game, name="endless") as sm:
        with pytest.raises(ReasonerError, match="endless"):
            sm.legal_moves(sm.initial_state, "p")
        assert sm.roles  # still usable
        assert not sm.is_terminal(sm.initial_state)


def test_inference_limit() -> None:
    # A legitimate but long computation stops at the inference limit.
    game = """(role p) (init c) (legal p go) (<= (next c) (does p go)) (goal p 0)
              (n 0) (n 1) (n 2) (n 3) (n 4) (n 5) (n 6) (n 7) (n 8) (n 9)
              (<= (big ?a ?b ?c ?d ?e) (n ?a) (n ?b) (n ?c) (n ?d) (n ?e) (true c))
              (<= terminal (big ?a ?b ?c ?d ?e) (distinct ?a ?a))"""
    sm = StateMachine(parse_game(game), "long", inference_limit=10_000)
    with sm:
        with pytest.raises(ReasonerError, match="more than 10,000 inferences"):
            sm.is_terminal(sm.initial_state)
        assert sm.legal_moves(sm.initial_state, "p") == [Const("go")]


# -- recursive relations of the state and of the move ------------------------------------

#: A graph game of our own: the state holds edges, ``reach`` (recursive, over the state) is
#: asked by legal, goal and terminal, ``later`` (recursive, over the move) by next; both are
#: tabled, and their tables must never answer for another state or joint move.
RELINK = """
(role mover)
(init (edge n1 n2)) (init (edge n2 n3)) (init (at n1)) (init (step 0))
(node n1) (node n2) (node n3) (node n4)
(succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5) (succ 5 6)
(<= (legal mover (link ?x ?y)) (node ?x) (node ?y) (distinct ?x ?y) (not (true (edge ?x ?y))))
(<= (legal mover (cut ?x ?y)) (true (edge ?x ?y)))
(<= (legal mover (walk ?y)) (true (at ?x)) (reach ?x ?y) (distinct ?x ?y))
(<= (reach ?x ?x) (node ?x))
(<= (reach ?x ?z) (true (edge ?x ?y)) (reach ?y ?z))
(<= (after ?x ?y) (does mover (link ?x ?y)))
(<= (after ?x ?y) (true (edge ?x ?y)) (not (does mover (cut ?x ?y))))
(<= (later ?x ?x) (node ?x))
(<= (later ?x ?z) (after ?x ?y) (later ?y ?z))
(<= (next (edge ?x ?y)) (after ?x ?y))
(<= (next (seen ?y)) (later n1 ?y))
(<= (next (at ?y)) (does mover (walk ?y)))
(<= (next (at ?x)) (true (at ?x)) (not walking))
(<= walking (does mover (walk ?y)))
(<= (next (step ?m)) (true (step ?n)) (succ ?n ?m))
(<= terminal (true (step 6)))
(<= terminal (reach n3 n1))
(<= (goal mover 100) (reach n1 n4))
(<= (goal mover 0) (not (reach n1 n4)))
"""


QUERIES = {
    "terminal": lambda sm, s: sm.is_terminal(s),
    "goals": lambda sm, s: sm.goals(s),
    "legal": lambda sm, s: sorted(map(str, sm.legal_moves(s, "mover"))),
    "next": lambda sm, s: sorted(
        (str(m), tuple(sorted(map(str, sm.next_state(s, [m]))))) for m in sm.legal_moves(s, "mover")
    ),
}


def _walk(sm: StateMachine, steps: int, seed: int) -> list[MachineState]:
    import random

    rng = random.Random(seed)
    visited = [sm.initial_state]
    for _ in range(10 * steps):
        s = visited[-1] if rng.random() < 0.8 else rng.choice(visited)
        if not sm.is_terminal(s):
            visited.append(sm.next_state(s, sm.random_joint_move(s, rng)))
        if len(visited) > steps:
            return visited
    raise AssertionError(f"no walk of {steps} steps")


@pytest.mark.parametrize("query", sorted(QUERIES))
def test_recursive_relations_answer_for_the_current_state_only(query: str) -> None:
    """Asking one kind of query along a walk that revisits states gives, in every state,
    the answer a freshly loaded game gives for that state alone."""
    ask = QUERIES[query]
    with StateMachine.from_text(RELINK, name="relink.kif") as sm:
        walk = _walk(sm, 16, seed=3)
        walk = walk + walk[::-1]
        got = [ask(sm, s) for s in walk]
    expected = []
    for s in walk:
        with StateMachine.from_text(RELINK, name="relink.kif") as fresh:
            expected.append(ask(fresh, MachineState.from_fluents(list(map(str, s)))))
    assert got == expected
    assert len({repr(e) for e in expected}) > 1  # the walk does change the answer


# -- the rest of the public surface ------------------------------------------------------


def test_next_states_and_the_next_state_map_agree(ttt: StateMachine) -> None:
    s = ttt.initial_state
    joint = ttt.legal_joint_moves(s)
    successors = ttt.next_states(s)
    mapping = ttt.next_state_map(s)
    assert len(successors) == len(joint) == len(mapping) == 9
    assert list(mapping) == joint
    assert list(mapping.values()) == successors
    for jm, after in mapping.items():
        assert after == ttt.next_state(s, jm)
        assert f"(cell {jm[0].args[0]} {jm[0].args[1]} x)" in after  # type: ignore[union-attr]
    assert len(set(successors)) == 9


def test_base_propositions_and_input_moves(ttt: StateMachine) -> None:
    base = {str(f) for f in ttt.base_propositions}
    assert len(base) == 3 * 3 * 3 + 2
    assert "(cell 2 3 o)" in base and "(control oplayer)" in base
    assert set(map(str, ttt.initial_state)) <= base
    moves = [str(m) for m in ttt.input_moves("xplayer")]
    assert moves == ["noop"] + [f"(mark {m} {n})" for m in (1, 2, 3) for n in (1, 2, 3)]
    with pytest.raises(TransitionDefinitionError, match="not a role"):
        ttt.input_moves("nobody")


def test_a_game_without_base_or_input_has_none() -> None:
    game = "(role a) (init s) (<= (legal a go) (true s)) (<= terminal (true t)) (goal a 0)"
    with StateMachine.from_text(game) as sm:
        assert sm.base_propositions == []
        assert sm.input_moves("a") == []


def _table_space() -> int:
    import janus_swi as janus

    return int(janus.query_once("statistics(table_space_used, X)")["X"])


def test_closing_a_game_gives_back_its_tables() -> None:
    """A process that loads game after game (a player, the studio) does not grow by each
    game's tables: a recursive relation's many subgoals are gone once the game is closed."""
    numbers = " ".join(f"(succ {i} {i + 1})" for i in range(120))
    game = f"""(role p) (init (at 0)) {numbers}
        (<= (less ?x ?y) (succ ?x ?y))
        (<= (less ?x ?z) (succ ?x ?y) (less ?y ?z))
        (<= (legal p (go ?y)) (true (at ?x)) (less ?x ?y))
        (<= (next (at ?y)) (does p (go ?y)))
        (<= terminal (true (at 120))) (goal p 100)"""
    with StateMachine.from_text(game) as warm:  # the runtime's own first-use allocations
        warm.legal_moves(warm.initial_state, "p")
    before = _table_space()
    for _ in range(3):
        with StateMachine.from_text(game) as sm:
            assert len(sm.legal_moves(sm.initial_state, "p")) == 120
    assert _table_space() - before < 64 * 1024
