"""Monte Carlo tree search over joint moves (decoupled UCT), with playouts run in the engine.

Each node of the tree is a state. Every role keeps its own statistics at every node: for
each of its legal moves, how often it was chosen there and the sum of the rewards it
brought that role. An iteration walks down from the root, each role picking its move by
UCB1 on its own statistics (untried moves first), until it meets a joint move not yet in
the tree; it adds the state that move leads to (one ``step`` of the machine), plays one
random game from there, and adds each role's goal (scaled to [0, 1]) along the path. In
turn-taking games the idle role has a single move, and this is plain UCT.

The search answers the move of its role tried most often at the root, offering it as it
goes, and reports what it did (``SearchReport``: iterations, depth, the move's visits and
value, time against the budget).

Keeping the budget. The search returns within ``SEARCH_MARGIN`` seconds after its
budget's deadline unless one question to the game takes more than ``GROWTH`` times the
longest question before it. A question to the reasoner cannot be stopped half-way
(an interrupt that strikes inside SWI-Prolog's tabling can leave the thread's tables
broken, after which every question fails), so the search starts a question only when
the time left holds ``GROWTH`` times the longest one seen so far (``longest``):

- a random game of a game whose steps are slow (``STEP_BY_STEP`` seconds or more, or
  not measured yet) is played from Python, one ``step`` per question, the clock checked
  before each; it is cut short after half the time left when it began, and dropped with
  its iteration when the time left does not hold another step;
- a fast game's random game runs inside the engine in one call, its length capped to
  fit half the time left from the measured time per step;
- a random game cut short counts, for each role, its goal value in the state reached
  where the goal rules give it one there (a game's own estimate: a material count, a
  score so far), else its goal value in the state the random game began from (the
  tree's leaf, asked once), else 0.5 (no verdict);
- automatic garbage collection waits until the search is over, and the tree is not
  scanned by the collections between searches (``gdl2pl.ggp.collection``): a full
  collection of a connectFour tree took 100-450 ms.

The search knows when it is done (an MCTS-solver): a terminal state is proven, its value
every role's goal; a node where one role alone has a choice (a turn) is proven as soon
as a child gives that role the most a goal can (100), or once every child is proven (the
role's best of them; in a game of more than two roles the others get the values of the
child the role would take, the max-n reading); a node of simultaneous choices is proven
only when all its children are, with one value. An iteration that reaches a proven node
stops there and counts its value, with no question to the game; a proven root ends the
search at once, and the move chosen is then the proof's. Without a proof, a move
proven to give the role 0 is chosen only if every move is.

The tree is kept between steps (tree reuse): when the match reaches a state (``reached``,
the player calls it at every step, forced moves too) the tree is re-rooted at the node of
that state, so the visits of the child reached -- searched on the turns before, the
opponent's included -- count for the next search; ``select_move`` looks the state up
too, down to ``REUSE_DEPTH`` joint moves below the root, for a caller that does not say
which states were reached. Every other node is dropped. The tree holds at most
``max_nodes`` nodes (default 200,000): once full, iterations still walk it and play out
from its leaves, but add no node, so memory stays bounded however long the clock.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence

from gdl2pl.bridge.errors import GameError
from gdl2pl.contract import MachineState
from gdl2pl.contract.game_machine import goal_value
from gdl2pl.syntax import Term

from .collection import Hold
from .collection import paused
from .strategy import SEARCH_MARGIN
from .strategy import Budget
from .strategy import Offer
from .strategy import SearchReport
from .strategy import Strategy

__all__ = ["SEARCH_MARGIN", "MctsStrategy"]

#: A question is asked only if the time left holds this many times the longest before it.
GROWTH = 1.5
#: Random games whose steps take this long (seconds) or longer are played step by step.
STEP_BY_STEP = 0.001
#: How many joint moves below its root the tree is searched for a state to re-root at.
REUSE_DEPTH = 2
#: Pondering searches in slices of this many seconds (at least): the garbage collector
#: runs between them.
PONDER_SLICE = 1.0


class _Node:
    __slots__ = (
        "children",
        "estimate",
        "moves",
        "n",
        "proven",
        "rewards",
        "size",
        "state",
        "terminal",
        "totals",
        "visits",
    )

    def __init__(
        self,
        state: MachineState,
        moves: Sequence[Sequence[Term]],
        rewards: list[float] | None,
        proven: bool = False,
    ):
        """``rewards``: every role's reward in a terminal node (or a broken one, which
        is not ``proven``: its rewards are a convention, not the game's goals)."""
        self.state = state
        self.moves = moves
        self.terminal = rewards is not None
        self.rewards = rewards or []
        #: every role's value (rewards in [0, 1]) once the game from here is decided
        self.proven: list[float] | None = self.rewards if proven else None
        #: every role's goal value in this state, or None (asked once, for cut playouts)
        self.estimate: list[float | None] | None = None
        self.n = 0
        self.visits = [[0] * len(ms) for ms in moves]
        self.totals = [[0.0] * len(ms) for ms in moves]
        self.children: dict[tuple[int, ...], _Node] = {}
        self.size = 1  # nodes in the tree under this one, itself included


