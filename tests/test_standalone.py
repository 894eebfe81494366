"""``gdl2pl translate --standalone``: a module that loads in plain SWI-Prolog, with no
gdl2pl runtime, and plays the game the state machine plays.

Each test runs a bare ``swipl`` subprocess with warnings and errors turned into its exit
status (``--on-warning=status --on-error=status``), so a module that loads with a warning
fails, and compares what the module answers along a random match (states, legal moves,
terminal, goals) with ``gdl2pl.bridge.StateMachine``.
"""

from __future__ import annotations

import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import EXAMPLES
from conftest import REPO
from conftest import shared_dir
from conftest import shared_files
from hypothesis import given
from hypothesis import strategies as st
from prolog_env import require_prolog
from prolog_env import unavailable

from gdl2pl.bridge import StateMachine
from gdl2pl.cli import main
from gdl2pl.kif import parse_kif
from gdl2pl.pipeline import compile_game
from gdl2pl.standalone import prolog_term
from gdl2pl.standalone import reserved
from gdl2pl.standalone import standalone
from gdl2pl.standalone import standalone_names
from gdl2pl.syntax import Const
from gdl2pl.syntax import Term

#: Prints what the module answers along a match as tagged lines, GDL terms in KIF (the
#: goals of GDL-II's random role, which need not have any, left out).
DRIVER = r"""
kif(T) :- compound(T), !, compound_name_arguments(T, F, As), format("(~w", [F]),
    forall(member(A, As), (write(' '), kif(A))), write(')').
kif(T) :- write(T).

report(N) :-
    forall(true(F), (format("~d fluent ", [N]), kif(F), nl)),
    (   terminal
    ->  format("~d terminal~n", [N]),
        forall((role(R), R \== random, goal(R, V)), format("~d goal ~w ~w~n", [N, R, V]))
    ;   forall((role(R), legal(R, M)), (format("~d legal ~w ", [N, R]), kif(M), nl))
    ).

play_match(Moves) :- initial_state(S0), set_state(S0), play_match(Moves, 0).
play_match(Moves, N) :-
    report(N),
    (   Moves = [J|Js]
    ->  step(J), N1 is N + 1, play_match(Js, N1)
    ;   true
    ).

replay(Moves) :-
    state_after(Moves, State),
    forall(member(F, State), (write('final fluent '), kif(F), nl)).
"""


def swipl() -> str:
    require_prolog()
    path = shutil.which("swipl")
    if path is None:
        unavailable("no swipl on PATH")
    return path


def write_module(game: Path, out: Path, module: str = "game") -> Path:
    compiled = compile_game(game, translate=False)
    out.write_text(standalone(compiled.normalized, module, game.name), encoding="utf-8")
    return out


