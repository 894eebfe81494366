"""Hostile input to the library and the command line (the security issue's reproductions,
kept as tests): no outside text runs as Prolog, no wrong answer after an error, no crash,
bounded work, clear errors. The network side is in test_hostile_network.py."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import EXAMPLES
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from prolog_env import require_prolog

from gdl2pl import normalize_case
from gdl2pl import parse_game
from gdl2pl import translate
from gdl2pl.check import has_errors
from gdl2pl.cli import main
from gdl2pl.errors import GdlSyntaxError

TTT = EXAMPLES / "ticTacToe.kif"
ENDLESS = Path(__file__).parent / "games" / "endless.kif"


@pytest.fixture(autouse=True)
def _prolog() -> None:
    require_prolog()


def bridge():  # type: ignore[no-untyped-def]
    import gdl2pl.bridge as b

    return b


def load_text(module: str, text: str) -> object:
    """Load a module text through the runtime's one entry, as the bridge does."""
    b = bridge()
    b.runtime()
    from gdl2pl.bridge.swipl import attach_thread

    attach_thread()
    return b.runtime().apply_once("gdl_runtime", "gdl_load", module, text)


def unload(module: str) -> None:
    bridge().runtime().apply_once("gdl_runtime", "gdl_unload", module)


def payload(path: Path) -> str:
    return f"x*/:-X=..[shell,'touch {path}'],X.%"


# -- code execution -----------------------------------------------------------------------


def test_a_name_closing_the_header_comment_runs_nothing(tmp_path: Path) -> None:
    target = tmp_path / "pwned"
    b = bridge()
    with b.StateMachine.from_text(TTT.read_text(), name=payload(target)) as sm:
        assert sm.legal_moves(sm.initial_state, "xplayer")
        for line in sm.translation.text.splitlines():
            if "touch" in line:
                assert line.startswith("%"), line
    assert not target.exists()


def test_a_file_name_with_newlines_runs_nothing(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)  # the payload touches a file in the working directory
    evil = tmp_path / "evil\n:- X =.. [shell, 'touch pwned2'], X.\n%.kif"
    evil.write_text(TTT.read_text())
    assert main(["play", str(evil), "--seed", "1"]) == 0
    assert not (tmp_path / "pwned2").exists()


def test_translate_writes_the_module_name_as_data(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "pwned3"
    module = f"m')).\n:- shell('touch {target}').\n%"
    assert main(["translate", str(TTT), "--module", module]) == 0
    text = capsys.readouterr().out
    assert load_text(module, text)
    unload(module)
    assert not target.exists()


@pytest.mark.parametrize(
    "body",
    [
        ":- initialization(shell('touch {t}')).\nrole(a).\n",
        "role(a) :- shell('touch {t}').\n",
        "user:term_expansion(_, _) :- shell('touch {t}').\n",
        "role(a) :- call(shell, 'touch {t}').\n",
        "role(a) :- r_x, lists:append(_, _, _).\n",
        "'$x' :- true.\n",
        # the guard's form, ( ground(X) -> G ; true ), with anything else in it
        "role(X) :- ( ground(X) -> shell('touch {t}') ; true ).\n",
        "role(X) :- ( shell('touch {t}') -> \\+ r_q(X) ; true ).\n",
        "role(X) :- ( ground(X) -> \\+ r_q(X) ; shell('touch {t}') ).\n",
        "role(X) :- ( ground(shell('touch {t}')) -> \\+ r_q(X) ; true ).\n",
        "role(X) :- ( ground(X), shell('touch {t}') -> \\+ r_q(X) ; true ).\n",
    ],
)
def test_the_loader_refuses_what_the_translator_never_writes(tmp_path: Path, body: str) -> None:
    target = tmp_path / "pwned4"
    text = ":- module(hostile_mod, []).\n" + body.format(t=target)
    b = bridge()
    with pytest.raises(b.runtime().PrologError, match="not a term the translator writes"):
        load_text("hostile_mod", text)
    assert not target.exists()
    assert b.runtime().query_once("current_module(hostile_mod)")["truth"] is False


names = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)), min_size=0, max_size=40
) | st.sampled_from(["*/", "\n:- halt.\n", "'", "\\", "%", "\u2028:- halt.", "\r:- halt.", "/*"])
kif_symbols = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Zs", "Zl", "Zp", "Cc")).filter(
        lambda c: c not in "();?" and not c.isspace()
    ),
    min_size=1,
    max_size=12,
).filter(lambda s: s.lower() not in {"not", "or", "and", "distinct", "<="})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=names, role=kif_symbols)
def test_any_name_or_role_loads_as_data(name: str, role: str) -> None:
    """For any match id, file name or name, and any role symbol, the generated module
    holds only the translator's own terms: the loader (which refuses anything else)
    accepts it, and the role comes back as data."""
    game = (
        f"(role {role}) (init s) (<= (legal {role} go) (true s)) (<= terminal (true t)) "
        f"(<= (goal {role} 100) (true t)) (<= (next t) (true s))"
    )
    try:
        d = normalize_case(parse_game(game, "kif", file=name))
    except GdlSyntaxError:
        return
    b = bridge()
    sm = b.StateMachine(d, name=name)
    try:
        assert [str(r) for r in sm.roles] == [d.clauses[0].head.args[0].name]  # type: ignore[union-attr]
        assert not sm.is_terminal(sm.initial_state)
    finally:
        sm.close()
    text = translate(d, "m_" + str(abs(hash(name))), name).text
    for line in text.splitlines():
        assert line == "" or line.startswith(("%", ":-", " ", "'")) or line[0].isalpha()


