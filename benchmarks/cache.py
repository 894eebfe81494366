"""A bounded transposition cache of the kind a search player keeps over the step API.

One node per state (an LRU of at most ``max_nodes``): whether it is terminal, the
legal moves per role, the successor of each joint move tried, and the goals. In random
playouts it pays only where states recur, i.e. in games with small state spaces.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from dataclasses import field

from gdl2pl.bridge import StateMachine
from gdl2pl.contract import MachineState
from gdl2pl.syntax import Term


@dataclass
class Node:
    """What is known of one state."""

    terminal: bool
    legal: list[list[Term]]
    children: dict[tuple[Term, ...], MachineState] = field(default_factory=dict)
    goals: list[int] | None = None


class NodeCache:
    """State -> ``Node``, least recently used first out; counts hits and misses."""

    def __init__(self, sm: StateMachine, max_nodes: int) -> None:
        self.sm = sm
        self.max_nodes = max_nodes
        self.nodes: OrderedDict[MachineState, Node] = OrderedDict()
        self.hits = 0
        self.misses = 0
        self.step_hits = 0
        self.steps = 0

    def node(self, state: MachineState) -> Node:
        """The node of ``state``, asking the state machine on a miss."""
        n = self.nodes.get(state)
        if n is not None:
            self.hits += 1
            self.nodes.move_to_end(state)
            return n
        self.misses += 1
        terminal = self.sm.is_terminal(state)
        n = Node(terminal, [] if terminal else self.sm.all_legal_moves(state))
        self.nodes[state] = n
        if len(self.nodes) > self.max_nodes:
            self.nodes.popitem(last=False)
        return n

    def child(self, node: Node, state: MachineState, joint: tuple[Term, ...]) -> MachineState:
        """The successor of ``state`` (whose node is ``node``) under ``joint``."""
        self.steps += 1
        s = node.children.get(joint)
        if s is None:
            s = node.children[joint] = self.sm.next_state(state, joint)
        else:
            self.step_hits += 1
        return s

    def goals(self, node: Node, state: MachineState) -> list[int]:
        """The goals of the terminal ``state``."""
        if node.goals is None:
            node.goals = self.sm.goals(state)
        return node.goals

    def summary(self) -> str:
        """Hit rates (states, steps) and size, for the report."""
        total = self.hits + self.misses
        nodes = 100.0 * self.hits / total if total else 0.0
        steps = 100.0 * self.step_hits / self.steps if self.steps else 0.0
        return f"hits: {nodes:.0f}% states, {steps:.0f}% steps; {len(self.nodes)} nodes"
