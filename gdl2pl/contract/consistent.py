"""What a GDL-II role cannot tell apart after one of its turns, found lazily.

After a turn a role knows its own move and its percepts. The successors of a state it
cannot tell apart are those of the joint moves in which it played that move and then
perceived exactly those percepts. A game may have hundreds of thousands of such joint
moves (two roles of 400 moves each beside the role's own), and a player's belief rarely
needs every child: a witness needs one, particles a few per state. So they are found
lazily, joint moves tried in batches as the caller asks for more:

- ``JointMoves`` numbers the joint moves in which one role plays one move, in the order
  of ``itertools.product`` over the roles' legal moves (the first role's move varying
  slowest), and turns a number back into the moves (``joint``) or the positions of the
  moves in each role's list (``digits``);
- ``ConsistentStream`` tries them in that order, or in a uniformly random one
  (``shuffled``: a draw by weight, since every joint move of one state has the same
  weight), batch by batch through an engine's test of a batch (``BatchTest``): a
  percept test first, then the child of each joint move that passes it, and nothing
  else (no legal moves of the children). A ``stop`` callable, asked before each batch,
  lets a caller end the search at its deadline or when its work is cancelled; the
  stream then says how far it got (``tried``), so that the children found so far can
  stand for all of them (``scale``).

Batches start small (a witness wants the first child soon) and grow while they take
little time, shrink when one takes long: a ``stop`` is asked at least every
``SLOW_BATCH`` seconds or so, whatever the engine's speed.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Sequence
from fractions import Fraction
from itertools import islice
from typing import NamedTuple

from gdl2pl.syntax import Term

from .state import MachineState

#: Joint moves in the first batch (one batch for most states of most games; a few
#: milliseconds in the largest), and the most in one.
FIRST_BATCH = 64
MAX_BATCH = 4096
#: A batch faster than this (seconds) makes the next one four times larger; one slower
#: than ``SLOW_BATCH`` halves it.
FAST_BATCH = 0.02
SLOW_BATCH = 0.1


class Consistent(NamedTuple):
    """A joint move a role cannot tell apart from what happened after one of its turns
    (``GameMachine.consistent_successors``)."""

    joint_move: tuple[Term, ...]
    #: The state it leads to.
    state: MachineState
    #: The chance of the other roles' moves in it when each of them (random included)
    #: chooses uniformly among its legal moves.
    weight: Fraction


#: An engine's test of one batch of joint moves (their numbers in a ``JointMoves``): the
#: position in the batch and the child of each joint move that passes it, in order.
BatchTest = Callable[[Sequence[int]], list[tuple[int, MachineState]]]


class JointMoves:
    """The joint moves of a state in which the role at ``index`` plays ``move``: one
    legal move per role (``per_role``, in role order), numbered from 0 in the order of
    ``itertools.product`` (the first role's move varying slowest)."""

    def __init__(self, per_role: Sequence[Sequence[Term]], index: int, move: Term) -> None:
        self.moves: list[list[Term]] = [
            [move] if i == index else list(ms) for i, ms in enumerate(per_role)
        ]
        self.index = index
        #: How many there are (0 when a role has no legal move).
        self.count = math.prod(len(ms) for ms in self.moves)

    def digits(self, number: int) -> list[int]:
        """The position of each role's move (in ``moves``) in joint move ``number``."""
        out = [0] * len(self.moves)
        for r in range(len(self.moves) - 1, -1, -1):
            number, out[r] = divmod(number, len(self.moves[r]))
        return out

    def joint(self, number: int) -> tuple[Term, ...]:
        """Joint move ``number``."""
        return tuple(ms[d] for ms, d in zip(self.moves, self.digits(number), strict=True))


def shuffled(n: int, rng: random.Random) -> Iterator[int]:
    """0 .. n-1 in a uniformly random order, drawn lazily (Fisher-Yates over a dict of
    the places moved): memory grows with the numbers drawn, not with ``n``."""
    moved: dict[int, int] = {}
    for i in range(n):
        j = rng.randrange(i, n)
        out = moved.get(j, j)
        if j != i:
            moved[j] = moved.pop(i, i)
        else:
            moved.pop(i, None)
        yield out


class ConsistentStream:
    """The consistent successors of one state, found lazily (see the module doc): the
    joint moves of ``joints`` tried through ``test`` in batches, in their order or, with
    ``rng``, in a uniformly random one. ``stop()``, if given, is asked before each batch:
    when it says so, ``next_child`` returns None with ``stopped`` set (a later call asks
    again and goes on); it may also raise, to end the caller's work. An error of the
    engine's test (an interrupt) leaves the stream as it was: the next call tries the same
    joint moves again. Iterating yields every child left, until the end or a stop."""

    def __init__(
        self,
        joints: JointMoves,
        weight: Fraction,
        test: BatchTest,
        rng: random.Random | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> None:
        self.joints = joints
        #: The weight of each joint move (``Consistent.weight``).
        self.weight = weight
        self.stop = stop
        self._test = test
        # a generator of its own, seeded from rng: what rng gives next does not depend on
        # how many joint moves were tried (the batches' sizes follow the clock)
        self._order: Iterator[int] = (
            shuffled(joints.count, random.Random(rng.getrandbits(64)))
            if rng is not None
            else iter(range(joints.count))
        )
        self._size = FIRST_BATCH
        self._found: list[tuple[int, MachineState]] = []  # of the last batch, not yet given
        self._given = 0  # of _found
        self._batch: list[int] = []
        self._retry: list[int] | None = None  # a batch whose test raised, to test again
        self._before = 0  # joint moves tried before the last batch
        #: Joint moves tried: up to the one of the last child given, or every one of the
        #: batches whose children were all given.
        self.tried = 0
        #: The last ``next_child`` returned None because ``stop()`` said so.
        self.stopped = False

    @property
    def complete(self) -> bool:
        """Every joint move was tried and every child given."""
        return self.tried == self.joints.count and self._given == len(self._found)

    @property
    def pending(self) -> int:
        """Children of the last batch not given yet (``next_child`` gives them without
        trying another joint move)."""
        return len(self._found) - self._given

    @property
    def scale(self) -> float:
        """How many joint moves each one tried stands for: the children given so far,
        each weighed by it, estimate all of them (1.0 once complete; 0.0 if none was
        tried)."""
        return self.joints.count / self.tried if self.tried else 0.0

    def next_child(self) -> Consistent | None:
        """The next consistent successor; None when there is none left (``complete``) or
        ``stop()`` said to stop (``stopped``)."""
        self.stopped = False
        while self._given == len(self._found):
            if self.tried == self.joints.count:
                return None
            if self.stop is not None and self.stop():
                self.stopped = True
                return None
            self._next_batch()
        position, state = self._found[self._given]
        number = self._batch[position]
        self._given += 1
        last = self._given == len(self._found)
        self.tried = self._before + (len(self._batch) if last else position + 1)
        return Consistent(self.joints.joint(number), state, self.weight)

    def _next_batch(self) -> None:
        """Test the next batch. If the test raises (an interrupt, a closed game), the
        same batch is tested again on the next call: no joint move is skipped."""
        self._before = self.tried
        if self._retry is None:
            self._retry = list(islice(self._order, self._size))
        self._batch = self._retry
        start = time.monotonic()
        found = self._test(self._batch)
        self._retry = None
        took = time.monotonic() - start
        self._found, self._given = found, 0
        if not found:
            self.tried = self._before + len(self._batch)
        if took < FAST_BATCH:
            self._size = min(MAX_BATCH, self._size * 4)
        elif took > SLOW_BATCH:
            self._size = max(1, self._size // 2)

    def __iter__(self) -> Iterator[Consistent]:
        while (child := self.next_child()) is not None:
            yield child
