"""The gdl-perf loop in three ways, each run for a fixed time after a warm-up.

The loop: from the initial state until a terminal one, the legal moves of every role,
a uniformly random joint move, the next state; the goals at the end. "states" counts
next-state calls (steps), "playouts" the completed games.

- ``a``: the whole loop inside Prolog, ``StateMachine.playouts`` called in batches;
- ``b``: the loop in Python over the step API, one Prolog call per step
  (``StateMachine.step``);
- ``q``: the loop in Python asking each question separately (``is_terminal``,
  ``all_legal_moves``, ``next_state``): mode ``b`` as it was before ``step``;
- ``c``: the loop through the node cache a search player keeps (``cache.NodeCache``),
  its successors computed by ``StateMachine.step``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass

from cache import Node
from cache import NodeCache

from gdl2pl.bridge import GoalDefinitionError
from gdl2pl.bridge import MoveDefinitionError
from gdl2pl.bridge import StateMachine
from gdl2pl.contract import MachineState
from gdl2pl.syntax import Term

MODES = {
    "a": "in-Prolog playouts",
    "b": "Python step API",
    "q": "Python, one call per question",
    "c": "Python + node cache",
}

#: Mode ``a`` aims each ``playouts`` call at this many seconds (50-200 ms is the goal).
BATCH_SECONDS = 0.1


@dataclass
class Count:
    """What one timed run did."""

    states: int = 0
    playouts: int = 0
    seconds: float = 0.0
    note: str = ""
    bad_goals: int = 0  # playouts whose end has no unique goal per role (a game's bug)

    @property
    def states_per_s(self) -> float:
        return self.states / self.seconds if self.seconds else 0.0

    @property
    def playouts_per_s(self) -> float:
        return self.playouts / self.seconds if self.seconds else 0.0

    def end_playout(self, goals: Callable[..., object], *args: object) -> None:
        """Count a finished playout; ``goals(*args)`` asks for its goals (a playout whose
        end has no unique goal per role counts as bad, not as an error)."""
        try:
            goals(*args)
        except GoalDefinitionError:
            self.bad_goals += 1
        self.playouts += 1

    def add_note(self, text: str) -> None:
        self.note = f"{self.note}; {text}" if self.note else text

    def finish(self) -> Count:
        """Add the bad-goal count to the note; returns self."""
        if self.bad_goals:
            self.add_note(f"{self.bad_goals} playouts ended without unique goals")
        return self


def _no_move(sm: StateMachine, per_role: list[list[object]]) -> None:
    for role, moves in zip(sm.roles, per_role, strict=True):
        if not moves:
            raise MoveDefinitionError(f"{sm.name}: no legal move for role {role}")


def in_prolog(sm: StateMachine, warmup: float, seconds: float) -> Count:
    """Mode ``a``: ``sm.playouts(initial, k)`` in a loop, ``k`` adapted so that a call
    takes about ``BATCH_SECONDS``."""
    start_state = sm.initial_state
    k = 1

    def batch(until: float, count: Count | None) -> None:
        nonlocal k
        while True:
            t0 = time.perf_counter()
            per_role, steps = sm.playouts(start_state, k)
            t1 = time.perf_counter()
            if count is not None:
                count.states += steps
                count.playouts += k
                ends = zip(*per_role, strict=True)  # per playout, (goal, depth) per role
                count.bad_goals += sum(any(v == -1 for v, _ in end) for end in ends)
            per_playout = (t1 - t0) / k
            k = max(1, min(4 * k, round(BATCH_SECONDS / per_playout) if per_playout else 4 * k))
            if t1 >= until:
                return

    if warmup > 0:
        batch(time.perf_counter() + warmup, None)
    count = Count()
    t0 = time.perf_counter()
    batch(t0 + seconds, count)
    count.seconds = time.perf_counter() - t0
    count.note = f"k={k}"
    return count.finish()


class StepCache(NodeCache):
    """``NodeCache`` whose successors come from ``StateMachine.step``: a new state then
    already knows its terminal flag and legal moves, so a node miss on it asks Prolog
    nothing more."""

    def child(self, node: Node, state: MachineState, joint: tuple[Term, ...]) -> MachineState:
        self.steps += 1
        s = node.children.get(joint)
        if s is None:
            s = node.children[joint] = self.sm.step(state, joint).state
        else:
            self.step_hits += 1
        return s


def _timed(step_loop: Callable[[float, Count], None], warmup: float, seconds: float) -> Count:
    """Run ``step_loop(deadline, count)`` for the warm-up, then for the measurement."""
    if warmup > 0:
        step_loop(time.perf_counter() + warmup, Count())
    count = Count()
    t0 = time.perf_counter()
    step_loop(t0 + seconds, count)
    count.seconds = time.perf_counter() - t0
    return count


def python_steps(sm: StateMachine, warmup: float, seconds: float, rng: random.Random) -> Count:
    """Mode ``b``: one ``StateMachine.step`` per step (the successor with its terminal
    flag and legal moves in one Prolog call), ``random.choice`` per role from the legal
    moves it returned; ``goals`` at the end (answered from what the last step
    returned). The initial state's flag and moves are asked once."""
    initial = sm.initial_state
    choice = rng.choice
    clock = time.perf_counter
    step = sm.step

    def loop(deadline: float, count: Count) -> None:
        while True:
            s = initial
            terminal = sm.is_terminal(s)
            legal: Sequence[Sequence[Term]] = [] if terminal else sm.all_legal_moves(s)
            while not terminal:
                if clock() >= deadline:
                    return
                if not all(legal):
                    _no_move(sm, list(map(list, legal)))
                s, terminal, legal, _ = step(s, [choice(ms) for ms in legal])
                count.states += 1
            count.end_playout(sm.goals, s)
            if clock() >= deadline:
                return

    return _timed(loop, warmup, seconds).finish()


