"""The compiled engine: ``StateMachine``'s contract answered by a propositional network.

``CompiledMachine`` is built from a loaded Prolog ``StateMachine`` (the reasoner, which
grounds the game and stays its definition): it returns the same ``MachineState`` values
(equal, and equal-hashing, to the Prolog engine's for the same fluents), sorts moves
and goal values the same way and raises the same errors. Legal moves, next states,
terminal, goals, GDL-II's percepts and random playouts run in the network
(``_network``, a C extension); the declared ``base``/``input``/``percept`` sets are
asked of the Prolog engine. A state holding a fluent the
relaxation never produces (one made by hand) is also answered by the Prolog engine.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable
from collections.abc import Sequence
from itertools import compress
from pathlib import Path
from typing import Any

from gdl2pl.bridge import StateMachine
from gdl2pl.contract import DEFAULT_MAX_DEPTH
from gdl2pl.contract import GameError
from gdl2pl.contract import GameMachine
from gdl2pl.contract import MachineState
from gdl2pl.contract import Step
from gdl2pl.contract import SymbolStep
from gdl2pl.contract.consistent import BatchTest
from gdl2pl.contract.consistent import JointMoves
from gdl2pl.contract.game_machine import check_max_depth
from gdl2pl.contract.game_machine import check_playout_count
from gdl2pl.contract.game_machine import goal_value
from gdl2pl.contract.state import check_same_game
from gdl2pl.load import Syntax
from gdl2pl.load import parse_game
from gdl2pl.load import read_game
from gdl2pl.syntax import Description
from gdl2pl.syntax import Term
from gdl2pl.vocabulary import goal_number

from .build import NetworkBuild
from .errors import CompiledUnavailableError
from .errors import CompileRefusedError
from .ground import GroundingBudget
from .network import Network
from .reasoner_part import ReasonerPart

Raw = Any
_set = object.__setattr__

#: Steps of random play (every rule evaluated) that tell each rule which of its atoms
#: is rarely true, before the network switches to looking at a rule only once that
#: atom holds.
TUNE_STEPS = 400


class CompiledState(MachineState):
    """A ``MachineState`` that also holds its fluents as the network's bits; its set of
    fluents (what equality and hashing use) is made the first time it is needed."""

    __slots__ = ("_bits", "_table")

    _bits: bytes
    _table: list[Raw]

    def __getattr__(self, name: str) -> Any:
        if name == "_key":
            key = frozenset(compress(self._table, self._bits))
            _set(self, "_key", key)
            _set(self, "_hash", hash(key))
            return key
        if name == "_hash":
            self._key  # noqa: B018  (sets _hash)
            return self._hash
        raise AttributeError(name)


def c_network(net: Network) -> Any:
    """The C extension's evaluator of ``net``, untuned (every rule looked at in every
    evaluation); ``CompiledUnavailableError`` without the extension,
    ``CompileRefusedError`` for a network it cannot take."""
    try:
        from ._network import Network as CNetwork  # type: ignore[import-not-found]
    except ImportError as e:
        raise CompiledUnavailableError(
            f"the compiled engine's C extension is not built in this installation ({e}); "
            "reinstall gdl2pl with a C compiler at hand (pip install -e .)"
        ) from None
    try:
        return CNetwork(
            net.n_atoms,
            net.n_fluents,
            net.n_moves,
            net.rule_start,
            net.lit_start,
            net.lits,
            net.state_program,
            net.move_program,
            net.legal,
            net.next,
            net.terminal,
            [[(a, _numeric(v)) for a, v in vs] for vs in net.goals],
            [[(a, k) for k, (a, _) in enumerate(ps)] for ps in net.sees],
        )
    except ValueError as e:  # a network the evaluator cannot take (e.g. not stratified)
        raise CompileRefusedError(f"the network cannot be evaluated: {e}") from None


def _numeric(value: Raw) -> int:
    """A goal value as the network's playouts score it: its number, or -1."""
    number = goal_number(value) if isinstance(value, str) else None
    return -1 if number is None else number