def _size(node: _Node) -> int:
    """The number of nodes in the tree under ``node`` (itself included), counted (what
    ``_Node.size`` keeps as the tree grows)."""
    count, todo = 0, [node]
    while todo:
        n = todo.pop()
        count += 1
        todo.extend(n.children.values())
    return count


def _find(root: _Node, state: MachineState, depth: int = REUSE_DEPTH) -> _Node | None:
    """The node of ``state`` at most ``depth`` joint moves below ``root`` (the shallowest;
    ``None`` if there is none)."""
    level = [root]
    for below in range(depth + 1):
        for node in level:
            if node.state == state:
                return node
        if below < depth:
            level = [child for node in level for child in node.children.values()]
    return None


def _mover(node: _Node) -> int | None:
    """The one role with more than one move at ``node`` (None if none or several)."""
    movers = [r for r, ms in enumerate(node.moves) if len(ms) > 1]
    return movers[0] if len(movers) == 1 else None


def _joint_moves(node: _Node) -> int:
    return math.prod(len(ms) for ms in node.moves)


def _prove(node: _Node) -> bool:
    """Whether ``node`` is proven, proving it from its children if it can (see the
    module doc)."""
    if node.proven is not None:
        return True
    if node.terminal:
        return False  # a broken node: its rewards are no proof
    children = list(node.children.values())
    complete = len(children) == _joint_moves(node) and all(
        c.proven is not None for c in children
    )
    mover = _mover(node)
    if mover is None:
        if complete and all(c.proven == children[0].proven for c in children):
            node.proven = children[0].proven
        return node.proven is not None
    best: list[float] | None = None
    for child in children:
        value = child.proven
        if value is not None and (best is None or value[mover] > best[mover]):
            best = value
    if best is not None and (best[mover] >= 1.0 or complete):
        node.proven = best
    return node.proven is not None


def _scaled(value: int | str | None) -> float:
    """A goal value as a reward in [0, 1] (0 for one that is not a number)."""
    return min(max(value, 0), 100) / 100.0 if isinstance(value, int) else 0.0


def _reward(values: list[int | str]) -> float:
    return _scaled(values[0]) if len(values) == 1 else 0.0


