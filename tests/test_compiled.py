"""The compiled engine is the reasoner's: on random matches of a sample of games, every
step's state, legal moves per role, terminality and goals are the Prolog engine's; its
playouts end in terminal states; a game whose grounding explodes is stopped by the
budget with a message saying what was exceeded; hostile symbol names are only data."""

from __future__ import annotations

import os
import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import EXAMPLES
from conftest import shared_dir
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from prolog_env import require_prolog

from gdl2pl.bridge import IllegalMoveError
from gdl2pl.bridge import StateMachine
from gdl2pl.bridge import TransitionDefinitionError
from gdl2pl.compiled import AutoMachine
from gdl2pl.compiled import CompiledMachine
from gdl2pl.compiled import CompileRefusedError
from gdl2pl.compiled import GroundingBudget
from gdl2pl.compiled import GroundingBudgetError
from gdl2pl.compiled import load_description
from gdl2pl.compiled import load_machine
from gdl2pl.compiled import machine_from_text
from gdl2pl.compiled.components import split_cycles
from gdl2pl.compiled.machine import c_network
from gdl2pl.contract import MachineState
from gdl2pl.ggp.scramble import Scrambler
from gdl2pl.ggp.scramble import kept
from gdl2pl.load import read_game
from gdl2pl.syntax import Description
from gdl2pl.visitor import Renamer

pytestmark = pytest.mark.compiled

_LOADED: dict[str, CompiledMachine] = {}

#: Games of ../shared/games/ggp-repository: turn-taking boards, puzzles, a simultaneous
#: game, recursive helpers (a line of four, a path of moves), numbers as terms.
GDL2_GAMES = Path(__file__).parent / "games" / "gdl2"

REPOSITORY_GAMES = [
    "ticTacToe",
    "connectFour",
    "connectFourSimultaneous",
    "breakthrough",
    "hanoi",
    "eightPuzzle",
    "pentago",
    "knightThrough",
    "nineBoardTicTacToe",
    "dotsAndBoxes",
]


@pytest.fixture(scope="module", autouse=True)
def _prolog() -> Iterator[None]:
    require_prolog()
    yield
    for m in _LOADED.values():
        m.close()


def repository(game: str) -> Path:
    """A game of the public repository (``../shared``, or $GDL2PL_SHARED for a checkout
    elsewhere, e.g. a git worktree)."""
    env = os.environ.get("GDL2PL_SHARED")
    base = Path(env) if env else shared_dir()
    path = base / "games" / "ggp-repository" / f"{game}.kif"
    assert path.is_file(), path
    return path


def same_match(c: CompiledMachine, p: StateMachine, seed: int, max_steps: int = 200) -> int:
    """Play one random match on both engines from the same moves, comparing every step;
    the number of steps played."""
    rng = random.Random(seed)
    s, t = c.initial_state, p.initial_state
    for steps in range(max_steps):
        assert s == t and hash(s) == hash(t) and s.fluents == t.fluents
        terminal = c.is_terminal(s)
        assert terminal == p.is_terminal(t)
        legal = c.all_legal_moves(s)
        assert legal == p.all_legal_moves(t)
        if terminal:
            assert c.state_info(s) == p.state_info(t)  # goal values per role, as read
            return steps
        joint = tuple(rng.choice(ms) for ms in legal)
        s, t = c.next_state(s, joint), p.next_state(t, joint)
    return max_steps


def check_engines(d: Description, name: str, seeds: range) -> CompiledMachine:
    c = load_description(d, "compiled", name=name)
    assert isinstance(c, CompiledMachine)
    for seed in seeds:
        same_match(c, c.prolog, seed)
    return c


@pytest.mark.parametrize("game", REPOSITORY_GAMES)
def test_compiled_plays_as_the_reasoner(game: str) -> None:
    d = read_game(repository(game))
    with check_engines(d, game, range(3)) as c:
        assert c.engine_choice.engine == "compiled"


