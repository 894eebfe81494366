"""What a role knows in a GDL-II game, and the states it cannot tell apart.

A role never sees the state of a GDL-II game: it knows the initial state, its own moves,
and after each turn the percepts its ``sees`` rules gave it. Its *history* is that list of
``Turn(move, percepts)``; the states it cannot tell apart (its information set) are the
states reached by some sequence of legal joint moves in which it played its moves and
perceived exactly its percepts, turn by turn.

How likely each of them is depends on how the others play. Here chance (``random``) picks
uniformly, as GDL-II says, and so, for want of a model of them, do the other players: a
joint move's weight is the product of ``1 / (number of legal moves)`` over the other roles
(``GameMachine.consistent_children``: the joint moves tried in batches, the deadline
asked before each, so that a turn of hundreds of thousands of them ends at the deadline,
not after it).

- ``belief`` computes that distribution exactly, turn by turn (forward filtering), as long
  as it needs at most ``budget`` states expanded.
- ``sample_states`` draws from the exact belief when it fits the budget; otherwise it
  finds states by randomized depth-first search from the initial state: at each turn it
  tries the consistent joint moves in a random order drawn by weight, and backtracks out
  of subtrees that hold no consistent state (remembered across the samples of one call).
  Those samples are consistent but not exactly distributed as the belief.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Iterable
from collections.abc import Sequence
from fractions import Fraction
from typing import NamedTuple

from gdl2pl.contract import MachineState
from gdl2pl.contract.errors import GameError
from gdl2pl.contract.errors import IllegalMoveError
from gdl2pl.contract.errors import NoConsistentStateError
from gdl2pl.contract.game_machine import Consistent
from gdl2pl.contract.game_machine import GameMachine
from gdl2pl.syntax import Term


class Turn(NamedTuple):
    """One turn as a role knows it: the move it played, and what it perceived after."""

    move: Term | str
    percepts: Iterable[Term | str]


History = Sequence[Turn | tuple[Term | str, Iterable[Term | str]]]


def _whole(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a whole number >= 1, not {value!r}")
    return value


def _turns(sm: GameMachine, history: History, role: Term | str) -> list[Turn]:
    """The history with every move and percept checked (``TransitionDefinitionError`` for
    one that is not a ground term) and spelled as the game does."""
    if sm.is_random(role):
        raise GameError(f"{sm.name}: the random role has no view of the game")
    return [Turn(sm.term(move), tuple(sm.term(p) for p in percepts)) for move, percepts in history]


class _Tree:
    """The consistent successors of each (turn, state) asked: at most ``budget`` asked,
    and none after ``deadline`` (``time.monotonic()``), if given."""

    def __init__(
        self,
        sm: GameMachine,
        role: Term | str,
        turns: list[Turn],
        budget: int,
        deadline: float | None = None,
    ):
        self.sm = sm
        self.role = role
        self.turns = turns
        self.budget = budget
        self.deadline = deadline
        self.known: dict[tuple[int, MachineState], list[Consistent]] = {}

    def children(self, depth: int, state: MachineState) -> list[Consistent] | None:
        """What agrees with turn ``depth`` from ``state``; None once the budget is spent."""
        key = (depth, state)
        known = self.known.get(key)
        if known is not None:
            return known
        if self.budget <= 0 or (self.deadline is not None and time.monotonic() > self.deadline):
            return None
        self.budget -= 1
        turn = self.turns[depth]
        kids: list[Consistent] = []
        if not self.sm.is_terminal(state):
            try:
                stream = self.sm.consistent_children(
                    state, self.role, turn.move, turn.percepts, stop=self._late
                )
            except IllegalMoveError:  # the role's move is not legal here: no such state
                stream = None
            kids = list(stream) if stream is not None else []
            if stream is not None and not stream.complete:  # the deadline came
                return None
        self.known[key] = kids
        return kids

    def _late(self) -> bool:
        return self.deadline is not None and time.monotonic() > self.deadline


def _none_found(sm: GameMachine, role: Term | str, turns: int, budget: int) -> Exception:
    return NoConsistentStateError(
        f"{sm.name}: no state consistent with the {turns} turn(s) of {role}'s history "
        f"was found within the budget of {budget:,} states expanded; pass a larger budget",
        exhausted=False,
    )


def _impossible(sm: GameMachine, role: Term | str, turns: int) -> Exception:
    return NoConsistentStateError(
        f"{sm.name}: no state is consistent with the {turns} turn(s) of {role}'s history: "
        "its moves and percepts cannot have happened",
        exhausted=True,
    )


def belief(
    sm: GameMachine,
    history: History,
    role: Term | str,
    *,
    budget: int = 10_000,
    deadline: float | None = None,
) -> dict[MachineState, Fraction]:
    """The exact probability of each state ``role`` cannot tell apart after ``history``
    (chance and the other players choosing uniformly; see the module doc), expanding at
    most ``budget`` states, none after ``deadline`` (``time.monotonic()``) if given.
    ``NoConsistentStateError`` when the history is impossible or the budget runs out."""
    turns = _turns(sm, history, role)
    tree = _Tree(sm, role, turns, _whole("the budget", budget), deadline)
    current: dict[MachineState, Fraction] = {sm.initial_state: Fraction(1)}
    for depth in range(len(turns)):
        following: dict[MachineState, Fraction] = {}
        for state, p in current.items():
            kids = tree.children(depth, state)
            if kids is None:
                raise _none_found(sm, role, len(turns), budget)
            for kid in kids:
                following[kid.state] = following.get(kid.state, Fraction(0)) + p * kid.weight
        if not following:
            raise _impossible(sm, role, len(turns))
        current = following
    total = sum(current.values())
    return {s: p / total for s, p in current.items()}


def sample_states(
    sm: GameMachine,
    history: History,
    role: Term | str,
    n: int = 1,
    *,
    budget: int = 10_000,
    rng: random.Random | None = None,
    deadline: float | None = None,
) -> list[MachineState]:
    """``n`` states consistent with ``role``'s ``history`` (see the module doc): drawn
    from the exact ``belief`` when it needs at most ``budget`` states expanded, else found
    by randomized depth-first search with a budget of as many again (then fewer than
    ``n`` when that runs out after the first); no state is expanded after ``deadline``
    (``time.monotonic()``), if given. ``NoConsistentStateError`` when none is found."""
    _whole("the number of states", n)
    rng = rng or random.Random()
    try:
        exact = belief(sm, history, role, budget=budget, deadline=deadline)
    except NoConsistentStateError as e:
        if e.exhausted:
            raise
    else:
        states = sorted(exact, key=str)
        return rng.choices(states, weights=[float(exact[s]) for s in states], k=n)
    turns = _turns(sm, history, role)
    search = _Search(_Tree(sm, role, turns, budget, deadline), rng)
    found: list[MachineState] = []
    while len(found) < n:
        state = search.one()
        if state is None:
            break
        found.append(state)
    if found:
        return found
    if search.exhausted:
        raise _impossible(sm, role, len(turns))
    raise _none_found(sm, role, len(turns), budget)


class _Search:
    """Randomized depth-first search for states at the end of a history; remembers the
    dead (turn, state) pairs across samples."""

    def __init__(self, tree: _Tree, rng: random.Random) -> None:
        self.tree = tree
        self.rng = rng
        self.dead: set[tuple[int, MachineState]] = set()
        self.exhausted = False

    def _order(self, depth: int, kids: list[Consistent]) -> list[MachineState]:
        """The live children, in a random order drawn by weight, the first to try last."""
        keyed: dict[MachineState, float] = {}
        for kid in kids:
            if (depth + 1, kid.state) in self.dead:
                continue
            # Efraimidis-Spirakis: sorting by u ** (1 / w) draws an order by weight
            key = math.log(1.0 - self.rng.random()) / float(kid.weight)
            keyed[kid.state] = max(key, keyed.get(kid.state, -math.inf))
        return sorted(keyed, key=keyed.__getitem__)

    def one(self) -> MachineState | None:
        """One state at the end of the history, or None (then either the tree is
        exhausted or the budget spent)."""
        goal = len(self.tree.turns)
        path: list[tuple[int, MachineState, list[MachineState]]] = []
        depth, state = 0, self.tree.sm.initial_state
        if (depth, state) in self.dead:
            self.exhausted = True
            return None
        while True:
            if depth == goal:
                return state
            kids = self.tree.children(depth, state)
            if kids is None:
                return None
            todo = self._order(depth, kids)
            if todo:
                path.append((depth, state, todo))
                depth, state = depth + 1, todo.pop()
                continue
            self.dead.add((depth, state))  # a dead end: back to the nearest open choice
            while path:
                d, s, rest = path[-1]
                rest[:] = [k for k in rest if (d + 1, k) not in self.dead]
                if rest:
                    depth, state = d + 1, rest.pop()
                    break
                self.dead.add((d, s))
                path.pop()
            else:
                self.exhausted = True
                return None
