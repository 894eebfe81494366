"""gdl2pl analyze: verdicts on tic-tac-toe and on small games that break each property
on purpose (tests/games/analysis/), counterexamples that `gdl2pl replay` accepts, and
the budget (partial search, random matches)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
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


def refuted(
    capsys: pytest.CaptureFixture[str], monkeypatch, name: str, prop: str, *extra: str
) -> tuple[dict, list[dict]]:
    """Analyze the test game ``name``, check that it refutes ``prop`` (exit status 1), and
    replay the counterexample: (the analysis, the replay's records)."""
    game = str(GAMES / name)
    code, r = analyze(capsys, game, *extra)
    found = r["properties"][prop]
    assert found["verdict"] == "refuted" and code == 1
    return r, replay(capsys, game, found["counterexample"], monkeypatch)


def test_tictactoe_exhaustive(capsys: pytest.CaptureFixture[str]) -> None:
    code, r = analyze(capsys, TICTACTOE)
    assert r["exhaustive"] is True
    assert (r["reachable_states"], r["terminal_states"]) == (5478, 958)
    p = r["properties"]
    assert p["termination"] == {
        "verdict": "proved",
        "counterexample": None,
        "note": p["termination"]["note"],
        "definition": p["termination"]["definition"],
    }
    assert p["playability"]["verdict"] == "proved"
    assert p["goal_definition"]["verdict"] == "proved"
    assert p["weak_winnability"]["roles"] == {"xplayer": "proved", "oplayer": "proved"}
    assert p["strong_winnability"]["roles"] == {"xplayer": "refuted", "oplayer": "refuted"}
    assert p["strong_winnability"]["verdict"] == "refuted"
    assert p["strong_winnability_strategy"]["verdict"] == "refuted"
    # goals fall for the loser (50 while open, 0 at the end): not monotonic, so not
    # well-formed by the notes' definition, though it is all GGP asks (exit status 0)
    assert p["monotonicity"]["verdict"] == "refuted"
    assert p["well_formed"] == {
        "verdict": "refuted",
        "counterexample": None,
        "note": "not monotonic",
        "definition": p["well_formed"]["definition"],
    }
    assert r["depth"] == {"min": 5, "max": 9}
    assert code == 0  # strong winnability is asked of one-player games only


def test_a_monotonicity_counterexample_ends_with_the_falling_move(capsys, monkeypatch) -> None:
    _, r = analyze(capsys, TICTACTOE)
    p = r["properties"]["monotonicity"]
    role, rest = p["note"].split("'s goal value falls from ")
    before, after = (int(v) for v in rest.split(" to "))
    records = replay(capsys, TICTACTOE, p["counterexample"], monkeypatch)
    assert records[-2]["goals"][role] == before > after == records[-1]["goals"][role]


@pytest.mark.parametrize(
    ("game", "strong", "verdict", "strategy", "well_formed", "code"),
    [
        # one role can force a win, the other cannot: strongly winnable (for some player),
        # by one move fixed in advance, so by the notes' definition too
        (
            "forced.kif",
            {"first": "proved", "second": "refuted"},
            "proved",
            {"first": "proved", "second": "refuted"},
            "proved",
            0,
        ),
        # neither can force a win, both can win: weakly but not strongly winnable
        (
            "pennies.kif",
            {"even": "refuted", "odd": "refuted"},
            "refuted",
            {"even": "refuted", "odd": "refuted"},
            "refuted",
            0,
        ),
        # the second wins by echoing the first's pick: a strategy, but no sequence fixed
        # in advance does it, so not strongly winnable as the notes define it
        (
            "echo.kif",
            {"first": "refuted", "second": "refuted"},
            "refuted",
            {"first": "refuted", "second": "proved"},
            "proved",
            0,
        ),
        # one role that can never reach 100: neither weakly nor strongly winnable
        ("nowin.kif", {"player": "refuted"}, "refuted", {"player": "refuted"}, "refuted", 1),
        # one role that wins, but has no goal value before the end: not monotonic
        ("lategoal.kif", {"player": "proved"}, "proved", {"player": "proved"}, "refuted", 0),
    ],
)
def test_winnability_and_well_formedness_follow_the_definitions(
    capsys, game: str, strong: dict, verdict: str, strategy: dict, well_formed: str, code: int
) -> None:
    status, r = analyze(capsys, str(GAMES / game))
    p = r["properties"]
    assert p["strong_winnability"]["roles"] == strong
    assert p["strong_winnability"]["verdict"] == verdict
    assert p["strong_winnability_strategy"]["roles"] == strategy
    assert p["well_formed"]["verdict"] == well_formed
    weak = p["weak_winnability"]["verdict"]
    assert weak == ("refuted" if game == "nowin.kif" else "proved")
    assert status == code


def test_a_winning_sequence_is_reported_and_plays(capsys, monkeypatch) -> None:
    """forced.kif: first's sequence is one move, (pick heads), which wins whatever second
    does; the report lists it, labelled with the notes' definition, before the strategy."""
    _, r = analyze(capsys, str(GAMES / "forced.kif"))
    assert r["properties"]["strong_winnability"]["sequences"] == {"first": ["(pick heads)"]}
    names = list(r["properties"])
    assert names.index("strong_winnability") + 1 == names.index("strong_winnability_strategy")
    main(["analyze", str(GAMES / "forced.kif")])
    lines = capsys.readouterr().out.splitlines()
    at = lines.index(
        "strong winnability (a sequence of the player's own moves, the notes' definition): "
        "proved (first: proved, second: refuted)"
    )
    assert lines[at + 1] == "  sequence for first: [(pick heads)]"
    assert lines[at + 2] == (
        "strong winnability (a strategy: each move may follow the others' moves): proved "
        "(first: proved, second: refuted)"
    )


def test_alone_in_the_game_a_weak_witness_is_a_winning_sequence(capsys) -> None:
    """counted.kif past a budget of 3 states: the random match that wins is a sequence of
    the one role's own moves (there are no others), so strong winnability is proved by
    it, by a sequence and by a strategy, where the graph alone could not."""
    _, r = analyze(capsys, str(GAMES / "counted.kif"), "--max-states", "3", "--walks", "5")
    p = r["properties"]
    assert not r["exhaustive"]
    witness = p["weak_winnability"]["witnesses"]["robot"]
    assert p["strong_winnability"]["roles"] == {"robot": "proved"}
    assert p["strong_winnability"]["sequences"] == {"robot": [jm[0] for jm in witness]}
    assert p["strong_winnability_strategy"]["roles"] == {"robot": "proved"}


def test_winning_sequence_on_a_small_graph() -> None:
    """The search over sets of states: a move must be legal in every state the others'
    moves may lead to, and every match the sequence allows must end in a win."""
    from gdl2pl.analysis import wellformed as wf

    won, lost = [["100"], ["0"]], [["0"], ["100"]]
    # 0: a plays x or y, b has two replies (joint j = 2*m_a + m_b): x -> 1 or 2, y -> 3
    #    (won) or 4 (lost); 1: a's one move z -> 5 (won); 2: a's moves, sorted: the first
    #    -> 6 (lost), the second -> 5 (won)
    succ = {0: [1, 2, 3, 4], 1: [5], 2: [6, 5]}
    counts = {0: (2, 2), 1: (1, 1), 2: (2, 1)}
    ends = {3: won, 4: lost, 5: won, 6: lost}
    space = _space(succ, counts, ends, 7)
    moves = {0: ["x", "y"], 1: ["z"], 2: ["w", "z"]}
    found = wf.winning_sequence(space, 0, moves.__getitem__)
    assert found.proved and found.moves == ("x", "z")  # z is legal, and wins, in 1 and 2
    # when 2's winning move is not z, no move is legal and winning in both 1 and 2: no
    # sequence wins, though a strategy does (x, then z in 1 and w in 2)
    other = {0: ["x", "y"], 1: ["z"], 2: ["v", "w"]}
    found = wf.winning_sequence(space, 0, other.__getitem__)
    assert found.refuted and not found.proved
    assert 0 in wf.attractor(space, 0, unexplored_wins=False)
    # a set of states holding one the search did not expand leaves it undecided
    partial = _space({0: [1, 2, 3, 4], 1: [5]}, {0: (2, 2), 1: (1, 1)}, ends, 7)
    found = wf.winning_sequence(partial, 0, {0: ["x", "y"], 1: ["z"]}.__getitem__)
    assert not found.proved and not found.refuted and "did not expand" in found.why
    # the deadline and the caps stop it, undecided
    found = wf.winning_sequence(space, 0, moves.__getitem__, passed=lambda: True)
    assert not found.proved and not found.refuted and found.why == "the time budget"
    found = wf.winning_sequence(space, 0, moves.__getitem__, max_sets=1)
    assert not found.proved and not found.refuted and "cap" in found.why


def test_winning_sequence_stops_inside_a_wide_set_at_its_deadline() -> None:
    """The others' moves can spread a set over thousands of states, each asking Prolog
    for its moves: the deadline is read between them, not only between sets."""
    from gdl2pl.analysis import wellformed as wf

    wide = 1000
    succ = {0: list(range(1, wide + 1)), **{s: [0] for s in range(1, wide + 1)}}
    counts = {0: (1, wide), **{s: (1, 1) for s in range(1, wide + 1)}}
    space = _space(succ, counts, {}, wide + 1)
    asked: list[int] = []

    def moves_of(state: int) -> list[str]:
        asked.append(state)
        return ["go"]

    calls = iter(range(10**6))
    found = wf.winning_sequence(space, 0, moves_of, passed=lambda: next(calls) >= 3)
    assert not found.proved and not found.refuted and found.why == "the time budget"
    assert len(asked) < 200  # stopped inside the set of 1,000 states


def test_monotonicity_asks_a_goal_in_every_state(capsys) -> None:
    _, r = analyze(capsys, str(GAMES / "lategoal.kif"))
    p = r["properties"]["monotonicity"]
    assert (p["verdict"], p["counterexample"], p["note"]) == (
        "refuted",
        [],
        "player has no goal value",
    )
    assert r["properties"]["goal_definition"]["verdict"] == "proved"  # at the end it has one


def test_nim1_is_strongly_winnable_by_a_strategy_only(capsys) -> None:
    """The course's example: player1 can force a win, so the game is strongly winnable by
    a strategy; but its winning moves depend on player2's, so no sequence of its moves
    fixed in advance wins: not strongly winnable as the notes word the definition."""
    from conftest import shared_dir

    game = shared_dir() / "games/ggp-repository/nim1.kif"
    _, r = analyze(capsys, str(game))
    p = r["properties"]["strong_winnability_strategy"]
    assert p["roles"] == {"player1": "proved", "player2": "refuted"}
    assert p["verdict"] == "proved"
    p = r["properties"]["strong_winnability"]
    assert p["roles"] == {"player1": "refuted", "player2": "refuted"}
    assert p["verdict"] == "refuted" and p["sequences"] == {}


def test_each_verdict_quotes_its_definition(capsys) -> None:
    from gdl2pl.analysis.definitions import DEFINITIONS

    _, r = analyze(capsys, BUTTONS)
    assert {name: p["definition"] for name, p in r["properties"].items()} == DEFINITIONS


def test_the_help_quotes_the_definitions(capsys) -> None:
    assert main(["analyze", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "for some player, there is a sequence of individual moves" in text
    assert "well formed: A game description in GDL is well-formed if it terminates" in text


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
    r, records = refuted(capsys, monkeypatch, "cycle.kif", "termination")
    states = [rec["state"] for rec in records if "state" in rec]
    assert len(states) == len(r["properties"]["termination"]["counterexample"]) + 1
    assert states[-1] in states[:-1]  # the last state occurred earlier on the path
    assert not any(rec.get("terminal") for rec in records)
    # the robot can still stop: winnable both ways, playable, goals defined
    assert r["properties"]["strong_winnability"]["roles"] == {"robot": "proved"}
    assert r["properties"]["playability"]["verdict"] == "proved"


def test_stuck_refutes_playability(capsys, monkeypatch) -> None:
    r, records = refuted(capsys, monkeypatch, "stuck.kif", "playability")
    assert r["properties"]["playability"]["counterexample"] == [["tick", "tick"]]
    last = records[-2]  # then the replay's own error: no legal move
    assert last["legal"]["blue"] == [] and not last["terminal"]
    assert "no legal move" in records[-1]["error"]


def test_bad_goal_refutes_goal_definition(capsys, monkeypatch) -> None:
    r, records = refuted(capsys, monkeypatch, "badgoal.kif", "goal_definition")
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
    extra = ("--max-states", "10", "--walks", "3")
    r, records = refuted(capsys, monkeypatch, "latecycle.kif", "termination", *extra)
    assert r["exhaustive"] is False
    states = [rec["state"] for rec in records if "state" in rec]
    assert states[-1] in states[:-1]


def test_text_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", BUTTONS]) == 0
    out = capsys.readouterr().out
    assert "reachable states: 32 (8 terminal)" in out
    assert (
        "strong winnability (a sequence of the player's own moves, the notes' definition): "
        "proved (robot: proved)\n  sequence for robot: [a] [b] [a] [c] [b] [a]\n"
    ) in out


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


def test_a_search_that_expanded_nothing_refutes_nothing() -> None:
    """A time budget can run out before the initial state is expanded (a game whose
    first state has thousands of moves, or is slow to load): strong winnability is then
    unknown, not refuted (aipsrovers01 was once refuted so, and failed the command)."""
    from gdl2pl.analysis import wellformed as wf

    space = _space({}, {}, {}, 1)
    assert space.expanded == 0 and not space.exhaustive
    b = wf.strong_winnability_bounds(space, 0)
    assert not b.proved and not b.refuted


def test_the_text_report_quotes_each_definition_under_its_verdict(capsys) -> None:
    """nim1 in the text a teacher reads: strongly winnable, because player1 can force a
    win, and under the verdict the definition that says "for some player"."""
    from conftest import shared_dir

    game = str(shared_dir() / "games/ggp-repository/nim1.kif")
    main(["analyze", game, "--definitions"])
    lines = capsys.readouterr().out.splitlines()
    at = lines.index(
        "strong winnability (a sequence of the player's own moves, the notes' definition): "
        "refuted (player1: refuted, player2: refuted)"
    )
    quoted = " ".join(line.strip() for line in lines[at + 1 : at + 4])
    assert quoted.startswith("definition: A game is strongly winnable if and only if, for some")
    at = lines.index(
        "strong winnability (a strategy: each move may follow the others' moves): proved "
        "(player1: proved, player2: refuted)"
    )
    quoted = " ".join(line.strip() for line in lines[at + 1 : at + 4])
    assert quoted.startswith("definition: (Not the notes' definition: a strategy")
    assert sum(line.startswith("  definition: ") for line in lines) == 8
    main(["analyze", game])
    assert "  definition: " not in capsys.readouterr().out


# -- why not: shortest cycles and refuted winnability (issue 53, item 5) -------------------


def _lasso_length(succ: dict[int, list[int]]) -> int | None:
    """The fewest steps from state 0 that come back to a state already on the way, by
    trying every walk (small graphs only); None if there is none."""
    walks = [[0]]
    for length in range(1, len(succ) + 2):
        longer = []
        for walk in walks:
            for t in succ.get(walk[-1], ()):
                if t in walk:
                    return length
                longer.append([*walk, t])
        walks = longer
    return None


def test_the_termination_counterexample_is_a_shortest_cycle() -> None:
    from gdl2pl.analysis import wellformed as wf

    # depth first from 0 meets 1 -> 2 -> 3 -> 1 first (4 steps); 0 -> 4 -> 4 is 2 steps
    succ = {0: [1, 4], 1: [2], 2: [3], 3: [1], 4: [4]}
    space = _space(succ, {s: (len(v), 1) for s, v in succ.items()}, {}, 5)
    assert len(wf.find_cycle(space)) == 4
    cycle = wf.shortest_cycle(space)
    assert cycle is not None and cycle.shortest
    assert cycle.steps == [(0, 1), (4, 0)]
    # a cap too small to finish keeps the best found and says it may not be shortest
    capped = wf._shortest_cycle(space, wf.find_cycle(space), max_edges=1)
    assert not capped.shortest and len(capped.steps) <= 4


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.integers(0, 6), max_size=3), min_size=1, max_size=7))
def test_the_shortest_cycle_is_as_short_as_any_walk(edges: list[list[int]]) -> None:
    from gdl2pl.analysis import wellformed as wf

    # the explored graph of a game: the states reached from 0, numbered as a breadth-first
    # search discovers them, each expanded
    n = len(edges)
    number = {0: 0}
    order = [0]
    for s in order:
        for t in edges[s]:
            if t % n not in number:
                number[t % n] = len(order)
                order.append(t % n)
    succ = {number[s]: [number[t % n] for t in edges[s]] for s in order if edges[s]}
    terminal = {number[s]: [["0"], ["0"]] for s in order if not edges[s]}
    space = _space(succ, {s: (len(v), 1) for s, v in succ.items()}, terminal, len(order))
    found = wf.shortest_cycle(space)
    want = _lasso_length(succ)
    assert (found is None) == (want is None)
    if found is not None:
        assert found.shortest and len(found.steps) == want
        states = [0]
        for s, j in found.steps:
            assert s == states[-1]
            states.append(succ[s][j])
        assert states[-1] in states[:-1]