#: The big games the grounder now compiles (chess_200 did not ground in 30 s, skirmish
#: went past a million ground rules, hex and sudokuGrade1 had over 600,000).
BIG_GAMES = ["chess_200", "checkers", "skirmish", "hex", "amazons_10x10", "sudokuGrade1",
             "gt_two_thirds_4p", "quad"]


@pytest.mark.slow
@pytest.mark.parametrize("game", BIG_GAMES)
def test_the_big_games_compile_and_play_as_the_reasoner(game: str) -> None:
    """Step for step along a random match: the same states, legal moves, terminality
    and goals on both engines. (The budget is generous: this is the law, not the speed,
    which the benchmarks measure.)"""
    c = load_machine(repository(game), "compiled", budget=GroundingBudget(seconds=600))
    with c:
        assert isinstance(c, CompiledMachine)
        assert same_match(c, c.prolog, seed=1, max_steps=200) > 0


def loaded(game: str) -> CompiledMachine:
    """One compiled machine per game for the whole module (closed at its end)."""
    if game not in _LOADED:
        m = load_machine(repository(game), "compiled")
        assert isinstance(m, CompiledMachine)
        _LOADED[game] = m
    return _LOADED[game]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    game=st.sampled_from(["ticTacToe", "connectFourSimultaneous", "hanoi", "pentago"]),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_any_random_match_is_played_alike(game: str, seed: int) -> None:
    """The law: for any random match, the compiled engine answers as the reasoner."""
    c = loaded(game)
    same_match(c, c.prolog, seed)


@pytest.mark.parametrize("example", ["ticTacToe.kif", "buttons.kif", "ticTacToe.gdl"])
def test_the_examples_compile_and_match(example: str) -> None:
    with check_engines(read_game(EXAMPLES / example), example, range(3)):
        pass


@pytest.mark.parametrize("seed", [1, 2])
def test_a_scrambled_game_matches(seed: int) -> None:
    d = Scrambler(random.Random(seed)).description(read_game(repository("connectFour")))
    with check_engines(d, "scrambled", range(2)):
        pass


@pytest.mark.parametrize(
    "game",
    [EXAMPLES / "montyHall.kif", EXAMPLES / "kuhnPoker.kif", GDL2_GAMES / "coin_calls.kif"],
    ids=lambda p: p.name,
)
def test_gdl_ii_percepts_come_from_the_network_as_the_reasoner_gives_them(game: Path) -> None:
    """GDL-II's ``sees`` is compiled like ``next``: along random matches, every role's
    percepts of every joint move are the reasoner's, and so are the consistent
    successors a player's belief is built from; also of a sees rule whose role nothing
    binds, read as every role (coin calls: ``sees-any-role``)."""
    with check_engines(read_game(game), game.name, range(4)) as c:
        p = c.prolog
        assert any(c.network.sees), "the game's sees rules are in the network"
        for seed in range(4):
            rng = random.Random(seed)
            s = c.initial_state
            while not c.is_terminal(s):
                for joint in c.legal_joint_moves(s):
                    for role in c.players:
                        assert c.percepts(s, joint, role) == p.percepts(s, joint, role)
                joint = c.random_joint_move(s, rng)
                for role in c.players:
                    i = c.role_index(role)
                    seen = c.percepts(s, joint, role)
                    assert c.consistent_successors(s, role, joint[i], seen) == (
                        p.consistent_successors(s, role, joint[i], seen)
                    )
                s = c.next_state(s, joint)
            with pytest.raises(IllegalMoveError):
                c.percepts(c.initial_state, ["(zzz)"] * len(c.roles), c.players[0])


def test_playouts_run_in_the_network_and_end_in_terminal_states() -> None:
    with load_machine(repository("connectFour"), "compiled") as c:
        c.seed(7)
        per_role, steps = c.playouts(c.initial_state, 50)
        assert len(per_role) == 2 and all(len(col) == 50 for col in per_role)
        assert steps == sum(d for _, d in per_role[0]) and steps > 0
        for (a, d), (b, _) in zip(*per_role, strict=True):
            assert 7 <= d <= 42 and {a, b} <= {0, 50, 100}
        for _ in range(20):
            final, depth = c.depth_charge(c.initial_state)
            assert c.prolog.is_terminal(final) and depth == len(
                [f for f in final.fluents if f.name == "cell" and str(f.args[2]) != "b"]
            )
            assert c.goals(final) == c.prolog.goals(final)
        scores = c.average_scores(c.initial_state, 20)
        assert all(0 <= x <= 100 for x in scores)


