"""The one-call step API (``StateMachine.step``, ``expand``): same answers as the separate
questions along random walks, the same errors, one installed state per thread, what a
state remembers from a step, and a machine that still answers right after an error."""

from __future__ import annotations

import itertools
import random
import threading
from typing import Any

import pytest
from conftest import EXAMPLES
from conftest import shared_dir
from prolog_env import require_prolog

from gdl2pl.bridge import IllegalMoveError
from gdl2pl.bridge import MoveDefinitionError
from gdl2pl.bridge import ReasonerError
from gdl2pl.bridge import StateMachine
from gdl2pl.bridge import TransitionDefinitionError
from gdl2pl.bridge.machine import Step
from gdl2pl.contract import MachineState
from gdl2pl.load import parse_game

HERE = __import__("pathlib").Path(__file__).resolve().parent


@pytest.fixture(autouse=True)
def _prolog() -> None:
    require_prolog()


def own(name: str) -> StateMachine:
    return StateMachine.from_file(EXAMPLES / f"{name}.kif")


def shared(name: str) -> StateMachine:
    return StateMachine.from_file(shared_dir() / "games/ggp-repository" / f"{name}.kif")


def count_calls(sm: StateMachine) -> list[str]:
    """Record the runtime predicates ``sm`` calls from now on."""
    calls: list[str] = []
    original = sm._janus_call

    def counting(predicate: str, *args: Any) -> Any:
        calls.append(predicate)
        return original(predicate, *args)

    sm._janus_call = counting  # type: ignore[method-assign]
    return calls


def check_walks(stepper: StateMachine, asker: StateMachine, walks: int, seed: int) -> int:
    """Random walks with ``stepper.step`` (and ``expand`` at every state), each answer
    checked against ``asker``'s separate questions; returns the number of steps."""
    rng = random.Random(seed)
    steps = 0
    for _ in range(walks):
        s = stepper.initial_state
        for _ in range(400):
            terminal = asker.is_terminal(s)
            assert stepper.is_terminal(s) == terminal
            legal = asker.all_legal_moves(s)
            assert stepper.all_legal_moves(s) == legal
            if terminal:
                assert stepper.goals(s) == asker.goals(s)
                break
            expanded = stepper.expand(s)
            assert [jm for jm, _ in expanded] == asker.legal_joint_moves(s)
            for jm, child in rng.sample(expanded, min(3, len(expanded))):
                nxt = asker.next_state(s, jm)
                assert child.state == nxt
                assert child.terminal == asker.is_terminal(nxt)
                assert [list(ms) for ms in child.legal] == asker.all_legal_moves(nxt)
            jm = tuple(rng.choice(ms) for ms in legal)
            step = stepper.step(s, jm)
            nxt = asker.next_state(s, jm)
            assert step.state == nxt
            assert step.terminal == asker.is_terminal(nxt)
            assert [list(ms) for ms in step.legal] == asker.all_legal_moves(nxt)
            if step.terminal:
                assert step.goals == tuple(asker.goals(nxt))
            else:
                assert step.goals is None
            s = step.state
            steps += 1
    return steps


@pytest.mark.parametrize("name", ["ticTacToe", "buttons", "matchingPennies"])
def test_step_and_expand_agree_with_the_questions_on_own_games(name: str) -> None:
    with own(name) as stepper, own(name) as asker:
        assert check_walks(stepper, asker, walks=4, seed=7) > 0


@pytest.mark.parametrize("name", ["hanoi", "connectFourSimultaneous", "3pConnectFour"])
def test_step_and_expand_agree_with_the_questions_on_shared_games(name: str) -> None:
    with shared(name) as stepper, shared(name) as asker:
        assert check_walks(stepper, asker, walks=2, seed=11) > 0


