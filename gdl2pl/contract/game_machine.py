"""The state machine's contract: ggp-base's ``StateMachine`` in Python naming, stated once.

``GameMachine`` is what every layer above an engine calls (the player, the manager, the
adapters, verify, the studio). Its abstract methods are the primitives an engine must
supply (roles, the initial state, legal moves, the next state, terminal, goal values,
percepts, the term spelling, closing); everything else is written here once over them:
joint moves, goals and their errors, random moves, playouts' bookkeeping, chance and
the players of a GDL-II game, what a role cannot tell apart after its turn (lazily:
``consistent_children``), and plain (slower) defaults for ``step``, ``expand``,
``depth_charge``, ``playouts`` and ``consistent_batch`` that an engine overrides when it
can answer them faster. Every engine returns the same ``MachineState``.
"""

from __future__ import annotations

import itertools
import random
from abc import ABC
from abc import abstractmethod
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import NamedTuple
from typing import Self

from gdl2pl.kif import kif_term
from gdl2pl.syntax import Const
from gdl2pl.syntax import Term
from gdl2pl.translate import Translation
from gdl2pl.vocabulary import RANDOM_ROLE
from gdl2pl.vocabulary import goal_number

from .consistent import BatchTest
from .consistent import Consistent
from .consistent import ConsistentStream
from .consistent import JointMoves
from .errors import GameError
from .errors import GoalDefinitionError
from .errors import IllegalMoveError
from .errors import MoveDefinitionError
from .errors import PlayoutDepthError
from .errors import TransitionDefinitionError
from .state import MachineState
from .state import ground_term
from .state import short

#: A term, or KIF text for one (what the contract's questions take from outside).
TermText = Term | str

#: Random playouts stop after this many steps unless told otherwise: enough for every
#: public game, and a bound on a game that never ends.
DEFAULT_MAX_DEPTH = 5_000


#: The most playouts one ``playouts`` call answers: each is a (goal, depth) pair per
#: role in the answer, so more would not fit in memory (``average_scores`` takes any
#: number, in parts).
MAX_PLAYOUTS_PER_CALL = 10_000_000


def check_playout_count(n: object, limit: int | None = MAX_PLAYOUTS_PER_CALL) -> int:
    """``n``, or ``ValueError`` unless it is a whole number of playouts >= 1 (and at most
    ``limit``, when one is given)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"the number of playouts must be a whole number >= 1, not {n!r}")
    if limit is not None and n > limit:
        raise ValueError(
            f"{n:,} playouts do not fit in one answer (at most {limit:,} a call: ask "
            "for them in parts, or use average_scores, which takes any number)"
        )
    return n


def check_max_depth(max_depth: object) -> int:
    """``max_depth``, or ``ValueError`` unless it is a whole number >= 0."""
    if isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 0:
        raise ValueError(f"max_depth must be a whole number >= 0, not {max_depth!r}")
    return max_depth


@dataclass(frozen=True)
class EngineChoice:
    """Which engine answers a machine's questions, and why (a sentence)."""

    engine: str
    reason: str

    def __str__(self) -> str:
        return f"{self.engine} engine: {self.reason}"


class Step(NamedTuple):
    """A state with what a search asks about it next (``GameMachine.step``)."""

    #: The state reached.
    state: MachineState
    #: Whether it is terminal.
    terminal: bool
    #: Per role (in role order), its sorted legal moves there (possibly empty).
    legal: tuple[tuple[Term, ...], ...]
    #: Per role, its goal value when the state is terminal (None for a role without
    #: exactly one numeric value: ``goals`` then says why); None when not terminal.
    goals: tuple[int | None, ...] | None


class SymbolStep(NamedTuple):
    """A step answered in symbol ids (``GameMachine.step_symbols``): numbers that stand
    for one fluent or move each, for the machine's life (``GameMachine.symbol`` gives
    the term). For callers that keep their own tables of moves and fluents (the game-AI
    adapters): they look ids up instead of terms."""

    #: The state reached.
    state: MachineState
    #: Whether it is terminal.
    terminal: bool
    #: Per role (in role order), the symbol ids of its legal moves (possibly none).
    legal: list[list[int]]
    #: Per role, its goal values when the state is terminal (as ``goals`` reads them);
    #: empty when not terminal.
    goal_values: list[list[str]]
    #: The symbol ids of the fluents the step added to and removed from the state.
    added: list[int]
    removed: list[int]


def goal_value(values: list[str]) -> int | None:
    """The one numeric goal value among ``values`` (``goal_number``), or None."""
    return goal_number(values[0]) if len(values) == 1 else None


