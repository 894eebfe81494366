"""gdl2pl analyze on a laptop: what the rules prove by their shape before any search
(termination from a step counter, playability from a move legal in every state), the
memory budget (``--max-memory``), progress on request, and shortest witnesses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import shared_dir
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from prolog_env import require_prolog

from gdl2pl.cli import main
from gdl2pl.load import parse_game
from gdl2pl.rule_shapes import always_legal
from gdl2pl.rule_shapes import step_counter_bound

ROOT = Path(__file__).resolve().parents[1]
GAMES = ROOT / "tests/games/analysis"
COUNTED = str(GAMES / "counted.kif")
TICTACTOE = str(ROOT / "gdl2pl/examples/ticTacToe.kif")


def analyze(capsys: pytest.CaptureFixture[str], game: str, *extra: str) -> tuple[int, dict]:
    require_prolog()
    code = main(["analyze", game, "--json", *extra])
    return code, json.loads(capsys.readouterr().out)


def test_the_rules_prove_termination_and_playability_without_the_whole_graph(capsys) -> None:
    code, r = analyze(capsys, COUNTED, "--max-states", "3", "--walks", "0")
    assert r["exhaustive"] is False and r["explored"]["stopped_by"] == "states"
    p = r["properties"]
    term, play = p["termination"], p["playability"]
    assert term["verdict"] == "proved" and term["counterexample"] is None
    assert "proved from the rules" in term["note"] and "within 4 steps" in term["note"]
    assert "step counter (step" in term["note"]
    assert play["verdict"] == "proved" and "(robot wait)" in play["note"]
    # the rest needs the graph, which the budget cut
    assert p["monotonicity"]["verdict"] == "unknown"
    assert "its budget (3 states)" in p["monotonicity"]["note"]
    assert code == 0


def test_the_whole_graph_agrees_with_the_rules(capsys) -> None:
    _, r = analyze(capsys, COUNTED)
    assert r["exhaustive"] is True and r["explored"]["stopped_by"] is None
    assert r["depth"] == {"min": 4, "max": 4}  # the bound the counter proves
    assert r["properties"]["well_formed"]["verdict"] == "proved"


@pytest.mark.parametrize(
    ("game", "prop"), [("cycle.kif", "termination"), ("stuck.kif", "playability")]
)
def test_games_without_the_shapes_are_still_refuted(capsys, game: str, prop: str) -> None:
    _, r = analyze(capsys, str(GAMES / game))
    assert r["properties"][prop]["verdict"] == "refuted"


#: What ``--seconds`` may be overrun by, measured in-process (the command from parsing
#: its arguments on): one state's or one random step's work past the deadline, on a busy
#: machine. The process's own start (Python, SWI-Prolog) comes before and is not counted.
MARGIN = 5.0


def test_the_time_budget_bounds_the_whole_command(capsys) -> None:
    """``analyze chess.kif --seconds 5 --walks 10`` took 81 s: each phase had its own
    clock and random matches ran whole. Now loading, search, random matches and checks
    draw on one deadline, and the report says what it cut and what is left unknown."""
    import time

    chess = str(shared_dir() / "games" / "ggp-repository" / "chess.kif")
    seconds = 3.0
    began = time.monotonic()
    _, r = analyze(capsys, chess, "--seconds", str(seconds), "--walks", "10")
    assert time.monotonic() - began < seconds + MARGIN
    assert r["explored"]["stopped_by"] == "seconds"
    assert r["time"]["seconds"] == seconds and "the search" in r["time"]["cut"]
    assert any(c.startswith("random matches (") for c in r["time"]["cut"])
    p = r["properties"]
    assert p["termination"]["verdict"] == "proved"  # the step counter, whatever the time
    play = p["playability"]
    assert play["verdict"] == "unknown"
    assert "its share of the time budget" in play["note"] and "of 3 s)" in play["note"]
    assert "of 10 random matches" in play["note"]


def test_a_budget_spent_before_the_search_still_gives_the_rules_proofs(capsys) -> None:
    """A time budget used up by loading leaves the search nothing: no state expanded,
    nothing refuted, everything unknown but what the rules' shape proves (which takes
    no search)."""
    code, r = analyze(capsys, COUNTED, "--seconds", "0.001")
    assert r["explored"]["expanded_states"] == 0 and r["explored"]["stopped_by"] == "seconds"
    assert code == 0
    p = r["properties"]
    assert p["termination"]["verdict"] == "proved" and p["playability"]["verdict"] == "proved"
    assert {p[k]["verdict"] for k in ("monotonicity", "goal_definition")} == {"unknown"}
    assert p["strong_winnability"]["verdict"] == "unknown"
    assert r["time"]["cut"][0] == "the search"


def test_lights_out_is_playable_from_its_rules(capsys) -> None:
    """lightsOut's one legal rule, ``(<= (legal player (switch ?x ?y)) (coord ?x) (coord
    ?y))``, gives a move in every state: playability is proved before any search."""
    game = str(shared_dir() / "games" / "ggp-repository" / "lightsOut.kif")
    _, r = analyze(capsys, game, "--max-states", "2", "--walks", "0")
    play = r["properties"]["playability"]
    assert play["verdict"] == "proved" and "proved from the rules" in play["note"]
    assert "(player (switch 1 1))" in play["note"]
    assert r["properties"]["termination"]["verdict"] == "proved"  # its step counter


def test_the_memory_budget_stops_the_search_and_says_so(capsys) -> None:
    code, r = analyze(capsys, TICTACTOE, "--max-memory", "1", "--walks", "0")
    assert r["exhaustive"] is False
    assert r["explored"]["stopped_by"] == "memory"
    assert r["explored"]["max_memory"] == 2**20
    assert r["explored"]["expanded_states"] < 5478
    term = r["properties"]["termination"]
    assert term["verdict"] == "unknown"
    assert "memory budget (1 MiB)" in term["note"]
    assert code == 0


def test_the_text_report_names_the_budget_that_stopped_it(capsys) -> None:
    require_prolog()
    main(["analyze", TICTACTOE, "--max-memory", "1", "--walks", "0"])
    out = capsys.readouterr().out
    assert "search stopped at its memory budget:" in out


def test_the_default_memory_budget_is_stated(capsys) -> None:
    assert main(["analyze", "--help"]) == 0
    assert "default 512" in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("value", ["0", "-5"])
def test_a_memory_budget_below_one_mib_is_an_input_error(capsys, value: str) -> None:
    require_prolog()
    assert main(["analyze", COUNTED, "--max-memory", value]) == 2
    err = capsys.readouterr().err
    assert "--max-memory" in err and "Traceback" not in err


def test_progress_on_request(capsys) -> None:
    require_prolog()
    main(["analyze", COUNTED, "--progress"])
    assert "states" in capsys.readouterr().err
    main(["analyze", COUNTED, "--progress", "--max-states", "3", "--walks", "5"])
    assert "random matches" in capsys.readouterr().err
    main(["analyze", COUNTED])
    assert capsys.readouterr().err == ""  # stderr is not a terminal here


def test_the_shortest_random_match_is_the_witness() -> None:
    from gdl2pl.analysis.analyze import _shortest
    from gdl2pl.analysis.statespace import Walk

    walks = [
        Walk("terminal", [["a"]] * 5, [["100"]]),
        Walk("terminal", [["a"]] * 2, [["0"]]),
        Walk("terminal", [["b"]] * 3, [["100"]]),
        Walk("cycle", [["a"]] * 1, 0),
    ]
    won = _shortest(walks, "terminal", lambda w: w.detail[0] == ["100"])
    assert won is walks[2]
    assert _shortest(walks, "stuck") is None


# -- the shapes, on rules alone (no Prolog) ------------------------------------------


def _counter_game(facts: list[tuple[int, int]], end: int) -> str:
    table = " ".join(f"(succ {a} {b})" for a, b in facts)
    return (
        "(role r) (init (step 0)) " + table + " (<= (legal ?p go) (role ?p))"
        " (<= (next (step ?y)) (true (step ?x)) (succ ?x ?y))"
        f" (<= terminal (true (step {end})))"
        " (<= (goal r 100) (true (step 0)))"
    )


@settings(max_examples=200, deadline=None)
@given(
    facts=st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), min_size=1, max_size=10),
    end=st.integers(1, 6),
)
def test_a_proved_bound_holds_on_every_play(facts: list[tuple[int, int]], end: int) -> None:
    """The law: if the rules prove N, the counter's values after t < N moves never hold
    the end value and every play has a counter value; after N moves it is the end."""
    bound = step_counter_bound(parse_game(_counter_game(facts, end)))
    if bound is None:
        return
    steps, counter = bound
    assert counter == "step"
    values = {0}
    for _ in range(steps):
        assert values and end not in values
        values = {b for a, b in set(facts) if a in values}
    assert values == {end}


@given(length=st.integers(1, 12))
def test_a_plain_chain_is_proved_to_its_length(length: int) -> None:
    facts = [(i, i + 1) for i in range(length)]
    assert step_counter_bound(parse_game(_counter_game(facts, length))) == (length, "step")


ALWAYS_LEGAL_CASES = [
    # a move legal in every state, from a fact or from a rule over role/1
    (
        "(role a) (role b) (legal a pass) (<= (legal ?r (wait 1)) (role ?r))"
        " (<= (legal b hit) (true (ready b)))",
        {"a": "pass", "b": "(wait 1)"},
    ),
    ("(role a) (<= (legal a go) (true (ready a)))", {}),  # only in some states
    # move/1 depends on the state
    ("(role a) (<= (legal ?r ?m) (role ?r) (move ?m)) (<= (move x) (true (ready)))", {}),
    # a legal rule whose body needs only facts (never true or does) gives a move in every
    # state: lightsOut's (switch ?x ?y) over coord ...
    (
        "(role player) (<= (legal player (switch ?x ?y)) (coord ?x) (coord ?y))"
        " (coord 1) (coord 2)",
        {"player": "(switch 1 1)"},
    ),
    # ... with distinct and the negation of facts taken once their terms are bound
    (
        "(role a) (role b) (<= (legal ?r (m ?x)) (role ?r) (n ?x) (distinct ?x ?r)"
        " (not (bad ?x))) (n a) (n b) (n c) (bad c)",
        {"a": "(m b)", "b": "(m a)"},
    ),
    ("(role a) (<= (legal a (m ?x)) (n ?x) (not (bad ?x))) (n c) (bad c)", {}),  # none fits
    ("(role a) (<= (legal a (m ?x)) (distinct ?x c))", {}),  # unsafe: nothing binds ?x
    ("(role a) (<= (legal a (m ?x)) (n ?x)) (n c) (<= (n d) (true (on)))", {}),  # n/1 has a rule
]


@pytest.mark.parametrize(("game", "expected"), ALWAYS_LEGAL_CASES)
def test_moves_legal_in_every_state(game: str, expected: dict[str, str]) -> None:
    """``always_legal`` names a move per role that is legal in every state, and no move
    where the legal rules depend on the state or cannot be proved from facts alone."""
    assert always_legal(parse_game(game)) == expected


@st.composite
def fact_bodies(draw: st.DrawFn) -> str:
    """A one-role game whose legal rule needs only facts: atoms of n/1 and m/2 over a
    few constants, distinct and negations, over the head's variables ?x and ?y."""
    consts = ["a", "b", "c"]
    facts = [f"(n {c})" for c in consts if draw(st.booleans())]
    facts += [f"(m {c} {d})" for c in consts for d in consts if draw(st.booleans())]
    literals = [
        st.sampled_from(["(n ?x)", "(n ?y)", "(m ?x ?y)", "(m ?y ?x)"]),
        st.sampled_from(["(distinct ?x ?y)", "(distinct ?x a)", "(not (n ?y))"]),
    ]
    body = draw(st.lists(st.one_of(*literals), min_size=1, max_size=4))
    body.insert(0, "(n ?x) (n ?y)")  # both variables bound before any test
    return (
        f"(role r) (<= (legal r (go ?x ?y)) {' '.join(body)}) {' '.join(facts)}"
        " (init (s 0)) (<= (next (s 0)) (true (s 0))) (<= terminal (true (s 1)))"
        " (goal r 0)"
    )


