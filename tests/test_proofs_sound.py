"""Every proof told to a library is sound (issue 48 items 2-3, issue 52 item 5).

The proofs: a length bound from a step counter (``rule_shapes.step_counter_bound``) or a
measure every step moves (``length_bound.prove_length_bound``), and the goal sum at every
reachable end from goal rules of one body (``rule_shapes.goal_sum``) or from the terminal
and goal rules together (``sum_proof.prove_goal_sum``). Checked against every reachable
state of games made from seeds (``proof_games``: counters, boards, pawns, with the
patterns a proof must not misread), and against random matches of a fixed sample of the
corpus. ``GDL2PL_PROOF_GAMES=500`` checks more seeds; ``benchmarks/proofs.py`` sweeps the
whole corpus. The shapes of issue 48 have their own tests in ``test_length_bound.py``.
"""

from __future__ import annotations

import itertools
import os
from collections import Counter
from dataclasses import dataclass

import pytest
from adapters_support import repository_game
from adapters_support import require_module
from prolog_env import require_prolog
from proof_games import generated_game

from gdl2pl import parse_game
from gdl2pl.adapters.reach import reachable_domains
from gdl2pl.bridge import StateMachine
from gdl2pl.contract import GameMachine
from gdl2pl.contract import MachineState
from gdl2pl.contract import PlayoutDepthError
from gdl2pl.length_bound import prove_length_bound
from gdl2pl.load import read_game
from gdl2pl.rule_shapes import goal_sum
from gdl2pl.rule_shapes import step_counter_bound
from gdl2pl.sum_proof import prove_goal_sum
from gdl2pl.syntax import Description

#: Seeds of generated games checked (each searched through every reachable state).
GAMES = int(os.environ.get("GDL2PL_PROOF_GAMES", "36"))
#: The goal a role without one gets at an end: the adapters' default (``missing_goal``).
MISSING = 50


@pytest.fixture(autouse=True)
def _needs_prolog() -> None:
    require_prolog()


@dataclass(frozen=True)
class Proofs:
    """What the rules prove about a game, as the adapters would tell a library."""

    bounds: dict[str, int]  # by proof: "counter", "measure"
    sums: dict[str, int]  # by proof: "goal rules", "terminal and goal rules"
    stepped: bool  # the sum needed the one-step argument


def proofs(d: Description, sm: GameMachine, name: str) -> Proofs:
    reach = reachable_domains(d, sm.roles, name, 100_000)
    bounds, sums = {}, {}
    counter = step_counter_bound(d)
    if counter is not None:
        bounds["counter"] = counter[0]
    measure = prove_length_bound(d, reach.fluents, reach.moves)
    if measure is not None:
        bounds["measure"] = measure.steps
    simple = goal_sum(d)
    if simple is not None and simple == MISSING * len(sm.roles):  # as the adapters take it
        sums["goal rules"] = simple
    proof = prove_goal_sum(d, MISSING, reach.fluents, reach.moves)
    if proof is not None:
        sums["terminal and goal rules"] = proof.total
    return Proofs(bounds, sums, proof is not None and "no step reaches" in proof.reason)


@dataclass(frozen=True)
class Truth:
    """What every reachable state shows: the longest play (None: a play without end)
    and the goal sums of the ends the adapters accept (each role one goal, or 50)."""

    longest: int | None
    sums: frozenset[int]
    states: int


def end_sum(goals: list[list[int | str]]) -> int | None:
    values = [vs or [MISSING] for vs in goals]
    if not all(len(vs) == 1 for vs in values):
        return None  # several goals for a role: the adapters refuse the state
    return sum(int(vs[0]) for vs in values)


def search(sm: GameMachine, limit: int = 5_000) -> Truth:
    """Every reachable state, breadth-first, then the longest play over their graph."""
    edges: dict[MachineState, list[MachineState]] = {}
    order = [sm.initial_state]
    seen = {sm.initial_state}
    sums = set()
    for state in order:
        terminal, legal, goals = sm.state_info(state)
        if terminal:
            edges[state] = []
            total = end_sum(goals)
            if total is not None:
                sums.add(total)
            continue
        edges[state] = [sm.next_state(state, list(j)) for j in itertools.product(*legal)]
        for child in edges[state]:
            if child not in seen:
                seen.add(child)
                order.append(child)
        assert len(order) <= limit, "a generated game too large to search"
    longest: dict[MachineState, int] = {}
    on_path: set[MachineState] = set()

    def go(s: MachineState) -> int:
        if s not in longest:
            if s in on_path:
                raise RecursionError("a cycle")
            on_path.add(s)
            longest[s] = max((1 + go(c) for c in edges[s]), default=0)
            on_path.discard(s)
        return longest[s]

    try:
        length: int | None = go(sm.initial_state)
    except RecursionError:
        length = None
    return Truth(length, frozenset(sums), len(order))