def test_a_stepped_state_answers_from_what_it_learnt() -> None:
    with own("ticTacToe") as sm:
        s = sm.initial_state
        legal = sm.all_legal_moves(s)
        calls = count_calls(sm)
        sm.step(s, [legal[0][0], legal[1][0]])
        assert calls[0] == "gdl_step" and set(calls[1:]) <= {"gdl_symbols"}  # names learnt
        calls.clear()
        step = sm.step(s, [legal[0][0], legal[1][0]])
        assert calls == ["gdl_step"]
        assert isinstance(step, Step)
        assert sm.is_terminal(step.state) is False
        moves = sm.all_legal_moves(step.state)
        assert sm.legal_moves(step.state, "oplayer") == moves[1]
        assert calls == ["gdl_step"]  # none of these asked Prolog
        moves[0].append(moves[1][0])  # the caller's list, not the remembered one
        assert sm.all_legal_moves(step.state)[0] != moves[0]
        # goals of a non-terminal state do not come with a step: asked as before
        sm.goals(step.state)
        assert calls == ["gdl_step", "gdl_goals"]


@pytest.mark.parametrize("name", ["ticTacToe", "matchingPennies"])
def test_step_symbols_answers_what_step_answers(name: str) -> None:
    with own(name) as sm, own(name) as other:
        rng = random.Random(5)
        for _ in range(3):
            s = sm.initial_state
            while not sm.is_terminal(s):
                jm = [rng.choice(ms) for ms in sm.all_legal_moves(s)]
                ids = sm.step_symbols(s, jm)
                step = other.step(s, jm)
                assert ids.state == step.state and ids.terminal == step.terminal
                assert tuple(tuple(sm.symbol(i) for i in ms) for ms in ids.legal) == step.legal
                assert {sm.symbol(i) for i in ids.added} == set(step.state) - set(s)
                assert {sm.symbol(i) for i in ids.removed} == set(s) - set(step.state)
                if ids.terminal:
                    assert tuple(int(v) for (v,) in ids.goal_values) == step.goals
                else:
                    assert ids.goal_values == []
                s = ids.state


def test_step_symbols_refuses_as_step_does() -> None:
    with own("ticTacToe") as sm:
        s = sm.initial_state
        with pytest.raises(IllegalMoveError):
            sm.step_symbols(s, ["noop", "noop"])
        with pytest.raises(TransitionDefinitionError):
            sm.step_symbols(s, ["noop"])


def test_symbol_refuses_an_id_the_runtime_never_gave() -> None:
    with own("ticTacToe") as sm:
        for bad in (10**9, -1, 2**70):
            with pytest.raises(ReasonerError, match="not a GDL term"):
                sm.symbol(bad)
        for wrong in ("cell", ["cell", 1], True, 1.0):
            with pytest.raises(TypeError, match="a symbol id is an int"):
                sm.symbol(wrong)  # type: ignore[arg-type]
        step = sm.step_symbols(sm.initial_state, ["(mark 1 1)", "noop"])
        assert sm.symbol(step.added[0]) in step.state  # still answers after the refusals


def test_symbol_ids_name_nothing_else() -> None:
    with own("ticTacToe") as sm:
        step = sm.step(sm.initial_state, [m[0] for m in sm.all_legal_moves(sm.initial_state)])
        with pytest.raises(ReasonerError, match="not a GDL term"):
            sm._call("gdl_symbols", [10**9])
        with pytest.raises(ReasonerError, match="not a GDL term"):
            sm._call("gdl_symbols", ["cell"])
        assert sm.all_legal_moves(step.state) == [list(ms) for ms in step.legal]


def test_terminal_goals_come_with_the_step() -> None:
    with own("ticTacToe") as sm:
        rng = random.Random(3)
        s = sm.initial_state
        step: Step | None = None
        while not sm.is_terminal(s):
            step = sm.step(s, [rng.choice(ms) for ms in sm.all_legal_moves(s)])
            s = step.state
        assert step is not None and step.terminal
        calls = count_calls(sm)
        assert sm.goals(s) == list(step.goals or ())
        assert sm.goal(s, "xplayer") == sm.goals(s)[0]
        assert calls == []