def run_swipl(files: list[Path], goal: str, timeout: float = 120) -> str:
    """Load ``files`` in a bare swipl, run ``goal``; its output, after checking that the
    run printed no warning or error and succeeded."""
    done = subprocess.run(
        [swipl(), "--on-warning=status", "--on-error=status", "-g", goal, "-t", "halt"]
        + [str(f) for f in files],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    # At halt, SWI-Prolog may report that its garbage-collector thread was busy (seen
    # on a loaded machine): a note about the process, not about the module.
    stderr = "".join(
        line
        for line in done.stderr.splitlines(keepends=True)
        if not line.startswith("% The following threads wouldn't die: [gc]")
    )
    assert done.returncode == 0 and stderr == "", done.stderr
    return done.stdout


def machine_match(game: Path, seed: int, max_steps: int = 200) -> tuple[list[list[Term]], set[str]]:
    """A random match by the state machine: its joint moves and the lines the driver
    prints for it."""
    rng = random.Random(seed)
    sm = StateMachine.from_file(game)
    try:
        state = sm.initial_state
        moves: list[list[Term]] = []
        lines: set[str] = set()
        for n in range(max_steps + 1):
            lines |= {f"{n} fluent {f}" for f in state.fluents}
            if sm.is_terminal(state):
                lines.add(f"{n} terminal")
                roles = sm.roles
                goals = zip(roles, sm.goals(state), strict=True)
                # GDL-II's random role need have no goal (the machine then says 0).
                lines |= {f"{n} goal {r} {g}" for r, g in goals if not sm.is_random(r)}
                break
            for role in sm.roles:
                lines |= {f"{n} legal {role} {m}" for m in sm.legal_moves(state, role)}
            if n == max_steps:
                break
            joint = [rng.choice(sm.legal_moves(state, role)) for role in sm.roles]
            moves.append(joint)
            state = sm.next_state(state, joint)
        final = {f"final fluent {f}" for f in state.fluents}
    finally:
        sm.close()
    return moves, lines | final


def prolog_moves(moves: list[list[Term]], roles: list[Term]) -> str:
    joints = [
        "["
        + ", ".join(
            f"does({prolog_term(r)}, {prolog_term(m)})" for r, m in zip(roles, j, strict=True)
        )
        + "]"
        for j in moves
    ]
    return "[" + ",\n ".join(joints) + "]"


GAMES = [
    str(EXAMPLES / "ticTacToe.kif"),
    str(EXAMPLES / "buttons.kif"),
    str(EXAMPLES / "buttons.gdl"),
    str(EXAMPLES / "montyHall.kif"),
    str(EXAMPLES / "kuhnPoker.kif"),
    str(REPO / "tests/games/zero_arity/both.kif"),  # w and (w): two relations
    str(REPO / "tests/games/zero_arity/parenthesized.kif"),
    "games/ggp-repository/nim1.kif",
    "games/ggp-repository/hanoi.kif",
    "games/ggp-repository/connect4.kif",
    "games/ggp-repository/eightPuzzle.kif",
    "games/ggp-repository/peg.kif",
    "games/ggp-repository/knightThrough.kif",
    "games/ggp-repository/tictactoe_3player.kif",
    "games/ggp-repository/sum15.kif",
]


def game_path(name: str) -> Path:
    return Path(name) if Path(name).is_absolute() else shared_dir() / name


#: A sample of the corpus (every 10th game), for the same comparison up to 60 steps.
SAMPLE = shared_files("games/ggp-repository", "*.kif")[5::10]


@pytest.mark.parametrize("name", GAMES + SAMPLE, ids=lambda n: Path(n).name)
def test_a_random_match_answers_as_the_state_machine(name: str, tmp_path: Path) -> None:
    game = game_path(name)
    seed = 25
    moves, expected = machine_match(game, seed, max_steps=200 if name in GAMES else 60)
    sm = StateMachine.from_file(game)
    roles = list(sm.roles)
    sm.close()
    module = write_module(game, tmp_path / "game.pl")
    driver = tmp_path / "driver.pl"
    driver.write_text(DRIVER + f"\nmatch_moves({prolog_moves(moves, roles)}).\n", encoding="utf-8")
    out = run_swipl([module, driver], "match_moves(Ms), play_match(Ms), replay(Ms)", timeout=300)
    got = set(out.splitlines())
    assert got == expected
    assert any(line.endswith(" terminal") for line in got) == any(
        line.endswith(" terminal") for line in expected
    )


def test_play_random_plays_a_match_to_the_goals(tmp_path: Path) -> None:
    module = write_module(EXAMPLES / "ticTacToe.kif", tmp_path / "ttt.pl")
    out = run_swipl([module], "set_random(seed(1)), play_random")
    lines = out.splitlines()
    assert lines[0].startswith("state: [control(xplayer),cell(1,1,b),")
    assert sorted(
        line.split("(")[1].split(",")[0] for line in lines if line.startswith("goal(")
    ) == [
        "oplayer",
        "xplayer",
    ]
    assert sum(line.startswith("moves: ") for line in lines) >= 5


def test_step_refuses_an_illegal_move(tmp_path: Path) -> None:
    module = write_module(EXAMPLES / "ticTacToe.kif", tmp_path / "ttt.pl")

    def refused(joint: str, after: str = "true") -> str:
        """What step(joint) from the initial state prints as refused, then runs ``after``."""
        goal = (
            f"initial_state(S), set_state(S), catch(step({joint}), "
            f"error(domain_error(legal_move, D), _), (print(D), nl)), {after}"
        )
        return run_swipl([module], goal)

    assert refused("[does(xplayer, noop), does(oplayer, noop)]") == "does(xplayer,noop)\n"
    # the state is left as it was
    after = "current_state(C), (C == S -> print(unchanged) ; print(C))"
    assert refused("[does(xplayer, mark(1, 1)), does(oplayer, mark(2, 2))]", after) == (
        "does(oplayer,mark(2,2))\nunchanged"
    )


def test_step_refuses_a_joint_move_that_is_not_one_move_per_role(tmp_path: Path) -> None:
    """The issue's joint move: two moves of xplayer and none of oplayer was played and
    left a state holding both (cell 1 1 b) and (cell 1 1 x). step/1 now refuses it, says
    why in words, and leaves the state as it was."""
    module = write_module(EXAMPLES / "ticTacToe.kif", tmp_path / "ttt.pl")

    def refused(joint: str) -> tuple[str, str]:
        goal = (
            "initial_state(S), set_state(S), catch(step("
            + joint
            + "), error(domain_error(joint_move, _), context(step/1, Why)), "
            "(write(Why), nl)), current_state(C), (C == S -> write(unchanged) ; write(C))"
        )
        return tuple(run_swipl([module], goal).splitlines())  # type: ignore[return-value]

    assert refused("[does(xplayer, mark(1,1)), does(xplayer, mark(2,2))]") == (
        "2 moves for the role xplayer, [mark(1,1),mark(2,2)]: each role makes one move a turn",
        "unchanged",
    )
    assert refused("[does(xplayer, mark(1,1))]") == (
        "no move for the role oplayer: a joint move has one does(Role, Move) for every role",
        "unchanged",
    )
    assert refused("[does(xplayer, mark(1,1)), does(oplayer, noop), does(bob, x)]") == (
        "does(bob,x) is not does(Role, Move) for a role of the game",
        "unchanged",
    )
    assert refused("[does(xplayer, mark(1,1)), noop]")[0] == (
        "noop is not does(Role, Move) for a role of the game"
    )
    assert refused("[does(xplayer, mark(1,1)), does(oplayer, _)]")[0].endswith(
        "is not ground: a joint move is made of ground does(Role, Move)"
    )
    # the uncaught error, as a student at the toplevel reads it
    done = subprocess.run(
        [swipl(), "-g", "initial_state(S), set_state(S), step([does(xplayer, mark(1,1)), "
         "does(xplayer, mark(2,2))])", "-t", "halt", str(module)],
        capture_output=True, text=True, timeout=120,
    )
    assert "Domain error: `joint_move' expected" in done.stderr
    assert "2 moves for the role xplayer" in done.stderr
    # one legal move per role is played as before
    goal = "state_after([[does(xplayer, mark(1,1)), does(oplayer, noop)]], S), print(S)"
    assert "cell(1,1,x)" in run_swipl([module], goal) and "cell(1,1,b)" not in run_swipl(
        [module], goal
    )


def test_the_student_can_set_true_facts_by_hand(tmp_path: Path) -> None:
    """The tables follow true/1: asserting and retracting fluents changes the answers."""
    module = write_module(EXAMPLES / "buttons.kif", tmp_path / "buttons.pl")
    goal = (
        "set_state([p, q, r, step(6)]), goal(robot, A), print(A), nl, "
        "retract(true(q)), goal(robot, B), print(B), nl, "
        "assertz(does(robot, b)), findall(F, next(F), Fs), print(Fs), nl"
    )
    assert run_swipl([module], goal).splitlines() == ["100", "0", "[q,r]"]


def test_reserved_and_helper_names_are_renamed_and_listed(tmp_path: Path) -> None:
    game = tmp_path / "names.kif"
    game.write_text(
        "(role robot) (succ 1 2) (member a b) (step 1) (length x y) (r_succ 0 1)\n"
        "(<= (legal robot go) (succ ?x 2) (member ?y b) (step ?z) (length ?u ?v) (r_succ 0 1))\n"
        "(init 1) (<= (next 01) (true 1)) (<= (next 1) (true 01))\n"
        "(<= (goal robot 100) (true 1)) (<= (goal robot 0) (not (true 1)))\n"
        "(<= terminal (true 01))\n",
        encoding="utf-8",
    )
    module = write_module(game, tmp_path / "names.pl")
    text = module.read_text(encoding="utf-8")
    for line in (
        "%     succ/2 is r_r_succ/2",
        "%     member/2 is r_member/2",
        "%     step/1 is r_step/1",
        "%     length/2 is r_length/2",
    ):
        assert line in text
    assert "next('01') :-" in text and "init(1)." in text
    goal = (
        "legal_moves(robot, Ms), print(Ms), nl, "
        "state_after([[does(robot, go)]], S1), print(S1), nl, goal(robot, G), print(G), nl, "
        "(terminal -> writeln(terminal) ; writeln(running))"
    )
    assert run_swipl([module], goal).splitlines() == ["[go]", "['01']", "0", "terminal"]


def test_no_game_runs_a_goal_when_its_module_loads(tmp_path: Path) -> None:
    """Relations named as Prolog syntax (a directive, a clause, a grammar rule, a clause
    of another module, the end of the file) are renamed: the module loads them as facts."""
    game = tmp_path / "hostile.kif"
    game.write_text(
        "(role robot) (:- (halt 3)) (--> a (halt 5)) (: user (halt 6)) end_of_file\n"
        "(<= (legal robot go) (:- (halt 3)) end_of_file (: user (halt 6)))\n"
        "(init s) (<= (next t) (true s)) (<= (goal robot 100) (true t)) (<= terminal (true t))\n",
        encoding="utf-8",
    )
    module = write_module(game, tmp_path / "hostile.pl")
    goal = "legal_moves(robot, Ms), print(Ms), nl, state_after([[does(robot, go)]], S), print(S)"
    assert run_swipl([module], goal) == "[go]\n[t]"
    text = module.read_text(encoding="utf-8")
    assert "'r_:-'(halt(3))." in text and "r_end_of_file." in text


def test_the_reserved_list_holds_every_system_predicate_of_this_swipl() -> None:
    """A game relation named as a system predicate of the SWI-Prolog in use is renamed:
    ``gdl2pl/swi_reserved.txt`` (``scripts/swi_reserved.pl``) must be up to date."""
    goal = (
        "forall((predicate_property(system:H, defined), functor(H, N, A), "
        "\\+ sub_atom(N, 0, _, _, $)), format('~a/~d~n', [N, A]))"
    )
    lines = run_swipl([], goal).splitlines()
    system = {(n, int(a)) for n, a in (line.rsplit("/", 1) for line in lines)}
    assert len(system) > 400
    assert system - reserved() == set()


def test_names_are_deterministic_and_injective() -> None:
    keys = {("succ", 2), ("r_succ", 2), ("step", 1), ("line", 1), ("foo()", 0), ("foo_", 0)}
    names = standalone_names(keys)
    assert names == standalone_names(set(reversed(sorted(keys))))
    assert len({(n, k[1]) for k, n in names.items()}) == len(keys)
    assert names[("line", 1)] == "line"


@given(st.lists(st.text(alphabet="0123456789aX-_' ", min_size=1, max_size=4), unique=True))
def test_distinct_symbols_are_distinct_prolog_terms(symbols: list[str]) -> None:
    """The law that keeps ``distinct`` and unification right with integers: the text of a
    symbol is injective."""
    texts = [prolog_term(Const(name)) for name in symbols]
    assert len(set(texts)) == len(texts)


def test_prolog_term_keeps_symbols_apart() -> None:
    terms = ["1", "01", "0", "-1", "100", "X", "not-filled", "(cell 1 01)"]
    texts = [prolog_term(parse_kif(f"(f {t})").clauses[0].head.args[0]) for t in terms]  # type: ignore[union-attr]
    assert texts == ["1", "'01'", "0", "'-1'", "100", "'X'", "'not-filled'", "cell(1, '01')"]


def test_cli_writes_the_standalone_module(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "ttt.pl"
    game = str(EXAMPLES / "ticTacToe.kif")
    assert main(["translate", "--standalone", game, "-o", str(out)]) == 0
    assert capsys.readouterr().out == ""
    assert out.read_text(encoding="utf-8") == write_module(
        EXAMPLES / "ticTacToe.kif", tmp_path / "again.pl"
    ).read_text(encoding="utf-8")
    text = out.read_text(encoding="utf-8")
    assert ":- dynamic([true/1, does/2], [incremental(true)])." in text
    assert "% ticTacToe.kif:" in text and "\\+ \\+" not in text


def test_comments_quote_an_infix_game_in_infix(tmp_path: Path) -> None:
    """A student who wrote infix reads each rule above its clause as written (whole),
    and in KIF only on request (--answer-syntax kif)."""
    game = str(EXAMPLES / "ticTacToe.gdl")
    out = tmp_path / "ttt.pl"
    assert main(["translate", "--standalone", game, "-o", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "the rule in infix." in text
    assert (
        "% ticTacToe.gdl:38  row(M,F) :- true(cell(M,1,F)) & true(cell(M,2,F)) & "
        "true(cell(M,3,F))\nrow(M, F) :-\n" in text
    )
    assert "(<=" not in text and "?" not in "".join(
        line for line in text.splitlines() if line.startswith("% ticTacToe.gdl:")
    )
    assert main(["translate", "--standalone", game, "-o", str(out), "--answer-syntax", "kif"]) == 0
    text = out.read_text(encoding="utf-8")
    assert "the rule in KIF." in text
    assert "% ticTacToe.gdl:38  (<= (row ?M ?F) (true (cell ?M 1 ?F))" in text


def test_comments_quote_long_rules_whole(tmp_path: Path) -> None:
    """Chess's longest rules were cut at 110 characters with '...': each comment now
    holds its whole rule, on the one line above its clause."""
    game = shared_dir() / "games" / "ggp-repository" / "chess.kif"
    compiled = compile_game(game, translate=False)
    text = standalone(compiled.normalized, "chess", game.name)
    comments = [line for line in text.splitlines() if line.startswith("% chess.kif:")]
    assert comments and not any(line.endswith("...") for line in comments)
    longest = max(comments, key=len)
    assert len(longest) > 200
    rules = {str(c.pos.line): c for c in compiled.normalized.clauses if c.pos}
    from gdl2pl.written import clause_text

    for line in comments:
        where, _, quoted = line.partition("  ")
        number = where.split(":")[1].split()[0]
        assert quoted == clause_text(rules[number], "kif")


def test_cli_says_when_it_cannot_write(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "missing" / "ttt.pl"
    game = str(EXAMPLES / "ticTacToe.kif")
    assert main(["translate", "--standalone", game, "-o", str(out)]) == 2
    assert capsys.readouterr().err.startswith(f"{out}: error: cannot write: ")


CORPUS = shared_files("games/ggp-repository", "*.kif")[::10]


def test_corpus_modules_load_cleanly(tmp_path: Path) -> None:
    """A sample of the corpus (every 10th game): each module loads with no warning, and
    its initial state, legal moves and terminal answer."""
    shared_dir()
    files = []
    for i, name in enumerate(CORPUS):
        game = shared_dir() / name
        try:
            compiled = compile_game(game, translate=False)
            text = standalone(compiled.normalized, f"game{i}", game.name)
        except Exception:  # not translatable: the normal translation refuses it too
            with pytest.raises(Exception):  # noqa: B017
                compile_game(game)
            continue
        path = tmp_path / f"game{i}.pl"
        path.write_text(text, encoding="utf-8")
        files.append(path)
    assert len(files) >= 30
    loads = ", ".join(f"use_module('{f}', [])" for f in files)
    probes = ", ".join(
        f"game{f.stem[4:]}:(initial_state(S{k}), set_state(S{k}), "
        f"forall(legal_moves(_, _), true), (terminal -> true ; true))"
        for k, f in enumerate(files)
    )
    run_swipl([], f"{loads}, {probes}", timeout=300)


def test_the_tutorial_quotes_the_module_as_generated(tmp_path: Path) -> None:
    """The Prolog excerpts of the tutorial's standalone lesson stand in the module."""
    tutorial = (EXAMPLES.parents[1] / "docs" / "tutorial.md").read_text(encoding="utf-8")
    lesson = tutorial.split("### The game in plain SWI-Prolog", 1)[1].split("\n## ", 1)[0]
    excerpts = re.findall(r"```prolog\n(.*?)```", lesson, flags=re.DOTALL)
    assert len(excerpts) >= 2
    module = write_module(EXAMPLES / "buttons.kif", tmp_path / "buttons.pl")
    text = module.read_text(encoding="utf-8")
    for excerpt in excerpts:
        assert excerpt in text
