"""gdl2pl analyze: verdicts on tic-tac-toe and on small games that break each property
on purpose (tests/games/analysis/), counterexamples that `gdl2pl replay` accepts, and
the budget (partial search, random matches)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from prolog_env import require_prolog

from gdl2pl.cli import main

ROOT = Path(__file__).resolve().parents[1]
TICTACTOE = str(ROOT / "gdl2pl/examples/ticTacToe.kif")
BUTTONS = str(ROOT / "gdl2pl/examples/buttons.kif")
GAMES = ROOT / "tests/games/analysis"


@pytest.fixture(autouse=True)
def _prolog() -> None:
    require_prolog()


def analyze(capsys: pytest.CaptureFixture[str], game: str, *extra: str) -> tuple[int, dict]:
    code = main(["analyze", game, "--json", *extra])
    out = capsys.readouterr().out
    return code, json.loads(out)


def replay(capsys: pytest.CaptureFixture[str], game: str, moves: list, monkeypatch) -> list[dict]:
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps({"moves": moves}) + "\n"))
    assert main(["replay", game]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_tictactoe_exhaustive(capsys: pytest.CaptureFixture[str]) -> None:
    code, r = analyze(capsys, TICTACTOE)
    assert r["exhaustive"] is True
    assert (r["reachable_states"], r["terminal_states"]) == (5478, 958)
    p = r["properties"]
    assert p["termination"] == {
        "verdict": "proved",
        "counterexample": None,
        "note": p["termination"]["note"],
    }
    assert p["playability"]["verdict"] == "proved"
    assert p["goal_definition"]["verdict"] == "proved"
    assert p["weak_winnability"]["roles"] == {"xplayer": "proved", "oplayer": "proved"}
    assert p["strong_winnability"]["roles"] == {"xplayer": "refuted", "oplayer": "refuted"}
    assert r["depth"] == {"min": 5, "max": 9}
    assert code == 0  # well formed: strong winnability is asked of one-player games only


def test_weak_witness_replays_to_a_win(capsys, monkeypatch) -> None:
    _, r = analyze(capsys, TICTACTOE)
    for i, role in enumerate(["xplayer", "oplayer"]):
        moves = r["properties"]["weak_winnability"]["witnesses"][role]
        records = replay(capsys, TICTACTOE, moves, monkeypatch)
        assert "error" not in records[-1]
        assert records[-1]["terminal"] and records[-1]["goals"][role] == 100, i


def test_buttons_is_strongly_winnable(capsys: pytest.CaptureFixture[str]) -> None:
    code, r = analyze(capsys, BUTTONS)
    assert (r["reachable_states"], r["terminal_states"]) == (32, 8)
    assert r["properties"]["strong_winnability"]["roles"] == {"robot": "proved"}
    assert code == 0


def test_cycle_refutes_termination(capsys, monkeypatch) -> None:
    game = str(GAMES / "cycle.kif")
    code, r = analyze(capsys, game)
    term = r["properties"]["termination"]
    assert term["verdict"] == "refuted" and code == 1
    records = replay(capsys, game, term["counterexample"], monkeypatch)
    states = [rec["state"] for rec in records if "state" in rec]
    assert len(states) == len(term["counterexample"]) + 1
    assert states[-1] in states[:-1]  # the last state occurred earlier on the path
    assert not any(rec.get("terminal") for rec in records)
    # the robot can still stop: winnable both ways, playable, goals defined
    assert r["properties"]["strong_winnability"]["roles"] == {"robot": "proved"}
    assert r["properties"]["playability"]["verdict"] == "proved"


def test_stuck_refutes_playability(capsys, monkeypatch) -> None:
    game = str(GAMES / "stuck.kif")
    code, r = analyze(capsys, game)
    play = r["properties"]["playability"]
    assert play["verdict"] == "refuted" and code == 1
    assert play["counterexample"] == [["tick", "tick"]]
    records = replay(capsys, game, play["counterexample"], monkeypatch)
    last = records[-2]  # then the replay's own error: no legal move
    assert last["legal"]["blue"] == [] and not last["terminal"]
    assert "no legal move" in records[-1]["error"]


def test_bad_goal_refutes_goal_definition(capsys, monkeypatch) -> None:
    game = str(GAMES / "badgoal.kif")
    code, r = analyze(capsys, game)
    goal = r["properties"]["goal_definition"]
    assert goal["verdict"] == "refuted" and code == 1
    records = replay(capsys, game, goal["counterexample"], monkeypatch)
    assert records[-1]["terminal"] and records[-1]["goals"]["player"] is None
    assert r["properties"]["weak_winnability"]["roles"] == {"player": "refuted"}


def test_budget_partial_search_is_never_proved(capsys) -> None:
    code, r = analyze(capsys, TICTACTOE, "--max-states", "50", "--walks", "20")
    assert r["exhaustive"] is False
    assert r["reachable_states"] is None and r["terminal_states"] is None
    p = r["properties"]
    for name in ("termination", "playability", "goal_definition"):
        assert p[name]["verdict"] == "unknown", name
    assert p["strong_winnability"]["verdict"] == "unknown"
    # random matches that end in a win prove weak winnability (a witness)
    assert r["random_matches"]["matches"] == 20
    assert set(p["weak_winnability"]["roles"].values()) <= {"proved", "unknown"}
    assert code == 0


def test_sampled_cycle_beyond_the_budget(capsys, monkeypatch) -> None:
    game = str(GAMES / "latecycle.kif")
    code, r = analyze(capsys, game, "--max-states", "10", "--walks", "3")
    assert r["exhaustive"] is False
    term = r["properties"]["termination"]
    assert term["verdict"] == "refuted" and code == 1
    records = replay(capsys, game, term["counterexample"], monkeypatch)
    states = [rec["state"] for rec in records if "state" in rec]
    assert states[-1] in states[:-1]


def test_text_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", BUTTONS]) == 0
    out = capsys.readouterr().out
    assert "reachable states: 32 (8 terminal)" in out
    assert "strong winnability: proved (robot: proved)" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["analyze", "no/such/game.kif"],
        ["analyze", BUTTONS, "--max-states", "0"],
    ],
)
def test_input_errors_exit_2(capsys, argv: list[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") >= 1 and "Traceback" not in err


def test_a_game_check_rejects_is_refused_as_check_refuses_it(capsys) -> None:
    game = str(GAMES / "unsafe.kif")
    assert main(["analyze", game]) == 1
    err = capsys.readouterr().err
    assert f"{game}:" in err and "error: unsafe rule" in err and "Traceback" not in err


# -- the checks on hand-made graphs (no Prolog) -------------------------------------------


def _space(succ: dict, counts: dict, terminal: dict, discovered: int):
    from gdl2pl.analysis.statespace import StateSpace

    return StateSpace(("a", "b"), discovered, terminal, counts, succ)


def test_attractor_needs_every_reply_and_ignores_cycles() -> None:
    from gdl2pl.analysis import wellformed as wf

    # 0: role a picks move 0 or 1, b has two replies: joint j = 2*m_a + m_b
    #    move 0 -> (3, 4): 3 wins for a, 4 loses; move 1 -> (1, 3)
    # 1: a has one move, b two: (0, 3) -- back to 0 is a cycle
    won, lost = [["100"], ["0"]], [["0"], ["100"]]
    space = _space(
        {0: [3, 4, 1, 3], 1: [0, 3]},
        {0: (2, 2), 1: (1, 2)},
        {3: won, 4: lost},
        5,
    )
    assert wf.attractor(space, 0, unexplored_wins=False) == {3}
    assert wf.winning_terminals(space, 1) == [4]
    cycle = wf.find_cycle(space)
    assert cycle is not None and space.succ[cycle[-1][0]][cycle[-1][1]] in {s for s, _ in cycle}
    # if b's reply from 1 back to 0 were a win for a, a could force it
    space2 = _space({0: [3, 4, 1, 3], 1: [3, 3]}, {0: (2, 2), 1: (1, 2)}, {3: won, 4: lost}, 5)
    assert 0 in wf.attractor(space2, 0, unexplored_wins=False)
    assert wf.find_cycle(space2) is None
    assert wf.depth_range(space2) == (1, 2)


def test_partial_graph_bounds_are_sound() -> None:
    from gdl2pl.analysis import wellformed as wf

    won = [["100"], ["0"]]
    # state 2 discovered but not expanded: a's win depends on it
    space = _space({0: [1, 2]}, {0: (2, 1)}, {1: won}, 3)
    assert not space.exhaustive
    b = wf.strong_winnability_bounds(space, 0)
    assert b.proved and not b.refuted  # move 0 reaches the win whatever 2 is
    space = _space({0: [2]}, {0: (1, 1)}, {1: won}, 3)
    b = wf.strong_winnability_bounds(space, 0)
    assert not b.proved and not b.refuted  # only the unexplored state decides
    b = wf.strong_winnability_bounds(space, 1)
    assert not b.proved and not b.refuted
