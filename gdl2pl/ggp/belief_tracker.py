"""A GDL-II player's belief, kept from turn to turn within the clock.

``BeliefTracker`` holds weighted states consistent with one role's history (its moves and
percepts so far). Each ``play`` message adds a turn, and ``update`` filters the states
held by it: each state's consistent children (``GameMachine.consistent_children``, found
lazily in a random order), weighted as ``gdl2pl.information`` weighs them, replace it.
The states' children are drawn in turn, a batch of each (``ConsistentStream.pending``),
the heaviest state first, until every state's are all found, or the children found are
more than the belief would keep (``_room``: ``GATHER``, or ``exact_limit`` while exact, or
the particles and their reserve, if more), or the deadline: so a turn costs at most one
expansion per state held, and no more of it than the belief needs. A state whose
children were not all found is stood for by those that were, each weighed by the joint
moves it stands for (``ConsistentStream.scale``).

- The belief is *exact* while it holds every consistent state, at most ``exact_limit``
  of them, and each update found them all before its deadline.
- Past that it is a set of *particles*: states drawn by weight, as many as half the
  filtering time can expand (``_count``: at least ``particles``, at most
  ``exact_limit``), re-sampled whenever the filtered set grows beyond that. They are
  consistent, but their weights only approximate the belief. The heaviest of the states
  left out (``RESERVE`` per particle) are kept with them for ``POOLS`` turns, and the
  filtering time the particles leave is spent on them: their consistent children join
  the particles' before the next re-sampling.
- Before any of that, each update extends the *witness* (``gdl2pl.ggp.witness``): one
  state consistent with the whole history, kept with the depth-first path that reached
  it, whose consistent children are asked first, whatever the clock says. So the player
  knows a state it may be in, and a move legal there (``on_state``), before it filters.
- When every particle dies (the true state was not among them), or an update runs out
  of time before any child is found, the witness's depth-first search looks for
  ``_count()`` states: backing up the witness's path, then probing from the pools'
  states (one of each pool in turn, the newest first) and from the initial state,
  remembering the dead ends from turn to turn. It may run until ``last_resort``, later
  than the update's own deadline. If it finds nothing, the belief is *lost* until a
  later turn's search succeeds; meanwhile it follows the states *nearest* to the
  history (reached by the role's moves, the percepts matched best).
- A ``play`` message says the game goes on: terminal states are dropped from the belief.
- Prolog calls past the deadline are cut short by an interrupt (``hidden.choose_move``
  runs ``update`` under ``interrupt_after``): ``QueryInterrupted`` counts as out of time.
- Every loop asks ``cancel`` (the match's, set when it is stopped or aborted): once it is
  set, the work ends with ``WorkCancelled`` within one batch of joint moves.

``guess_moves`` serves when no consistent state is known: the moves legal for the role
in the nearest states, but those the manager did not take on the last turns (``refuse``).
``known_moves`` are the role's legal moves in the last consistent state known, of this
turn or an earlier one: the last resort of a player with nothing better.
"""

from __future__ import annotations

import itertools
import logging
import math
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field

from gdl2pl.bridge.errors import GameError
from gdl2pl.bridge.errors import MoveDefinitionError
from gdl2pl.bridge.errors import QueryInterrupted
from gdl2pl.bridge.errors import ReasonerError
from gdl2pl.contract import ConsistentStream
from gdl2pl.contract import GameMachine
from gdl2pl.contract import MachineState
from gdl2pl.information import Turn
from gdl2pl.shown import shown
from gdl2pl.syntax import Term

from .cancel import check_cancel
from .witness import Witness

log = logging.getLogger("gdl2pl.player")

