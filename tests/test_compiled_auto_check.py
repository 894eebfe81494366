"""``engine="auto"`` checks the network before it switches to it: a network made wrong on
purpose (its goal values changed after grounding) is caught, in the states of short
random plays and in the states the reasoner answered before the switch, and the reasoner
stays, for good, saying what differed in the game's words; what auto writes to the log
quotes the game's text escaped."""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable
from collections.abc import Iterator

import pytest
from game_shapes import ISSUE_GAME
from prolog_env import require_prolog

from gdl2pl.bridge import StateMachine
from gdl2pl.compiled import AutoMachine
from gdl2pl.compiled import CompiledMachine
from gdl2pl.compiled import GroundingBudget
from gdl2pl.compiled import load_description
from gdl2pl.compiled.agreement import agreement
from gdl2pl.compiled.build import NetworkBuild
from gdl2pl.compiled.network import Network
from gdl2pl.contract import MachineState
from gdl2pl.load import parse_game
from gdl2pl.visitor import Renamer

pytestmark = pytest.mark.compiled

#: The issue's game (48): goal 100 in every state, by a rule over ``(w)``.
GOALS = ISSUE_GAME

#: ``hidden`` is a fluent of the network (the relaxation reaches it) that no play
#: reaches: the game ends at (c 2), hidden needs (c 5).
HIDDEN = """
(role r)
(init (c 0))
(succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5)
(<= (legal r go) (true (c ?x)))
(<= (next (c ?y)) (true (c ?x)) (succ ?x ?y))
(<= (next hidden) (true (c 5)))
(<= terminal (true (c 2)))
(<= (goal r 100) (true hidden))
(<= (goal r 0) (not (true hidden)))
"""

#: Control characters a terminal would obey, in a game's symbol.
HOSTILE = "c\x1b[2J\x07\r\nx"


@pytest.fixture(scope="module", autouse=True)
def _prolog() -> None:
    require_prolog()


def swap_goal_values(net: Network) -> Network:
    """The network with each role's goal values in reverse order on the same atoms."""
    goals = [[(a, v) for (a, _), (_, v) in zip(pairs, reversed(pairs), strict=True)]
             for pairs in net.goals]
    return dataclasses.replace(net, goals=goals)


def hundred_is_fifty(net: Network) -> Network:
    """The network with each goal value 100 said as 50."""
    goals = [[(a, "50" if v == "100" else v) for a, v in pairs] for pairs in net.goals]
    return dataclasses.replace(net, goals=goals)


@pytest.fixture
def held_build(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., threading.Event]]:
    """``hold(wrong)``: every network built from now on is made wrong by ``wrong`` and
    handed over only once the returned event is set."""
    events: list[threading.Event] = []
    built = NetworkBuild.wait

    def hold(wrong: Callable[[Network], Network]) -> threading.Event:
        release = threading.Event()
        events.append(release)

        def wait(self: NetworkBuild) -> Network:
            network = built(self)
            release.wait(60)
            return wrong(network)

        monkeypatch.setattr(NetworkBuild, "wait", wait)
        return release

    yield hold
    for e in events:  # never leave a build thread waiting
        e.set()


def auto(text: str, name: str = "game.kif", **renamed: str) -> AutoMachine:
    d = parse_game(text, syntax="kif", file=name)
    if renamed:
        d = Renamer(lambda s: renamed.get(s, s)).description(d)
    m = load_description(d, "auto", name=name)
    assert isinstance(m, AutoMachine)
    return m


def test_a_wrong_network_met_in_a_random_play_leaves_the_reasoner_playing(
    held_build: Callable[..., threading.Event], caplog: pytest.LogCaptureFixture
) -> None:
    release = held_build(swap_goal_values)
    caplog.set_level(logging.INFO, logger="gdl2pl.compiled")
    with auto(GOALS) as m:
        release.set()
        choice = m.wait_for_engine(60)
        assert choice.engine == "prolog"
        assert isinstance(m.engine_now, StateMachine)
        said = ("the goal values of 'r' are '100' on the reasoner and '0' on the network")
        assert choice.reason.startswith("the network answers otherwise than the reasoner: in "
                                        "the state '((c 0) (c 1))', ")
        assert said in choice.reason
        # the game goes on, on the reasoner, with the reasoner's answers
        assert m.goal_values(m.initial_state) == [["100"]]
        assert m.engine_choice == choice
    lines = [r.getMessage() for r in caplog.records if r.name == "gdl2pl.compiled"]
    assert len(lines) == 1
    assert caplog.records[-1].levelno == logging.WARNING
    assert lines[0].startswith("'game.kif': the reasoner plays it: the network answers otherwise:")
    assert said in lines[0]


def test_a_wrong_network_met_only_in_a_state_the_reasoner_answered_is_caught_too(
    held_build: Callable[..., threading.Event],
) -> None:
    """The states a caller asked about before the switch are asked again of both
    engines: a difference no short play meets is found there."""
    release = held_build(hundred_is_fifty)
    with auto(HIDDEN) as m:
        made = MachineState.from_fluents(["(c 0)", "hidden"])
        assert m.goal_values(made) == [["100"]]  # answered by the reasoner, and kept
        release.set()
        choice = m.wait_for_engine(60)
        assert choice.engine == "prolog"
        assert ("in the state '((c 0) hidden)', the goal values of 'r' are '100' on the "
                "reasoner and '50' on the network") in choice.reason


