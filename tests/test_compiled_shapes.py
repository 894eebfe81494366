"""The compiled engine answers as the reasoner on games of every shape the grammar allows:
small games drawn at random (``tests/game_shapes.py``: zero-arity relations with and
without parentheses, ``or`` nested, ``not`` nested, ``distinct`` on function terms,
``(true ?f)``, recursion, ...) are played on both engines, and in every state reached
the legal moves, terminality, goals and the next state of every joint move are the same.

``GDL2PL_SHAPE_EXAMPLES`` sets how many games are drawn (default 100, a few seconds).
"""

from __future__ import annotations

import itertools
import os
import random
import re
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from game_shapes import ISSUE_GAME
from game_shapes import random_game
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import note
from hypothesis import settings
from hypothesis import strategies as st
from prolog_env import require_prolog

from gdl2pl.bridge import StateMachine
from gdl2pl.compiled import CompiledMachine
from gdl2pl.compiled import load_description
from gdl2pl.compiled.ground import ground_network
from gdl2pl.compiled.ground import grounding_input
from gdl2pl.contract import MachineState
from gdl2pl.flatten import flatten_rules
from gdl2pl.load import parse_game
from gdl2pl.pipeline import normalized

pytestmark = pytest.mark.compiled

EXAMPLES = int(os.environ.get("GDL2PL_SHAPE_EXAMPLES", "100"))
#: the most joint moves whose next states are compared in one state
MAX_JOINT = 16


@pytest.fixture(scope="module", autouse=True)
def _prolog() -> None:
    require_prolog()


@contextmanager
def both_engines(text: str) -> Iterator[tuple[CompiledMachine, StateMachine]]:
    """The game ``text`` on the network (grounded in this process: the worker runs the
    same grounder, and is checked on the issue's game below) and on the reasoner."""
    d = parse_game(text, syntax="kif", file="shapes.kif")
    prolog = StateMachine(d, name="shapes.kif")
    try:
        n, _ = normalized(d)
        network = ground_network(grounding_input(flatten_rules(n), "shapes.kif"),
                                 prolog._raw_roles, "shapes.kif")
        compiled = CompiledMachine(prolog, network)
    except BaseException:
        prolog.close()
        raise
    with compiled:
        yield compiled, prolog


def same_in_state(c: CompiledMachine, p: StateMachine, s: MachineState) -> list[MachineState]:
    """The two engines' answers in ``s`` are equal: terminal, legal moves, goals, and the
    next state of every joint move (up to MAX_JOINT of them); those next states."""
    terminal = p.is_terminal(s)
    assert c.is_terminal(s) == terminal, f"terminal in {s}"
    legal = p.all_legal_moves(s)
    assert c.all_legal_moves(s) == legal, f"legal moves in {s}"
    assert c.goal_values(s) == p.goal_values(s), f"goals in {s}"
    if terminal or not all(legal):
        return []
    children = []
    for joint in itertools.islice(itertools.product(*legal), MAX_JOINT):
        child = p.next_state(s, joint)
        assert c.next_state(s, joint) == child, f"the next state of {joint} in {s}"
        children.append(child)
    return children


def same_plays(c: CompiledMachine, p: StateMachine, rng: random.Random, plays: int) -> int:
    """Random plays on both engines from the initial state, compared in every state
    (``same_in_state``); the number of states compared."""
    assert c.initial_state == p.initial_state
    seen = 0
    for _ in range(plays):
        s = p.initial_state
        for _ in range(10):
            children = same_in_state(c, p, s)
            seen += 1
            if not children:
                break
            s = rng.choice(children)
    return seen


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_a_game_of_any_shape_plays_alike_on_both_engines(seed: int) -> None:
    """The game and its plays are drawn from ``seed`` (a failing seed is the game
    ``random_game(random.Random(seed))``, printed in the failure)."""
    rng = random.Random(seed)
    text = random_game(rng)
    note(text)
    with both_engines(text) as (c, p):
        assert same_plays(c, p, rng, plays=2) > 0