#: The most states an exact belief may hold before it becomes particles.
EXACT_LIMIT = 1_000
#: How many particles are kept once the belief is not exact.
PARTICLES = 64
#: Share of an update's time the filtering of the states held may take; the rest is
#: for the reserve and the search when they all die.
FILTER_SHARE = 0.6
#: States kept in reserve per particle, tried when the particles all die.
RESERVE = 8
#: Turns whose states (and reserve) are kept to search again from when all die.
POOLS = 6
#: Distinct children a filter gathers before it stops (at least; see ``_room``): enough to
#: draw the particles and their reserve from, few enough that a turn of hundreds of
#: thousands of joint moves does not fill the memory.
GATHER = 10_000
#: Turns a move the manager did not take stays out of guesses.
REFUSED_TURNS = 4
#: Share of a failed update's time (at most ``NEAR_DRAWS`` expansions) kept for finding
#: the states nearest to the history, which the guesses of a lost belief come from.
NEAR_SHARE = 0.25
#: Expansions ``_near_misses`` makes at most: ``tries`` states times ``draws`` each.
NEAR_DRAWS = 32


@dataclass
class _Expansion:
    """One state being filtered: its weight, the stream of its consistent children, and
    how many of its joint moves led to each child found so far."""

    state: MachineState
    weight: float
    stream: ConsistentStream | None = None
    found: dict[MachineState, int] = field(default_factory=dict)


