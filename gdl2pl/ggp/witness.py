"""One state a GDL-II role knows it may be in, kept from turn to turn by depth-first search.

A player that has lost its belief must still move legally, so it keeps a *witness*: one
state consistent with its whole history (its moves and percepts), with the depth-first
path that reached it. A new turn first expands the witness
(``GameMachine.consistent_children``): while one of its children agrees with the turn,
that child is the new witness, found before any other search and whatever the clock
says. When none does, ``search`` looks further, depth-first:

- back up the path a little (the witness's siblings and its parent's), then
- probe from roots given by the caller (the belief's states of earlier turns; the
  initial state if none), in sources that share the expansions evenly, each probe
  bounded by ``PROBE`` expansions per turn it has to go. Rounds of probes double their
  bounds, so given time, and roots that hold an ancestor of every consistent state (an
  exact belief of an earlier turn does), the search is complete: it finds a consistent
  state whenever one exists.

What it learns is kept across turns and probes: the consistent children of each
(turn, state) expanded to its end, and the *dead* ones, from which no path agrees with
the rest of the history. A history only grows, so a dead end stays dead. The belief's own
filter tells it what it expanded too (``learned``). Both memories are bounded
(``MEMO_LIMIT``).

Children are tried in a random order drawn by their weight (chance and the other roles
choosing uniformly), so a witness is a plausible state, not the first one in some fixed
order. They come lazily (``GameMachine.consistent_children`` with a random order: the
first child found is a draw by weight), one at a time as the search needs the next, so
a state with hundreds of thousands of joint moves costs the witness only the joint moves
tried until a child that leads on. A state where the game is over cannot be the witness of
a ``play`` message: the game goes on.

Every loop asks ``cancel`` (the match's, set when it is stopped or aborted) and ends with
``WorkCancelled`` once it is set, within one batch of joint moves.
"""

from __future__ import annotations

import math
import random
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field

from gdl2pl.bridge.errors import GameError
from gdl2pl.bridge.errors import QueryInterrupted
from gdl2pl.bridge.errors import ReasonerError
from gdl2pl.contract import ConsistentStream
from gdl2pl.contract import GameMachine
from gdl2pl.contract import MachineState
from gdl2pl.information import Turn
from gdl2pl.syntax import Term

from .cancel import check_cancel

#: Expansions a probe may spend per turn between its root and the end of the history,
#: in the first round (each later round doubles it).
PROBE = 8
#: Expansions spent backing up the witness's own path before probes from other roots.
BACKUP = 2 * PROBE
#: The most (turn, state) pairs each memory holds; past it, it is cleared (a few
#: hundred expansions fit in a turn's search: this is many turns' worth).
MEMO_LIMIT = 50_000

Node = tuple[int, MachineState]


@dataclass
class _Kids:
    """The children of a (turn, state) that agree with that turn, found so far: each with
    its weight, in the order found, and the stream the others come from (None once all
    are found)."""

    weights: dict[MachineState, float]
    order: list[MachineState]
    stream: ConsistentStream | None = None


@dataclass
class _Frame:
    """A state on the depth-first path: its turn (how many turns it has taken in), its
    children (``kids``: None until it is expanded), those not tried yet of the ones
    found when they were last looked at (``todo``, in a random order drawn by weight,
    and ``upto``, how many of ``kids.order`` that was), and whether a state at the end of
    the history was found below it (then it is no dead end, whatever is left)."""

    depth: int
    state: MachineState
    kids: _Kids | None = None
    todo: list[MachineState] = field(default_factory=list)
    upto: int = 0
    live: bool = False


#: What ``_next`` answers when a frame's children cannot come now (out of time, or the
#: reasoner did not answer): the search pauses with its path as it is.
_PAUSE = object()


class _Clock:
    """When the witness's streams stop before a batch: past ``until``, unless a child is
    wanted whatever the clock (``anyway``); ``WorkCancelled`` once ``cancel`` is set. It
    holds nothing of the witness, so that a stream kept in its memory makes no reference
    cycle with it (the collector's pauses hold every thread: see ``ggp.collection``)."""

    def __init__(self, cancel: threading.Event | None) -> None:
        self.cancel = cancel
        self.until = 0.0
        self.anyway = False

    def stop(self) -> bool:
        check_cancel(self.cancel)
        return not self.anyway and time.monotonic() > self.until


