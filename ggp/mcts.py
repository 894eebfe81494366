"""Monte Carlo tree search over joint moves (decoupled UCT), with playouts run in Prolog.

Each node of the tree is a state. Every role keeps its own statistics at every node: for
each of its legal moves, how often it was chosen there and the sum of the rewards it
brought that role. An iteration walks down from the root, each role picking its move by
UCB1 on its own statistics (untried moves first), until it meets a joint move not yet in
the tree; it adds the state that move leads to, plays one random game from there inside
Prolog (``StateMachine.playouts``), and adds each role's goal (scaled to [0, 1]) along the
path. In turn-taking games the idle role has a single move, and this is plain UCT.

The search runs until the budget expires (checked between iterations) and answers the
move of its role tried most often at the root, offering it as it goes. A playout cannot be
interrupted, so its length is capped to fit half the time left, from the measured time per
step; a playout cut short counts 0.5 for every role. The tree is kept between steps: the
next root is looked up among the children of the last one. It holds at most ``max_nodes``
nodes (default 200,000): once full, iterations still walk it and play out from its
leaves, but add no node, so memory stays bounded however long the clock.
"""

from __future__ import annotations

import math
import random
import time

from gdl2pl.bridge.errors import GameError
from gdl2pl.bridge.machine import MachineState
from gdl2pl.syntax import Term

from .strategy import Budget
from .strategy import Offer
from .strategy import Strategy


class _Node:
    __slots__ = ("children", "moves", "n", "rewards", "state", "terminal", "totals", "visits")

    def __init__(self, state: MachineState, moves: list[list[Term]], rewards: list[float] | None):
        self.state = state
        self.moves = moves
        self.terminal = rewards is not None
        self.rewards = rewards or []
        self.n = 0
        self.visits = [[0] * len(ms) for ms in moves]
        self.totals = [[0.0] * len(ms) for ms in moves]
        self.children: dict[tuple[int, ...], _Node] = {}


def _size(node: _Node) -> int:
    """The number of nodes in the tree under ``node`` (itself included)."""
    count, todo = 0, [node]
    while todo:
        n = todo.pop()
        count += 1
        todo.extend(n.children.values())
    return count


def _reward(values: list[int | str]) -> float:
    if len(values) == 1 and isinstance(values[0], int):
        return min(max(values[0], 0), 100) / 100.0
    return 0.0


class MctsStrategy(Strategy):
    """Decoupled UCT (see the module doc). ``exploration`` is UCB1's constant."""

    name = "mcts"

    def __init__(
        self,
        seed: int | None = None,
        exploration: float = 1.4,
        max_depth: int = 5000,
        max_nodes: int = 200_000,
    ) -> None:
        self.rng = random.Random(seed)
        self.max_nodes = max_nodes
        self.nodes = 0  # in the tree under the root
        self.seed = seed
        self.exploration = exploration
        self.max_depth = max_depth
        self.root: _Node | None = None
        self.iterations = 0  # of the last search, for logs and tests
        self.step_time: float | None = None  # measured seconds per playout step
        self._budget = Budget(0)

    def metagame(self, sm, role, budget: Budget) -> None:  # type: ignore[no-untyped-def]
        super().metagame(sm, role, budget)
        self.index = list(sm.roles).index(role)
        self.root = None
        if self.seed is not None:
            sm.seed(self.seed)

    def finish(self) -> None:
        self.root = None

    # -- the search ----------------------------------------------------------------------

    def select_move(
        self, state: MachineState, legal: list[Term], budget: Budget, offer: Offer
    ) -> Term:
        root = self._root(state)
        if root.terminal or not root.moves[self.index]:
            return legal[0]
        self.iterations = 0
        self._budget = budget
        next_offer = time.monotonic() + 0.05
        while not budget.expired():
            self._iterate(root)
            self.iterations += 1
            if time.monotonic() >= next_offer:
                offer(self._best(root))
                next_offer = time.monotonic() + 0.05
        move = self._best(root)
        return move if move in legal else legal[0]

    def _root(self, state: MachineState) -> _Node:
        old = self.root
        if old is not None:
            if old.state == state:
                return old
            for child in old.children.values():
                if child.state == state:
                    self.root = child
                    self.nodes = _size(child)
                    return child
        self.root = self._node(state)
        self.nodes = 1
        return self.root

    def _node(self, state: MachineState) -> _Node:
        terminal, legal, goals = self.sm.state_info(state)
        if terminal:
            return _Node(state, [[] for _ in legal], [_reward(vs) for vs in goals])
        if not all(legal):  # a broken game: nobody can move on, count it as a loss for all
            return _Node(state, [[] for _ in legal], [0.0] * len(legal))
        return _Node(state, legal, None)

    def _iterate(self, root: _Node) -> None:
        path: list[tuple[_Node, tuple[int, ...]]] = []
        node = root
        while not node.terminal:
            joint = tuple(self._choose(node, r) for r in range(len(node.moves)))
            path.append((node, joint))
            child = node.children.get(joint)
            if child is None:
                moves = [ms[i] for ms, i in zip(node.moves, joint, strict=True)]
                try:
                    child = self._node(self.sm.next_state(node.state, moves))
                except GameError:
                    child = _Node(node.state, [[] for _ in node.moves], [0.0] * len(node.moves))
                if self.nodes < self.max_nodes:  # a full tree is searched, not grown
                    node.children[joint] = child
                    self.nodes += 1
                rewards = child.rewards if child.terminal else self._playout(child.state)
                break
            node = child
        else:
            rewards = node.rewards
        for n, joint in path:
            n.n += 1
            for r, i in enumerate(joint):
                n.visits[r][i] += 1
                n.totals[r][i] += rewards[r]

    def _choose(self, node: _Node, role: int) -> int:
        visits = node.visits[role]
        if len(visits) == 1:
            return 0
        untried = [i for i, v in enumerate(visits) if v == 0]
        if untried:
            return self.rng.choice(untried)
        totals = node.totals[role]
        log_n = math.log(node.n)
        c = self.exploration
        return max(
            range(len(visits)),
            key=lambda i: totals[i] / visits[i] + c * math.sqrt(log_n / visits[i]),
        )

    def _playout(self, state: MachineState) -> list[float]:
        if self.step_time is None:
            limit = min(self.max_depth, 16)  # a first, short playout measures the game
        else:
            fits = self._budget.remaining() / 2 / self.step_time
            limit = int(max(1, min(self.max_depth, fits)))
        t0 = time.perf_counter()
        try:
            per_role, steps = self.sm.playouts(state, 1, limit)
        except GameError:
            return [0.0] * len(self.sm.roles)
        if steps:
            t = (time.perf_counter() - t0) / steps
            self.step_time = t if self.step_time is None else 0.8 * self.step_time + 0.2 * t
        rewards = []
        for col in per_role:
            value, depth = col[0]
            if value < 0 and depth >= limit:
                rewards.append(0.5)  # cut short: no verdict
            else:
                rewards.append(min(max(value, 0), 100) / 100.0)
        return rewards

    def _best(self, root: _Node) -> Term:
        visits = root.visits[self.index]
        totals = root.totals[self.index]
        best = max(
            range(len(visits)),
            key=lambda i: (visits[i], totals[i] / visits[i] if visits[i] else 0.0),
        )
        return root.moves[self.index][best]