def test_expand_and_step_agree_with_the_reasoner() -> None:
    with load_machine(repository("ticTacToe"), "compiled") as c:
        p = c.prolog
        s = c.next_state(c.initial_state, c.legal_joint_moves(c.initial_state)[4])
        mine = c.expand(s)
        theirs = p.expand(MachineState.from_fluents(s.fluents))
        assert [(jm, st) for jm, st in mine] == [(jm, st) for jm, st in theirs]
        step = c.step(s, mine[0][0])
        assert step == p.step(s, mine[0][0])
        assert c.next_state_map(s) == p.next_state_map(s)


def test_a_step_hands_out_the_machines_own_move_terms() -> None:
    """``step``'s legal moves are the very terms ``all_legal_moves`` gives (the network
    answers with them), so a search passes them back without any lookup by value."""
    with load_machine(repository("ticTacToe"), "compiled") as c:
        rng = random.Random(3)
        s = c.initial_state
        legal = c.all_legal_moves(s)
        while True:
            step = c.step(s, [rng.choice(ms) for ms in legal])
            s = step.state
            again = c.all_legal_moves(s)
            assert [list(ms) for ms in step.legal] == again
            for mine, theirs in zip(step.legal, again, strict=True):
                assert all(a is b for a, b in zip(mine, theirs, strict=True))
            if step.terminal:
                break
            legal = step.legal


def test_the_errors_are_the_reasoners() -> None:
    with load_machine(repository("ticTacToe"), "compiled") as c:
        p = c.prolog
        s = c.initial_state
        for joint in (["noop", "noop"], ["(mark 1 1)"], ["(mark 9 9)", "noop"]):
            with pytest.raises(TransitionDefinitionError) as mine:
                c.next_state(s, joint)
            with pytest.raises(TransitionDefinitionError) as theirs:
                p.next_state(s, joint)
            assert type(mine.value) is type(theirs.value)
            assert str(mine.value) == str(theirs.value)
        with pytest.raises(IllegalMoveError):
            c.next_state(s, ["noop", "noop"])


def test_a_state_made_by_hand_is_answered_too() -> None:
    with load_machine(repository("ticTacToe"), "compiled") as c:
        odd = MachineState.from_fluents(["(cell 1 1 b)", "(control oplayer)", "(weird 1)"])
        assert c.legal_moves(odd, "oplayer") == c.prolog.legal_moves(odd, "oplayer")
        plain = MachineState.from_fluents([str(f) for f in c.initial_state])
        assert c.all_legal_moves(plain) == c.prolog.all_legal_moves(plain)


#: A positive cycle of a few nodes written out of order: one cyclic group in the network.
LOOP = """(role p) (init (at n0)) (init (t 0))
(edge n3 n0) (edge n1 n2) (edge n0 n1) (edge n2 n3) (edge n4 n4)
(<= (reach ?x) (true (at ?x)))
(<= (reach ?y) (reach ?x) (edge ?x ?y))
(<= (legal p (go ?y)) (reach ?y) (not (true (at ?y))))
(<= (next (at ?y)) (does p (go ?y)))
(succ 0 1) (succ 1 2) (succ 2 3)
(<= (next (t ?y)) (true (t ?x)) (succ ?x ?y))
(<= terminal (true (t 3)))
(<= (goal p 100) (true (at n2))) (<= (goal p 0) (not (true (at n2))))"""


