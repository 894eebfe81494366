"""A game loaded on ``engine="auto"`` or ``"compiled"`` is normalized and flattened once:
the network is grounded from the flat rules the reasoner was translated from
(``StateMachine.flat_rules``), not from the description made over again (issue 49,
item 3)."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from prolog_env import require_prolog

import gdl2pl.flatten
import gdl2pl.normalize
from gdl2pl.compiled import AutoMachine
from gdl2pl.compiled import CompiledMachine
from gdl2pl.compiled import load_description
from gdl2pl.load import parse_game

pytestmark = pytest.mark.compiled

GAME = """
(role r)
(init (c 0))
(succ 0 1) (succ 1 2)
(<= (legal r go) (true (c ?x)) (succ ?x ?y))
(<= (next (c ?y)) (true (c ?x)) (succ ?x ?y))
(<= terminal (true (c 2)))
(<= (goal r 100) (true (c 2)))
(<= (goal r 0) (not (true (c 2))))
"""


@pytest.fixture(scope="module", autouse=True)
def _prolog() -> None:
    require_prolog()


def counted(monkeypatch: pytest.MonkeyPatch, *functions: Callable[..., Any]) -> Counter[str]:
    """Count the calls of ``functions`` wherever a loaded module of gdl2pl holds them."""
    calls: Counter[str] = Counter()
    for f in functions:
        def wrapper(*args: Any, _f: Callable[..., Any] = f, **kwargs: Any) -> Any:
            calls[_f.__name__] += 1
            return _f(*args, **kwargs)

        for module in list(sys.modules.values()):
            name = getattr(module, "__name__", "")
            if name.split(".")[0] == "gdl2pl" and getattr(module, f.__name__, None) is f:
                monkeypatch.setattr(module, f.__name__, wrapper)
    return calls


@pytest.mark.parametrize("engine", ["auto", "compiled"])
def test_the_game_is_normalized_and_flattened_once(
    monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    d = parse_game(GAME, syntax="kif", file="trip.kif")
    calls = counted(monkeypatch, gdl2pl.normalize.normalize_case, gdl2pl.flatten.flatten_rules)
    m = load_description(d, engine, name="trip.kif")  # type: ignore[arg-type]
    try:
        if isinstance(m, AutoMachine):
            assert m.wait_for_engine(60).engine == "compiled", m.engine_choice.reason
            assert isinstance(m.engine_now, CompiledMachine)
        else:
            assert isinstance(m, CompiledMachine)
        assert m.goal_values(m.initial_state) == [["0"]]  # it plays
    finally:
        m.close()
    assert calls == {"normalize_case": 1, "flatten_rules": 1}