class BeliefTracker:
    """Weighted states ``role`` cannot tell apart, filtered turn by turn (module doc).
    ``cancel``, when set, ends the work (``WorkCancelled``)."""

    def __init__(
        self,
        sm: GameMachine,
        role: Term,
        rng: random.Random,
        *,
        exact_limit: int = EXACT_LIMIT,
        particles: int = PARTICLES,
        cancel: threading.Event | None = None,
    ) -> None:
        if exact_limit < 1 or particles < 1:
            raise ValueError("exact_limit and particles must be at least 1")
        self.sm = sm
        self.role = role
        self.rng = rng
        self.cancel = cancel
        self.exact_limit = exact_limit
        self.particles = particles
        self.history: list[Turn] = []
        self.states: dict[MachineState, float] = {sm.initial_state: 1.0}
        self.exact = True
        #: States of the last thinning left out of the particles.
        self._reserve: dict[MachineState, float] = {}
        #: The states held (with their reserve) after each of the last ``POOLS`` turns,
        #: with the number of turns taken in: where to search again from when all die.
        self._pools: list[tuple[int, dict[MachineState, float]]] = [(0, dict(self.states))]
        #: The last exact belief, with its number of turns: every state consistent with
        #: the history descends from one of its states (the search's surest roots).
        self._exact_pool: tuple[int, dict[MachineState, float]] = (0, dict(self.states))
        #: When lost: states nearest to the history (percepts matched best), for guesses.
        self._nearest: dict[MachineState, float] = dict(self.states)
        #: How many turns of the history the nearest states have taken in.
        self._nearest_taken = 0
        #: Seconds one expansion takes, as measured (sizes the search's budget).
        self._cost = 0.002
        #: Moves the manager did not take from the role (it played others), and the
        #: turn: left out of guesses for ``REFUSED_TURNS`` turns.
        self._refused: dict[Term, int] = {}
        #: Seconds the last update had: with ``_cost``, how many particles to keep.
        self._span = 0.0
        #: One state consistent with the whole history, kept by depth-first search.
        self.witness = Witness(sm, role, self.history, rng, cancel)
        #: The role's legal moves in the last consistent state known.
        self._known: list[Term] = []

    @property
    def lost(self) -> bool:
        """No state consistent with the history is known."""
        return not self.states

    def update(
        self,
        turn: Turn,
        deadline: float,
        last_resort: float | None = None,
        on_state: Callable[[MachineState], None] | None = None,
    ) -> None:
        """Take in one more turn of the role (its move and what it perceived after it),
        expanding no state after ``deadline`` (``time.monotonic()``) but the witness's
        first, or, when the states held all die, after ``last_resort`` (later than
        ``deadline``, if given: finding a consistent state at all is worth more than
        searching for a good move). ``on_state`` is called with the first state found
        consistent with the whole history, as soon as it is found. The game goes on:
        terminal states are dropped. Never raises for a history no state fits: the
        belief is then ``lost`` (and why is logged); ``WorkCancelled`` once ``cancel``
        is set (the turn is then half taken in: the tracker is done with)."""
        check_cancel(self.cancel)
        self.history.append(turn)
        start = time.monotonic()
        self._span = max(0.0, deadline - start)
        before = self.states or self._nearest
        before_taken = len(self.history) - 1 if self.states else self._nearest_taken
        told = self._tell(on_state, self.witness.extend(deadline))
        held: dict[MachineState, float] = {}
        if self.states:
            # the filter may take most of the time; what is left is for a fall-back
            until = start + FILTER_SHARE * self._span
            children, complete = self._filter(self.states, turn, until)
            if not complete:
                self.exact = False
            elif self._reserve and time.monotonic() < until:
                # time to spare: the states left out of the particles are consistent
                # too, and their children keep the belief from narrowing to a few
                spared, _ = self._filter(self._reserve, turn, until)
                for kid, w in spared.items():
                    children[kid] = children.get(kid, 0.0) + w
            held = self._live(self._thinned(children))
            if not held and complete and self.exact and self.witness.state is None:
                log.warning(
                    "%s: no state agrees with %s's %d turn(s): the history cannot have "
                    "happened in this reading of the game",
                    shown(self.sm.name),
                    shown(str(self.role)),
                    len(self.history),
                )
                self._lose(before, before_taken, turn, deadline)
                return
        if not held:
            # the search may take all that is left but the slice kept for the nearest
            # states, should it fail
            deadline = max(deadline, last_resort or deadline)
            now = time.monotonic()
            near_until = deadline - min(NEAR_SHARE * (deadline - now), NEAR_DRAWS * self._cost)
            held = self._live(self._thinned(self._searched(near_until)))
        if not held:
            self._lose(before, before_taken, turn, deadline)
            return
        if self.witness.state is None:
            self.witness.adopt(max(sorted(held, key=str), key=held.__getitem__))
        if not told:
            self._tell(on_state, self.witness.state)
        self.states = held
        self._nearest, self._nearest_taken = held, len(self.history)
        self._pools = [*self._pools[-POOLS + 1 :], (len(self.history), {**self._reserve, **held})]
        if self.exact:
            self._exact_pool = (len(self.history), held)

    def _tell(
        self, on_state: Callable[[MachineState], None] | None, state: MachineState | None
    ) -> bool:
        """Call ``on_state`` with ``state`` if both are given; whether it was called."""
        if on_state is None or state is None:
            return False
        on_state(state)
        return True

    def _terminal(self, state: MachineState) -> bool:
        """``sm.is_terminal``, asked again if the deadline's interrupt stopped it."""
        try:
            return self.sm.is_terminal(state)
        except QueryInterrupted:
            return self.sm.is_terminal(state)

    def _live(self, states: dict[MachineState, float]) -> dict[MachineState, float]:
        """``states`` without the terminal ones, normalized."""
        live = {}
        for s, w in states.items():
            check_cancel(self.cancel)
            if not self._terminal(s):
                live[s] = w
        total = sum(live.values())
        return {s: w / total for s, w in live.items()} if total else {}

    def _searched(self, deadline: float) -> dict[MachineState, float]:
        """States consistent with the whole history (weight 1 each), up to ``_count()``,
        found by the witness's depth-first search before the deadline; empty if none is
        found (logged). It probes from two sources, each pool's states in an order
        drawn by weight, which share its expansions evenly: the last exact belief's
        states (every consistent state descends from one of them), and the states of
        the particle pools since, one pool after the other, the newest first (nearer,
        but they may hold no ancestor)."""
        self.exact = False
        left = deadline - time.monotonic()
        before = self.witness.expansions
        exact_taken, exact = self._exact_pool
        surest = [(exact_taken, s) for s in self._drawn_order(exact)]
        pools = [
            [(taken, s) for s in self._drawn_order(pool)]
            for taken, pool in reversed(self._pools)
            if taken > exact_taken
        ]
        nearer = [r for row in itertools.zip_longest(*pools) for r in row if r]
        found = self.witness.search([nearer, surest], deadline, want=self._count())
        if not found:
            log.warning(
                "%s: belief lost: no state consistent with %s's %d turn(s) found by %d "
                "more expansion(s) in the %.2f s left",
                shown(self.sm.name),
                shown(str(self.role)),
                len(self.history),
                self.witness.expansions - before,
                max(0.0, left),
            )
        return dict.fromkeys(found, 1.0)

    def _drawn_order(self, states: dict[MachineState, float]) -> list[MachineState]:
        """``states`` in a random order drawn by weight, the heaviest likely first."""
        # Efraimidis-Spirakis: sorting by log(u) / w draws an order by weight
        keyed = {s: math.log(1.0 - self.rng.random()) / max(w, 1e-300) for s, w in states.items()}
        return sorted(keyed, key=lambda s: -keyed[s])

    def _lose(
        self, before: dict[MachineState, float], taken: int, turn: Turn, deadline: float
    ) -> None:
        """No state is consistent: hold none, and the nearest states of this turn (or,
        if none was reached, ``before``, which has taken in ``taken`` turns)."""
        self.states, self.exact = {}, False
        near = self._near_misses(before, turn, deadline)
        self._nearest = near or before
        self._nearest_taken = len(self.history) if near else taken

    def _filter(
        self, states: dict[MachineState, float], turn: Turn, deadline: float
    ) -> tuple[dict[MachineState, float], bool]:
        """The consistent children of ``states`` (weights multiplied; terminal ones
        too, left out once thinned by ``_live``), found as the module doc says: the
        states' children drawn in turn, a batch of each, the heaviest state first, until
        all are found, they outnumber what the belief would keep (``_room``), or the
        deadline. And whether every child of every state was found."""
        order = {s: self.rng.random() for s in states}  # ties in a random order
        heaviest = sorted(states.items(), key=lambda sw: (-sw[1], order[sw[0]]))
        expansions = [_Expansion(s, w) for s, w in heaviest]
        room = self._room()
        distinct: set[MachineState] = set()
        started = time.monotonic()
        active, complete = expansions, True
        while active and complete:
            going = []
            for ex in active:
                check_cancel(self.cancel)
                drawn = self._draw(ex, turn, deadline)
                if drawn == "stop":
                    complete = False
                    break
                if isinstance(drawn, list):
                    going.append(ex)
                    distinct.update(drawn)
                    if len(distinct) > room:
                        complete = False
                        break
            active = going
        opened = [ex for ex in expansions if ex.stream is not None]
        if opened:  # a moving average, a tenth for each state expanded
            each = (time.monotonic() - started) / len(opened)
            self._cost = each + (self._cost - each) * 0.9 ** len(opened)
        children: dict[MachineState, float] = {}
        for ex in opened:
            stream = ex.stream
            assert stream is not None
            kids = {k: n * float(stream.weight) for k, n in ex.found.items()}
            rest = None if stream.complete else stream  # the witness may draw more from it
            self.witness.learned(len(self.history) - 1, ex.state, kids, rest)
            share = ex.weight * float(stream.weight) * stream.scale
            for kid, n in ex.found.items():
                children[kid] = children.get(kid, 0.0) + share * n
        return children, complete

    def _draw(self, ex: _Expansion, turn: Turn, deadline: float) -> list[MachineState] | str:
        """More children of ``ex`` (its stream started first, unless past the
        deadline): the next one and the others of its batch, counted in ``ex.found``;
        "end" when it has no more (or none at all: the role's move is not legal there;
        or it was skipped, out of a resource), "stop" at the deadline or its
        interrupt."""
        try:
            if ex.stream is None:
                if time.monotonic() > deadline:
                    return "stop"
                ex.stream = self.sm.consistent_children(
                    ex.state,
                    self.role,
                    turn.move,
                    turn.percepts,
                    rng=self.rng,
                    stop=lambda: self._past(deadline),
                )
            kid = ex.stream.next_child()
            kids = []
            while kid is not None:
                ex.found[kid.state] = ex.found.get(kid.state, 0) + 1
                kids.append(kid.state)
                kid = ex.stream.next_child() if ex.stream.pending else None
        except QueryInterrupted:  # the deadline's interrupt (see hidden.choose_move)
            return "stop"
        except GameError:  # the role's move is not legal there: no such state
            return "end"
        except ReasonerError as e:  # out of a resource on this state: skip it
            log.warning(
                "%s: a state of the belief was skipped: %s", shown(self.sm.name), shown(str(e))
            )
            ex.stream = None
            ex.found.clear()
            return "end"
        if not kids:
            return "stop" if ex.stream.stopped else "end"
        return kids

    def _room(self) -> int:
        """The most distinct children a filter gathers (``GATHER``, or what the belief can
        hold if more: ``exact_limit`` states while exact, else the particles and their
        reserve): beyond, the belief would be drawn from them anyway."""
        held = self.exact_limit if self.exact else (1 + RESERVE) * self._count()
        return max(GATHER, held)

    def _past(self, deadline: float) -> bool:
        """Whether ``deadline`` has passed; ``WorkCancelled`` if the work was cancelled."""
        check_cancel(self.cancel)
        return time.monotonic() > deadline

    def _near_misses(
        self,
        before: dict[MachineState, float],
        turn: Turn,
        deadline: float,
        tries: int = 8,
        draws: int = 4,
    ) -> dict[MachineState, float]:
        """States reached from the heaviest ``tries`` of ``before`` by the role's move
        and ``draws`` random moves of the others, those whose percepts differ least from
        the turn's: the nearest to the history when none agrees with it (empty if none
        is found). A state where the role's move is not legal is farther
        than any difference of percepts: the manager took that move, so the true state
        allows it. Past the deadline, draws go on only until one child is scored (at
        most ``tries``)."""
        wanted = set(map(str, turn.percepts))
        illegal = len(wanted) + 1
        scored: dict[MachineState, int] = {}
        late = 0  # draws after the deadline: one per state, until one is scored
        for state in sorted(before, key=lambda s: -before[s])[:tries]:
            for _ in range(draws):
                check_cancel(self.cancel)
                if time.monotonic() > deadline:
                    late += 1
                    if scored or late > tries:
                        break
                try:
                    joint = self._joint(state, turn.move)
                    seen = set(map(str, self.sm.percepts(state, joint, self.role)))
                    child = self.sm.next_state(state, joint)
                    if self.sm.is_terminal(child):
                        continue
                except GameError:
                    break
                except QueryInterrupted:
                    continue
                played = joint[self.sm.roles.index(self.role)] == self.sm.term(turn.move)
                miss = len(seen ^ wanted) + (0 if played else illegal)
                scored[child] = min(miss, scored.get(child, miss))
        if not scored:
            return {}
        best = min(scored.values())
        near = [s for s, miss in scored.items() if miss == best]
        return {s: 1.0 / len(near) for s in near}

    def _count(self) -> int:
        """How many particles to keep: as many as half the filtering time of the last
        update can expand, at least ``particles``, at most ``exact_limit``."""
        fit = int(FILTER_SHARE * self._span / max(self._cost, 1e-4) / 2)
        return max(self.particles, min(self.exact_limit, fit))

    def _drawn(self, states: dict[MachineState, float], k: int) -> dict[MachineState, float]:
        """``states`` normalized, or ``k`` of them drawn by weight if there are more."""
        total = sum(states.values())
        if len(states) <= k:
            return {s: w / total for s, w in states.items()}
        ordered = list(states)  # insertion order: the same from run to run
        drawn = Counter(self.rng.choices(ordered, weights=[states[s] for s in ordered], k=k))
        return {s: n / k for s, n in drawn.items()}

    def _thinned(self, states: dict[MachineState, float]) -> dict[MachineState, float]:
        """``states`` normalized, re-sampled to ``_count()`` particles when there are more
        than the belief may hold (``exact_limit`` while exact); the heaviest of the
        others are kept in reserve."""
        self._reserve = {}
        if self.exact and len(states) <= self.exact_limit:
            return self._drawn(states, len(states))
        self.exact = False
        k = self._count()
        held = self._drawn(states, k)
        total = sum(states.values())
        rest = sorted((s for s in states if s not in held), key=lambda s: -states[s])
        self._reserve = {s: states[s] / total for s in rest[: RESERVE * k]}
        return held

    def determinizations(self, n: int) -> list[tuple[MachineState, float]]:
        """States to search as if known, with weights: every state held, with its
        weight, when there are at most ``n``; else ``n`` drawn by weight (weight 1 each).
        Empty when the belief is lost."""
        states = list(self.states)
        if len(states) <= n:
            return [(s, self.states[s]) for s in states]
        drawn = self.rng.choices(states, weights=[self.states[s] for s in states], k=n)
        return [(s, 1.0) for s in drawn]

    def refuse(self, move: Term) -> None:
        """The manager did not take ``move`` on the last turn: leave it out of guesses
        for a few turns."""
        self._refused[move] = len(self.history)

    def guess_moves(
        self, move: Term | str | None = None, tries: int = 8, deadline: float | None = None
    ) -> list[Term]:
        """Moves legal for the role, most often legal first, in the heaviest ``tries``
        states held (or, when the belief is lost, the nearest to the history), each
        advanced by the role's ``move`` and random legal moves of the others if ``move``
        is given: a guess for when no consistent state of this turn is known. Nearest
        states of an earlier turn (none of this turn was reached in time) are first
        advanced by the role's moves since, so that the guess is for this turn (whose
        turn it is changes from turn to turn). Past ``deadline``, if given, no state
        after the first."""
        held = self.states or self._nearest
        behind = [] if self.states else [t.move for t in self.history[self._nearest_taken :]]
        moves_since = behind + ([move] if move is not None else [])
        counts: Counter[Term] = Counter()
        for i, state in enumerate(sorted(held, key=lambda s: -held[s])[:tries]):
            check_cancel(self.cancel)
            if i and deadline is not None and time.monotonic() > deadline:
                break
            try:
                for mine in moves_since:
                    if self.sm.is_terminal(state):
                        break
                    state = self.sm.next_state(state, self._joint(state, mine))
                else:
                    if not self.sm.is_terminal(state):
                        counts.update(self.sm.legal_moves(state, self.role))
            except (GameError, ReasonerError):  # QueryInterrupted included
                continue
        moves = [m for m, _ in counts.most_common()]
        recent = {m for m, t in self._refused.items() if len(self.history) - t < REFUSED_TURNS}
        return [m for m in moves if m not in recent] or moves

    def _joint(self, state: MachineState, move: Term | str) -> list[Term]:
        """A joint move of ``state``: the role's ``move`` (a random legal move if it is
        not legal there) and random legal moves of the others. ``MoveDefinitionError``
        if a role has no legal move there (the game is over, or ill-written)."""
        mine = self.sm.term(move)
        joint = []
        for r, moves in zip(self.sm.roles, self.sm.all_legal_moves(state), strict=True):
            if not moves:
                raise MoveDefinitionError(f"{self.sm.name}: {r} has no legal move in {state}")
            joint.append(mine if r == self.role and mine in moves else self.rng.choice(moves))
        return joint

    def note_legal(self, moves: list[Term]) -> None:
        """``moves`` are legal for the role in a state consistent with the whole history
        (of this turn): kept for ``known_moves``."""
        if moves:
            self._known = list(moves)

    def known_moves(self) -> list[Term]:
        """The role's legal moves in the last consistent state known (``note_legal``),
        those the manager did not take on the last turns first; empty if none was
        ever known. Of an earlier turn than this one if the belief is lost: the last
        resort of a guess."""
        moves = self._known
        recent = {m for m, t in self._refused.items() if len(self.history) - t < REFUSED_TURNS}
        return [m for m in moves if m not in recent] + [m for m in moves if m in recent]
