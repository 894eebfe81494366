"""A player's side of a GDL-II match: what it knows, and how it moves without the state.

In a GDL-II match a player is never told the state nor the others' moves: each
``(play ID TURN LASTMOVE PERCEPTS)`` gives only its own move of the turn before and what
it perceived after it. ``Knowledge`` keeps that history, checking that the turns come in
order, and the states it cannot tell apart, filtered turn by turn
(``gdl2pl.ggp.belief_tracker``). ``choose_move`` plays by determinized sampling: it takes
states of that belief (``SAMPLES`` at most, weighted), lets the match's strategy choose a
move in each as if the state were known, with an equal share of the time, and plays the
move of most weight among those legal in every such state.

A ``play`` message always gets a move, legal in a state consistent with the history
whenever one is known: the update offers a legal move of the first such state it finds
(the witness, found before any search: ``gdl2pl.ggp.witness``), so a reply cut short by
the clock sends it. When no consistent state is known (the search ran out of time, or
the history cannot have happened in this reading of the game), the move is a guess
(``BeliefTracker.guess_moves``, else ``known_moves``), and the log says why. When the
work of a turn starts too late to take it in (the turn before ran over), the turn is
taken in with the next, and the move is legal in the witness followed through it (one
expansion a turn), else a guess; a reply that must leave before its turn's work has
even begun sends ``Knowledge.spare`` (``gdl2pl.ggp.player``). An error of the reasoner
or of the strategy while choosing is logged and answered like a lost belief: never with
an error.
"""

from __future__ import annotations

import logging
import random
import threading
import time

from gdl2pl.bridge.errors import GameError
from gdl2pl.bridge.swipl import interrupt_after
from gdl2pl.contract import GameMachine
from gdl2pl.contract import MachineState
from gdl2pl.errors import GdlError
from gdl2pl.information import Turn
from gdl2pl.kif import kif_term
from gdl2pl.syntax import Term

from .belief_tracker import BeliefTracker
from .cancel import WorkCancelled
from .protocol import shown
from .strategy import Budget
from .strategy import Offer
from .strategy import Strategy

log = logging.getLogger("gdl2pl.player")

#: The most states searched for one move.
SAMPLES = 8
#: Seconds after the update's deadline at which a Prolog call still running is interrupted.
INTERRUPT_GRACE = 0.05
#: Share of the move's time the update of the belief may take.
SEARCH_SHARE = 0.5
#: Share it may take when the states held all die and it must search for others.
LAST_RESORT_SHARE = 0.85
#: Seconds a turn's update needs at least: with less, the turn is taken in on the next.
MIN_UPDATE = 0.05


class Knowledge:
    """What one role knows of a GDL-II match: its move and percepts of each turn, and
    its belief (``belief``, made on first use by ``tracker``)."""

    def __init__(self) -> None:
        self.history: list[Turn] = []
        self.started = False  # turn 0 was seen
        self.belief: BeliefTracker | None = None
        self.replied: Term | None = None  # the move chosen on the turn before
        #: A move for a reply that must leave before its turn's work has begun (the work
        #: of the turn before ran over): one legal on the turn before, not the one played.
        self.spare: Term | None = None

    def answer(self, move: Term | None) -> Term | None:
        """``move``, remembered as this turn's reply (``replied``)."""
        self.replied = move
        return move

    def learn(
        self,
        sm: GameMachine,
        turn: int,
        last_move: Term | None,
        percepts: tuple[Term, ...] | None,
    ) -> Turn | None:
        """Take in one ``play``/``stop`` message of the GDL-II protocol: turn 0 with
        ``nil`` and ``nil`` first, then turn t >= 1 with the move of turn t and what came
        of it, which is returned (None for turn 0). ``GdlError`` for a turn out of order
        or a missing move; names are spelled as the game does (``sm.term``)."""
        expected = len(self.history) + 1 if self.started else 0
        if turn != expected:
            raise GdlError(f"turn {turn} out of order: expected turn {expected}")
        if turn == 0:
            if last_move is not None or percepts:
                raise GdlError("turn 0 has no last move and no percepts (nil nil)")
            self.started = True
            return None
        if last_move is None:
            raise GdlError(f"turn {turn} must say the move made on the turn before")
        move = sm.term(kif_term(last_move))
        seen = tuple(sm.term(kif_term(p)) for p in percepts or ())
        self.history.append(Turn(move, seen))
        return self.history[-1]

    def tracker(
        self,
        sm: GameMachine,
        role: Term,
        rng: random.Random,
        cancel: threading.Event | None = None,
    ) -> BeliefTracker:
        """The belief of ``role``, made on first use (its work ends with ``WorkCancelled``
        once ``cancel`` is set: the match's, for every turn)."""
        if self.belief is None:
            self.belief = BeliefTracker(sm, role, rng, cancel=cancel)
        return self.belief

    def withdraw(self, turn: int) -> None:
        """Forget ``turn`` if it is the last one learned: the play that brought it was
        refused (no state agrees with it), so the manager may send that turn again."""
        if turn == 0 and self.started and not self.history:
            self.started = False
        elif turn >= 1 and len(self.history) == turn:
            self.history.pop()