def test_without_that_state_the_short_plays_do_not_meet_the_difference(
    held_build: Callable[..., threading.Event],
) -> None:
    """The control of the test above: the same wrong network, no question asked of the
    hidden state, and the check (bounded to short plays) switches."""
    release = held_build(hundred_is_fifty)
    with auto(HIDDEN) as m:
        release.set()
        choice = m.wait_for_engine(60)
        assert choice.engine == "compiled"
        assert isinstance(m.engine_now, CompiledMachine)
        assert "answers as the reasoner in" in choice.reason


WRONG: dict[str, tuple[Callable[[Network], Network], str]] = {
    "legal": (lambda n: dataclasses.replace(n, legal=[[]]),
              "in the state '((c 0) (c 1))', the move 'go' of 'r' is legal on the reasoner, "
              "not on the network"),
    "terminal": (lambda n: dataclasses.replace(n, terminal=n.n_fluents + n.n_moves),
                 "in the state '((c 0) (c 1) done)', the game is over on the reasoner, not on "
                 "the network"),
    "next": (lambda n: dataclasses.replace(
                 n, next=[(a, f) for a, f in n.next if n.fluents[f] != "done"]),
             "in the state '((c 0) (c 1))', the next state after the joint move ('go'): the "
             "fluent 'done' holds on the reasoner only"),
    "goals": (swap_goal_values,
              "in the state '((c 0) (c 1))', the goal values of 'r' are '100' on the "
              "reasoner and '0' on the network"),
}


@pytest.mark.parametrize("what", WRONG)
def test_the_first_difference_is_said_in_the_games_words(what: str) -> None:
    wrong, said = WRONG[what]
    d = parse_game(GOALS, syntax="kif", file="game.kif")
    with load_description(d, "compiled", name="game.kif") as right:
        assert isinstance(right, CompiledMachine)
        network = CompiledMachine(right.prolog, wrong(right.network))
        found = agreement(network, right.prolog, [], deadline=time.monotonic() + 60)
        assert found.difference == said
        same = agreement(right, right.prolog, [], deadline=time.monotonic() + 60)
        assert same.difference is None and same.complete and same.states >= 2
        # past its deadline the check stops, having compared nothing, and says so
        late = agreement(network, right.prolog, [right.initial_state], deadline=time.monotonic())
        assert (late.difference, late.states, late.complete) == (None, 0, False)


def test_a_right_network_is_checked_and_switched_to() -> None:
    with auto(GOALS) as m:
        assert m.goal_values(m.initial_state) == [["100"]]
        choice = m.wait_for_engine(60)
        assert choice.engine == "compiled"
        assert "answers as the reasoner in" in choice.reason
        assert m.goal_values(m.initial_state) == [["100"]]


def no_control_characters(text: str) -> bool:
    return not any(ch in text for ch in "\x1b\x07\r\n")


def test_the_difference_in_the_log_quotes_the_games_symbols_escaped(
    held_build: Callable[..., threading.Event], caplog: pytest.LogCaptureFixture
) -> None:
    release = held_build(swap_goal_values)
    caplog.set_level(logging.INFO, logger="gdl2pl.compiled")
    with auto(GOALS, c=HOSTILE, r=HOSTILE + "r") as m:
        release.set()
        assert m.wait_for_engine(60).engine == "prolog"
    (line,) = [r.getMessage() for r in caplog.records if r.name == "gdl2pl.compiled"]
    assert no_control_characters(line)
    assert "c\\x1b[2J\\x07\\r\\nx" in line  # the fluent's symbol, escaped


#: A term that grows at every step: refused at the grounding's depth bound, at its rule.
GROWING = """
(role counter)
(init (count zero))
(<= (legal counter tick) (true (count ?x)))
(<= (next (count (succ ?x))) (true (count ?x)))
(<= terminal (true (count done)))
(<= (goal counter 100) (true (count done)))
"""


def test_a_refused_rule_in_the_log_is_quoted_escaped(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="gdl2pl.compiled")
    d = parse_game(GROWING, syntax="kif", file="growing.kif")
    d = Renamer(lambda s: HOSTILE if s == "count" else s).description(d)
    budget = GroundingBudget(seconds=30.0)
    with load_description(d, "auto", name="grow\x1bing.kif", budget=budget) as m:
        choice = m.wait_for_engine(60)
        assert choice.engine == "prolog"
        assert HOSTILE in choice.reason  # the rule, as written, in the engine's choice
    (line,) = [r.getMessage() for r in caplog.records if r.name == "gdl2pl.compiled"]
    assert no_control_characters(line)
    assert line.startswith("'grow\\x1bing.kif': the reasoner plays it: ")
    assert "c\\x1b[2J\\x07\\r\\nx" in line  # the rule's symbol, escaped