class Witness:
    """One state consistent with ``history`` (the role's turns so far, a list the
    caller appends to), found and kept by depth-first search (module doc)."""

    def __init__(
        self,
        sm: GameMachine,
        role: Term,
        history: list[Turn],
        rng: random.Random,
        cancel: threading.Event | None = None,
    ) -> None:
        self.sm = sm
        self.role = role
        self.history = history
        self.rng = rng
        self.cancel = cancel
        self._path: list[_Frame] = [_Frame(0, sm.initial_state)]
        self._kids: dict[Node, _Kids] = {}
        self._dead: set[Node] = set()
        self._terminal: dict[MachineState, bool] = {}
        #: Expansions made (states whose children were asked for), in all (for tests and
        #: the log).
        self.expansions = 0
        #: When the streams' batches stop: the search's deadline, unless a child is
        #: wanted whatever the clock (the first of a turn).
        self._clock = _Clock(cancel)

    @property
    def state(self) -> MachineState | None:
        """The witness: a state consistent with the whole history, if one is known."""
        if self._path and self._path[-1].depth == len(self.history):
            return self._path[-1].state
        return None

    def learned(
        self,
        depth: int,
        state: MachineState,
        kids: dict[MachineState, float],
        stream: ConsistentStream | None = None,
    ) -> None:
        """The caller expanded ``state``, reached after ``depth`` turns: ``kids`` are
        its children that agree with turn ``depth``, with their weights (none and no
        ``stream``: a dead end), and ``stream`` the one the others come from, if it did
        not find them all. No search need expand it again."""
        if stream is not None:
            stream.stop = self._clock.stop
        self._remember(self._kids, (depth, state), _Kids(dict(kids), list(kids), stream))
        if not kids and stream is None:
            self._remember_dead((depth, state))

    def adopt(self, state: MachineState) -> None:
        """Make ``state`` (consistent with the whole history, found by the caller) the
        witness; its path is not known, so backing up starts from it."""
        if self.state != state:
            self._path = [_Frame(len(self.history), state)]

    def extend(self, deadline: float, backup: int = 0) -> MachineState | None:
        """The witness of the history as it is now: the last witness's consistent
        children are asked first (until one that the game goes on from, whatever the
        time), then its path is backed up by ``backup`` more expansions at most, none
        started after ``deadline``. None if that finds none."""
        if self.state is not None:
            return self.state
        found = self._probe(self._path, 1 + backup, deadline, set(), first=True)
        return found[0] if found else None

    def peek(self, turns: list[Turn]) -> MachineState | None:
        """A state consistent with the history followed by ``turns`` (not taken in
        yet), reached from the witness by one child per turn, drawn by weight among
        those that agree with it (the first found, whatever the time); None if no
        witness is known or a child dies. What it learns serves once the turns are
        taken in."""
        state = self.state
        depth = len(self.history)
        for turn in turns:
            if state is None:
                return None
            state = self._first_child(depth, state, turn)
            depth += 1
        try:
            return None if state is None or self._is_terminal(state) else state
        except (QueryInterrupted, ReasonerError):
            return None

    def _first_child(self, depth: int, state: MachineState, turn: Turn) -> MachineState | None:
        """A child of ``state`` that agrees with ``turn`` (turn ``depth``, taken in or
        not yet), drawn by weight, whatever the clock; None if there is none or the
        reasoner did not answer."""
        frame = _Frame(depth, state, self._kids.get((depth, state)))
        if frame.kids is None and not self._open(frame, turn):
            return None
        self._clock.anyway = True
        try:
            kid = self._next(frame)
        finally:
            self._clock.anyway = False
        return kid if isinstance(kid, MachineState) else None

    def search(
        self,
        sources: Sequence[Sequence[Node]],
        deadline: float,
        want: int = 1,
    ) -> list[MachineState]:
        """Up to ``want`` distinct states consistent with the whole history, the
        witness first: ``extend``, then probes from the roots of ``sources`` (turn,
        state: each consistent with the history up to its turn, as the belief's states
        of earlier turns are; the initial state if none is given), in rounds of
        doubling bounds, none started after ``deadline`` (``time.monotonic()``). The
        sources share the expansions evenly: the next probe is from the source that has
        spent the fewest, its roots in their given order. Given time, the search is
        complete when the roots hold an ancestor of every consistent state (the initial
        state does, and so does an exact belief of an earlier turn). Empty if none is
        found."""
        found: list[MachineState] = []
        seen: set[MachineState] = set()
        witness = self.extend(deadline, BACKUP)
        if witness is not None:
            found.append(witness)
            seen.add(witness)
        kept = list(self._path)  # the witness's path, restored after the extra probes
        goal = len(self.history)
        live = [[r for r in dict.fromkeys(roots) if r[0] <= goal] for roots in sources]
        live = [roots for roots in live if roots] or [[(0, self.sm.initial_state)]]
        spent = [0] * len(live)
        bound = PROBE
        while any(live) and len(found) < want and time.monotonic() <= deadline:
            check_cancel(self.cancel)
            todo = [deque(roots) for roots in live]  # this round's roots, per source
            while any(todo) and len(found) < want and time.monotonic() <= deadline:
                check_cancel(self.cancel)
                i = min((i for i, roots in enumerate(todo) if roots), key=spent.__getitem__)
                root = todo[i].popleft()
                path = [_Frame(*root)]
                before = self.expansions
                # a few states per probe at most: the rest from other roots, for variety
                share = max(1, (want - len(found)) // 4)
                budget = bound * max(1, goal - root[0])
                more = self._probe(path, budget, deadline, seen, most=share)
                spent[i] += self.expansions - before
                if more and not found:
                    kept = list(path)
                found += more
                seen.update(more)
                if not path:  # searched to the end: nothing more below this root
                    live[i].remove(root)
            bound *= 2
        self._path = kept
        if found and self.state is None:
            self.adopt(found[0])
        return found

    def _probe(
        self,
        path: list[_Frame],
        budget: float,
        deadline: float,
        seen: set[MachineState],
        *,
        first: bool = False,
        most: int = 1,
    ) -> list[MachineState]:
        """Depth-first from ``path`` (changed in place: it ends at the last state found)
        to at most ``most`` live states at the end of the history not in ``seen``, with
        at most ``budget`` expansions, none after ``deadline`` but the first if
        ``first`` (which goes on until it has a child, whatever the clock)."""
        goal = len(self.history)
        found: list[MachineState] = []
        spent = 0
        self._clock.until = deadline
        first_stream: ConsistentStream | None = None  # asked whatever the clock, until found
        while path:
            check_cancel(self.cancel)
            frame = path[-1]
            node = (frame.depth, frame.state)
            if node in self._dead or frame.depth > goal:
                path.pop()
                continue
            if frame.depth == goal:
                if frame.state in seen or frame.state in found:
                    self._leave_alive(path)  # found before: look for another
                    continue
                try:
                    over = self._is_terminal(frame.state)
                except (QueryInterrupted, ReasonerError):
                    path.pop()  # not known now: not the witness (nor dead)
                    return found
                if over:
                    self._remember_dead(node)  # the game goes on: not this state
                    continue
                found.append(frame.state)
                if len(path) > 1:
                    path[-2].live = True
                if len(found) >= most:
                    return found
                path.pop()
                continue
            if frame.kids is None:
                frame.kids = self._kids.get(node)
                if frame.kids is None:
                    anyway = first and spent == 0
                    if spent >= budget or (time.monotonic() > deadline and not anyway):
                        return found  # out of bounds: the path is kept as it is
                    spent += 1
                    if not self._open(frame):  # the reasoner could not answer: not now
                        return found
                assert frame.kids is not None
                if first and first_stream is None:  # the first expansion, known or new
                    first_stream = frame.kids.stream
            stream = frame.kids.stream
            self._clock.anyway = not found and stream is not None and stream is first_stream
            try:
                kid = self._next(frame)
            finally:
                self._clock.anyway = False
            if kid is _PAUSE:
                return found  # out of time, or no answer: the path is kept as it is
            if isinstance(kid, MachineState):
                path.append(_Frame(frame.depth + 1, kid))
            elif frame.live:
                self._leave_alive(path)
            else:
                self._remember_dead(node)
                path.pop()
        return found

    def _open(self, frame: _Frame, turn: Turn | None = None) -> bool:
        """Start the children of ``frame``'s state that agree with turn ``frame.depth``
        of the history (or ``turn``, the one that will be), remembered for every later
        visit: a random-order stream, or none at all where the role's move is not legal
        or the game is over. False when the reasoner did not answer (interrupted, out of
        a resource)."""
        self.expansions += 1
        turn = self.history[frame.depth] if turn is None else turn
        stream = None
        try:
            if not self._is_terminal(frame.state):
                stream = self.sm.consistent_children(
                    frame.state,
                    self.role,
                    turn.move,
                    turn.percepts,
                    rng=self.rng,
                    stop=self._clock.stop,
                )
        except GameError:  # the role's move is not legal there: no such child
            pass
        except (QueryInterrupted, ReasonerError):
            return False
        frame.kids = _Kids({}, [], stream)
        self._remember(self._kids, (frame.depth, frame.state), frame.kids)
        return True

    def _next(self, frame: _Frame) -> MachineState | object | None:
        """The next child of ``frame`` to try: one not tried yet and not known dead,
        those found already first (in a random order drawn by weight), then new ones
        from the stream; None when none is left, or ``_PAUSE`` when the stream stopped
        (out of time) or the reasoner did not answer."""
        kids = frame.kids
        assert kids is not None
        while True:
            while frame.todo:
                kid = frame.todo.pop()
                if (frame.depth + 1, kid) not in self._dead:
                    return kid
            if frame.upto < len(kids.order):  # found since this frame looked: these first
                fresh = {k: kids.weights[k] for k in kids.order[frame.upto :]}
                frame.todo = self._ordered(frame.depth, fresh)
                frame.upto = len(kids.order)
                continue
            if kids.stream is None:
                return None
            stream = kids.stream
            try:
                child = stream.next_child()
            except (QueryInterrupted, ReasonerError):
                return _PAUSE
            if child is None and stream.stopped:
                return _PAUSE
            while child is not None:  # the rest of its batch comes at no cost: kept
                weight = kids.weights.get(child.state)
                kids.weights[child.state] = (weight or 0.0) + float(child.weight)
                if weight is None:
                    kids.order.append(child.state)
                child = stream.next_child() if stream.pending else None
            if stream.complete:
                kids.stream = None  # all found: the memory keeps them, not the stream

    @staticmethod
    def _leave_alive(path: list[_Frame]) -> None:
        """Pop the last frame of ``path``, a state with a consistent state at the end of
        the history below it (or itself one): so its parent has one too."""
        path.pop()
        if path:
            path[-1].live = True

    def _ordered(self, depth: int, kids: dict[MachineState, float]) -> list[MachineState]:
        """The children not known dead, in a random order drawn by weight, the first to
        try last (Efraimidis-Spirakis: sorting by log(u) / w)."""
        keyed = {
            s: math.log(1.0 - self.rng.random()) / max(w, 1e-300)
            for s, w in kids.items()
            if (depth + 1, s) not in self._dead
        }
        return sorted(keyed, key=keyed.__getitem__)

    def _is_terminal(self, state: MachineState) -> bool:
        known = self._terminal.get(state)
        if known is None:
            known = self.sm.is_terminal(state)
            self._remember(self._terminal, state, known)
        return known

    def _remember_dead(self, node: Node) -> None:
        if len(self._dead) >= MEMO_LIMIT:
            self._dead.clear()
        self._dead.add(node)

    @staticmethod
    def _remember(memo: dict, key: object, value: object) -> None:  # type: ignore[type-arg]
        if len(memo) >= MEMO_LIMIT:
            memo.clear()
        memo[key] = value