def test_what_one_machine_learnt_is_not_used_by_another() -> None:
    with own("ticTacToe") as a, own("ticTacToe") as b, own("buttons") as c:
        step = a.step(a.initial_state, [m[0] for m in a.all_legal_moves(a.initial_state)])
        foreign = MachineState(step.state._key)  # the same fluents, no machine's answers
        calls = count_calls(b)
        b.is_terminal(step.state)  # another machine of the game: asks its own Prolog module
        assert calls[-1] == "gdl_terminal" and set(calls[:-1]) <= {"gdl_symbol_ids"}
        assert a.all_legal_moves(foreign) == [list(ms) for ms in step.legal]
        with pytest.raises(ValueError, match="another game"):
            c.is_terminal(step.state)  # another game's state is refused, not answered


def test_step_refuses_as_next_state_does_and_the_machine_still_answers() -> None:
    with own("ticTacToe") as sm, own("ticTacToe") as asker:
        s = sm.initial_state
        legal = sm.all_legal_moves(s)
        with pytest.raises(IllegalMoveError, match="not a legal move"):
            sm.step(s, [legal[1][0], legal[1][0]])
        with pytest.raises(TransitionDefinitionError, match="one move per role"):
            sm.step(s, [legal[0][0]])
        with pytest.raises(TransitionDefinitionError):
            sm.step(s, ["(mark 1", legal[1][0]])
        # the state installed after a refusal is the one the refusal was about
        step = sm.step(s, [legal[0][0], legal[1][0]])
        assert step.state == asker.next_state(asker.initial_state, [legal[0][0], legal[1][0]])
        # a state never seen by this thread is installed whole
        other = asker.next_state(asker.initial_state, [legal[0][1], legal[1][0]])
        assert sm.is_terminal(other) is False
        assert sm.all_legal_moves(MachineState(other._key)) == asker.all_legal_moves(other)


def test_expand_refuses_when_a_role_has_no_move() -> None:
    with StateMachine.from_file(HERE / "games" / "adapter_stuck.kif") as sm:
        [(jm, child)] = sm.expand(sm.initial_state)
        assert not child.terminal and child.legal[1] == ()
        with pytest.raises(MoveDefinitionError, match="no legal move for role blue"):
            sm.expand(child.state)
        with pytest.raises(MoveDefinitionError, match="blue"):
            sm.legal_moves(child.state, "blue")
        assert sm.next_states(sm.initial_state) == [child.state]
        assert sm.next_state_map(sm.initial_state) == {jm: child.state}


def test_a_step_over_the_inference_limit_fails_and_the_machine_recovers() -> None:
    game = """(role p) (init c) (legal p go) (legal p stop)
              (<= (next c) (does p go)) (<= (next d) (does p stop)) (goal p 0)
              (n 0) (n 1) (n 2) (n 3) (n 4) (n 5) (n 6) (n 7) (n 8) (n 9)
              (<= (big ?a ?b ?c ?d ?e) (true d) (n ?a) (n ?b) (n ?c) (n ?d) (n ?e))
              (<= terminal (big ?a ?b ?c ?d ?e) (true (x ?e)))"""
    with StateMachine(parse_game(game), "long", inference_limit=10_000) as sm:
        s = sm.initial_state
        with pytest.raises(ReasonerError, match="more than 10,000 inferences"):
            sm.step(s, ["stop"])
        with pytest.raises(ReasonerError, match="more than 20,000 inferences"):
            sm.expand(s)  # two successors: twice the limit
        step = sm.step(s, ["go"])
        assert step.state == s and not step.terminal
        assert step.legal == (tuple(sm.legal_moves(s, "p")),)
        assert sm.next_state(s, ["stop"]) != s


def test_each_thread_steps_its_own_state() -> None:
    with own("ticTacToe") as sm, own("ticTacToe") as asker:
        def walk(seed: int) -> list[MachineState]:
            rng = random.Random(seed)
            s, states = sm.initial_state, []
            while not sm.is_terminal(s):
                s = sm.step(s, [rng.choice(ms) for ms in sm.all_legal_moves(s)]).state
                states.append(s)
                if rng.random() < 0.3:
                    sm.expand(s) if not sm.is_terminal(s) else None
            return states

        def asked(seed: int) -> list[MachineState]:
            rng = random.Random(seed)
            s, states = asker.initial_state, []
            while not asker.is_terminal(s):
                s = asker.next_state(s, [rng.choice(ms) for ms in asker.all_legal_moves(s)])
                states.append(s)
                rng.random()
            return states

        seeds = range(8)
        expected = {seed: asked(seed) for seed in seeds}
        results: dict[int, list[MachineState]] = {}
        errors: list[BaseException] = []

        def run(seed: int) -> None:
            try:
                for _ in range(5):
                    results[seed] = walk(seed)
            except BaseException as e:
                errors.append(e)

        threads = [threading.Thread(target=run, args=(seed,)) for seed in seeds]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        assert results == expected


