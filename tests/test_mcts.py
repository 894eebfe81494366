"""The MCTS strategy's tree across plays and its proofs (``gdl2pl.ggp.mcts``, issue 51
items 3 and 5): the subtree of the state reached is kept with its statistics; a game small
enough to be solved is solved (the proof climbs to the root, whose search then stops, and
the move is the proof's); a random game cut short counts the goal the rules give the
state it reached, not a coin."""

from __future__ import annotations

import pytest
from conftest import EXAMPLES

from gdl2pl.bridge import StateMachine
from gdl2pl.ggp import mcts
from gdl2pl.ggp.mcts import MctsStrategy
from gdl2pl.ggp.strategy import Budget

TTT = EXAMPLES / "ticTacToe.kif"

pytestmark = pytest.mark.usefixtures("prolog_main_thread")


def _search(strategy: MctsStrategy, sm: StateMachine, state: object, seconds: float = 0.3) -> None:
    role = strategy.role
    legal = sm.legal_moves(state, role)  # type: ignore[arg-type]
    strategy.select_move(state, legal, Budget.seconds(seconds), lambda m: None)  # type: ignore[arg-type]


def grown(strategy: MctsStrategy, sm: StateMachine, state: object) -> mcts._Node:
    """The tree of ``state`` searched (again and again, the tree kept) until its root has
    been visited 300 times: a grandchild then has visits of its own."""
    for _ in range(100):
        _search(strategy, sm, state, 0.1)
        assert strategy.root is not None
        if strategy.root.n >= 300:
            return strategy.root
    raise AssertionError("100 searches of 0.1 s made fewer than 300 iterations")


def test_the_subtree_reached_is_kept_with_its_statistics() -> None:
    with StateMachine.from_file(TTT) as sm:
        x = sm.roles[0]
        strategy = MctsStrategy(seed=3)
        strategy.metagame(sm, x, Budget.seconds(1))
        s0 = sm.initial_state
        root = grown(strategy, sm, s0)
        # x's move, then o's: x's next state is a grandchild of the root
        child = max(root.children.values(), key=lambda c: c.n)
        grandchild = max(child.children.values(), key=lambda c: c.n)
        first, second = child.state, grandchild.state
        kept = (grandchild.n, [list(v) for v in grandchild.visits], grandchild.size)
        assert kept[0] > 0  # the search went there: something to keep
        strategy.reached(first)
        assert strategy.root is child and strategy.nodes == child.size
        strategy.reached(second)  # x's move there was forced: no search in between
        assert strategy.root is grandchild
        assert (grandchild.n, [list(v) for v in grandchild.visits], grandchild.size) == kept
        _search(strategy, sm, second)
        report = strategy.take_reports()[-1]
        assert report.reused == kept[0]
        assert strategy.root is grandchild and grandchild.n >= kept[0] + report.iterations


def test_a_search_finds_the_state_two_moves_down_without_being_told() -> None:
    with StateMachine.from_file(TTT) as sm:
        x = sm.roles[0]
        strategy = MctsStrategy(seed=5)
        strategy.metagame(sm, x, Budget.seconds(1))
        root = grown(strategy, sm, sm.initial_state)
        child = max(root.children.values(), key=lambda c: c.n)
        grandchild = max(child.children.values(), key=lambda c: c.n)
        visited = grandchild.n
        _search(strategy, sm, grandchild.state, 0.1)
        assert strategy.take_reports()[-1].reused == visited > 0
        assert strategy.root is grandchild


def test_a_state_not_in_the_tree_drops_it() -> None:
    with StateMachine.from_file(TTT) as sm:
        x = sm.roles[0]
        strategy = MctsStrategy(seed=5, max_nodes=1)  # the tree never grows past its root
        strategy.metagame(sm, x, Budget.seconds(1))
        s0 = sm.initial_state
        _search(strategy, sm, s0, 0.1)
        strategy.reached(sm.next_state(s0, ["(mark 1 1)", "noop"]))
        assert strategy.root is None and strategy.nodes == 0


