"""The contract (``gdl2pl.contract.GameMachine``): an engine that supplies only its
primitives gets the rest written once, and answers as the janus-backed machine does,
which answers the same questions its own faster way (one Prolog call each)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from collections.abc import Sequence

import pytest
from conftest import EXAMPLES
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from prolog_env import require_prolog

from gdl2pl.bridge import StateMachine
from gdl2pl.contract import GameMachine
from gdl2pl.contract import IllegalMoveError
from gdl2pl.contract import MachineState
from gdl2pl.contract import MoveDefinitionError
from gdl2pl.contract import SymbolStep
from gdl2pl.contract import TransitionDefinitionError
from gdl2pl.syntax import Term


class PrimitivesOnly(GameMachine):
    """An engine made of the contract's primitives alone, borrowed from a janus machine:
    everything else is the contract's own."""

    def __init__(self, sm: StateMachine) -> None:
        self.sm = sm
        self.name = sm.name
        self.translation = sm.translation

    @property
    def roles(self) -> tuple[Term, ...]:
        return self.sm.roles

    @property
    def initial_state(self) -> MachineState:
        return self.sm.initial_state

    def term(self, kif: Term | str) -> Term:
        return self.sm.term(kif)

    def all_legal_moves(self, state: MachineState) -> list[list[Term]]:
        return self.sm.all_legal_moves(state)

    def next_state(self, state: MachineState, joint_move: Sequence[Term | str]) -> MachineState:
        return self.sm.next_state(state, joint_move)

    def is_terminal(self, state: MachineState) -> bool:
        return self.sm.is_terminal(state)

    def goal_values(self, state: MachineState) -> list[list[str]]:
        return self.sm.goal_values(state)

    def percepts(
        self, state: MachineState, joint_move: Sequence[Term | str], role: Term | str
    ) -> list[Term]:
        return self.sm.percepts(state, joint_move, role)

    def step_symbols(self, state: MachineState, joint_move: Sequence[Term | str]) -> SymbolStep:
        return self.sm.step_symbols(state, joint_move)

    def symbol(self, symbol_id: int) -> Term:
        return self.sm.symbol(symbol_id)

    @property
    def base_propositions(self) -> list[Term]:
        return self.sm.base_propositions

    def input_moves(self, role: Term | str) -> list[Term]:
        return self.sm.input_moves(role)

    def declared_percepts(self, role: Term | str) -> list[Term]:
        return self.sm.declared_percepts(role)

    def seed(self, seed: int) -> None:
        self._rng = random.Random(seed)

    def close(self) -> None:
        self.closed = True


GAMES = ["ticTacToe.kif", "montyHall.kif", "kuhnPoker.kif"]


@pytest.fixture(scope="module", params=GAMES)
def pair(request: pytest.FixtureRequest) -> Iterator[tuple[StateMachine, PrimitivesOnly]]:
    require_prolog()
    with StateMachine.from_file(EXAMPLES / request.param) as sm:
        yield sm, PrimitivesOnly(sm)


def test_an_engine_must_supply_the_primitives() -> None:
    with pytest.raises(TypeError, match="abstract"):
        GameMachine()  # type: ignore[abstract]


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_the_written_once_behaviour_agrees_with_the_janus_machine(
    pair: tuple[StateMachine, PrimitivesOnly], seed: int
) -> None:
    sm, engine = pair
    rng = random.Random(seed)
    state = sm.initial_state
    while True:
        fresh = MachineState(state._key)  # nothing learnt: both ask the primitives
        assert engine.state_info(fresh) == sm.state_info(fresh)
        assert engine.is_terminal(fresh) == sm.is_terminal(fresh)
        if sm.is_terminal(fresh):
            assert engine.goals(fresh) == sm.goals(fresh)
            assert [engine.goal(fresh, r) for r in sm.roles] == sm.goals(fresh)
            break
        assert engine.legal_joint_moves(fresh) == sm.legal_joint_moves(fresh)
        assert engine.expand(fresh) == sm.expand(MachineState(state._key))
        assert engine.next_state_map(fresh) == sm.next_state_map(fresh)
        for role in sm.roles:
            assert engine.legal_moves(fresh, role) == sm.legal_moves(fresh, role)
        if sm.random_role is not None:
            assert engine.chance_outcomes(fresh) == sm.chance_outcomes(fresh)
        joint = sm.random_joint_move(fresh, rng)
        for role in sm.players:
            index = sm.roles.index(role)
            seen = sm.percepts(fresh, joint, role)
            assert engine.consistent_successors(
                fresh, role, joint[index], seen
            ) == sm.consistent_successors(fresh, role, joint[index], seen)
        assert engine.step(fresh, joint) == sm.step(MachineState(state._key), joint)
        state = sm.next_state(state, joint)


