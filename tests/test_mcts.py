"""The MCTS strategy's tree across plays and its proofs (``gdl2pl.ggp.mcts``, issue 51
items 3 and 5): the subtree of the state reached is kept with its statistics."""

from __future__ import annotations

import pytest
from conftest import EXAMPLES

from gdl2pl.bridge import StateMachine
from gdl2pl.ggp.mcts import MctsStrategy
from gdl2pl.ggp.strategy import Budget

TTT = EXAMPLES / "ticTacToe.kif"

pytestmark = pytest.mark.usefixtures("prolog_main_thread")


def _search(strategy: MctsStrategy, sm: StateMachine, state: object, seconds: float = 0.3) -> None:
    role = strategy.role
    legal = sm.legal_moves(state, role)  # type: ignore[arg-type]
    strategy.select_move(state, legal, Budget.seconds(seconds), lambda m: None)  # type: ignore[arg-type]


def test_the_subtree_reached_is_kept_with_its_statistics() -> None:
    with StateMachine.from_file(TTT) as sm:
        x = sm.roles[0]
        strategy = MctsStrategy(seed=3)
        strategy.metagame(sm, x, Budget.seconds(1))
        s0 = sm.initial_state
        _search(strategy, sm, s0)
        root = strategy.root
        assert root is not None and root.n > 0
        # x marks a corner, o answers in the centre: x's next state is a grandchild
        first = sm.next_state(s0, ["(mark 1 1)", "noop"])
        second = sm.next_state(first, ["noop", "(mark 2 2)"])
        child = next(c for c in root.children.values() if c.state == first)
        grandchild = next(c for c in child.children.values() if c.state == second)
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
        s0 = sm.initial_state
        _search(strategy, sm, s0)
        assert strategy.root is not None
        s2 = sm.next_state(sm.next_state(s0, ["(mark 1 1)", "noop"]), ["noop", "(mark 2 2)"])
        visited = [
            g.n
            for c in strategy.root.children.values()
            for g in c.children.values()
            if g.state == s2
        ]
        _search(strategy, sm, s2, 0.1)
        assert strategy.take_reports()[-1].reused == visited[0] > 0


def test_a_state_not_in_the_tree_drops_it() -> None:
    with StateMachine.from_file(TTT) as sm:
        x = sm.roles[0]
        strategy = MctsStrategy(seed=5, max_nodes=1)  # the tree never grows past its root
        strategy.metagame(sm, x, Budget.seconds(1))
        s0 = sm.initial_state
        _search(strategy, sm, s0, 0.1)
        strategy.reached(sm.next_state(s0, ["(mark 1 1)", "noop"]))
        assert strategy.root is None and strategy.nodes == 0