def uniform_weight(counts: Sequence[int], index: int) -> Fraction:
    """The chance of one joint move when every role but ``index`` chooses uniformly among
    its ``counts[i]`` legal moves."""
    weight = Fraction(1)
    for i, count in enumerate(counts):
        if i != index and count:
            weight /= count
    return weight


class GameMachine(ABC):
    """A loaded game, on some engine. ``close()`` (or a ``with`` block) releases it."""

    #: The game's name, for messages.
    name: str
    #: The game's translation (what it declares, its dialect, whether it is GDL-II).
    translation: Translation

    _engine_choice: EngineChoice | None = None

    @property
    def engine_choice(self) -> EngineChoice:
        """Which engine answers this machine's questions now, and why."""
        if self._engine_choice is None:
            return EngineChoice(self.engine, "the engine asked for")
        return self._engine_choice

    @engine_choice.setter
    def engine_choice(self, choice: EngineChoice) -> None:
        self._engine_choice = choice

    #: The name of the engine behind this class ("prolog", "compiled"...).
    engine: str = "prolog"

    # -- the primitives an engine supplies ----------------------------------------------

    @property
    @abstractmethod
    def roles(self) -> tuple[Term, ...]:
        """The roles, in the order of the game description."""

    @property
    @abstractmethod
    def initial_state(self) -> MachineState: ...

    @abstractmethod
    def term(self, kif: Term | str) -> Term:
        """Parse a KIF term (or check a term) and spell its symbols as the game does;
        ``TransitionDefinitionError`` if it is not a ground term."""

    @abstractmethod
    def all_legal_moves(self, state: MachineState) -> list[list[Term]]:
        """Per role (in role order), its sorted legal moves; empty lists are allowed."""

    @abstractmethod
    def next_state(self, state: MachineState, joint_move: Sequence[Term | str]) -> MachineState:
        """The state after ``joint_move`` (one move per role, in role order).

        Raises ``IllegalMoveError`` if a move is not legal, ``TransitionDefinitionError``
        if the joint move is ill-formed."""

    @abstractmethod
    def is_terminal(self, state: MachineState) -> bool: ...

    @abstractmethod
    def goal_values(self, state: MachineState) -> list[list[str]]:
        """Per role, every goal value the game gives it in ``state`` (as text)."""

    @abstractmethod
    def percepts(
        self, state: MachineState, joint_move: Sequence[Term | str], role: Term | str
    ) -> list[Term]:
        """What ``role`` perceives (GDL-II's ``sees``) when ``joint_move`` is played in
        ``state``: its percepts, sorted in Prolog's standard order; empty in a game
        without ``sees`` rules. ``GameError`` for the random role (chance perceives
        nothing); the joint move is checked as ``next_state`` checks it."""

    @abstractmethod
    def step_symbols(self, state: MachineState, joint_move: Sequence[Term | str]) -> SymbolStep:
        """``step`` answered in symbol ids (``SymbolStep``), for callers that map moves
        and fluents to their own tables: the new state remembers nothing (``step``
        does). Same errors as ``step``."""

    @abstractmethod
    def symbol(self, symbol_id: int) -> Term:
        """The fluent or move a symbol id of ``step_symbols`` stands for."""

    @property
    @abstractmethod
    def base_propositions(self) -> list[Term]:
        """The fluents the game declares with ``base`` (empty when it declares none);
        ``GameError`` for a game older than GDL 2010 that uses ``base`` otherwise."""

    @abstractmethod
    def input_moves(self, role: Term | str) -> list[Term]:
        """The moves the game declares for ``role`` with ``input`` (empty if none);
        ``GameError`` for a game older than GDL 2010 that uses ``input`` otherwise."""

    @abstractmethod
    def declared_percepts(self, role: Term | str) -> list[Term]:
        """The percepts the game declares for ``role`` with GDL-II's ``percept``, sorted
        (empty if none)."""

    @abstractmethod
    def seed(self, seed: int) -> None:
        """Seed the random generator of this thread's playouts."""

    @abstractmethod
    def close(self) -> None:
        """Release the game. Idempotent; every later question raises an error."""

    # -- written once over them -----------------------------------------------------------

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, roles={[str(r) for r in self.roles]})"

    def role_index(self, role: Term | str) -> int:
        """The position of ``role`` among the roles; ``TransitionDefinitionError`` if it
        is not one."""
        try:
            return self.roles.index(self.term(role))
        except ValueError:
            raise TransitionDefinitionError(
                f"{self.name}: {kif_term(ground_term(role))} is not a role"
            ) from None

    def role_moves(self, state: MachineState, index: int) -> list[Term]:
        """The legal moves of the role at ``index`` (possibly none)."""
        return self.all_legal_moves(state)[index]

    def legal_moves(self, state: MachineState, role: Term | str) -> list[Term]:
        """The legal moves of ``role`` in ``state``, sorted; raises
        ``MoveDefinitionError`` when there is none."""
        moves = self.role_moves(state, self.role_index(role))
        if not moves:
            raise self.no_move(state, role)
        return moves

    def no_move(self, state: MachineState, role: Term | str, during: str = "") -> GameError:
        """The error for ``role`` having no legal move in ``state`` (``during``: where)."""
        return MoveDefinitionError(
            f"{self.name}: no legal move for role {kif_term(ground_term(role))}"
            f"{during} in state {short(state)}"
        )

    def illegal(self, state: MachineState, move: Term, role: Term) -> GameError:
        """The error for ``move`` not being legal for ``role`` in ``state``."""
        return IllegalMoveError(
            f"{self.name}: {kif_term(move)} is not a legal move for role {role} "
            f"in state {short(state)}"
        )

    def wrong_joint_move(self, got: int) -> GameError:
        """The error for a joint move of ``got`` moves when the game has another number
        of roles."""
        return TransitionDefinitionError(
            f"{self.name}: a joint move needs one move per role ({len(self.roles)}), got {got}"
        )

    def every_role_moves(self, state: MachineState, per_role: Sequence[Sequence[Term]]) -> None:
        """``MoveDefinitionError`` for the first role without a move in ``per_role``."""
        if all(per_role):
            return
        for role, moves in zip(self.roles, per_role, strict=True):
            if not moves:
                raise self.no_move(state, role)

    def legal_joint_moves(self, state: MachineState) -> list[tuple[Term, ...]]:
        """Every combination of legal moves, one per role in role order."""
        per_role = self.all_legal_moves(state)
        self.every_role_moves(state, per_role)
        return list(itertools.product(*per_role))

    def step(self, state: MachineState, joint_move: Sequence[Term | str]) -> Step:
        """The state after ``joint_move`` (as ``next_state``, with the same errors),
        whether it is terminal, every role's legal moves there and, if terminal, the
        goals. An engine may answer it in one call, and have the new state remember the
        answers."""
        child = self.next_state(state, joint_move)
        terminal = self.is_terminal(child)
        legal = tuple(tuple(ms) for ms in self.all_legal_moves(child))
        goals = tuple(goal_value(vs) for vs in self.goal_values(child)) if terminal else None
        return Step(child, terminal, legal, goals)

    def expand(self, state: MachineState) -> list[tuple[tuple[Term, ...], Step]]:
        """Every legal joint move of ``state`` (in ``legal_joint_moves`` order) with the
        ``step`` it leads to; ``MoveDefinitionError`` when a role has no legal move."""
        return [(jm, self.step(state, jm)) for jm in self.legal_joint_moves(state)]

    def next_states(self, state: MachineState) -> list[MachineState]:
        """The successor of every legal joint move (in ``legal_joint_moves`` order)."""
        return [step.state for _, step in self.expand(state)]

    def next_state_map(self, state: MachineState) -> dict[tuple[Term, ...], MachineState]:
        """Each legal joint move mapped to the state it leads to."""
        return {jm: step.state for jm, step in self.expand(state)}

    def state_info(
        self, state: MachineState
    ) -> tuple[bool, list[list[Term]], list[list[int | str]]]:
        """(terminal, legal moves per role, goal values per role, numbers as ints)."""
        goals = [
            [n if (n := goal_number(v)) is not None else v for v in vs]
            for vs in self.goal_values(state)
        ]
        return self.is_terminal(state), self.all_legal_moves(state), goals

    def goal(self, state: MachineState, role: Term | str) -> int:
        """The goal value of ``role`` in ``state``; ``GoalDefinitionError`` unless there
        is exactly one numeric value."""
        index = self.role_index(role)
        return self.unique_goal(state, index, self.goal_values(state)[index])

    def goals(self, state: MachineState) -> list[int]:
        """Every role's goal value, in role order (GDL-II's random role, which the game
        need not give a goal, has 0 when it has none)."""
        values = self.goal_values(state)
        return [self.unique_goal(state, i, vs) for i, vs in enumerate(values)]

    def unique_goal(self, state: MachineState, index: int, values: Sequence[str]) -> int:
        """The one numeric value of ``values`` (role ``index``'s goal values in ``state``);
        ``GoalDefinitionError`` otherwise, but 0 for a random role without any."""
        role = self.roles[index]
        if not values and self.is_random(role):
            return 0
        if len(values) != 1:
            what = f"{len(values)} goal values ({', '.join(map(str, values))})"
            raise GoalDefinitionError(
                f"{self.name}: role {role} has {what if values else 'no goal value'} "
                f"in state {short(state)}"
            )
        number = goal_number(values[0])
        if number is None:
            raise GoalDefinitionError(
                f"{self.name}: role {role} has the non-numeric goal value {values[0]} "
                f"in state {short(state)} (goal values are natural numbers in decimal "
                "digits)"
            )
        return number

    def random_joint_move(
        self, state: MachineState, rng: random.Random | None = None
    ) -> tuple[Term, ...]:
        """A uniformly random legal move for every role."""
        choice = (rng or random).choice
        per_role = self.all_legal_moves(state)
        self.every_role_moves(state, per_role)
        return tuple(choice(ms) for ms in per_role)

    def random_next_state(
        self, state: MachineState, rng: random.Random | None = None
    ) -> MachineState:
        return self.next_state(state, self.random_joint_move(state, rng))

    def too_deep(self, max_depth: int) -> PlayoutDepthError:
        """The error for a playout without a terminal state within ``max_depth`` steps."""
        return PlayoutDepthError(
            f"{self.name}: no terminal state within {max_depth:,} steps of a random "
            "playout (the game may never end); pass a larger max_depth to go on"
        )

    _rng: random.Random | None = None  # seeded by an engine's ``seed``, if it likes

    def depth_charge(
        self, state: MachineState, max_depth: int = DEFAULT_MAX_DEPTH
    ) -> tuple[MachineState, int]:
        """Play random joint moves until a terminal state; returns the final state and
        the number of steps taken. ``PlayoutDepthError`` if no terminal state comes
        within ``max_depth`` steps (the game may not terminate)."""
        final, steps = self._playout(state, check_max_depth(max_depth))
        if not self.is_terminal(final):
            raise self.too_deep(max_depth)
        return final, steps

    def _playout(self, state: MachineState, max_depth: int) -> tuple[MachineState, int]:
        rng = self._rng or random.Random()
        steps = 0
        while steps < max_depth and not self.is_terminal(state):
            per_role = self.all_legal_moves(state)
            for role, moves in zip(self.roles, per_role, strict=True):
                if not moves:
                    raise self.no_move(state, role, " during a depth charge,")
            state = self.next_state(state, [rng.choice(ms) for ms in per_role])
            steps += 1
        return state, steps

    def playouts(
        self, state: MachineState, n: int, max_depth: int = DEFAULT_MAX_DEPTH
    ) -> tuple[list[list[tuple[int, int]]], int]:
        """``n`` random playouts. Returns, per role, the (goal value or -1, depth) of
        each, and the total number of steps. A playout stops after ``max_depth`` steps
        even if not terminal (its depth is then ``max_depth``, and goal values are those
        of the state reached, usually -1). ``ValueError`` unless ``n`` is a whole number
        >= 1."""
        check_playout_count(n)
        check_max_depth(max_depth)
        per_role: list[list[tuple[int, int]]] = [[] for _ in self.roles]
        total = 0
        for _ in range(n):
            final, steps = self._playout(state, max_depth)
            total += steps
            for col, vs in zip(per_role, self.goal_values(final), strict=True):
                value = goal_value(vs)
                col.append((-1 if value is None else value, steps))
        return per_role, total

    def average_scores(self, state: MachineState, n: int, discount: float = 1.0) -> list[float]:
        """Per role, the mean over ``n`` random playouts of goal * discount**depth
        (a role without a unique goal value at the end scores 0). ``ValueError`` unless
        ``n`` is a whole number >= 1 (a mean over no playouts has no value)."""
        check_playout_count(n, limit=None)
        totals = [0.0] * len(self.roles)
        done = 0
        while done < n:  # in parts, so that any number fits in memory
            part = min(n - done, 100_000)
            per_role, _ = self.playouts(state, part)
            for r, col in enumerate(per_role):
                totals[r] += sum(max(v, 0) * discount**d for v, d in col)
            done += part
        return [t / n for t in totals]

    def require_gdl_2010(self, keyword: str, method: str) -> None:
        """``GameError`` if the game predates GDL 2010 and uses ``keyword`` (``base``,
        ``input``) as an ordinary relation, so that ``method`` has no answer."""
        if keyword in self.translation.pre_2010:
            raise GameError(
                f"{self.name}: {method} is unavailable: the game predates GDL 2010 and uses "
                f"{keyword} as an ordinary relation, not to declare its {keyword} set"
            )

    # -- GDL-II: chance and what a role perceives --------------------------------------

    @property
    def gdl_ii(self) -> bool:
        """True for a GDL-II game: it declares the role ``random`` or uses ``sees`` or
        ``percept`` (``Translation.gdl_ii``)."""
        return self.translation.gdl_ii

    @property
    def random_role(self) -> Term | None:
        """GDL-II's role of chance, ``random``, if the game declares it."""
        for role in self.roles:
            if isinstance(role, Const) and role.name.casefold() == RANDOM_ROLE:
                return role
        return None

    def is_random(self, role: Term | str) -> bool:
        """True if ``role`` (a role of the game) is the role of chance, ``random``."""
        r = self.roles[self.role_index(role)]
        return isinstance(r, Const) and r.name.casefold() == RANDOM_ROLE

    @property
    def players(self) -> tuple[Term, ...]:
        """The roles that choose their moves: every role but ``random``, in role order."""
        return tuple(r for r in self.roles if not self.is_random(r))

    def chance_outcomes(self, state: MachineState) -> list[tuple[Term, Fraction]]:
        """The random role's legal moves in ``state``, each with its probability: GDL-II's
        chance chooses uniformly, so each of n moves has ``Fraction(1, n)``. Empty in a
        terminal state; ``MoveDefinitionError`` if chance has no legal move in a state
        that is not terminal; ``GameError`` if the game has no random role."""
        chance = self.random_role
        if chance is None:
            raise GameError(f"{self.name}: the game has no random role (no chance)")
        if self.is_terminal(state):
            return []
        moves = self.legal_moves(state, chance)
        return [(m, Fraction(1, len(moves))) for m in moves]

    def consistent_children(
        self,
        state: MachineState,
        role: TermText,
        move: TermText,
        percepts: Iterable[TermText],
        *,
        rng: random.Random | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> ConsistentStream:
        """Lazily, the legal joint moves of ``state`` in which ``role`` plays ``move`` and
        then perceives exactly the set ``percepts``, with the states they lead to and
        their weight (``gdl2pl.contract.consistent``): in ``legal_joint_moves`` order, or
        with ``rng`` in a uniformly random one, tried in batches as the caller asks,
        ``stop()`` asked before each. The role, the move (``IllegalMoveError`` if it is not
        legal for ``role`` in ``state``) and the percepts are checked at once; ``GameError``
        for the random role, which perceives nothing."""
        index = self.role_index(role)
        if self.is_random(self.roles[index]):
            raise GameError(f"{self.name}: the random role is chance and perceives nothing")
        played = self.term(move)
        seen = frozenset(self.term(p) for p in percepts)
        per_role = self.all_legal_moves(state)
        if played not in per_role[index]:
            raise self.illegal(state, played, self.roles[index])
        joints = JointMoves(per_role, index, played)
        weight = uniform_weight([len(ms) for ms in per_role], index)
        test = self.consistent_batch(state, index, seen, joints)
        return ConsistentStream(joints, weight, test, rng, stop)

    def consistent_batch(
        self, state: MachineState, index: int, seen: frozenset[Term], joints: JointMoves
    ) -> BatchTest:
        """The test ``consistent_children`` tries its joint moves with: which of a batch
        of ``joints`` let the role at ``index`` perceive exactly ``seen``, and the child
        of each (legality is already known). Here one ``percepts`` call per joint move and
        one ``next_state`` per child; an engine overrides it with a faster one."""
        role = self.roles[index]

        def test(numbers: Sequence[int]) -> list[tuple[int, MachineState]]:
            out = []
            for position, number in enumerate(numbers):
                joint = joints.joint(number)
                if frozenset(self.percepts(state, joint, role)) == seen:
                    out.append((position, self.next_state(state, joint)))
            return out

        return test

    def consistent_successors(
        self, state: MachineState, role: TermText, move: TermText, percepts: Iterable[TermText]
    ) -> list[Consistent]:
        """Every legal joint move of ``state`` in which ``role`` plays ``move`` and then
        perceives exactly the set ``percepts``, with the state it leads to and its
        weight (the first role's move varying slowest): what ``role`` cannot tell apart
        after that turn; ``consistent_children``, all of them, with its errors."""
        return list(self.consistent_children(state, role, move, percepts))