#: States with their weights, as determinizations come.
Weighted = list[tuple[MachineState, float]]


def _shared_moves(
    sm: GameMachine, role: Term, states: Weighted, deadline: float
) -> tuple[list[Term], Weighted]:
    """The moves legal for ``role`` in every state of ``states`` (those asked before the
    deadline, the first at least), else (they disagree) the one legal in states of most
    weight; and the states in which they all are. Empty if no state gives the role a
    move."""
    legal: dict[MachineState, list[Term]] = {}
    for s, _ in states:
        if legal and time.monotonic() > deadline:
            break
        legal[s] = sm.legal_moves(s, role)
    states = [(s, w) for s, w in states if s in legal]
    shared = [m for m in legal[states[0][0]] if all(m in ms for ms in legal.values())]
    if not shared:
        weight: dict[Term, float] = {}
        for s, w in states:
            for m in legal[s]:
                weight[m] = weight.get(m, 0.0) + w
        if not weight:
            return [], []
        shared = [max(sorted(weight, key=str), key=weight.__getitem__)]
    return shared, [(s, w) for s, w in states if all(m in legal[s] for m in shared)]


def choose_move(
    sm: GameMachine,
    role: Term,
    knowledge: Knowledge,
    strategy: Strategy,
    budget: Budget,
    offer: Offer,
    rng: random.Random,
) -> Term | None:
    """A move for ``role`` by determinized sampling (see the module doc), after taking
    in the last turn learned (within ``SEARCH_SHARE`` of the budget, ``LAST_RESORT_SHARE``
    for a strategy that does not search or a belief whose states all died): the move with the
    most weight among those the strategy chooses in each determinization; a guess when
    no consistent state is known (leaving out the moves the manager did not take from
    it on the last turns); None only when not even a guess has a legal move. The move
    returned is remembered (``Knowledge.answer``) to be checked against the one the
    manager reports next turn. Raises nothing but what stops the whole program: a
    failure while choosing is logged and answered with the best move known
    (``_fallback``), and ``WorkCancelled`` once the budget's ``cancel`` is set (the
    match was stopped or aborted: nobody waits for the move)."""
    try:
        move = _choose(sm, role, knowledge, strategy, budget, offer, rng)
    except WorkCancelled:
        raise
    except Exception as e:
        if budget.cancel.is_set():
            raise WorkCancelled("the match was stopped") from e
        move = _fallback(sm, role, knowledge, rng, e)
    knowledge.answer(move)
    if knowledge.spare == move and knowledge.belief is not None:
        others = [m for m in knowledge.belief.known_moves() if m != move]
        knowledge.spare = others[-1] if others else move
    return move