@settings(max_examples=25, deadline=None)
@given(game=fact_bodies())
def test_a_move_from_facts_is_exactly_what_the_reasoner_finds_legal(game: str) -> None:
    """The law: for a legal rule over facts alone, the role has a move (in every state)
    exactly when ``always_legal`` finds one, and the move it finds is legal."""
    from gdl2pl.bridge import MoveDefinitionError
    from gdl2pl.bridge import StateMachine

    require_prolog()
    found = always_legal(parse_game(game))
    with StateMachine.from_text(game) as sm:
        try:
            legal = [str(m) for m in sm.legal_moves(sm.initial_state, "r")]
        except MoveDefinitionError:  # the reasoner's word for "no legal move"
            legal = []
    assert ("r" in found) == bool(legal)
    if legal:
        assert found["r"] in legal


def test_matching_the_facts_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Matching bodies against the facts stops after ``MATCH_STEPS`` steps in all: a move
    found late is not found under a smaller bound (the role is then left out, unknown)."""
    from gdl2pl import rule_shapes

    facts = " ".join(f"(n {i})" for i in range(40))
    game = f"(role a) (<= (legal a (m ?x ?y)) (n ?x) (n ?y) (last ?y)) {facts} (last 39)"
    assert always_legal(parse_game(game)) == {"a": "(m 0 39)"}
    monkeypatch.setattr(rule_shapes, "MATCH_STEPS", 30)
    assert always_legal(parse_game(game)) == {}


@st.composite
def graphs(draw: st.DrawFn) -> object:
    """A random explored graph of two roles: states 0..n-1 expanded (terminal with
    goals 0 or 100, or with 1-2 moves a role), n and n+1 discovered only."""
    from gdl2pl.analysis.statespace import StateSpace

    n = draw(st.integers(1, 7))
    terminal, counts, succ = {}, {}, {}
    for s in range(n):
        if s and draw(st.booleans()):
            terminal[s] = [[draw(st.sampled_from(["0", "100"]))] for _ in range(2)]
        else:
            c = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
            counts[s] = c
            succ[s] = draw(
                st.lists(st.integers(0, n + 1), min_size=c[0] * c[1], max_size=c[0] * c[1])
            )
    return StateSpace(("a", "b"), n + 2, terminal, counts, succ)


@settings(max_examples=300, deadline=None)
@given(space=graphs(), role=st.integers(0, 1), unexplored_wins=st.booleans())
def test_stopping_at_the_initial_state_gives_the_same_answer(space, role, unexplored_wins):
    """The law: the attractor stopped once state 0 is won answers "is 0 won?" as the
    whole fixed point does."""
    from gdl2pl.analysis import wellformed as wf

    whole = wf.attractor(space, role, unexplored_wins)
    stopped = wf.attractor(space, role, unexplored_wins, stop_at=0)
    assert (0 in stopped) == (0 in whole)
    assert stopped <= whole


def test_states_with_equal_hashes_are_told_apart() -> None:
    """The search finds a state's number by its hash and compares the states: a hash
    entry that matches every state (the worst collision) changes no number."""
    require_prolog()
    from gdl2pl.analysis.statespace import Explorer
    from gdl2pl.bridge import StateMachine

    # buttons: 32 states (tic-tac-toe's 5,478 took 100 s, every lookup meeting all)
    with StateMachine.from_file(ROOT / "gdl2pl/examples/buttons.kif") as sm:
        with Explorer(sm) as plain:
            expected = plain.run(10**6, 600.0, progress=False)
        with Explorer(sm) as ex:
            ex.janus.query_once(
                "atom_string(A, S), asserta(gdl_search:search_seen(A, _, 0))",
                {"S": ex.session},
            )
            space = ex.run(10**6, 600.0, progress=False)
    assert space.exhaustive and space.discovered == expected.discovered == 32
    assert space.succ == expected.succ and space.terminal == expected.terminal


@pytest.mark.parametrize(
    "change",
    [
        # the counter's start under a condition: it may never be there
        ("(init (step 0))", "(<= (init (step 0)) (true (ready)))"),
        # a rule for any initial fluent may add a second counter value
        ("(init (step 0))", "(init (step 0)) (<= (init ?f) (start ?f)) (start (step 3))"),
        # a rule for any next fluent may keep an old counter value
        ("(role r)", "(role r) (<= (next ?f) (true ?f) (keep ?f)) (keep (step 0))"),
    ],
)
def test_no_bound_when_other_rules_may_touch_the_counter(change: tuple[str, str]) -> None:
    text = _counter_game([(0, 1), (1, 2)], 2)
    assert step_counter_bound(parse_game(text)) == (2, "step")
    assert step_counter_bound(parse_game(text.replace(*change))) is None