#: The issue's example: waiting for ever is a one-step cycle, and blue's best is 50.
WAITING = """\
role(blue)
init(at(1))
legal(blue,wait)
legal(blue,go) :- true(at(1))
legal(blue,go) :- true(at(2))
next(at(2)) :- does(blue,go) & true(at(1))
next(at(3)) :- does(blue,go) & true(at(2))
next(at(X)) :- does(blue,wait) & true(at(X))
terminal :- true(at(3))
goal(blue,50) :- true(at(3))
goal(blue,0) :- ~true(at(3))
"""


def test_a_refuted_property_says_why_in_the_games_syntax(capsys, tmp_path) -> None:
    game = tmp_path / "waiting.gdl"
    game.write_text(WAITING, encoding="utf-8")
    code, r = analyze(capsys, str(game))
    assert code == 1
    termination = r["properties"]["termination"]
    assert termination["counterexample"] == [["wait"]] and "shortest" in termination["note"]
    weak = r["properties"]["weak_winnability"]
    assert weak["why_not"]["blue"] == {
        "goal": "100",
        "terminal_states": 1,
        "best": "50",
        "best_at": [["go"], ["go"]],
    }
    assert main(["analyze", str(game)]) == 1
    out = capsys.readouterr().out
    assert (
        "  why not for blue: goal(blue,100) holds in no reachable terminal state (1 reached); "
        "the best for blue is goal(blue,50), after [go] [go]\n"
    ) in out
    assert main(["analyze", str(game), "--answer-syntax", "kif"]) == 1
    assert "why not for blue: (goal blue 100) holds in no" in capsys.readouterr().out


def test_no_terminal_state_is_said_so(capsys) -> None:
    _, r = analyze(capsys, str(GAMES / "stuck.kif"))
    why = r["properties"]["weak_winnability"]["why_not"]
    assert why["red"]["terminal_states"] == 0 and why["red"]["best"] is None