# Alike on purpose: each mode writes its loop out in full (as ``python_steps`` does), so
# that what it measures is its own calls and nothing shared (``duplicates`` pairs them).
def python_questions(
    sm: StateMachine, warmup: float, seconds: float, rng: random.Random
) -> Count:
    """Mode ``b`` as it was before ``step``: ``is_terminal``, ``all_legal_moves``,
    ``random.choice`` per role and ``next_state`` at every step, ``goals`` at the end,
    one Prolog call per question (kept to measure what ``step`` saves)."""
    initial = sm.initial_state
    choice = rng.choice
    clock = time.perf_counter

    def loop(deadline: float, count: Count) -> None:
        while True:
            s = initial
            while not sm.is_terminal(s):
                if clock() >= deadline:
                    return
                per_role = sm.all_legal_moves(s)
                if not all(per_role):
                    _no_move(sm, per_role)
                s = sm.next_state(s, [choice(ms) for ms in per_role])
                count.states += 1
            count.end_playout(sm.goals, s)
            if clock() >= deadline:
                return

    return _timed(loop, warmup, seconds).finish()


def cached_steps(
    sm: StateMachine, warmup: float, seconds: float, rng: random.Random, max_nodes: int
) -> Count:
    """Mode ``c``: the questions of mode ``q`` (successors by ``step``) with terminal
    flags, legal moves, successors and goals remembered per state in a bounded LRU
    cache. The cache starts empty after the
    warm-up, so only what the measured run itself visited can be reused."""
    initial = sm.initial_state
    choice = rng.choice
    clock = time.perf_counter
    cache: NodeCache = StepCache(sm, max_nodes)

    def loop(deadline: float, count: Count) -> None:
        nonlocal cache
        cache = StepCache(sm, max_nodes)
        while True:
            s: MachineState = initial
            node = cache.node(s)
            while not node.terminal:
                if clock() >= deadline:
                    return
                if not all(node.legal):
                    _no_move(sm, node.legal)
                s = cache.child(node, s, tuple(choice(ms) for ms in node.legal))
                node = cache.node(s)
                count.states += 1
            count.end_playout(cache.goals, node, s)
            if clock() >= deadline:
                return

    count = _timed(loop, warmup, seconds)
    count.add_note(cache.summary())
    return count.finish()