@pytest.mark.parametrize("path", ["events", "watched"])
@pytest.mark.parametrize("game", ["connectFour", "breakthrough", "pentago", "loop"])
def test_the_tuned_evaluator_answers_as_the_untuned_one(game: str, path: str) -> None:
    """The C evaluator, tuned (watched rules, by events or not, cyclic groups by a
    worklist), answers every state of random matches as the same network untuned
    (every rule of every atom looked at, every time) does."""
    if game == "loop":
        c = machine_from_text(LOOP, "compiled", name="loop")
    else:
        c = load_machine(repository(game), "compiled")
    with c:
        assert isinstance(c, CompiledMachine)
        assert c._net._evaluation() == "events"  # these games' programs allow it
        assert c._net._evaluation(path) == path
        ref = c_network(c.network)
        assert ref._evaluation() == "every rule"
        for seed in range(3):
            rng = random.Random(seed)
            s = c.initial_state
            while not c.is_terminal(s):
                bits = c.fluents_of([s])[0]
                assert bits is not None
                assert ref.legal(bits) == c._net.legal(bits)
                assert ref.terminal(bits) == c._net.terminal(bits)
                assert ref.goals(bits) == c._net.goals(bits)
                joint = [rng.choice(ms) for ms in ref.legal(bits)]
                assert ref.next(bits, joint) == c._net.next(bits, joint)
                s = c.random_next_state(s, rng)


HOSTILE = ["x'y", 'a"b', "c\\d", "e*/f", "/*g", "h\ni", "j%k", "l\u2028m", "n\x00o"]


def test_hostile_names_compile_and_play() -> None:
    d = read_game(EXAMPLES / "ticTacToe.kif")
    table: dict[str, str] = {}

    def hostile(name: str) -> str:
        if kept(name):  # keywords and numbers keep their meaning
            return name
        return table.setdefault(name, HOSTILE[len(table) % len(HOSTILE)] + str(len(table)))

    hostile_d = Renamer(hostile).description(d)
    with check_engines(hostile_d, "hostile", range(2)) as c:
        assert [r.name for r in c.roles] == [hostile("xplayer"), hostile("oplayer")]
        assert any("\x00" in f.name for f in c.initial_state.fluents)
        assert any(m.name == hostile("mark") for m in c.legal_moves(c.initial_state, c.roles[0]))


def test_auto_answers_at_once_then_switches_to_the_network_and_says_why() -> None:
    with load_machine(EXAMPLES / "ticTacToe.kif") as m:
        assert isinstance(m, AutoMachine)
        state = m.initial_state  # answered while the network is being built
        assert m.legal_moves(state, "xplayer")
        assert m.wait_for_engine(60).engine == "compiled"
        assert "ground rules" in m.engine_choice.reason
        assert isinstance(m.engine_now, CompiledMachine)
        # a state made before the switch goes on after it
        assert m.next_state(state, ["(mark 1 1)", "noop"]) != state
    with load_machine(EXAMPLES / "ticTacToe.kif", "prolog") as m:
        assert isinstance(m, StateMachine)


GROWING = """
(role counter)
(init (count zero))
(<= (legal counter tick) (true (count ?x)))
(<= (next (count (succ ?x))) (true (count ?x)))
(<= terminal (true (count done)))
(<= (goal counter 100) (true (count done)))
"""


def test_a_growing_term_game_stops_at_the_budget_and_auto_falls_back() -> None:
    """The refusal says what happened: under "compiled" no engine plays the game (it
    said "the Prolog engine plays it"); under "auto" the reasoner does, and says so."""
    budget = GroundingBudget(seconds=5.0)
    with pytest.raises(GroundingBudgetError) as refused:
        machine_from_text(GROWING, "compiled", name="growing", budget=budget)
    said = str(refused.value)
    assert re.match(r"growing: grounding (needs|took) .*; engine='compiled' has no other "
                    r"engine to fall back on \(engine='auto' plays it on the reasoner\)$", said)
    assert "the Prolog engine plays it" not in said
    with machine_from_text(GROWING, "auto", name="growing", budget=budget) as m:
        assert isinstance(m, AutoMachine)
        assert m.wait_for_engine(60).engine == "prolog"
        assert str(m.engine_choice).startswith("prolog engine: growing: grounding")
        assert m.legal_moves(m.initial_state, "counter")