def test_every_proof_holds_in_every_state_of_generated_games():
    """No proved bound is below the longest play (none is proved for a game whose plays
    can go on for ever), and no proved sum differs from an end's: over every reachable
    state of each game. The games exercise every proof, and games where none holds."""
    seen: Counter[str] = Counter()
    for seed in range(GAMES):
        text = generated_game(seed)
        d = parse_game(text)
        with StateMachine.from_text(text, name=f"seed{seed}") as sm:
            truth = search(sm)
            found = proofs(d, sm, f"seed{seed}")
        where = f"seed {seed}:\n{text}"
        for how, bound in found.bounds.items():
            assert truth.longest is not None, f"{how} bound {bound} for endless plays, {where}"
            assert truth.longest <= bound, f"{how} bound {bound} < {truth.longest}, {where}"
            seen[how] += 1
            seen["tight"] += truth.longest == bound
        for how, total in found.sums.items():
            assert truth.sums <= {total}, f"{how} sum {total}, ends {truth.sums}, {where}"
            seen[how] += 1
        seen["one step"] += found.stepped
        seen["endless"] += truth.longest is None
        seen["no bound"] += not found.bounds and truth.longest is not None
        seen["no sum"] += not found.sums and len(truth.sums) == 1
        seen["sums differ"] += len(truth.sums) > 1
    if GAMES >= 36:
        for kind in ("counter", "measure", "tight", "goal rules", "terminal and goal rules",
                     "one step", "endless", "no bound", "sums differ"):
            assert seen[kind], f"no generated game with {kind!r}: {dict(seen)}"


# -- the step argument of the goal sum, on two races ------------------------------------------

RACE = """
(role white) (role black)
(ahead 1 2) (ahead 2 3) (ahead 3 4)
(init (pawn white 1)) (init (pawn black 1))
{turns}
(<= (legal ?r (step ?y ?z)) {mover} (true (pawn ?r ?y)) (ahead ?y ?z))
(<= (legal ?r wait) {mover})
(<= (next (pawn ?r ?z)) (does ?r (step ?y ?z)))
(<= (next (pawn ?p ?y)) (true (pawn ?p ?y)) (not (moves ?p)))
(<= (moves ?r) (does ?r (step ?y ?z)))
(<= (win ?r) (true (pawn ?r 4)))
(<= terminal (win ?r))
(<= (goal ?r 100) (win ?r)) (<= (goal ?r 0) (role ?r) (not (win ?r)))
"""
TURNS = """(init (control white))
(<= (next (control black)) (true (control white)))
(<= (next (control white)) (true (control black)))
(<= (legal ?r noop) (role ?r) (not (true (control ?r))))"""


@pytest.mark.parametrize(
    ("turns", "mover", "proved"),
    [
        (TURNS, "(true (control ?r))", 100),  # one pawn moves a step: one win at a time
        ("", "(role ?r)", None),  # both move at once: both may win at once (200)
    ],
)
def test_both_wins_at_once_is_excluded_only_where_no_step_reaches_it(turns, mover, proved):
    """Each role gets 100 for its own win, else 0: the rules alone allow an end where
    both win (200). Taking turns, a step moves one pawn (or none: a wait), so it cannot
    make both wins hold from a state where neither did; moving together, it can, and
    nothing is proved."""
    text = RACE.format(turns=turns, mover=mover)
    d = parse_game(text)
    with StateMachine.from_text(text) as sm:
        truth = search(sm)
        reach = reachable_domains(d, sm.roles, "race", 100_000)
    assert goal_sum(d) is None
    proof = prove_goal_sum(d, MISSING, reach.fluents, reach.moves)
    assert (proof and proof.total) == proved, proof
    assert truth.sums == ({100} if proved else {100, 200})
    if proof is not None:
        assert "no step reaches" in proof.reason and "((win black), (win white))" in proof.reason
    assert prove_goal_sum(d, MISSING) is None  # without the step, the rules allow 200


# -- the corpus ---------------------------------------------------------------------------------

#: Corpus games with proofs of every kind (benchmarks/proofs.py lists them all), and the
#: bound and sum each should get: a regression that loses a proof shows here too.
CORPUS = {
    "connectFour": (48, 100),  # filling; goal rules of one body
    "breakthroughSmall": (108, 100),  # advance; both wins at once excluded by a step
    "chess_200": (200, 100),  # step counter; the conditions of the goal rules
    "ticTacToe": (9, 100),
    "2pffa_zerosum": (30, None),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CORPUS))
def test_no_random_match_of_a_corpus_game_refutes_its_proofs(name: str):
    path = repository_game(name)
    d = read_game(path)
    with StateMachine.from_file(path) as sm:
        found = proofs(d, sm, name)
        bound = min(found.bounds.values())
        total = next(iter(found.sums.values()), None)
        assert (bound, total) == CORPUS[name], found
        assert len(set(found.sums.values())) <= 1, found
        sm.seed(11)
        for _ in range(4):
            try:
                end, steps = sm.depth_charge(sm.initial_state, max_depth=bound + 1)
            except PlayoutDepthError:
                pytest.fail(f"{name}: a random match longer than the bound {bound}")
            assert steps <= bound, (name, steps, bound)
            if total is not None:
                assert end_sum(sm.state_info(end)[2]) in (total, None), name


@pytest.mark.slow
def test_openspiel_is_told_the_zero_sum_of_chess_200_and_breakthrough_small():
    """Both came out GENERAL_SUM ("assumed") before, so alpha-beta needed
    ``utility="zero_sum"``; now their rules prove it, and the reason says how."""
    pyspiel = require_module("pyspiel")
    import gdl2pl.openspiel as gos

    for name, length, how in (
        ("chess_200", 200, "every combination of them that ends a play"),
        ("breakthroughSmall", 108, "no step reaches"),
    ):
        game = gos.load_game(repository_game(name), analysis_seconds=1, engine="prolog")
        meta = game.gdl_metadata()
        assert not game.gdl.kind.proved  # not by enumeration: by the rules
        assert game.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM
        claim = meta["utility"]
        assert (claim.value, claim.status) == ("zero-sum", "proved") and how in claim.how, claim
        assert game.max_game_length() == length
        assert meta["max_game_length"].status == "proved"
