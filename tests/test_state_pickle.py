"""A ``MachineState`` travels (issue 48 item 10): pickled as its fluents and its game's
identity, on either engine; unpickled equal, answered alike by a machine of its game in
another process (multiprocessing), refused by a machine of another game; a pickle of one
can name no callable but the state's checked constructor, and a forged one is refused.
"""

from __future__ import annotations

import io
import multiprocessing
import pickle
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import EXAMPLES
from prolog_env import require_prolog

from gdl2pl.contract import MachineState
from gdl2pl.contract import state as state_module

pytestmark = pytest.mark.compiled

TICTACTOE = str(EXAMPLES / "ticTacToe.kif")

OTHER_GAME = """
(role p) (init (cell 1 1 b)) (init (control xplayer))
(<= (legal p go) (true (control xplayer)))
(<= (next (cell 1 1 x)) (does p go))
(<= terminal (true (cell 1 1 x)))
(goal p 100)
"""


@pytest.fixture(scope="module")
def machines() -> Iterator[dict[str, object]]:
    require_prolog()
    from gdl2pl.compiled import load_machine

    out = {engine: load_machine(TICTACTOE, engine) for engine in ("prolog", "compiled")}
    yield out
    for sm in out.values():
        sm.close()  # type: ignore[attr-defined]


def some_states(sm) -> list[MachineState]:
    """The initial state and the states of a short play (every one of ``sm``'s kind)."""
    states = [sm.initial_state]
    for _ in range(4):
        s = states[-1]
        states.append(sm.next_state(s, [sm.legal_moves(s, r)[-1] for r in sm.roles]))
    return states


def answers(sm, s: MachineState) -> tuple[object, ...]:
    return (sm.is_terminal(s), [[str(m) for m in ms] for ms in sm.all_legal_moves(s)])


@pytest.mark.parametrize("engine", ["prolog", "compiled"])
def test_states_of_either_engine_pickle_and_unpickle_equal(machines, engine: str) -> None:
    sm = machines[engine]
    states = some_states(sm)
    if engine == "compiled":
        assert type(states[-1]).__name__ == "CompiledState"  # bits, not a set of fluents
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        back = pickle.loads(pickle.dumps(states, protocol))
        assert back == states and [hash(s) for s in back] == [hash(s) for s in states]
        assert [str(s) for s in back] == [str(s) for s in states]
    back = pickle.loads(pickle.dumps(states))
    for engine_now in machines.values():  # a state of one engine is one of the other too
        assert [answers(engine_now, s) for s in back] == [answers(sm, s) for s in states]
    hand_made = MachineState.from_fluents(["(cell 1 1 x)", "(control oplayer)"])
    assert pickle.loads(pickle.dumps(hand_made)) == hand_made


def test_a_pickle_names_no_callable_but_the_states_checked_constructor(machines) -> None:
    named: set[tuple[str, str]] = set()

    class Recording(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> object:
            named.add((module, name))
            return super().find_class(module, name)

    for sm in machines.values():
        for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
            state = some_states(sm)[-1]
            data = pickle.dumps(state, protocol)
            assert Recording(io.BytesIO(data)).load() == state
            assert b"TermCache" not in data and b"canonical" not in data
    # the constructor, and for the old protocols the frozenset of the fluent stores
    assert named - {("__builtin__", "frozenset"), ("builtins", "frozenset")} == {
        ("gdl2pl.contract.state", "_unpickled_state")}


def test_a_machine_of_another_game_refuses_an_unpickled_state(machines, tmp_path: Path) -> None:
    from gdl2pl.compiled import load_machine

    path = tmp_path / "other.kif"
    path.write_text(OTHER_GAME)
    # the same fluent names, another game: its identity (roles, fluent stores) differs
    state = pickle.loads(pickle.dumps(machines["compiled"].initial_state))
    for engine in ("prolog", "compiled"):
        other = load_machine(path, engine)
        try:
            with pytest.raises(ValueError, match=r"the state comes from the machine for "
                                                 r"another game \(ticTacToe.kif\)"):
                other.legal_moves(state, "p")
        finally:
            other.close()
    from gdl2pl.bridge import StateMachine

    again = StateMachine.from_file(TICTACTOE)  # the same game loaded again: its states
    try:
        assert answers(again, state) == answers(machines["prolog"], state)
    finally:
        again.close()


def legal_in_a_fresh_process(states: list[MachineState]) -> list[object]:
    """Run by a spawned process: the game loaded there answers the states sent to it, and
    sends back the states after one move."""
    from gdl2pl.compiled import load_machine

    with load_machine(TICTACTOE, "compiled") as sm:
        out: list[object] = []
        for s in states:
            out.append(answers(sm, s))
            if not sm.is_terminal(s):
                out.append(sm.next_state(s, [sm.legal_moves(s, r)[0] for r in sm.roles]))
        return out


def test_states_travel_to_another_process_and_back(machines) -> None:
    sm = machines["prolog"]
    states = some_states(machines["compiled"]) + some_states(sm)
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        got = pool.apply(legal_in_a_fresh_process, (states,))
    want = []
    for s in states:
        want.append(answers(sm, s))
        if not sm.is_terminal(s):
            want.append(sm.next_state(s, [sm.legal_moves(s, r)[0] for r in sm.roles]))
    assert got == want
    child = got[1]
    assert isinstance(child, MachineState) and answers(sm, child) == answers(sm, want[1])


class Forged:
    """A pickle that calls the state's constructor with ``args`` (what an attacker could
    write by hand)."""

    def __init__(self, *args: object) -> None:
        self.args = args

    def __reduce__(self) -> tuple[object, ...]:
        return (state_module._unpickled_state, self.args)


def deep(n: int) -> object:
    form: object = "x"
    for _ in range(n):
        form = ("f", form)
    return form


GAME = ((("xplayer",), frozenset({("cell", 3)}), False), "game.kif")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((None, ["(cell 1 1 x)"]), "its fluents are not a tuple"),
        ((None, (1,)), "1 is not the form of a ground term"),
        ((None, ("",)), "'' is not the form of a ground term"),
        ((None, (("f",),)), r"\('f',\) is not the form of a ground term"),
        ((None, ((1, "a"),)), r"\(1, 'a'\) is not the form"),
        ((None, (deep(500),)), "nested deeper than 200 levels"),
        ((None, ("a\udc80",)), "lone surrogate"),
        ((None, (("f", "a", ["b"]),)), r"\['b'\] is not the form"),
        (("game.kif", ("a",)), r"its game is not \(identity, name\)"),
        ((((), "game.kif"), ("a",)), "its game identity is not plain data"),
        (((((), frozenset({("cell", "3")}), False), "g"), ("a",)), "not plain data"),
        (((((), frozenset(), 0), "g"), ("a",)), "not plain data"),
        ((((({"r": 1},), frozenset(), False), "g"), ("a",)), "is not the form"),
    ],
    ids=["list", "number", "empty", "no argument", "number functor", "deep", "surrogate",
         "list argument", "no name", "short identity", "store arity", "case rule", "role"],
)
def test_a_forged_pickle_is_refused(args: tuple[object, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        pickle.loads(pickle.dumps(Forged(*args)))


def test_a_well_formed_pickle_is_taken_and_its_game_shared() -> None:
    one = pickle.loads(pickle.dumps(Forged(GAME, (("cell", "1", "1", "x"),))))
    two = pickle.loads(pickle.dumps(Forged(GAME, ("a",))))
    assert str(one) == "((cell 1 1 x))" and one._terms is two._terms  # one stand-in a game
    assert one._terms.game == GAME[0] and one._terms.name == "game.kif"