@pytest.mark.parametrize(
    ("game", "budget", "said"),
    [
        (
            "breakthrough",
            GroundingBudget(rules=5_000),
            r"breakthrough\.kif: grounding needs more than 5,000 ground rules",
        ),
        (
            "amazons_10x10",
            GroundingBudget(seconds=0.5),
            r"amazons_10x10.kif: grounding (took more than its budget of 0.5 s|needs)",
        ),
    ],
    ids=["too-many-ground-rules", "short-time-budget"],
)
def test_a_big_game_stops_at_the_grounding_budget(
    game: str, budget: GroundingBudget, said: str
) -> None:
    """Grounding past its rule or time budget refuses the game, saying which and why,
    and a second attempt refuses it again."""
    with pytest.raises(GroundingBudgetError, match=said):
        load_machine(repository(game), "compiled", budget=budget)
    with pytest.raises(CompileRefusedError):
        load_machine(repository(game), "compiled", budget=budget)


#: goal negates its own relation but never its own atom (as queens, futoshiki, hexPie
#: and nineBoardTicTacToePie of the repository do): stratified on ground atoms only.
GROUND_STRATA = """(role p) (init (n 0)) (init (lamp off))
(succ 0 1) (succ 1 2) (succ 2 3)
(<= (next (n ?y)) (true (n ?x)) (succ ?x ?y))
(<= (legal p on) (true (lamp off))) (<= (legal p off) (true (lamp on))) (legal p wait)
(<= (next (lamp on)) (does p on)) (<= (next (lamp off)) (does p off))
(<= (next (lamp ?l)) (true (lamp ?l)) (does p wait))
(<= terminal (true (n 3)))
(<= (goal p 100) (true (lamp on)))
(<= (goal p 50) (not (goal p 100)) (true (n 3)))
(<= (goal p 0) (not (goal p 100)) (not (goal p 50)))"""


def test_a_game_stratified_only_on_ground_atoms_compiles_and_plays_as_the_reasoner() -> None:
    # Found by benchmarks/verify_compiled.py: 12 repository games ground, then the
    # evaluator refused their network ("a rule negates an atom of its own cycle"): a
    # recursive stratum of relations was one cyclic group, whatever its atoms' cycles.
    with machine_from_text(GROUND_STRATA, "compiled", name="ground_strata") as c:
        assert isinstance(c, CompiledMachine)
        assert c.engine_choice.engine == "compiled"
        for seed in range(6):
            same_match(c, c.prolog, seed)


def test_a_cyclic_group_is_split_into_its_atoms_cycles_dependencies_first() -> None:
    # atoms 0, 1: inputs; 2 <- 3, 3 <- 2 (a cycle); 4 <- not 2 (outside it); 5 <- not 5
    rules = {2: [[6]], 3: [[4]], 4: [[5]], 5: [[11]]}  # literal 2*atom (+1 if negated)
    rule_start, lit_start, lits = [0, 0, 0], [0], []
    for atom in range(2, 6):
        for body in rules[atom]:
            lits += body
            lit_start.append(len(lits))
        rule_start.append(len(lit_start) - 1)
    assert split_cycles([-4, 4, 2, 3, 5], rule_start, lit_start, lits) == [-2, 2, 3, 4, -1, 5]
    assert split_cycles([1, -1, 2], rule_start, lit_start, lits) == [1, 2]

#: ggp-base's test_case_3e: a role variable bound by no positive literal (unsafe; gdl2pl
#: check refuses it, ``--accept-errors`` runs it on the reasoner, which binds ?p with
#: the role it asks about).
UNSAFE = """(role xplayer)
(cell 1 1)
(<= terminal (cell 1 1))
(<= (legal ?p ?p) (cell 1 1))
(<= (goal ?p 100) (cell 1 1))
"""

#: the games of ../shared/games whose head variable no positive literal binds: a
#: literal's variable bound by a user of the relation (the reasoner's question), or a
#: role by the state machine, which asks legal and goal role by role
UNBOUND_HEADS = [
    "conformance/gdl-validation/varInTopLevelSentence.kif",
    "conformance/ggp-base/test_case_3e.kif",
    "conformance/ggp-base/test_case_3f.kif",
    "ggp-repository/ticTacToeClassic__removed.kif",
]