# -- wrong answers --------------------------------------------------------------------------


def test_a_fluent_named_like_the_fallback_store_is_its_own_fluent() -> None:
    game = """(role a) (init (other x)) (<= (legal a go) (true (other x)))
              (<= (next ?f) (true ?f)) (<= terminal (true x)) (<= (goal a 100) (true x))
              (<= (goal a 0) (not (true x)))"""
    with bridge().StateMachine.from_text(game) as sm:
        s = sm.next_state(sm.initial_state, ["go"])
        assert str(s) == "((other x))"
        assert not sm.is_terminal(s)
        assert sm.goals(s) == [0]


@settings(max_examples=40, deadline=None)
@given(fluents=st.lists(st.tuples(kif_symbols, st.integers(0, 3)), min_size=1, max_size=6))
def test_fluent_stores_never_collide(fluents: list[tuple[str, int]]) -> None:
    """Whatever functors and arities a game's fluents have (names such as ``other`` or
    ``true_x`` included), a frame axiom keeps exactly the initial state."""
    texts = [name if n == 0 else f"({name} {' '.join(['k'] * n)})" for name, n in fluents]
    game = " ".join(f"(init {t})" for t in texts)
    game += " (role r) (<= (legal r go) (true ?f)) (<= (next ?f) (true ?f))"
    game += " (<= terminal (true never)) (<= (goal r 0) (true ?f))"
    try:
        d = parse_game(game, "kif")
    except GdlSyntaxError:
        return
    with bridge().StateMachine(d) as sm:
        s0 = sm.initial_state
        s1 = sm.next_state(s0, ["go"])
        assert s1 == s0
        assert len(s0) == len({t.lower() for t in texts}) or len(s0) <= len(texts)


def test_after_a_deep_term_error_the_state_machine_answers_right() -> None:
    game = """(role a) (init (c z)) (<= (legal a go) (true (c z)))
              (<= (legal a wait) (true (c (s ?x)))) (<= (next (c (s ?x))) (true (c ?x)))
              (<= terminal (true (c done))) (<= (goal a 100) (true (c z)))
              (<= (goal a 0) (true (c (s ?x))))"""
    b = bridge()
    with b.StateMachine.from_text(game) as sm:
        s = sm.initial_state
        with pytest.raises(b.ReasonerError, match="nested deeper than 200"):
            sm.depth_charge(s, max_depth=1200)
        assert [str(m) for m in sm.legal_moves(s, "a")] == ["go"]
        assert sm.goals(s) == [100]


