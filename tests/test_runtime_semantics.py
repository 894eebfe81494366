"""The runtime's meaning of state-independent relations (prolog/gdl_semantics.pl).

A state-independent relation is computed once at load, as facts, only when that
cannot change its answers: an unsafe ``distinct`` or ``not`` (a variable no positive
literal binds) means negation as failure with the bindings present at call time, and
that must be the same whether the relation is materialized or not. The game
tests/games/unsafe_static.kif pairs each such relation with a state-dependent twin
(never materialized) and offers one move per answer of each.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from prolog_env import require_prolog

from gdl2pl import Const
from gdl2pl import Func
from gdl2pl.bridge import StateMachine
from gdl2pl.bridge import runtime
from gdl2pl.contract import MachineState

GAME = Path(__file__).resolve().parent / "games" / "unsafe_static.kif"


@pytest.fixture(scope="module")
def sm() -> Iterator[StateMachine]:
    require_prolog()
    machine = StateMachine.from_file(GAME)
    yield machine
    machine.close()


def state(sm: StateMachine, *fluents: str) -> MachineState:
    return MachineState.from_fluents(sm.term(f) for f in fluents)


def family_moves(sm: StateMachine, st: MachineState, family: str, relation: str) -> set[str]:
    """The arguments of the legal moves (family relation ...), as KIF text."""
    out = set()
    for m in sm.legal_moves(st, "a"):
        if isinstance(m, Func) and m.name == family and m.args[0] == Const(relation):
            out.add(" ".join(str(a) for a in m.args[1:]))
    return out


def stored_as_facts(sm: StateMachine, name: str, arity: int) -> bool:
    """Every clause of the game's predicate name/arity is a fact (and there is one)."""
    answer = runtime().query_once(
        "atom_string(_M, Mod), atom_string(_N, N), functor(_H, _N, A), "
        "findall(_B, clause(_M:_H, _B), _Bs), "
        "( _Bs \\== [], forall(member(_X, _Bs), _X == true) -> F = true ; F = false )",
        {"Mod": sm.module, "N": name, "A": arity},
    )
    return answer["F"] == "true"


STATES = [("live", "(at 1)"), ("live", "(at 2)"), ("live", "(at 3)")]


@pytest.mark.parametrize("relation", ["differ", "free", "uses", "any"])
@pytest.mark.parametrize("fluents", STATES, ids=lambda f: f[1])
def test_static_relation_answers_as_its_unmaterialized_twin(
    sm: StateMachine, relation: str, fluents: tuple[str, ...]
) -> None:
    st = state(sm, *fluents)
    assert family_moves(sm, st, "s", relation) == family_moves(sm, st, "d", relation)


def test_unsafe_distinct_is_negation_as_failure_at_call_time(sm: StateMachine) -> None:
    # (differ ?x ?y) with ?y bound by the caller: x differs from y
    assert family_moves(sm, state(sm, "live", "(at 1)"), "s", "differ") == {"2 1", "3 1"}


def test_unsafe_not_is_negation_as_failure_at_call_time(sm: StateMachine) -> None:
    # (free ?x) called with ?x bound: every index but the blocked 2
    assert family_moves(sm, state(sm, "live", "(at 1)"), "s", "free") == {"1", "3"}


def test_relation_bound_through_an_unsafe_one(sm: StateMachine) -> None:
    assert family_moves(sm, state(sm, "live", "(at 1)"), "s", "uses") == {"2 1", "3 1"}
    assert family_moves(sm, state(sm, "live", "(at 2)"), "s", "uses") == set()


@pytest.mark.parametrize(
    ("name", "arity"),
    [("r_differ_s", 2), ("r_free_s", 1), ("r_uses_s", 2), ("r_any_s", 2)],
)
def test_unsafe_or_non_ground_relations_keep_their_rules(
    sm: StateMachine, name: str, arity: int
) -> None:
    assert not stored_as_facts(sm, name, arity)


@pytest.mark.parametrize(("name", "arity"), [("r_other", 2), ("r_lt", 2)])
def test_safe_relations_are_materialized(sm: StateMachine, name: str, arity: int) -> None:
    assert stored_as_facts(sm, name, arity)


def test_materializing_counts_answers_not_proofs(sm: StateMachine) -> None:
    # r_many has 10 answers of 1,000 proofs each: collected as a set, it is stored
    assert stored_as_facts(sm, "r_many", 1)
    answer = runtime().query_once(
        "atom_string(_M, Mod), aggregate_all(count, clause(_M:r_many(_), true), N)",
        {"Mod": sm.module},
    )
    assert answer["N"] == 10


def test_playouts_run_with_kept_rules(sm: StateMachine) -> None:
    sm.seed(3)
    per_role, _steps = sm.playouts(sm.initial_state, 20, max_depth=50)
    values, depths = zip(*per_role[0], strict=True)
    assert set(values) <= {0, 100}
    assert all(d <= 50 for d in depths)


def test_moves_parse_back(sm: StateMachine) -> None:
    move = sm.term("(s free 3)")
    assert move in sm.legal_moves(state(sm, "live", "(at 1)"), "a")