@pytest.mark.parametrize("w", ["(w)", "w"])
def test_the_issues_game_plays_alike_through_the_grounding_worker(w: str) -> None:
    """Both spellings, through the worker process as a user's game goes."""
    d = parse_game(ISSUE_GAME.replace("(w)", w), syntax="kif", file="issue48.kif")
    with load_description(d, "compiled", name="issue48.kif") as c:
        assert isinstance(c, CompiledMachine)
        s = c.initial_state
        assert c.goal_values(s) == c.prolog.goal_values(s) == [["100"]]
        after = c.next_state(s, ["go"])
        assert after == c.prolog.next_state(s, ["go"])
        assert c.goal_values(after) == c.prolog.goal_values(after) == [["100"]]


def test_w_and_parenthesised_w_are_two_relations_on_both_engines() -> None:
    """``w`` and ``(w)`` in one game are two relations (as in ggp-base), each evaluated
    after what it depends on, one of them negated."""
    text = """
    (role r) (init (c 1)) (legal r go)
    (<= (next (c ?x)) (true (c ?x)))
    (<= terminal (true (c 2)))
    (<= (v ?p) (true (c ?p)))
    (<= (w) (v ?p))
    (<= w (not (w)))
    (<= (u) (not w) (w))
    (<= (goal r 100) (u))
    (<= (goal r 50) w)
    (<= (goal r 0) (not (u)))
    """
    with both_engines(text) as (c, p):
        s = p.initial_state
        assert p.goal_values(s) == [["100"]]  # (w) and (u) hold, w does not
        assert same_plays(c, p, random.Random(0), plays=1) > 0


#: What every shape looks like in a game's text: the generator must keep drawing each.
SHAPES = {
    "a parenthesised zero-arity relation in a head": r"\(<= \((w|v|u|p|q)\) ",
    "a bare zero-arity relation in a head": r"\(<= (w|v|u|p|q) ",
    "a parenthesised zero-arity relation under not": r"\(not \((w|v|u|p|q)\)\)",
    "a bare zero-arity relation under not": r"\(not (w|v|u|p|q)\)",
    "a zero-arity relation in a goal's body": r"\(<= \(goal \S+ \S+\) .*\((w|v|u|p|q)\)",
    "a zero-arity relation in a next's body": r"\(<= \(next .*\((w|v|u|p|q)\)",
    "a zero-arity relation in a legal's body": r"\(<= \(legal .*\((w|v|u|p|q)\)",
    "a zero-arity relation in a terminal's body": r"\(<= terminal .*\((w|v|u|p|q)\)",
    "a zero-arity relation in an init's body": r"\(<= \(init .*(\(k\)| k\))",
    "a zero-arity function term as a fluent": r"\(init \(z\)\)",
    "a zero-arity function term as a move": r"\(legal \S+ \(go\)\)",
    "or": r"\(or ",
    "or in or": r"\(or [^\n]*\(or ",
    "and in or": r"\(or [^\n]*\(and ",
    "not in not": r"\(not \(not ",
    "not distinct": r"\(not \(distinct ",
    "distinct on a function term": r"\(distinct [^\n]*\(f ",
    "distinct on variables": r"\(distinct \?\S+ \?",
    "true of a variable": r"\(true \?",
    "a function term in a head": r"\(<= \(\w+ [^\n]*\(f \?",
    "static recursion": r"\(le \?y \?z\)",
    "recursion through a dynamic relation": r"\(succ \?r0 \?h0\)",
    "a test guarding a recursive call": r"(?m)\(<= \(\w+ \?h0[^\n]*?\) \((not|distinct|or) [^\n]*"
    r"\(succ \?r0 \?h0\)\)$",
    "a cycle of propositions": r"\(<= cb \(ca\)\)",
    "a relation of does, used by next": r"\(<= \(?moved",
    "init by a rule": r"\(<= \(init ",
    "a role variable in legal": r"\(legal \?r ",
    "a goal value read from the state": r"\(goal \?r \?x\)",
}


def test_the_generator_draws_every_shape() -> None:
    """Over a fixed sample of games each shape occurs, and some game has both ``w`` and
    ``(w)`` (so the property test above keeps covering them)."""
    texts = [random_game(random.Random(seed)) for seed in range(200)]
    missing = [name for name, pattern in SHAPES.items()
               if not any(re.search(pattern, t) for t in texts)]
    assert not missing
    both = [t for t in texts if any(
        re.search(rf"\(<= {n} ", t) and re.search(rf"\(<= \({n}\) ", t) for n in "wvupq")]
    assert both