def test_a_deep_term_from_python_is_refused() -> None:
    from gdl2pl import Const
    from gdl2pl import Func

    t: Const | Func = Const("z")
    for _ in range(5000):
        t = Func("s", (t,))
    b = bridge()
    with b.StateMachine.from_file(TTT) as sm, pytest.raises(b.TransitionDefinitionError):
        sm.next_state(sm.initial_state, [t, "noop"])


# -- crashes --------------------------------------------------------------------------------

_FIRST_CALLS = """
import threading
from gdl2pl.bridge import StateMachine
sm = StateMachine.from_file({ttt!r})
s0 = sm.initial_state
calls = [lambda: sm.seed(1), lambda: sm.legal_moves(s0, "xplayer"), lambda: sm.is_terminal(s0),
         lambda: sm.goals(sm.depth_charge(s0)[0]), lambda: sm.state_info(s0),
         lambda: sm.playouts(s0, 2), lambda: sm.base_propositions,
         lambda: sm.input_moves("xplayer"), lambda: sm.next_state(s0, ["(mark 1 1)", "noop"]),
         lambda: sm.all_legal_moves(s0), lambda: sm.random_joint_move(s0),
         lambda: sm.legal_joint_moves(s0), lambda: sm.next_states(s0),
         lambda: sm.next_state_map(s0), lambda: sm.average_scores(s0, 2), lambda: sm.close()]
for c in calls:
    t = threading.Thread(target=c)
    t.start()
    t.join()
print("survived")
"""


def test_every_method_may_be_a_new_threads_first_call() -> None:
    done = subprocess.run(
        [sys.executable, "-P", "-c", _FIRST_CALLS.format(ttt=str(TTT))],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "survived" in done.stdout


def test_lone_surrogates_give_clear_errors_and_leave_nothing_behind(tmp_path: Path) -> None:
    b = bridge()
    text = TTT.read_text()
    with b.StateMachine.from_text(text, name="a\udcffb") as sm:  # a name is only a label
        assert sm.roles
    with pytest.raises(GdlSyntaxError, match="lone surrogate"):
        b.StateMachine.from_text(text.replace("oplayer", "o\ud800p"))
    with b.StateMachine.from_file(TTT) as sm, pytest.raises(b.TransitionDefinitionError):
        sm.legal_moves(sm.initial_state, "x\ud800")
    raw = os.fsencode(str(tmp_path)) + b"/bad\xff.kif"
    with open(raw, "wb") as f:
        f.write(text.encode())
    with b.StateMachine.from_file(os.fsdecode(raw)) as sm:
        assert len(sm.roles) == 2
    with b.StateMachine.from_file(TTT) as sm:  # the next, unrelated load is fine
        assert not sm.is_terminal(sm.initial_state)


# -- bounded work ---------------------------------------------------------------------------


INFIX_GAME = (
    "role(a)\ninit(c(1))\nlegal(a, stay)\nnext(c(1)) :- true(c(1))\nterminal :- true(c(2))\n"
)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), syntax=st.sampled_from(["kif", "infix"]))
def test_a_nul_byte_anywhere_is_refused_at_its_position(data, syntax: str) -> None:  # type: ignore[no-untyped-def]
    from gdl2pl.source import position

    text = TTT.read_text() if syntax == "kif" else INFIX_GAME
    at = data.draw(st.integers(0, len(text)))
    with pytest.raises(GdlSyntaxError, match="U\\+0000 is a NUL byte") as caught:
        parse_game(text[:at] + "\x00" + text[at:], syntax, "g")  # type: ignore[arg-type]
    where = position(text, at, "g")
    assert f"g:{where.line}:{where.column}" in str(caught.value)