def test_expand_orders_children_as_legal_joint_moves() -> None:
    with own("matchingPennies") as sm:
        s = sm.initial_state
        expanded = sm.expand(s)
        per_role = sm.all_legal_moves(s)
        assert [jm for jm, _ in expanded] == list(itertools.product(*per_role))
        assert len(expanded) == len(per_role[0]) * len(per_role[1]) > 1


def test_states_revisited_in_any_order_get_the_same_answers() -> None:
    # States that are not installed are sent by symbol id: revisit a walk's states
    # out of order (and a state with a fluent the game never makes) and compare.
    with own("ticTacToe") as sm:
        rng = random.Random(5)
        seen: list[tuple[MachineState, bool, list[list[Any]]]] = []
        s = sm.initial_state
        while True:
            seen.append((s, sm.is_terminal(s), sm.all_legal_moves(s)))
            if seen[-1][1]:
                break
            s = sm.step(s, [rng.choice(ms) for ms in seen[-1][2]]).state
        for _ in range(3):
            rng.shuffle(seen)
            for state, terminal, legal in seen:
                fresh = MachineState(state._key)  # nothing learnt: asks Prolog
                assert sm.is_terminal(fresh) == terminal
                assert sm.all_legal_moves(fresh) == legal
        odd = MachineState.from_fluents([*sm.initial_state, "(mystery 1)"])
        assert sm.all_legal_moves(odd) == sm.all_legal_moves(MachineState(sm.initial_state._key))


def test_a_step_from_a_stepped_state_checks_legality_against_its_moves() -> None:
    # From a state a step reached, the runtime checks a joint move against the legal
    # moves it computed there; from any other, it asks the game: same verdicts.
    with own("ticTacToe") as sm:
        first = sm.step(sm.initial_state, [m[0] for m in sm.all_legal_moves(sm.initial_state)])
        x_moves, o_moves = first.legal
        with pytest.raises(IllegalMoveError, match="oplayer"):
            sm.step(first.state, [x_moves[0], x_moves[0]])  # xplayer's move for oplayer
        with pytest.raises(IllegalMoveError, match="xplayer"):
            sm.step(first.state, [o_moves[0], o_moves[0]])
        with pytest.raises(TransitionDefinitionError, match="one move per role"):
            sm.step(first.state, [x_moves[0]])
        fresh = MachineState(first.state._key)
        with pytest.raises(IllegalMoveError, match="oplayer"):
            sm.step(fresh, [x_moves[0], x_moves[0]])
        second = sm.step(first.state, [x_moves[0], o_moves[0]])
        assert second.state == sm.next_state(fresh, [x_moves[0], o_moves[0]])


def test_next_state_after_all_legal_moves_checks_against_those_moves() -> None:
    # all_legal_moves leaves the legal moves known to the runtime; next_state's check
    # uses them, with the same verdicts as a check that asks the game.
    with own("ticTacToe") as sm, own("ticTacToe") as asker:
        s = sm.initial_state
        x_moves, o_moves = sm.all_legal_moves(s)
        with pytest.raises(IllegalMoveError, match="xplayer"):
            sm.next_state(s, [o_moves[0], o_moves[0]])
        with pytest.raises(IllegalMoveError, match="oplayer"):
            sm.next_state(s, [x_moves[0], x_moves[0]])
        nxt = sm.next_state(s, [x_moves[3], o_moves[0]])
        assert nxt == asker.next_state(asker.initial_state, [x_moves[3], o_moves[0]])
        with pytest.raises(IllegalMoveError, match="xplayer"):  # the old moves are stale
            sm.next_state(nxt, [x_moves[3], o_moves[0]])