class _OutOfTime(Exception):
    """The time left does not hold the next question: the iteration is dropped."""


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
        self.iterations = 0  # of the last search
        self.depth = 0  # the deepest node the last search reached, below its root
        self.step_time: float | None = None  # measured seconds per step of a random game
        self.longest = 0.0  # seconds of the longest single question to the game so far
        self.reports: list[SearchReport] = []
        self._budget = Budget(0)
        self._hold: Hold | None = None

    def metagame(self, sm, role, budget: Budget) -> None:  # type: ignore[no-untyped-def]
        super().metagame(sm, role, budget)
        self.index = list(sm.roles).index(role)
        self.root = None
        if self._hold is None:
            self._hold = Hold()  # the tree is left out of collections until finish
        if self.seed is not None:
            sm.seed(self.seed)

    def reached(self, state: MachineState) -> None:
        """Re-root the tree at ``state``'s node (dropped if it holds none)."""
        if self.root is not None:
            self.root = _find(self.root, state)
            self.nodes = self.root.size if self.root is not None else 0

    def ponder(self, state: MachineState, budget: Budget) -> None:
        """Grow the tree of ``state`` until ``budget`` ends or its root is proven, in
        slices (``PONDER_SLICE``, or three times the longest question if longer), each
        as a search is (the collector paused), with no report and no move."""
        if getattr(self, "sm", None) is None:
            return
        while not budget.expired():
            seconds = max(PONDER_SLICE, GROWTH * 2 * self.longest)
            part = Budget(min(budget.deadline, time.monotonic() + seconds), budget.cancel)
            self._budget = part
            with paused():
                root = self._root(state)
                if root.terminal or root.proven is not None:
                    return
                before = self.iterations
                self._search(root, part, lambda move: None)
            if self.iterations == before and not budget.expired():
                return  # a whole slice could not hold a question: nothing more to do

    def finish(self) -> None:
        self.root = None
        if self._hold is not None:
            self._hold.release()
            self._hold = None

    # -- the search ----------------------------------------------------------------------

    def select_move(
        self, state: MachineState, legal: list[Term], budget: Budget, offer: Offer
    ) -> Term:
        began = time.monotonic()
        self.iterations = self.depth = 0
        self._budget = budget
        with paused():
            root = self._root(state)
            reused = root.n
            if root.terminal or not root.moves[self.index]:
                return legal[0]
            self._search(root, budget, offer)
        best = self._best_index(root)
        move = root.moves[self.index][best]
        visits = root.visits[self.index][best]
        self.reports.append(
            SearchReport(
                move=move,
                iterations=self.iterations,
                depth=self.depth,
                visits=visits,
                value=100 * root.totals[self.index][best] / visits if visits else 0.0,
                seconds=time.monotonic() - began,
                budget=budget.deadline - began,
                nodes=self.nodes,
                reused=reused,
                proven=None if root.proven is None else 100 * root.proven[self.index],
            )
        )
        return move if move in legal else legal[0]

    def _search(self, root: _Node, budget: Budget, offer: Offer) -> None:
        next_offer = time.monotonic() + 0.05
        while not budget.expired() and root.proven is None:
            try:
                self._iterate(root)
            except _OutOfTime:
                break
            self.iterations += 1
            if time.monotonic() >= next_offer:
                offer(self._best(root))
                next_offer = time.monotonic() + 0.05

    def _fits(self) -> bool:
        """The time left holds the next question (see the module doc)."""
        return self._budget.remaining() > GROWTH * self.longest

    def _asked(self, since: float) -> None:
        """A question that began at ``since`` (``time.perf_counter()``) was answered."""
        self.longest = max(self.longest, time.perf_counter() - since)

    def _root(self, state: MachineState) -> _Node:
        old = self.root
        found = _find(old, state) if old is not None else None
        if found is not None:
            self.root = found
            self.nodes = found.size
            return found
        t0 = time.perf_counter()
        terminal, legal, goals = self.sm.state_info(state)
        self._asked(t0)
        if terminal:
            root = _Node(state, [[] for _ in legal], [_reward(vs) for vs in goals], proven=True)
        elif not all(legal):  # a broken game: nobody can move on
            root = _Node(state, [[] for _ in legal], [0.0] * len(legal))
        else:
            root = _Node(state, legal, None)
        self.root = root
        self.nodes = 1
        return root

    def _child(self, node: _Node, joint: tuple[int, ...]) -> _Node:
        """The node of the state ``joint`` leads to from ``node`` (one question)."""
        moves = [ms[i] for ms, i in zip(node.moves, joint, strict=True)]
        if not self._fits():
            raise _OutOfTime
        t0 = time.perf_counter()
        try:
            step = self.sm.step(node.state, moves)
        except GameError:  # a broken game: count it as a loss for all
            return _Node(node.state, [[] for _ in node.moves], [0.0] * len(node.moves))
        finally:
            self._asked(t0)
        if step.terminal:
            goals = step.goals or (None,) * len(step.legal)
            rewards = [_scaled(g) for g in goals]
            return _Node(step.state, [[] for _ in step.legal], rewards, proven=True)
        if not all(step.legal):  # nobody can move on: a loss for all
            return _Node(step.state, [[] for _ in step.legal], [0.0] * len(step.legal))
        return _Node(step.state, step.legal, None)

    def _iterate(self, root: _Node) -> None:
        path: list[tuple[_Node, tuple[int, ...]]] = []
        node = root
        while not node.terminal and node.proven is None:
            joint = tuple(self._choose(node, r) for r in range(len(node.moves)))
            path.append((node, joint))
            child = node.children.get(joint)
            if child is None:
                child = self._child(node, joint)
                if self.nodes < self.max_nodes:  # a full tree is searched, not grown
                    node.children[joint] = child
                    self.nodes += 1
                    for n, _ in path:
                        n.size += 1
                self.depth = max(self.depth, len(path))
                rewards = child.rewards if child.terminal else self._playout(child)
                node = child
                break
            node = child
        else:
            rewards = node.proven if node.proven is not None else node.rewards
            self.depth = max(self.depth, len(path))
        for n, joint in path:
            n.n += 1
            for r, i in enumerate(joint):
                n.visits[r][i] += 1
                n.totals[r][i] += rewards[r]
        if node.proven is not None:  # only a proven end can prove more
            for n, _ in reversed(path):  # a proof climbs as far as it proves
                if not _prove(n):
                    break

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

    def _playout(self, node: _Node) -> list[float]:
        """Each role's reward for a random game from ``node``'s state."""
        if self.step_time is None or self.step_time >= STEP_BY_STEP:
            return self._walk(node)
        fits = self._budget.remaining() / 2 / self.step_time
        limit = int(max(1, min(self.max_depth, fits)))
        t0 = time.perf_counter()
        try:
            per_role, steps = self.sm.playouts(node.state, 1, limit)
        except GameError:
            return [0.0] * len(self.sm.roles)
        if steps:
            self._measured((time.perf_counter() - t0) / steps)
        rewards: list[float | None] = []
        for col in per_role:
            value, depth = col[0]
            if value < 0 and depth >= limit:
                rewards.append(None)  # cut short, no goal value in the state reached
            else:
                rewards.append(_scaled(value))  # at a cut: the goal of the state reached
        return self._estimated(rewards, node)

    def _goals(self, state: MachineState) -> list[float | None]:
        """Every role's goal value in ``state`` as a reward (None where the rules give
        none or several), or all None if the time left does not hold the question."""
        roles = len(self.sm.roles)
        if not self._fits():
            return [None] * roles
        t0 = time.perf_counter()
        try:
            values = self.sm.goal_values(state)
        except GameError:
            return [None] * roles
        finally:
            self._asked(t0)
        return [None if (v := goal_value(vs)) is None else _scaled(v) for vs in values]

    def _estimated(self, rewards: list[float | None], node: _Node) -> list[float]:
        """``rewards`` of a random game from ``node`` that was cut short, None where the
        state it reached gives no goal value: there, the goal value of ``node``'s state
        (asked once a node), else 0.5 (no verdict)."""
        if all(r is not None for r in rewards):
            return rewards  # type: ignore[return-value]
        if node.estimate is None and self._fits():
            node.estimate = self._goals(node.state)
        leaf = node.estimate or [None] * len(rewards)
        return [
            r if r is not None else (e if e is not None else 0.5)
            for r, e in zip(rewards, leaf, strict=True)
        ]

    def _walk(self, node: _Node) -> list[float]:
        """A random game from ``node``'s state played one question a step, the clock
        checked before each: cut short (``_estimated`` from the state reached) after half
        the time left when it began, dropped (``_OutOfTime``) when the time left does not
        hold a step."""
        roles = len(node.moves)
        state, legal = node.state, node.moves
        cut = time.monotonic() + self._budget.remaining() / 2
        for _ in range(self.max_depth):
            if not self._fits():
                raise _OutOfTime
            if time.monotonic() > cut:
                return self._estimated(self._goals(state), node)
            joint = [self.rng.choice(ms) for ms in legal]
            t0 = time.perf_counter()
            try:
                step = self.sm.step(state, joint)
            except GameError:
                return [0.0] * roles
            finally:
                self._asked(t0)
            self._measured(time.perf_counter() - t0)
            if step.terminal:
                return [_scaled(g) for g in step.goals or (None,) * roles]
            if not all(step.legal):
                return [0.0] * roles
            state, legal = step.state, step.legal
        return self._estimated(self._goals(state), node)  # cut short at max_depth

    def _measured(self, seconds_per_step: float) -> None:
        t = seconds_per_step
        self.step_time = t if self.step_time is None else 0.8 * self.step_time + 0.2 * t

    def _best(self, root: _Node) -> Term:
        return root.moves[self.index][self._best_index(root)]

    def _best_index(self, root: _Node) -> int:
        """The role's move proven best at ``root``, if the search proved one (a win, or
        the best of moves all proven); else the move tried most often (of best value
        among those), a move proven to give the role 0 only if all are."""
        visits = root.visits[self.index]
        totals = root.totals[self.index]
        proven = self._proven_moves(root)
        score = [-1.0 if v is None else v for v in proven]  # -1: not proven
        known = [v for v in score if v >= 0.0]
        if known and (max(known) >= 1.0 or len(known) == len(score)):
            return max(range(len(score)), key=lambda i: score[i])
        return max(
            range(len(visits)),
            key=lambda i: (
                score[i] != 0.0,  # a proven 0 last
                visits[i],
                totals[i] / visits[i] if visits[i] else 0.0,
            ),
        )

    def _proven_moves(self, root: _Node) -> list[float | None]:
        """For each of the role's moves at ``root``, the role's proven value of the state
        it leads to (None where unproven, or where others choose too: a simultaneous
        move leads to several states)."""
        moves = root.moves[self.index]
        if _mover(root) != self.index:
            return [None] * len(moves)
        values: list[float | None] = [None] * len(moves)
        for joint, child in root.children.items():
            if child.proven is not None:
                values[joint[self.index]] = child.proven[self.index]
        return values