def _fallback(
    sm: GameMachine, role: Term, knowledge: Knowledge, rng: random.Random, error: Exception
) -> Term | None:
    """The move of a choice that failed with ``error``: one legal in the last consistent
    state known, else a guess (logged either way)."""
    tracker = knowledge.tracker(sm, role, rng)
    moves = tracker.known_moves()
    if not moves:
        try:
            moves = tracker.guess_moves(tries=1)
        except Exception as again:  # the reasoner fails on every question: nothing known
            log.warning("%s: no guess either: %s", shown(sm.name), _first_line(again))
    log.warning(
        "%s: choosing %s's move failed (%s: %s); playing %s",
        shown(sm.name),
        shown(str(role)),
        type(error).__name__,
        _first_line(error),
        shown(str(moves[0])) if moves else "nothing",
    )
    return moves[0] if moves else None


def _first_line(error: BaseException) -> str:
    """The first line of ``error``'s message, escaped for a log line (``shown``)."""
    text = str(error).strip()
    return shown(text.splitlines()[0] if text else "")


# Alike on purpose: ``choose_move``'s own arguments, passed on whole (it keeps the answer).
def _choose(
    sm: GameMachine,
    role: Term,
    knowledge: Knowledge,
    strategy: Strategy,
    budget: Budget,
    offer: Offer,
    rng: random.Random,
) -> Term | None:
    tracker = knowledge.tracker(sm, role, rng, budget.cancel)
    pending = knowledge.history[len(tracker.history) :]
    if pending:
        turn = pending[-1]
        if knowledge.replied is not None and turn.move != knowledge.replied:
            log.warning(
                "%s: the manager played %s for %s instead of %s: taken as not legal",
                shown(sm.name),
                shown(str(turn.move)),
                shown(str(role)),
                shown(str(knowledge.replied)),
            )
            tracker.refuse(knowledge.replied)
        guess = tracker.guess_moves(turn.move, tries=1) or tracker.known_moves()
        if guess:
            offer(guess[0])  # sent if the update does not end in time
        now, left = time.monotonic(), budget.remaining()
        # a strategy that does not search leaves its time to the belief
        soft = SEARCH_SHARE if strategy.searches else LAST_RESORT_SHARE
        if left < MIN_UPDATE * len(pending):
            # started too late (the turn before ran over): take the turn in next time,
            # but follow the witness through it (an expansion a turn) for a legal move
            witness = tracker.witness.peek(pending)
            moves = sm.legal_moves(witness, role) if witness is not None else []
            tracker.note_legal(moves)
            log.warning(
                "%s: %.2f s left: %d turn(s) of %s taken in on the next play; %s now",
                shown(sm.name),
                left,
                len(pending),
                shown(str(role)),
                "a move legal in the witness" if moves else "a guess",
            )
            moves = moves or guess
            return moves[0] if moves else None

        def witnessed(state: MachineState) -> None:
            """A state consistent with the whole history: offer a move legal there."""
            try:
                moves = sm.legal_moves(state, role)
            except GdlError:  # interrupted, or the reasoner failed: the guess stands
                return
            tracker.note_legal(moves)
            if moves:
                offer(moves[0])

        # one Prolog call may take long: the interrupt ends it at the last resort
        with interrupt_after(LAST_RESORT_SHARE * left + INTERRUPT_GRACE):
            for i, turn in enumerate(pending, 1):  # the turns not taken in share the time
                share = i / len(pending) * left
                last = i == len(pending)
                tracker.update(
                    turn,
                    now + soft * share,
                    now + LAST_RESORT_SHARE * share,
                    on_state=witnessed if last else None,
                )
    legal: list[Term] = []
    states: Weighted = []
    if tracker.states:
        states = tracker.determinizations(SAMPLES)
        legal, states = _shared_moves(sm, role, states, budget.deadline)
        tracker.note_legal(legal)
        if legal:  # known before the strategy's search, which may run over
            knowledge.spare = legal[-1]
    if not legal:
        guess = tracker.guess_moves(deadline=budget.deadline) or tracker.known_moves()
        log.warning(
            "%s: no state consistent with %s's %d turn(s) is known: playing a guess, %s",
            shown(sm.name),
            shown(str(role)),
            len(tracker.history),
            shown(str(guess[0])) if guess else "none found",
        )
        return guess[0] if guess else None
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