class CompiledMachine(ReasonerPart, GameMachine):
    """A game answered by its propositional network (see the module's docstring): a
    ``GameMachine`` whose primitives are the network's, the rest written once there.
    Build with ``from_file``/``from_text``/``from_machine``; ``close()`` closes the
    Prolog engine it was grounded from."""

    engine = "compiled"

    def __init__(
        self,
        prolog: StateMachine,
        network: Network,
        deadline: float = 0.0,
    ) -> None:
        """The game ``prolog`` loaded, answered by ``network`` (its ground network:
        ``NetworkBuild``). Tuning the evaluator stops at ``deadline`` (a
        ``time.monotonic()`` value; 0: none). ``CompileRefusedError`` for a network the
        evaluator cannot take, ``CompiledUnavailableError`` without the C extension."""
        self.prolog = prolog
        self.name = prolog.name
        self.translation = prolog.translation
        self.network = network
        net = network
        self._net = c_network(net)
        terms = prolog.term_cache
        self._terms = terms
        self._fluents: list[Raw] = net.fluents
        self._fluent_index = {f: i for i, f in enumerate(net.fluents)}
        self._move_index = {(r, m): i for i, (r, m) in enumerate(net.moves) if r >= 0}
        self._move_terms = [terms.term(m) for _, m in net.moves]
        # per role, the moves this machine hands out, by identity: no hashing of terms
        self._ids_by_role: list[dict[int, int]] = [{} for _ in prolog.roles]
        for i, (r, _) in enumerate(net.moves):
            if 0 <= r < len(self._ids_by_role):
                self._ids_by_role[r][id(self._move_terms[i])] = i
        self._goal_raw = [[v for _, v in vs] for vs in net.goals]
        self._percept_terms = [[terms.term(p) for _, p in ps] for ps in net.sees]
        self._roles = prolog.roles
        self._raw_roles = prolog.raw_roles
        initial = self._bits(prolog.initial_state)
        if initial is None:  # init is part of the relaxation: cannot happen
            raise CompileRefusedError(f"{self.name}: the initial state is not in the network")
        self._initial = self._state(initial)
        self._net.set_moves(tuple(self._move_terms))  # step answers legal moves as these
        # measured: see the README's compiled engine
        self._net.tune(initial, TUNE_STEPS, 200, deadline)

    # -- construction -------------------------------------------------------------------

    @classmethod
    def from_machine(
        cls,
        prolog: StateMachine,
        budget: GroundingBudget | None = None,
    ) -> CompiledMachine:
        """The game ``prolog`` loaded, grounded within ``budget`` by a worker process
        (``NetworkBuild``) from the flat rules ``prolog`` was translated from
        (``StateMachine.flat_rules``: the game is not normalized and flattened again,
        and keeps the case ``prolog`` was loaded with); its errors."""
        build = NetworkBuild(prolog.flat_rules, prolog.name, prolog.raw_roles, budget=budget)
        network = build.wait()
        return cls(prolog, network, build.deadline)

    @classmethod
    def from_description(
        cls,
        d: Description,
        name: str | None = None,
        case_sensitive: bool = False,
        budget: GroundingBudget | None = None,
    ) -> CompiledMachine:
        prolog = StateMachine(d, name=name, case_sensitive=case_sensitive)
        try:
            return cls.from_machine(prolog, budget)
        except BaseException:
            prolog.close()
            raise

    @classmethod
    def from_file(
        cls,
        path: str | os.PathLike[str],
        syntax: Syntax = "auto",
        case_sensitive: bool = False,
        budget: GroundingBudget | None = None,
    ) -> CompiledMachine:
        p = Path(path)
        d = read_game(p, syntax)
        return cls.from_description(d, p.name, case_sensitive, budget)

    @classmethod
    def from_text(
        cls,
        text: str,
        syntax: Syntax = "auto",
        name: str | None = None,
        case_sensitive: bool = False,
        budget: GroundingBudget | None = None,
    ) -> CompiledMachine:
        d = parse_game(text, syntax=syntax, file=name)
        return cls.from_description(d, name, case_sensitive, budget)

    def close(self) -> None:
        """Close the Prolog engine (idempotent); later calls raise ``GameClosedError``."""
        self.prolog.close()


    # -- states -------------------------------------------------------------------------

    def _state(self, bits: bytes) -> CompiledState:
        s = object.__new__(CompiledState)
        _set(s, "_bits", bits)
        _set(s, "_table", self._fluents)
        _set(s, "_terms", self._terms)
        _set(s, "_known", None)
        return s

    def _bits(self, state: MachineState) -> bytes | None:
        """The network's bits of ``state``; None when a fluent of it is outside the
        relaxation (the Prolog engine answers for such a state)."""
        if isinstance(state, CompiledState) and state._table is self._fluents:
            return state._bits
        if not isinstance(state, MachineState):
            raise TypeError(f"not a MachineState: {state!r}")
        check_same_game(state, self._terms, self.name)
        out = bytearray(len(self._fluents))
        index = self._fluent_index
        for raw in state.forms:
            i = index.get(raw)
            if i is None:
                return None
            out[i] = 1
        return bytes(out)

    def role_index(self, role: Term | str) -> int:
        return self.prolog.role_index(role)

    def _check_open(self) -> None:
        self.prolog.check_open()

    # -- the network's own names, for the rooms that drive it in C (batches) -------------

    @property
    def evaluator(self) -> Any:
        """The C extension's evaluator of ``network`` (``gdl2pl.compiled._network``'s
        ``Network``, tuned): what a C batch of this game is built on, and the generator
        its playouts draw from (``evaluator.seed``)."""
        return self._net

    def state_bits(self, state: MachineState) -> bytes | None:
        """``state`` as the network's bits (a byte per fluent of ``network.fluents``, 1
        where it holds); None when a fluent of it is outside the network."""
        return self._bits(state)

    def state_of_bits(self, bits: bytes) -> MachineState:
        """The state whose fluents are those of ``network.fluents`` where ``bits`` holds
        a 1 (a byte per fluent, as ``state_bits`` and the C batch give them)."""
        if len(bits) != len(self._fluents):
            raise ValueError(f"{self.name}: a state is {len(self._fluents)} bytes, "
                             f"not {len(bits)}")
        return self._state(bytes(bits))

    @property
    def move_terms(self) -> Sequence[Term]:
        """Per move of ``network.moves``, its term (the very objects ``legal_moves``
        hands out)."""
        return tuple(self._move_terms)

    def fluent_term(self, index: int) -> Term:
        """The term of fluent ``index`` of ``network.fluents``."""
        return self._terms.term(self._fluents[index])

    # -- the StateMachine contract ------------------------------------------------------
    # Alike on purpose: roles and initial_state are each engine's own fields, as in
    # ``StateMachine``; the contract states them once (``GameMachine``).

    @property
    def roles(self) -> tuple[Term, ...]:
        return self._roles

    @property
    def initial_state(self) -> MachineState:
        return self._initial

    def term(self, kif: Term | str) -> Term:
        return self.prolog.term(kif)

    def legal_moves(self, state: MachineState, role: Term | str) -> list[Term]:
        """The legal moves of ``role`` in ``state``, sorted as the Prolog engine sorts
        them; ``MoveDefinitionError`` when there is none."""
        index = self.role_index(role)
        bits = self._bits(state)
        if bits is None:
            return self.prolog.legal_moves(state, role)
        self._check_open()
        terms = self._move_terms
        moves = [terms[m] for m in self._net.legal(bits)[index]]
        if not moves:
            raise self.no_move(state, self._roles[index])
        return moves

    def all_legal_moves(self, state: MachineState) -> list[list[Term]]:
        bits = self._bits(state)
        if bits is None:
            return self.prolog.all_legal_moves(state)
        self._check_open()
        terms = self._move_terms
        return [[terms[m] for m in ms] for ms in self._net.legal(bits)]

    def _ids(self, joint_move: Sequence[Term | str]) -> list[int]:
        """The network's move index of each move of a joint move (-1 for a move it does
        not know: never legal); ``TransitionDefinitionError`` as the Prolog engine
        raises it for an ill-formed move or a joint move of the wrong length."""
        by_id = self._ids_by_role
        n = len(by_id)
        out = []
        for i, m in enumerate(joint_move):
            known = by_id[i].get(id(m)) if i < n else None
            if known is None:
                raw = self._terms.form(m)
                known = self._move_index.get((i, raw), -1)
            out.append(known)
        if len(out) != n:
            raise self.wrong_joint_move(len(out))
        return out

    def _illegal(
        self, state: MachineState, joint_move: Sequence[Term | str], role: int
    ) -> GameError:
        move = self._terms.term(self._terms.form(joint_move[role]))
        return self.illegal(state, move, self._roles[role])

    def next_state(self, state: MachineState, joint_move: Sequence[Term | str]) -> MachineState:
        """The state after ``joint_move`` (one move per role, in role order); the Prolog
        engine's errors (``IllegalMoveError``, ``TransitionDefinitionError``)."""
        bits = self._bits(state)
        if bits is None:
            return self.prolog.next_state(state, joint_move)
        ids = self._ids(joint_move)
        self._check_open()
        result = self._net.step(bits, ids, False)
        if result.__class__ is tuple:
            raise self._illegal(state, joint_move, result[1])
        return self._state(result)

    def _goal_lists(self, bits: bytes) -> list[list[Raw]]:
        raw = self._goal_raw
        return [[raw[r][k] for k in ks] for r, ks in enumerate(self._net.goals(bits))]

    def _step(self, child: CompiledState) -> Step:
        bits = child._bits
        terms = self._move_terms
        terminal = self._net.terminal(bits)
        legal = tuple(tuple(terms[m] for m in ms) for ms in self._net.legal(bits))
        goals = None
        if terminal:
            goals = tuple(goal_value(vs) for vs in self._goal_lists(bits))
        return Step(child, terminal, legal, goals)

    def step(self, state: MachineState, joint_move: Sequence[Term | str]) -> Step:
        """The state after ``joint_move``, whether it is terminal, every role's legal
        moves there and, if terminal, the goals (as ``StateMachine.step``), in one call
        of the network, which answers the legal moves as the machine's own terms."""
        bits = self._bits(state)
        if bits is None:
            return self.prolog.step(state, joint_move)
        ids = self._ids(joint_move)
        self._check_open()
        result = self._net.step(bits, ids, 2)  # legal moves as terms (set_moves)
        if len(result) == 2:  # ("illegal", role)
            raise self._illegal(state, joint_move, result[1])
        new, terminal, legal = result
        goals = tuple(goal_value(vs) for vs in self._goal_lists(new)) if terminal else None
        return Step(self._state(new), terminal, legal, goals)

    def step_symbols(self, state: MachineState, joint_move: Sequence[Term | str]) -> SymbolStep:
        """``step`` in symbol ids: fluent i of the network is id i, move j is id
        (number of fluents + j); ``symbol`` gives the term."""
        bits = self._bits(state)
        if bits is None:
            raise GameError(
                f"{self.name}: step_symbols needs a state of the game's reachable fluents"
            )
        child = self.next_state(state, joint_move)
        assert isinstance(child, CompiledState)
        new = child._bits
        nf = len(self._fluents)
        added = [i for i in range(nf) if new[i] and not bits[i]]
        removed = [i for i in range(nf) if bits[i] and not new[i]]
        terminal = self._net.terminal(new)
        legal = [[nf + m for m in ms] for ms in self._net.legal(new)]
        goals = self._goal_lists(new) if terminal else []
        return SymbolStep(child, terminal, legal, goals, added, removed)

    def symbol(self, symbol_id: int) -> Term:
        """The fluent or move a symbol id of ``step_symbols`` stands for."""
        if symbol_id.__class__ is not int:
            raise TypeError(f"a symbol id is an int, not {symbol_id!r}")
        nf = len(self._fluents)
        if 0 <= symbol_id < nf:
            return self._terms.term(self._fluents[symbol_id])
        if 0 <= symbol_id - nf < len(self._move_terms):
            return self._move_terms[symbol_id - nf]
        raise ValueError(f"{self.name}: no symbol has the id {symbol_id}")

    def expand(self, state: MachineState) -> list[tuple[tuple[Term, ...], Step]]:
        """Every legal joint move (in ``legal_joint_moves`` order) with its ``Step``."""
        bits = self._bits(state)
        if bits is None:
            return self.prolog.expand(state)
        self._check_open()
        per_role_ids = self._net.legal(bits)
        per_role = [[self._move_terms[m] for m in ms] for ms in per_role_ids]
        self.every_role_moves(state, per_role)
        out = []
        for jm, ids in zip(
            itertools.product(*per_role), itertools.product(*per_role_ids), strict=True
        ):
            child = self._state(self._net.next(bits, list(ids)))
            out.append((jm, self._step(child)))
        return out

    def is_terminal(self, state: MachineState) -> bool:
        bits = self._bits(state)
        if bits is None:
            return self.prolog.is_terminal(state)
        self._check_open()
        return bool(self._net.terminal(bits))

    def goal_values(self, state: MachineState) -> list[list[str]]:
        bits = self._bits(state)
        if bits is None:
            return self.prolog.goal_values(state)
        self._check_open()
        return self._goal_lists(bits)

    def _stuck(self, role: int, bits: bytes) -> GameError:
        state = self._state(bits)
        return self.no_move(state, self._roles[role], " during a depth charge,")

    def depth_charge(
        self, state: MachineState, max_depth: int = DEFAULT_MAX_DEPTH
    ) -> tuple[MachineState, int]:
        """Random joint moves, in the network, until a terminal state: the final state
        and the number of steps. ``PlayoutDepthError`` past ``max_depth`` steps."""
        max_depth = check_max_depth(max_depth)
        bits = self._bits(state)
        if bits is None:
            return self.prolog.depth_charge(state, max_depth)
        self._check_open()
        result = self._net.depth_charge(bits, max_depth)
        if result[0] == "stuck":
            raise self._stuck(result[1], result[2])
        final = self._state(result[1])
        if result[2] >= max_depth and not self._net.terminal(result[1]):
            raise self.too_deep(max_depth)
        return final, result[2]

    def playouts(
        self, state: MachineState, n: int, max_depth: int = DEFAULT_MAX_DEPTH
    ) -> tuple[list[list[tuple[int, int]]], int]:
        """``n`` random playouts in the network: per role the (goal value or -1, depth)
        of each, and the total number of steps (as ``StateMachine.playouts``)."""
        check_playout_count(n)
        max_depth = check_max_depth(max_depth)
        bits = self._bits(state)
        if bits is None:
            return self.prolog.playouts(state, n, max_depth)
        self._check_open()
        result = self._net.playouts(bits, n, max_depth)
        if result[0] == "stuck":
            raise self._stuck(result[1], result[2])
        return result[1], result[2]

    def seed(self, seed: int) -> None:
        """Seed the network's playout generator (and the Prolog engine's)."""
        self._net.seed(int(seed))
        self.prolog.seed(seed)

    def percepts(
        self, state: MachineState, joint_move: Sequence[Term | str], role: Term | str
    ) -> list[Term]:
        """What ``role`` perceives (GDL-II's ``sees``, compiled into the network like
        ``next``) when ``joint_move`` is played in ``state``; the Prolog engine's errors
        (the joint move checked as ``next_state`` checks it)."""
        index = self.role_index(role)
        if self.is_random(self._roles[index]):
            raise GameError(f"{self.name}: the random role is chance and perceives nothing")
        bits = self._bits(state)
        if bits is None:
            return self.prolog.percepts(state, joint_move, role)
        ids = self._ids(joint_move)
        self._check_open()
        checked = self._net.step(bits, ids, False)
        if checked.__class__ is tuple:
            raise self._illegal(state, joint_move, checked[1])
        terms = self._percept_terms[index]
        return [terms[k] for k in self._net.sees(bits, ids)[index]]

    def consistent_batch(
        self, state: MachineState, index: int, seen: frozenset[Term], joints: JointMoves
    ) -> BatchTest:
        """Which of a batch of ``joints`` let the role at ``index`` perceive exactly
        ``seen``, with their children (see ``GameMachine.consistent_children``): the
        network's percepts of each joint move, then its next state if they agree, and
        nothing else (no legal moves of the children)."""
        bits = self._bits(state)
        if bits is None:
            return self.prolog.consistent_batch(state, index, seen, joints)
        percept_ids = {t: k for k, t in enumerate(self._percept_terms[index])}
        if any(p not in percept_ids for p in seen):
            return lambda numbers: []  # a percept the network never gives: no joint move
        wanted = {percept_ids[p] for p in seen}
        # each role's moves as the network's ids, in the order of joints.moves (the
        # legal moves the network answered, sorted as the reasoner sorts them)
        ids = [list(ms) for ms in self._net.legal(bits)]
        ids[index] = [self._move_index[(index, self._terms.form(joints.moves[index][0]))]]
        sees, successor, digits = self._net.sees, self._net.next, joints.digits

        def test(numbers: Sequence[int]) -> list[tuple[int, MachineState]]:
            self._check_open()
            out: list[tuple[int, MachineState]] = []
            for position, number in enumerate(numbers):
                joint = [ms[d] for ms, d in zip(ids, digits(number), strict=True)]
                if set(sees(bits, joint)[index]) == wanted:
                    out.append((position, self._state(successor(bits, joint))))
            return out

        return test

    def fluents_of(self, states: Iterable[MachineState]) -> list[bytes | None]:
        """The network's bits of each state (None outside the relaxation)."""
        return [self._bits(s) for s in states]
