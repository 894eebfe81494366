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
    assert code == 1  # strong winnability is refuted


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
        ["analyze", str(GAMES / "unsafe.kif")],
    ],
)
def test_input_errors_exit_2(capsys, argv: list[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") >= 1 and "Traceback" not in err
