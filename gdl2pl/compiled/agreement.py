"""Whether a network answers as the reasoner it was grounded from: the check
``AutoMachine`` makes before it switches to the network (defence in depth: the tests
hold the network to the reasoner's answers, this keeps a defect they missed from
answering a user's game).

``agreement`` asks both engines the same questions (terminal, the legal moves, the goal
values, the next state of a few joint moves) in given states (those the reasoner has
answered already) and then along a few short random plays, stops at the first
difference and says it in the game's own words, every outside text escaped
(``shown``). It is bounded by a count of states and by a deadline. A question the
reasoner cannot answer (an inference limit, an interrupt: not a game error) is left
out; a game error must be the same error on both engines.
"""

from __future__ import annotations

import itertools
import random
import time
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gdl2pl.contract import GameError
from gdl2pl.contract import GameMachine
from gdl2pl.contract import MachineState
from gdl2pl.contract.state import shown
from gdl2pl.kif import kif_term
from gdl2pl.syntax import Term

#: The most joint moves whose next states are compared in one state.
MAX_JOINT = 4

#: How a state, a term or a joint move is quoted in a difference (escaped, cut).
STATE_WIDTH = 200
TERM_WIDTH = 80


@dataclass(frozen=True)
class Agreement:
    """What the check found: the first ``difference`` in words (None: none found), the
    number of ``states`` compared, and whether it ran ``complete`` (not cut short by its
    deadline or a stop)."""

    difference: str | None
    states: int
    complete: bool


class _Unanswered(Exception):
    """The reasoner gave no answer to compare (not a game error)."""


@dataclass(frozen=True)
class _Raised:
    """A game error an engine raised in answer."""

    error: str


class _Differs(Exception):
    """The two engines answered a question differently."""

    def __init__(self, where: str, question: str, reasoner: Any, network: Any) -> None:
        super().__init__(question)
        self.where, self.question = where, question
        self.reasoner, self.network = reasoner, network

    def words(self, roles: Sequence[Term]) -> str:
        """The difference in the game's own words."""
        r, n, where, question = self.reasoner, self.network, self.where, self.question
        if isinstance(r, _Raised) or isinstance(n, _Raised):
            return (f"{where}, asked its {question}, the reasoner {_outcome(r)} and the "
                    f"network {_outcome(n)}")
        if question == "legal moves":
            return _legal_differ(where, roles, r, n)
        if question == "goal values":
            for role, a, b in zip(roles, r, n, strict=False):
                if a != b:
                    return (f"{where}, the goal values of {shown(kif_term(role), TERM_WIDTH)} "
                            f"are {shown(' '.join(a), TERM_WIDTH)} on the reasoner and "
                            f"{shown(' '.join(b), TERM_WIDTH)} on the network")
        if question == "terminal":
            on, off = ("reasoner", "network") if r else ("network", "reasoner")
            return f"{where}, the game is over on the {on}, not on the {off}"
        if isinstance(r, MachineState) and isinstance(n, MachineState):
            return _fluents_differ(f"{where}, the {question}", r, n) or question
        return f"{where}, the {question} differ"


def agreement(
    network: GameMachine,
    reasoner: GameMachine,
    states: Iterable[MachineState],
    *,
    plays: int = 3,
    steps: int = 8,
    deadline: float,
    seed: int = 0,
    stop: Callable[[], bool] = lambda: False,
) -> Agreement:
    """Compare ``network`` with ``reasoner`` in ``states``, then along ``plays`` random
    plays of at most ``steps`` steps from the initial state (moves drawn from ``seed``),
    until the first difference, ``deadline`` (a ``time.monotonic()`` value) or ``stop()``
    (see the module's docstring)."""
    rng = random.Random(seed)
    seen = 0

    def over() -> bool:
        return stop() or time.monotonic() >= deadline

    first = _fluents_differ("the initial state", reasoner.initial_state, network.initial_state)
    if first:
        return Agreement(first, 0, True)
    for state in states:
        if over():
            return Agreement(None, seen, False)
        difference, _ = _state_differs(network, reasoner, state, rng, over)
        seen += 1
        if difference:
            return Agreement(difference, seen, True)
    for _ in range(plays):
        state = reasoner.initial_state
        for _ in range(steps):
            if over():
                return Agreement(None, seen, False)
            difference, children = _state_differs(network, reasoner, state, rng, over)
            seen += 1
            if difference:
                return Agreement(difference, seen, True)
            if not children:
                break
            state = rng.choice(children)
    return Agreement(None, seen, True)


