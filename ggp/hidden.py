"""A player's side of a GDL-II match: what it knows, and how it moves without the state.

In a GDL-II match a player is never told the state nor the others' moves: each
``(play ID TURN LASTMOVE PERCEPTS)`` gives only its own move of the turn before and what
it perceived after it. ``Knowledge`` keeps that history, checking that the turns come in
order. ``choose_move`` plays by determinized sampling: it takes states consistent with the
history (``determinizations``: the exact belief, weighted, where it is small and fits the
budget; else states drawn from it or found by search), lets the match's strategy choose a
move in each as if the state were known, with an equal share of the time, and plays the
move of most weight among those legal in every such state.
"""

from __future__ import annotations

import random
import time

from gdl2pl.bridge.errors import GameError
from gdl2pl.bridge.machine import MachineState
from gdl2pl.bridge.machine import StateMachine
from gdl2pl.errors import GdlError
from gdl2pl.information import NoConsistentStateError
from gdl2pl.information import Turn
from gdl2pl.information import belief
from gdl2pl.information import sample_states
from gdl2pl.kif import kif_term
from gdl2pl.syntax import Term

from .strategy import Budget
from .strategy import Offer
from .strategy import Strategy

#: The most states searched for one move.
SAMPLES = 8
#: States the search for them may expand (``gdl2pl.information.sample_states``'s budget).
SEARCH_BUDGET = 5_000
#: Share of the move's time the search for states may take.
SEARCH_SHARE = 0.5


class Knowledge:
    """What one role knows of a GDL-II match: its move and percepts of each turn."""

    def __init__(self) -> None:
        self.history: list[Turn] = []
        self.started = False  # turn 0 was seen

    def learn(
        self,
        sm: StateMachine,
        turn: int,
        last_move: Term | None,
        percepts: tuple[Term, ...] | None,
    ) -> None:
        """Take in one ``play``/``stop`` message of the GDL-II protocol: turn 0 with
        ``nil`` and ``nil`` first, then turn t >= 1 with the move of turn t and what came
        of it. ``GdlError`` for a turn out of order or a missing move; names are spelled
        as the game does (``sm.term``)."""
        expected = len(self.history) + 1 if self.started else 0
        if turn != expected:
            raise GdlError(f"turn {turn} out of order: expected turn {expected}")
        if turn == 0:
            if last_move is not None or percepts:
                raise GdlError("turn 0 has no last move and no percepts (nil nil)")
            self.started = True
            return
        if last_move is None:
            raise GdlError(f"turn {turn} must say the move made on the turn before")
        move = sm.term(kif_term(last_move))
        seen = tuple(sm.term(kif_term(p)) for p in percepts or ())
        self.history.append(Turn(move, seen))

    def withdraw(self, turn: int) -> None:
        """Forget ``turn`` if it is the last one learned: the play that brought it was
        refused (no state agrees with it), so the manager may send that turn again."""
        if turn == 0 and self.started and not self.history:
            self.started = False
        elif turn >= 1 and len(self.history) == turn:
            self.history.pop()


def determinizations(
    sm: StateMachine, role: Term, knowledge: Knowledge, deadline: float, rng: random.Random
) -> list[tuple[MachineState, float]]:
    """States to search as if known, with weights: every state of the exact belief with
    its probability when there are at most ``SAMPLES``, else ``SAMPLES`` states drawn from
    it, or, past the search budget, found by ``sample_states`` (weight 1 each).
    ``NoConsistentStateError`` when no state agrees with the history."""
    try:
        exact = belief(sm, knowledge.history, role, budget=SEARCH_BUDGET, deadline=deadline)
    except NoConsistentStateError as e:
        if e.exhausted:
            raise
        found = sample_states(
            sm, knowledge.history, role, SAMPLES, budget=SEARCH_BUDGET, rng=rng, deadline=deadline
        )
        return [(s, 1.0) for s in found]
    states = sorted(exact, key=str)
    if len(states) <= SAMPLES:
        return [(s, float(exact[s])) for s in states]
    drawn = rng.choices(states, weights=[float(exact[s]) for s in states], k=SAMPLES)
    return [(s, 1.0) for s in drawn]


def choose_move(
    sm: StateMachine,
    role: Term,
    knowledge: Knowledge,
    strategy: Strategy,
    budget: Budget,
    offer: Offer,
    rng: random.Random,
) -> Term | None:
    """A move for ``role`` by determinized sampling (see the module doc): the move with
    the most weight among those the strategy chooses in each determinization, or None
    when they are terminal or share no legal move. ``NoConsistentStateError`` when no
    state agrees with the history."""
    deadline = time.monotonic() + SEARCH_SHARE * budget.remaining()
    states = determinizations(sm, role, knowledge, deadline, rng)
    legal: list[Term] | None = None
    for s, _ in states:
        if sm.is_terminal(s):
            return None
        moves = sm.legal_moves(s, role)
        legal = moves if legal is None else [m for m in legal if m in moves]
    if not legal:
        return None
    offer(legal[0])
    if len(legal) == 1:
        return legal[0]
    votes: dict[Term, float] = {}
    for i, (s, weight) in enumerate(states):
        if budget.expired():
            break
        share = budget.remaining() / (len(states) - i)
        sub = Budget(time.monotonic() + share, budget.cancel)
        try:
            move = strategy.select_move(s, list(legal), sub, lambda m: None)
        except GameError:
            continue
        if move in legal:
            votes[move] = votes.get(move, 0.0) + weight
            offer(max(legal, key=lambda m: votes.get(m, 0.0)))
    return max(legal, key=lambda m: votes.get(m, 0.0))