def test_check_refuses_a_file_with_a_nul_byte(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    game = tmp_path / "nul.kif"
    game.write_bytes(b"(role a)\n(init (c 1))\n(init (c\x002))\n")
    assert main(["check", str(game)]) == 1
    out = capsys.readouterr()
    assert f"{game}:3:9:" in out.out + out.err
    assert "NUL byte" in out.out + out.err


@settings(max_examples=40, deadline=None)
@given(data=st.data(), byte=st.integers(0x80, 0xFF))
def test_a_byte_that_is_not_utf8_is_refused_at_its_position(  # type: ignore[no-untyped-def]
    tmp_path_factory, data, byte: int
) -> None:
    from gdl2pl.load import read_game
    from gdl2pl.source import position

    text = TTT.read_text()
    at = data.draw(st.integers(0, len(text)))
    game = tmp_path_factory.mktemp("bytes") / "g.kif"
    raw = text[:at].encode() + bytes([byte]) + text[at:].encode()
    game.write_bytes(raw)
    assert text.isascii()  # so the lone byte cannot complete a UTF-8 sequence
    with pytest.raises(GdlSyntaxError, match="is not UTF-8") as caught:
        read_game(game)
    where = position(text, at, str(game))
    assert (caught.value.line, caught.value.column) == (where.line, where.column)


def _wide_game(fluent_args: int, relation_args: int) -> str:
    f = " ".join(["a"] * fluent_args)
    r = " ".join(["b"] * relation_args)
    return (
        f"(role r)\n(init (f {f}))\n(wide {r})\n"
        f"(<= (legal r go) (true (f {f})) (wide {r}))\n(<= (next (g 1)) (does r go))\n"
        "(<= terminal (true (g 1)))\n(goal r 100)\n"
    )


def test_check_refuses_arities_beyond_swi_prologs_limit_with_positions() -> None:
    from gdl2pl.check import MAX_PROLOG_ARITY
    from gdl2pl.check import check_description

    b = bridge()
    at_limit = _wide_game(MAX_PROLOG_ARITY, MAX_PROLOG_ARITY)
    assert not has_errors(check_description(parse_game(at_limit, "kif")))
    with b.StateMachine.from_text(at_limit) as sm:
        assert sm.is_terminal(sm.next_state(sm.initial_state, ["go"]))  # the limit loads
    findings = check_description(parse_game(_wide_game(MAX_PROLOG_ARITY + 1, 1), "kif"))
    assert [(f.code, f.pos.line) for f in findings if f.is_error] == [  # type: ignore[union-attr]
        ("arity-limit", 2),
        ("arity-limit", 4),
    ]
    findings = check_description(parse_game(_wide_game(1, 20_000), "kif"))
    errors = [f for f in findings if f.is_error]
    assert [(f.code, f.pos.line, f.pos.column) for f in errors] == [  # type: ignore[union-attr]
        ("arity-limit", 3, 1),
        ("arity-limit", 4, 31),
    ]
    assert "the relation wide has 20,000 arguments; SWI-Prolog takes at most 1,024" in (
        errors[0].message
    )


def test_model_of_a_huge_cross_product_says_so_without_a_prolog_stack_dump(tmp_path: Path) -> None:
    program = tmp_path / "cross.kif"  # 300^3 atoms of p: beyond Prolog's stack limit
    program.write_text(
        " ".join(f"(d {i})" for i in range(300)) + "\n(<= (p ?a ?b ?c) (d ?a) (d ?b) (d ?c))\n"
    )
    done = subprocess.run(  # its own process: the Prolog stack it fills is not pytest's
        [sys.executable, "-P", "-m", "gdl2pl.cli", "model", str(program)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr[-2000:]
    assert "the model is too large to compute" in done.stderr
    assert "Stack limit" not in done.stderr and "frame(" not in done.stderr


def test_a_game_that_never_ends_is_cut_at_the_depth_cap() -> None:
    b = bridge()
    with b.StateMachine.from_file(ENDLESS) as sm:
        with pytest.raises(b.PlayoutDepthError, match="no terminal state within 5,000 steps"):
            sm.depth_charge(sm.initial_state)
        per_role, steps = sm.playouts(sm.initial_state, 3, max_depth=100)
        assert steps == 300
        assert per_role == [[(0, 100)] * 3]


def test_simulate_says_when_playouts_hit_the_cap(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["simulate", str(ENDLESS), "-n", "2", "--max-depth", "50"]) == 0
    assert "2 of 2 playouts reached the depth cap of 50 steps" in capsys.readouterr().out


def test_ctrl_c_stops_a_long_simulation() -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-P",
            "-m",
            "gdl2pl.cli",
            "simulate",
            str(ENDLESS),
            "-n",
            "100000",
            "--max-depth",
            "100000000",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        # wait until Prolog is busy (the output is buffered: give it a moment to start)
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(timeout=4)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=10)
    finally:
        proc.kill()
    assert proc.returncode == 130
    assert "interrupted" in err


def interrupted_in_a_thread(
    first: Callable[[], object], then: Callable[[], object] = lambda: None
) -> dict[str, object]:
    """Run ``first`` in a new thread while this one interrupts its Prolog queries until it
    ends, then ``then`` there undisturbed: {"outcome": "interrupted" (it raised
    ``QueryInterrupted``) or "done", "after": what ``then`` returned}."""
    from gdl2pl.bridge.swipl import interrupt
    from gdl2pl.bridge.swipl import prolog_thread_id

    b = bridge()
    box: dict[str, object] = {}
    ready, first_over = threading.Event(), threading.Event()

    def work() -> None:
        box["id"] = prolog_thread_id()
        ready.set()
        try:
            first()
            box["outcome"] = "done"
        except b.QueryInterrupted:
            box["outcome"] = "interrupted"
        first_over.set()
        box["after"] = then()

    t = threading.Thread(target=work)
    t.start()
    ready.wait(10)
    while t.is_alive() and not first_over.is_set():
        interrupt(box["id"])  # type: ignore[arg-type]
        t.join(0.1)
    t.join(10)
    return box


def test_a_query_can_be_interrupted_from_another_thread() -> None:
    sm = bridge().StateMachine.from_file(ENDLESS)
    box = interrupted_in_a_thread(
        lambda: sm.depth_charge(sm.initial_state, max_depth=10**9),
        lambda: sm.legal_moves(sm.initial_state, "flipper"),
    )
    sm.close()
    assert box["outcome"] == "interrupted"
    assert [str(m) for m in box["after"]] == ["flip"]  # type: ignore[attr-defined]


@pytest.mark.parametrize("depth", [340, 10_000])
@pytest.mark.parametrize("command", ["check", "translate", "play"])
def test_deep_nesting_is_refused_with_its_position(
    tmp_path: Path,
    capsys,
    depth: int,
    command: str,  # type: ignore[no-untyped-def]
) -> None:
    game = tmp_path / "deep.kif"
    game.write_text("(role a)\n(init " + "(f " * depth + "x" + ")" * (depth + 1) + "\n")
    assert main([command, str(game)]) == 1
    out = capsys.readouterr()
    text = out.out + out.err
    assert f"{game}:2:" in text
    assert "nested deeper than 100 levels" in text


# -- command-line edges ------------------------------------------------------------------------


def test_replay_reports_a_malformed_move_and_goes_on(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    import io

    lines = [{"moves": [["(mark 1 1", "noop"]]}, {"moves": [["(mark 1 1)", "noop"]]}]
    monkeypatch.setattr("sys.stdin", io.StringIO("".join(json.dumps(x) + "\n" for x in lines)))
    assert main(["replay", str(TTT)]) == 0
    records = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    errors = [r for r in records if "error" in r]
    assert len(errors) == 1 and errors[0]["match"] == 0
    assert "unbalanced" in errors[0]["error"]
    assert [r["step"] for r in records if r["match"] == 1] == [0, 1]


def test_convert_refuses_names_kif_cannot_write(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    game = tmp_path / "quoted.gdl"
    game.write_text("role('x y')\nlegal('x y', a)\nterminal\ngoal('x y', 100)\n")
    assert main(["convert", str(game), "--to", "kif"]) == 1
    assert "'x y' cannot be written in KIF" in capsys.readouterr().err


def test_simulate_zero_playouts_is_a_usage_error() -> None:
    assert main(["simulate", str(TTT), "-n", "0"]) == 2


def test_a_broken_pipe_exits_quietly() -> None:
    proc = subprocess.run(
        f"{sys.executable} -P -m gdl2pl.cli trace {TTT} -n 200 | head -n 1",
        shell=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.stdout.count("\n") == 1
    assert proc.stderr == ""


def test_prolog_errors_read_as_sentences() -> None:
    game = """(role p) (init (n z)) (<= (num (s ?x)) (num ?x)) (num z)
              (<= (legal p go) (num ?x) (true (n ?x)) (num (s (s ?x))))
              (<= (next (n z)) (does p go)) (<= terminal (true (n q))) (goal p 0)"""
    b = bridge()
    with (
        b.StateMachine.from_text(game, name="endless") as sm,
        pytest.raises(b.ReasonerError) as info,
    ):
        sm.legal_moves(sm.initial_state, "p")
    message = str(info.value)
    assert "Unknown" not in message and "0x" not in message
    assert "builds ever larger terms" in message


# -- memory ---------------------------------------------------------------------------------


def _prolog_threads() -> int:
    return int(
        bridge().runtime().query_once("aggregate_all(count, thread_property(_, status(_)), N)")["N"]
    )


def test_engines_of_finished_threads_are_released() -> None:
    b = bridge()
    with b.StateMachine.from_file(TTT) as sm:
        sm.is_terminal(sm.initial_state)
        before = _prolog_threads()
        for _ in range(20):
            t = threading.Thread(target=lambda: sm.legal_moves(sm.initial_state, "xplayer"))
            t.start()
            t.join()
        assert _prolog_threads() == before


def test_close_removes_the_game_module() -> None:
    b = bridge()
    sm = b.StateMachine.from_file(TTT)
    module = sm.module
    sm.close()
    gone = b.runtime().query_once("current_module(M)", {"M": module})["truth"]
    assert gone is False


def test_a_slow_load_can_be_interrupted_and_leaves_nothing_loaded() -> None:
    b = bridge()
    slow = Path(__file__).parent / "games" / "network" / "slow_load.kif"
    before = _game_modules()
    box = interrupted_in_a_thread(lambda: b.StateMachine.from_file(slow).close())
    assert box["outcome"] == "interrupted"
    assert _game_modules() == before  # nothing half-loaded stays behind
    with b.StateMachine.from_file(TTT) as sm:  # and the next load works
        assert sm.roles


def test_a_long_text_interrupted_while_read_or_compiled_is_an_interruption() -> None:
    # 60,000 facts: the time of a load goes to reading and compiling the text (not to
    # computing static relations), where the compiler used to report an interrupt as an
    # error of the text ("could not be loaded")
    from gdl2pl.bridge.swipl import interrupt
    from gdl2pl.bridge.swipl import prolog_thread_id
    from gdl2pl.kif import parse_kif

    b = bridge()
    rules = "(role a) (init s) (legal a go) (<= (next s) (true s)) (<= terminal (true s))"
    game = parse_kif(rules + " (goal a 0) " + " ".join(f"(n {i})" for i in range(60_000)))
    sm = b.StateMachine(game, "long")  # loads once, uninterrupted
    sm.close()
    before = _game_modules()

    def load(box: dict[str, object], started: threading.Event) -> None:
        box["id"] = prolog_thread_id()
        started.set()
        try:
            b.StateMachine(game, "long").close()
            box["outcome"] = "loaded"
        except b.QueryInterrupted:
            box["outcome"] = "interrupted"
        except b.ReasonerError as e:
            box["outcome"] = f"error: {e}"

    outcomes: list[str] = []
    for _ in range(3):
        box: dict[str, object] = {}
        started = threading.Event()
        t = threading.Thread(target=load, args=(box, started))
        t.start()
        started.wait(10)
        while t.is_alive():
            interrupt(box["id"])  # type: ignore[arg-type]
            t.join(0.05)
        outcomes.append(str(box["outcome"]))
    assert all(o == "interrupted" for o in outcomes), outcomes
    assert _game_modules() == before


def _game_modules() -> int:
    return int(
        bridge()
        .runtime()
        .query_once(
            "aggregate_all(count, (current_module(_M), sub_atom(_M, 0, _, _, gdl_game_)), N)"
        )["N"]
    )


# -- graph labels ----------------------------------------------------------------------------


def test_mermaid_labels_show_markup_as_text(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    game = tmp_path / "markup.gdl"
    game.write_text(
        "role(a)\ninit(c)\nlegal(a, go)\nnext(c) :- '<b>x</b>'\n'<b>x</b>' :- true(c)\n"
        "terminal :- true(d)\ngoal(a, 0) :- true(c)\n",
        encoding="utf-8",
    )
    assert main(["graph", str(game), "--format", "mermaid"]) == 0
    out = capsys.readouterr().out
    assert "<b>" not in out and "</b>" not in out
    assert "#60;b#62;x#60;#47;b#62;" in out


@settings(max_examples=100, deadline=None)
@given(st.text(min_size=1, max_size=20))
def test_mermaid_text_leaves_no_markup(text: str) -> None:
    from gdl2pl.analysis.relgraph import mermaid_text

    shown = mermaid_text(text)
    assert not set(shown) & set("<>&\"'`[]{}|\n\r")
    assert re.sub(r"#(\d+);", lambda m: chr(int(m.group(1))), shown) == text


# -- deeply nested JSON (issue 23 item 10) ------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=1, max_value=200_000), st.sampled_from("[{"), st.text(max_size=20))
def test_nested_json_is_refused_before_parsing(depth: int, bracket: str, tail: str) -> None:
    """A line nested deeper than the bound is a ValueError, never a RecursionError."""
    from gdl2pl.jsonline import MAX_DEPTH
    from gdl2pl.jsonline import loads_line

    line = (bracket if bracket == "[" else '{"a":') * depth + tail
    try:
        loads_line(line)
    except ValueError as e:
        assert depth <= MAX_DEPTH or "nested" in str(e)
    else:
        assert depth <= MAX_DEPTH


def test_deep_json_ends_only_its_replay_match(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    require_prolog()
    stdin = "[" * 100_000 + "\n" + '{"moves": []}\n'
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    assert main(["replay", str(EXAMPLES / "ticTacToe.kif")]) == 0
    records = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert "nested" in records[0]["error"] and records[0]["match"] == 0
    assert records[1]["match"] == 1 and "error" not in records[1]


def test_deep_json_from_an_engine_is_the_engines_error() -> None:
    from gdl2pl.verify.engine import parse_output

    records, problem = parse_output('{"a": 1}\n' + "[" * 100_000 + "\n")
    assert records == [{"a": 1}] and problem is not None and "line 2" in problem


# -- a game that grows a term without bound (issue 23 item 7) ----------------------------

#: A game whose one fluent doubles in size each step.
DOUBLING = (Path(__file__).parent / "games" / "doubling.kif").read_text(encoding="utf-8")


def test_a_fluent_that_doubles_each_step_ends_with_a_clear_error() -> None:
    b = bridge()
    with b.StateMachine.from_text(DOUBLING, name="doubling.kif") as sm:
        with pytest.raises(b.ReasonerError, match="more than 100,000 nodes"):
            sm.depth_charge(sm.initial_state)
        state = sm.initial_state
        with pytest.raises(b.ReasonerError, match=r"fluent c/1 of more than 100,000 nodes"):
            for _ in range(40):
                state = sm.next_state(state, ["stay"])
        assert sm.legal_moves(sm.initial_state, "xplayer") == [sm.term("stay")]  # still usable
    with b.StateMachine.from_file(TTT) as sm:  # and the process goes on
        assert len(sm.legal_joint_moves(sm.initial_state)) == 9


def test_commands_end_a_doubling_game_with_an_error(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    game = tmp_path / "doubling.kif"
    game.write_text(DOUBLING, encoding="utf-8")
    for argv in (["simulate", str(game), "-n", "1"], ["play", str(game)]):
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert "the rules make a fluent c/1 of more than 100,000 nodes" in err


def test_deep_json_in_explain_moves_and_info_replies_is_refused(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from gdl2pl.ggp.protocol import parse_info_reply

    assert parse_info_reply("{" * 100_000).status == ""  # no RecursionError in the manager
    moves = tmp_path / "moves.jsonl"
    moves.write_text("[" * 1000 + "\n", encoding="utf-8")
    assert main(["explain", str(TTT), "terminal", "--moves", str(moves)]) == 2
    assert f"{moves}:1: not JSON" in capsys.readouterr().err


def test_a_deadline_that_fires_as_its_block_ends_cannot_stop_the_next_question(
    monkeypatch,  # type: ignore[no-untyped-def]
) -> None:
    """``interrupt_after`` (the adapters' analysis and reachability deadlines) waits for a
    signal its timer is sending as the block ends, and has it taken while the thread is
    idle. A bare timer's signal could land in the thread's next question and stop it (on
    chess, inside tabling: "Cannot catch continuation through findall/3")."""
    import gdl2pl.bridge.swipl as swipl

    b = bridge()
    sent = threading.Event()
    send = swipl.interrupt

    def slow_interrupt(thread_id: int) -> None:  # the timer thread, slowed down
        time.sleep(0.3)
        send(thread_id)
        sent.set()

    monkeypatch.setattr(swipl, "interrupt", slow_interrupt)
    with b.StateMachine.from_file(ENDLESS) as sm:
        with swipl.interrupt_after(0.05):
            time.sleep(0.1)  # the deadline passes; its signal is on its way
        assert sent.is_set()  # waited for it
        # a question of a few seconds, in which a late signal would land at once
        with pytest.raises(b.PlayoutDepthError):
            sm.depth_charge(sm.initial_state, max_depth=10_000)


# -- files that never end, and outputs that are links (issue 32, item 7) ----------------


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_a_file_that_never_ends_is_refused_after_a_bounded_read(capsys) -> None:
    # `gdl2pl check /dev/zero` read until memory ran out and ended in `internal error`
    from gdl2pl.load import MAX_FILE_BYTES

    assert main(["check", "/dev/zero"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("/dev/zero: error: cannot read: larger than")
    assert f"{MAX_FILE_BYTES:,} bytes" in err and "internal error" not in err
    require_prolog()
    assert main(["model", str(TTT), "--moves", "/dev/zero"]) == 2
    err = capsys.readouterr().err
    assert "larger than" in err and "internal error" not in err


def test_a_file_just_under_the_cap_is_read_and_one_byte_more_refused(tmp_path) -> None:
    from gdl2pl.load import read_text

    game = tmp_path / "g.kif"
    game.write_bytes(b"(role a)" + b" " * 92)
    assert read_text(game, limit=100) == "(role a)" + " " * 92
    game.write_bytes(b"(role a)" + b" " * 93)
    with pytest.raises(OSError, match="larger than 100 bytes") as e:
        read_text(game, limit=100)
    assert e.value.filename == str(game)


def test_translate_output_replaces_a_symlink_instead_of_writing_through_it(
    tmp_path, capsys
) -> None:
    # `translate -o` wrote through a symlink (other outputs are replaced)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    out = tmp_path / "game.pl"
    out.symlink_to(victim)
    assert main(["translate", str(TTT), "-o", str(out)]) == 0
    assert victim.read_text() == "keep me\n"
    assert not out.is_symlink() and ":- module(game" in out.read_text()
    assert {p.name for p in tmp_path.iterdir()} == {"victim.txt", "game.pl"}  # no temporary