@pytest.mark.parametrize("game", UNBOUND_HEADS)
def test_a_head_variable_no_literal_binds_is_ground_for_what_its_users_ask(game: str) -> None:
    """Grounded by demand (compiled/demand.py): the network answers as the reasoner."""
    d = read_game(shared_dir() / "games" / game)
    with check_engines(d, game, range(3)) as c:
        assert c.engine_choice.engine == "compiled"
    with machine_from_text(UNSAFE, "compiled", name="unsafe") as c:
        assert c.all_legal_moves(c.initial_state) == c.prolog.all_legal_moves(
            c.prolog.initial_state
        )
        assert c.goal_values(c.initial_state) == c.prolog.goal_values(c.prolog.initial_state)


def test_a_relation_negated_by_a_recursion_it_would_feed_is_ground_whole() -> None:
    """urmAdd's machine negates a static relation inside a static recursion whose own
    answers the relation's demand would read: demanded, the model had a cycle through
    ``not`` (undetermined atoms, and the game was refused or ran past its budget). It is
    ground whole instead, and the network answers as the reasoner."""
    game = "urmAdd"
    with check_engines(read_game(repository(game)), game, range(2)) as c:
        assert c.engine_choice.engine == "compiled"


#: a variable only under ``not``: no user of terminal can bind it
UNBINDABLE = """(role r) (init (on a))
(<= (legal r (go ?x)) (true (on ?x)))
(<= (next (on ?x)) (does r (go ?x)))
(<= terminal (not (on ?y)))
(<= (goal r 100) terminal)
"""


def test_an_unsafe_rule_no_demand_binds_is_refused_by_place_and_auto_falls_back() -> None:
    # Found by benchmarks/verify_compiled.py: the grounder failed with Prolog's
    # instantiation error instead of saying which rule it cannot ground.
    with pytest.raises(
        CompileRefusedError,
        match=r"unbindable: cannot be compiled: an unsafe rule at unbindable:4:\d+: the "
        r"variable \?y in a negation or distinct occurs in no positive literal of the body, "
        "and no use of its relation binds it",
    ):
        machine_from_text(UNBINDABLE, "compiled", name="unbindable")
    with machine_from_text(UNBINDABLE, "auto", name="unbindable") as m:
        assert m.engine_choice.engine == "prolog"
        assert "an unsafe rule" in m.engine_choice.reason


def test_the_command_line_takes_an_engine(capsys, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from gdl2pl.cli import main

    game = str(EXAMPLES / "ticTacToe.kif")
    assert main(["simulate", game, "-n", "200", "--seed", "3", "--engine", "compiled"]) == 0
    out, err = capsys.readouterr()
    assert "200 playouts" in out and "compiled engine: grounded in" in err
    growing = tmp_path / "growing.kif"
    growing.write_text(GROWING, encoding="utf-8")
    assert main(["simulate", str(growing), "-n", "5", "--max-depth", "20", "--engine", "auto"]) == 0
    out, err = capsys.readouterr()
    assert "growing.kif: prolog engine: growing.kif: grounding" in err and "5 playouts" in out


CASES = """(role p) (init (s A)) (init (s a)) (<= (legal p (go ?x)) (true (s ?x)))
(<= (next (t ?x)) (does p (go ?x))) (<= (next (s a)) (true (s A)))
(<= terminal (true (t A))) (<= terminal (true (t a)))
(<= (goal p 100) (true (t A))) (<= (goal p 0) (true (t a)))"""


@pytest.mark.parametrize("case_sensitive", [False, True])
def test_both_readings_of_case_match(case_sensitive: bool) -> None:
    with machine_from_text(CASES, "compiled", name="case", case_sensitive=case_sensitive) as c:
        assert isinstance(c, CompiledMachine)
        assert len(c.initial_state) == (2 if case_sensitive else 1)
        for seed in range(4):
            same_match(c, c.prolog, seed)
