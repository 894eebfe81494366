"""A GDL-II player's belief, kept from turn to turn within the clock.

``BeliefTracker`` holds weighted states consistent with one role's history (its moves and
percepts so far). Each ``play`` message adds a turn, and ``update`` filters the states
held by it: every state is expanded once (``StateMachine.consistent_successors``, the
heaviest first) and its consistent children, weighted as ``gdl2pl.bridge.information``
weighs them, replace it. So no turn costs more than one expansion per state held.

- The belief is *exact* while it holds every consistent state, at most ``exact_limit``
  of them, and each update expanded them all before its deadline.
- Past that it is a set of *particles*: at most ``particles`` states drawn by weight
  (re-sampled whenever the filtered set grows beyond it). They are consistent, but their
  weights only approximate the belief.
- When every particle dies (the true state was not among them) or an update runs out of
  time before any child is found, the belief is re-seeded by ``sm.sample_states`` over
  the whole history (randomized search from the initial state) within what is left of
  the deadline; if that finds nothing either, the belief is *lost* until a later turn's
  search succeeds.
- A ``play`` message says the game goes on: terminal states are dropped from the belief.

``guess_moves`` serves when no consistent state is known: the moves legal for the role
in states reached from the last belief by the role's move, percepts not considered.
"""

from __future__ import annotations

import logging
import random
import time
from collections import Counter

from gdl2pl.bridge.errors import GameError
from gdl2pl.bridge.information import NoConsistentStateError
from gdl2pl.bridge.information import Turn
from gdl2pl.bridge.machine import MachineState
from gdl2pl.bridge.machine import StateMachine
from gdl2pl.syntax import Term

log = logging.getLogger("gdl2pl.player")

#: The most states an exact belief may hold before it becomes particles.
EXACT_LIMIT = 1_000
#: How many particles are kept once the belief is not exact.
PARTICLES = 64
#: States the re-seeding search may expand (the deadline bounds it too).
RESEED_BUDGET = 1_000_000


class BeliefTracker:
    """Weighted states ``role`` cannot tell apart, filtered turn by turn (module doc)."""

    def __init__(
        self,
        sm: StateMachine,
        role: Term,
        rng: random.Random,
        *,
        exact_limit: int = EXACT_LIMIT,
        particles: int = PARTICLES,
    ) -> None:
        if exact_limit < 1 or particles < 1:
            raise ValueError("exact_limit and particles must be at least 1")
        self.sm = sm
        self.role = role
        self.rng = rng
        self.exact_limit = exact_limit
        self.particles = particles
        self.history: list[Turn] = []
        self.states: dict[MachineState, float] = {sm.initial_state: 1.0}
        self.exact = True
        self._last_known: dict[MachineState, float] = dict(self.states)

    @property
    def lost(self) -> bool:
        """No state consistent with the history is known."""
        return not self.states

    def update(self, turn: Turn, deadline: float) -> None:
        """Take in one more turn of the role (its move and what it perceived after it),
        expanding no state after ``deadline`` (``time.monotonic()``). The game goes on:
        terminal states are dropped. Never raises for a history no state fits: the
        belief is then ``lost`` (and ``why`` logged)."""
        self.history.append(turn)
        if self.states:
            self._last_known = self.states
            children, complete = self._filter(turn, deadline)
            if children and not complete:
                self.exact = False
            if not children:
                impossible = complete and self.exact
                if impossible:
                    log.warning(
                        "%s: no state agrees with %s's %d turn(s): the history cannot have "
                        "happened in this reading of the game",
                        self.sm.name,
                        self.role,
                        len(self.history),
                    )
                    self.states = {}
                    return
                children = self._reseed(deadline)
        else:
            children = self._reseed(deadline)
        self.states = self._thinned(children)

    def _filter(self, turn: Turn, deadline: float) -> tuple[dict[MachineState, float], bool]:
        """The consistent children of the states held (weights multiplied), and whether
        every state was expanded before the deadline."""
        children: dict[MachineState, float] = {}
        heaviest = sorted(self.states.items(), key=lambda sw: -sw[1])
        for state, weight in heaviest:
            if time.monotonic() > deadline:
                return children, False
            try:
                kids = self.sm.consistent_successors(state, self.role, turn.move, turn.percepts)
            except GameError:  # the role's move is not legal there: no such state
                continue
            for kid in kids:
                if self.sm.is_terminal(kid.state):
                    continue
                children[kid.state] = children.get(kid.state, 0.0) + weight * float(kid.weight)
        return children, True

    def _reseed(self, deadline: float) -> dict[MachineState, float]:
        """States found by searching the whole history again (weight 1 each); empty when
        the search finds none before the deadline."""
        self.exact = False
        try:
            found = self.sm.sample_states(
                self.history,
                self.role,
                self.particles,
                budget=RESEED_BUDGET,
                rng=self.rng,
                deadline=deadline,
            )
        except NoConsistentStateError as e:
            log.warning("%s: belief lost: %s", self.sm.name, e)
            return {}
        live = Counter(s for s in found if not self.sm.is_terminal(s))
        if not live:
            log.warning("%s: belief lost: every state found is terminal", self.sm.name)
        return {s: float(n) for s, n in live.items()}

    def _thinned(self, states: dict[MachineState, float]) -> dict[MachineState, float]:
        """``states`` normalized, re-sampled to ``particles`` when there are more than
        the belief may hold (``exact_limit`` while exact)."""
        total = sum(states.values())
        if not total:
            return {}
        limit = self.exact_limit if self.exact else self.particles
        if len(states) <= limit:
            return {s: w / total for s, w in states.items()}
        self.exact = False
        ordered = sorted(states, key=str)
        drawn = Counter(
            self.rng.choices(ordered, weights=[states[s] for s in ordered], k=self.particles)
        )
        return {s: n / self.particles for s, n in drawn.items()}

    def determinizations(self, n: int) -> list[tuple[MachineState, float]]:
        """States to search as if known, with weights: every state held, with its
        weight, when there are at most ``n``; else ``n`` drawn by weight (weight 1 each).
        Empty when the belief is lost."""
        states = sorted(self.states, key=str)
        if len(states) <= n:
            return [(s, self.states[s]) for s in states]
        drawn = self.rng.choices(states, weights=[self.states[s] for s in states], k=n)
        return [(s, 1.0) for s in drawn]

    def guess_moves(self, move: Term | str | None = None, tries: int = 8) -> list[Term]:
        """Moves legal for the role, most often legal first, in the heaviest ``tries``
        states held (or, when the belief is lost, the last ones held), each advanced by
        the role's ``move``, if given, and random legal moves of the others, percepts not
        considered: a guess for when no consistent state of this turn is known."""
        held = self.states or self._last_known
        counts: Counter[Term] = Counter()
        for state in sorted(held, key=lambda s: -held[s])[:tries]:
            try:
                if move is not None:
                    state = self._advanced(state, move)
                if not self.sm.is_terminal(state):
                    counts.update(self.sm.legal_moves(state, self.role))
            except GameError:
                continue
        return [m for m, _ in counts.most_common()]

    def _advanced(self, state: MachineState, move: Term | str) -> MachineState:
        """The state after the role plays ``move`` (a random legal move if it is not
        legal there) and the others random legal moves."""
        mine = self.sm.term(move)
        joint = []
        for r, moves in zip(self.sm.roles, self.sm.all_legal_moves(state), strict=True):
            joint.append(mine if r == self.role and mine in moves else self.rng.choice(moves))
        return self.sm.next_state(state, joint)
