"""OpenSpiel states as text (issue 32 item 4): ``state.serialize()`` writes the play's moves
and the state's fluents as KIF, ``game.deserialize_state`` reads them back as data, so a
state string cannot run code; every play round-trips."""

from __future__ import annotations

import base64
import os
import pickle
from pathlib import Path

import pytest
from adapters_support import require_module
from conftest import EXAMPLES
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st


@pytest.fixture(scope="module")
def pyspiel():  # type: ignore[no-untyped-def]
    return require_module("pyspiel")


@pytest.fixture(scope="module")
def games(pyspiel):  # type: ignore[no-untyped-def]
    from gdl2pl.openspiel import load_game
    from gdl2pl.openspiel.imperfect import load_imperfect_game

    return {
        "ticTacToe": load_game(str(EXAMPLES / "ticTacToe.kif")),
        "matchingPennies": load_game(str(EXAMPLES / "matchingPennies.kif")),
        "montyHall": load_imperfect_game(str(EXAMPLES / "montyHall.kif")),
        "kuhnPoker": load_imperfect_game(str(EXAMPLES / "kuhnPoker.kif")),
    }


def play(game, choices: list[int]):  # type: ignore[no-untyped-def]
    """The states of a play of ``game``, each decision the legal action at the next of
    ``choices`` (modulo their number), until the end or the choices run out."""
    state = game.new_initial_state()
    states = [state.clone()]
    for c in choices:
        if state.is_terminal():
            break
        if state.is_chance_node():
            outcomes = [a for a, _ in state.chance_outcomes()]
            state.apply_action(outcomes[c % len(outcomes)])
        elif state.is_simultaneous_node():
            state.apply_actions(
                [state.legal_actions(p)[c % len(state.legal_actions(p))] for p in range(2)]
            )
        else:
            legal = state.legal_actions()
            state.apply_action(legal[c % len(legal)])
        states.append(state.clone())
    return states


class Payload:
    """Unpickled, it runs a shell command that leaves a file behind."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (os.system, (f"touch {self.marker}",))


@pytest.mark.parametrize("name", ["ticTacToe", "montyHall"])
def test_a_pickled_state_string_runs_nothing(games, tmp_path: Path, name: str) -> None:  # type: ignore[no-untyped-def]
    """The reproduction: OpenSpiel's own form for Python states ends in a pickle of the
    state's attributes; the games read only their text form, so the payload is refused
    and never unpickled."""
    marker = tmp_path / "ran"
    blob = base64.b64encode(pickle.dumps({"x": Payload(marker)})).decode()
    with pytest.raises(ValueError, match="line 1: a gdl2pl state text starts with"):
        games[name].deserialize_state("history=\nmove_number=0\n__dict__=" + blob)
    assert not marker.exists()


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    name=st.sampled_from(["ticTacToe", "matchingPennies", "montyHall", "kuhnPoker"]),
    choices=st.lists(st.integers(0, 20), max_size=12),
)
def test_every_state_round_trips_through_its_text(games, name: str, choices: list[int]) -> None:  # type: ignore[no-untyped-def]
    """Law: ``game.deserialize_state(s.serialize())`` is ``s``: the same history, the same
    fluents, the same text, the same moves from there."""
    game = games[name]
    for state in play(game, choices):
        text = state.serialize()
        back = game.deserialize_state(text)
        assert back.history() == state.history()
        assert back.move_number() == state.move_number()
        assert back.machine_state == state.machine_state
        assert back.serialize() == text
        assert back.is_terminal() == state.is_terminal()
        if not state.is_terminal():
            assert back.legal_actions(0) == state.legal_actions(0)


TTT_START = "gdl2pl openspiel state 1\n"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "line 1: a gdl2pl state text starts with"),
        ("gdl2pl openspiel state 2\n", "line 1"),
        (TTT_START + "(does xplayer (mark 1 1)\n", "line 2: not a KIF term"),
        (TTT_START + "(does xplayer " + "(f " * 100_000 + "\n", "line 2: not a KIF term"),
        (TTT_START + ":- halt.\n", "line 2: not a KIF term"),
        (TTT_START + "(does xplayer (mark 1 1) extra)\n", "line 2: expected (does ROLE MOVE)"),
        (TTT_START + "(does oplayer (mark 1 1))\n", "line 2: xplayer is to move here"),
        (TTT_START + "(does xplayer (mark 4 4))\n", "line 2: (mark 4 4) is not a legal move"),
        (TTT_START + "(does xplayer (mark 1 1))\n(does oplayer (mark 1 1))\n", "line 3"),
        (
            TTT_START + "(true (cell 1 1 x))\n(does xplayer (mark 1 1))\n",
            "a move after the fluents",
        ),
        (TTT_START + "(true (cell 1 1 x))\n", "the fluents are not those"),
    ],
)
def test_a_bad_state_text_is_refused_with_its_line(games, text: str, problem: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        games["ticTacToe"].deserialize_state(text)


def test_a_simultaneous_joint_move_must_be_whole(games) -> None:  # type: ignore[no-untyped-def]
    game = games["matchingPennies"]
    whole = play(game, [0])[-1].serialize()
    half = "\n".join(line for line in whole.splitlines() if not line.startswith("(true"))
    half = half.rsplit("\n", 1)[0]  # the second player's move is gone
    with pytest.raises(ValueError, match="the moves end within a joint move"):
        game.deserialize_state(half)


def test_a_state_text_is_not_a_string(games) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises((ValueError, TypeError)):
        games["ticTacToe"].deserialize_state(b"gdl2pl openspiel state 1\n")