def _state_differs(
    network: GameMachine,
    reasoner: GameMachine,
    state: MachineState,
    rng: random.Random,
    over: Callable[[], bool],
) -> tuple[str | None, list[MachineState]]:
    """The first difference of the two engines' answers in ``state`` (None: none), and
    the reasoner's next states of the joint moves compared."""
    where = f"in the state {shown(str(state), STATE_WIDTH)}"
    roles = reasoner.roles
    try:
        terminal = _same(where, "terminal", lambda m: m.is_terminal(state), network, reasoner)
        legal = _same(where, "legal moves", lambda m: m.all_legal_moves(state), network, reasoner)
        _same(where, "goal values", lambda m: m.goal_values(state), network, reasoner)
    except _Unanswered:
        return None, []
    except _Differs as d:
        return d.words(roles), []
    if terminal is not False or not isinstance(legal, list) or not all(legal):
        return None, []
    joints = list(itertools.islice(itertools.product(*legal), 64))
    children = []
    for joint in rng.sample(joints, min(MAX_JOINT, len(joints))):
        if over():
            break
        moves = " ".join(shown(kif_term(m), TERM_WIDTH) for m in joint)
        try:
            child = _same(where, f"next state after the joint move ({moves})",
                          _next_state(state, joint), network, reasoner)
        except _Unanswered:
            continue
        except _Differs as d:
            return d.words(roles), []
        if isinstance(child, MachineState):
            children.append(child)
    return None, children


def _next_state(state: MachineState, joint: Sequence[Term]) -> Callable[[GameMachine], Any]:
    return lambda m: m.next_state(state, joint)


def _outcome(x: Any) -> str:
    return f"raises {x.error}" if isinstance(x, _Raised) else "answers"


def _answer(machine: GameMachine, question: Callable[[GameMachine], Any]) -> Any:
    try:
        return question(machine)
    except GameError as e:
        return _Raised(type(e).__name__)


def _same(
    where: str,
    question: str,
    ask: Callable[[GameMachine], Any],
    network: GameMachine,
    reasoner: GameMachine,
) -> Any:
    """The reasoner's answer to ``ask``; ``_Differs`` if the network's is another (an
    error other than a game error from the network is an answer of its own),
    ``_Unanswered`` if the reasoner gave none."""
    try:
        expected = _answer(reasoner, ask)
    except Exception:
        raise _Unanswered from None
    try:
        got = _answer(network, ask)
    except Exception as e:
        got = _Raised(type(e).__name__)
    if got != expected:
        raise _Differs(where, question, expected, got)
    return expected


def _legal_differ(where: str, roles: Sequence[Term], r: Any, n: Any) -> str:
    for role, a, b in zip(roles, r, n, strict=False):
        if a == b:
            continue
        who = shown(kif_term(role), TERM_WIDTH)
        only_r = [kif_term(m) for m in a if m not in b]
        only_n = [kif_term(m) for m in b if m not in a]
        if only_r:
            return (f"{where}, the move {shown(only_r[0], TERM_WIDTH)} of {who} is legal on "
                    "the reasoner, not on the network")
        if only_n:
            return (f"{where}, the move {shown(only_n[0], TERM_WIDTH)} of {who} is legal on "
                    "the network, not on the reasoner")
        return f"{where}, the legal moves of {who} come in another order on the network"
    return f"{where}, the legal moves are given for {len(n)} roles, not {len(r)}"


def _fluents_differ(what: str, reasoner: MachineState, network: MachineState) -> str | None:
    """Which fluent of ``what`` holds on one engine only (None: the same state)."""
    if reasoner == network:
        return None
    ours = {kif_term(f) for f in reasoner.fluents}
    theirs = {kif_term(f) for f in network.fluents}
    only_r, only_n = sorted(ours - theirs), sorted(theirs - ours)
    if only_r:
        return f"{what}: the fluent {shown(only_r[0], TERM_WIDTH)} holds on the reasoner only"
    return f"{what}: the fluent {shown(only_n[0], TERM_WIDTH)} holds on the network only"