def test_the_written_once_playouts_end_where_the_janus_ones_do(
    pair: tuple[StateMachine, PrimitivesOnly],
) -> None:
    sm, engine = pair
    engine.seed(3)
    final, steps = engine.depth_charge(sm.initial_state)
    assert sm.is_terminal(final) and steps > 0
    per_role, total = engine.playouts(sm.initial_state, 5)
    assert len(per_role) == len(sm.roles) and all(len(col) == 5 for col in per_role)
    assert total == sum(d for _, d in per_role[0])
    players = [col for role, col in zip(sm.roles, per_role, strict=True) if role in sm.players]
    assert all(v >= 0 for col in players for v, _ in col)  # every playout ended
    scores = engine.average_scores(sm.initial_state, 4)
    assert len(scores) == len(sm.roles) and all(0 <= s <= 100 for s in scores)
    with pytest.raises(ValueError, match="whole number"):
        engine.playouts(sm.initial_state, 0)
    with pytest.raises(ValueError, match="max_depth"):
        engine.depth_charge(sm.initial_state, -1)


def test_the_written_once_errors_are_the_janus_machines(
    pair: tuple[StateMachine, PrimitivesOnly],
) -> None:
    sm, engine = pair
    s = sm.initial_state
    for machine in (sm, engine):
        with pytest.raises(TransitionDefinitionError, match="is not a role"):
            machine.legal_moves(s, "nobody")
        with pytest.raises(IllegalMoveError, match="is not a legal move"):
            machine.consistent_successors(s, sm.players[0], "(not a move)", [])
    with pytest.raises(MoveDefinitionError) as mine:
        engine.legal_joint_moves(MachineState([]))
    with pytest.raises(MoveDefinitionError) as theirs:
        sm.legal_joint_moves(MachineState([]))
    assert str(mine.value) == str(theirs.value)
    with engine:
        pass
    assert engine.closed


def test_a_state_built_from_terms_is_the_janus_machines_state(
    pair: tuple[StateMachine, PrimitivesOnly],
) -> None:
    """What a second engine builds from the same fluents (as terms or KIF text) is the
    same state: equal, hashing equal, and answered by the janus machine."""
    sm, _ = pair
    s = sm.random_next_state(sm.initial_state, random.Random(5))
    for fluents in (list(s), [str(f) for f in s]):
        rebuilt = MachineState.from_fluents(fluents)
        assert rebuilt == s and hash(rebuilt) == hash(s) and {rebuilt: 1}[s] == 1
        assert sm.all_legal_moves(rebuilt) == sm.all_legal_moves(s)


def test_a_state_remembers_for_its_machine_alone_and_stays_immutable(
    pair: tuple[StateMachine, PrimitivesOnly],
) -> None:
    """A step's state holds a memo of what its machine learnt (``recalled`` for that
    machine only); the memo is no part of the state's value, and nothing else of the
    state can be assigned."""
    from gdl2pl.contract.state import recalled

    sm, _ = pair
    joint = sm.random_joint_move(sm.initial_state, random.Random(2))
    step = sm.step(sm.initial_state, joint)
    known = recalled(step.state, sm._terms)
    assert known is not None and known.terminal == step.terminal
    assert known.legal == step.legal
    plain = MachineState(step.state._key)
    assert recalled(plain, sm._terms) is None
    assert plain == step.state and hash(plain) == hash(step.state)
    with StateMachine.from_file(EXAMPLES / GAMES[0]) as other:
        assert recalled(step.state, other._terms) is None  # another machine's memo
    with pytest.raises(AttributeError, match="immutable"):
        step.state._known = None  # type: ignore[misc]


def test_every_engine_shows_its_name_and_roles(
    pair: tuple[StateMachine, PrimitivesOnly],
) -> None:
    sm, engine = pair
    roles = [str(r) for r in sm.roles]
    assert repr(sm) == f"StateMachine({sm.name!r}, roles={roles})"
    assert repr(engine) == f"PrimitivesOnly({sm.name!r}, roles={roles})"
    with pytest.raises(TransitionDefinitionError, match=r"one move per role \(\d\), got 1"):
        sm.next_state(sm.initial_state, [sm.roles[0]])