def nim(sticks: int) -> str:
    """Take 1 or 2 sticks in turn; who takes the last wins. The player to move loses
    exactly when the sticks are a multiple of 3 (the other restores one each turn)."""
    return f"""
    (role first) (role second)
    (init (sticks {sticks})) (init (control first))
    (succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5) (succ 5 6) (succ 6 7)
    (<= (legal ?p (take 1)) (true (control ?p)) (true (sticks ?n)) (succ ?m ?n))
    (<= (legal ?p (take 2)) (true (control ?p)) (true (sticks ?n)) (succ ?m ?n) (succ ?k ?m))
    (<= (legal ?p noop) (role ?p) (not (true (control ?p))))
    (<= (next (sticks ?m)) (does ?p (take 1)) (true (sticks ?n)) (succ ?m ?n))
    (<= (next (sticks ?k)) (does ?p (take 2)) (true (sticks ?n)) (succ ?m ?n) (succ ?k ?m))
    (<= (next (control second)) (true (control first)))
    (<= (next (control first)) (true (control second)))
    (<= (next (took ?p)) (does ?p (take ?x)))
    (<= terminal (true (sticks 0)))
    (<= (goal ?p 100) (true (took ?p)))
    (<= (goal ?p 0) (role ?p) (not (true (took ?p))))
    """


@pytest.mark.parametrize(
    ("sticks", "value", "moves"),
    [(5, 1.0, ["(take 2)"]), (7, 1.0, ["(take 1)"]), (6, 0.0, ["(take 1)", "(take 2)"])],
)
def test_a_solved_game_stops_the_search_and_plays_the_proof(
    sticks: int, value: float, moves: list[str]
) -> None:
    with StateMachine.from_text(nim(sticks), syntax="kif") as sm:
        first = sm.roles[0]
        strategy = MctsStrategy(seed=1)
        strategy.metagame(sm, first, Budget.seconds(1))
        s0 = sm.initial_state
        budget = 30.0  # far more than a proof of this game takes: it must end the search
        move = strategy.select_move(
            s0, sm.legal_moves(s0, first), Budget.seconds(budget), lambda m: None
        )
        report = strategy.take_reports()[-1]
        assert strategy.root is not None and strategy.root.proven is not None
        assert strategy.root.proven == [value, 1.0 - value]  # the winner by the rule above
        assert report.seconds < budget / 2
        assert str(move) in moves


def test_a_proof_is_kept_by_the_tree_reached() -> None:
    with StateMachine.from_text(nim(4), syntax="kif") as sm:
        first = sm.roles[0]
        strategy = MctsStrategy(seed=2)
        strategy.metagame(sm, first, Budget.seconds(1))
        s0 = sm.initial_state
        move = strategy.select_move(
            s0, sm.legal_moves(s0, first), Budget.seconds(30), lambda m: None
        )
        assert str(move) == "(take 1)"  # leaves 3: a loss for second
        s1 = sm.next_state(s0, [move, "noop"])
        strategy.reached(s1)
        assert strategy.root is not None and strategy.root.proven == [1.0, 0.0]


ENDLESS_SCORE = """
(role a)
(init (score 50)) (init (phase 0))
(<= (legal a good) (true (phase 0)))
(<= (legal a bad) (true (phase 0)))
(<= (legal a wait) (true (phase 1)))
(<= (legal a fidget) (true (phase 1)))
(<= (next (score 80)) (does a good))
(<= (next (score 20)) (does a bad))
(<= (next (score ?s)) (true (score ?s)) (true (phase 1)))
(<= (next (phase 1)) (true (phase ?x)))
(<= terminal (true (score 0)))
(<= (goal a ?s) (true (score ?s)))
"""


@pytest.mark.parametrize("step_by_step", [True, False])
def test_a_playout_cut_short_counts_the_goal_of_the_state_reached(
    step_by_step: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The game never ends: every random game is cut at ``max_depth``, and the goal
    rules say what the first move was worth (80 or 20), which a coin would not."""
    monkeypatch.setattr(mcts, "STEP_BY_STEP", 0.0 if step_by_step else float("inf"))
    with StateMachine.from_text(ENDLESS_SCORE, syntax="kif") as sm:
        a = sm.roles[0]
        strategy = MctsStrategy(seed=4, max_depth=6)
        strategy.metagame(sm, a, Budget.seconds(1))
        s0 = sm.initial_state
        move = strategy.select_move(s0, sm.legal_moves(s0, a), Budget.seconds(0.5), lambda m: None)
        report = strategy.take_reports()[-1]
        assert str(move) == "good"
        # every cut game says 80 (but one at the very end of the budget, with no time
        # for the question, may say 0.5): a coin would make it 50
        assert report.iterations >= 2 and report.value > 75
