"""The compiled engine under hostile and careless use (issue 40): what once crashed runs
in a child process here, so that a crash fails the test instead of ending the suite.

- counts and depths of any size are refused or answered as the reasoner answers them,
  never written past a buffer; a network that was never built refuses every call;
- the evaluator is safe for any interleaving of threads, a collection included;
- a cyclic component costs linear work, and other threads run while a network is
  built and tuned;
- goal values are read one way on both engines; a game whose legal, terminal or goal
  depends on ``does`` is not compiled;
- whatever fails while compiling, the reasoner plays, and says why.
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import EXAMPLES
from prolog_env import require_prolog

from gdl2pl.bridge import GoalDefinitionError
from gdl2pl.compiled import AutoMachine
from gdl2pl.compiled import CompiledMachine
from gdl2pl.compiled import CompileRefusedError
from gdl2pl.compiled import GroundingBudget
from gdl2pl.compiled import GroundingBudgetError
from gdl2pl.compiled import load_machine
from gdl2pl.compiled import machine_from_text

pytestmark = pytest.mark.compiled


@pytest.fixture(scope="module", autouse=True)
def _prolog() -> Iterator[None]:
    require_prolog()
    yield


def in_child(code: str, timeout: float = 300) -> str:
    """Run ``code`` in a fresh Python; its output, or a failure with what it said (a
    crash shows as a negative return code)."""
    done = subprocess.run(
        [sys.executable, "-P", "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    return done.stdout


TICTACTOE = str(EXAMPLES / "ticTacToe.kif")


def test_counts_of_any_size_are_refused_or_answered_never_written_past_a_buffer() -> None:
    out = in_child(f"""
        from gdl2pl.compiled import load_machine
        from gdl2pl.bridge import StateMachine
        c = load_machine({TICTACTOE!r}, "compiled")
        p = StateMachine.from_file({TICTACTOE!r})
        s = c.initial_state
        bits = c.fluents_of([s])[0]
        for call in (lambda: c.playouts(s, 2**62, 10), lambda: p.playouts(s, 2**62, 10)):
            try:
                call()
                print("answered")
            except ValueError as e:
                print("refused", "playouts" in str(e))
        for n in (2**62, 2**40, 2**31 + 5):
            try:
                c._net.playouts(bits, n, 10)
                print("C answered")
            except MemoryError:
                print("C refused")
        # a depth of any size is no bound, on both engines alike
        for m in (c, p):
            final, depth = m.depth_charge(s, 2**63)
            print(m.is_terminal(final), depth <= 9)
            per_role, steps = m.playouts(s, 1, 2**63)
            print(len(per_role), steps <= 9)
    """)
    lines = out.splitlines()
    assert lines[:2] == ["refused True", "refused True"]
    assert lines[2:5] == ["C refused"] * 3
    assert lines[5:] == ["True True", "2 True", "True True", "2 True"]


def test_a_network_never_built_refuses_every_call() -> None:
    out = in_child("""
        from gdl2pl.compiled._network import Network
        n = Network.__new__(Network)
        for call in (lambda: n.terminal(b""), lambda: n.legal(b""), lambda: n.goals(b""),
                     lambda: n.next(b"", [0]), lambda: n.step(b"", [0], 2),
                     lambda: n.playouts(b"", 1, 1), lambda: n.depth_charge(b"", 1),
                     lambda: n.tune(b"", 1, 1), lambda: n.seed(1), lambda: n.set_moves(())):
            try:
                call()
                print("answered")
            except RuntimeError as e:
                print("refused:", e)
        # a building that fails half-way leaves it refusing too
        try:
            n.__init__(3, 1, 1, [0, 0, 0, 0], [0], [], [5], [], [[]], [], 2, [[]])
        except ValueError as e:
            print("bad:", e)
        try:
            n.terminal(b"\\0")
        except RuntimeError as e:
            print("refused:", e)
    """)
    lines = out.splitlines()
    assert lines[:10] == ["refused: this network was never built"] * 10
    assert lines[10].startswith("bad: ")
    assert lines[11] == "refused: this network was never built"


@pytest.mark.parametrize(
    "args",
    [
        # a literal past the atoms, a value too large for C, a cycle past the program
        (3, 1, 1, [0, 0, 0, 1], [0, 1], [99], [], [], [[]], [], 2, [[]]),
        (3, 1, 1, [0, 0, 0, 1], [0, 1], [2**40], [], [], [[]], [], 2, [[]]),
        (3, 1, 1, [0, 0, 0, 0], [0], [], [-5, 2], [], [[]], [], 2, [[]]),
        # two atoms making one move legal, and a move index past the moves
        (4, 1, 1, [0, 0, 0, 0, 0], [0], [], [], [], [[(2, 0), (3, 0)]], [], 2, [[]]),
        (3, 1, 1, [0, 0, 0, 0], [0], [], [], [], [[(2, 7)]], [], 2, [[]]),
        # a program evaluating an input bit, and a goal value that is no int
        (3, 1, 1, [0, 0, 0, 0], [0], [], [0], [], [[]], [], 2, [[]]),
        (3, 1, 1, [0, 0, 0, 0], [0], [], [], [], [[]], [], 2, [[(2, "50")]]),
    ],
    ids=["literal", "huge", "cycle", "legal-twice", "move", "program", "goal"],
)
def test_a_network_of_bad_arrays_is_refused_whole(args: tuple[object, ...]) -> None:
    out = in_child(f"""
        from gdl2pl.compiled._network import Network
        try:
            Network(*{args!r})
            print("built")
        except (ValueError, TypeError) as e:
            print("refused")
    """)
    assert out.strip() == "refused"


def test_the_evaluator_is_safe_for_any_interleaving_of_threads() -> None:
    """Two threads share one network, one stepping and one asking legal moves, while
    the collector runs finalizers that let other threads in: every answer is the one a
    lone thread gets (once a segmentation fault, with legal_objects filling a tuple
    after a collection)."""
    out = in_child(f"""
        import gc, random, sys, threading, time
        from gdl2pl.compiled import load_machine
        c = load_machine({TICTACTOE!r}, "compiled")
        net, rng = c._net, random.Random(1)
        # states along random matches, with the answers a lone thread gets
        states, s = [], c.initial_state
        for _ in range(300):
            if c.is_terminal(s):
                s = c.initial_state
            states.append(c.fluents_of([s])[0])
            s = c.random_next_state(s, rng)
        truth = {{b: (net.legal(b), net.terminal(b)) for b in states}}
        class Yield:
            def __init__(self):
                self.me = self
            def __del__(self):
                time.sleep(0)  # a finalizer that lets another thread in
        gc.set_threshold(5)
        errors = []
        def stepper():
            for i in range(3000):
                b = states[i % len(states)]
                legal = net.legal(b)
                joint = [ms[0] for ms in legal] if all(legal) else None
                if joint is not None and not net.terminal(b):
                    r = net.step(b, joint, 2)
                    if len(r) != 3 or len(r[0]) != len(b):
                        errors.append(("step", r))
                Yield()
        def asker():
            for i in range(3000):
                b = states[(7 * i) % len(states)]
                if (net.legal(b), net.terminal(b)) != truth[b]:
                    errors.append("legal")
                Yield()
        threads = [threading.Thread(target=stepper), threading.Thread(target=asker)]
        for t in threads: t.start()
        for t in threads: t.join()
        print("errors", len(errors))
    """, timeout=600)
    assert out.strip() == "errors 0"


def test_the_candidate_lists_stay_right_past_the_wrap_of_their_epoch_counters() -> None:
    """The watched evaluation stamps each head's candidate list with a 32-bit epoch, one
    more per state installed and per joint move: a batch of games stepped for a day
    passes 2**32. Past the wrap, a stamp of 2**32 epochs ago (or a never-stamped 0) must
    not pass for new: every answer stays the untuned network's (every rule, every time)."""
    out = in_child(f"""
        import random
        from gdl2pl.compiled import load_machine
        from gdl2pl.compiled.machine import c_network
        c = load_machine({TICTACTOE!r}, "compiled")
        net, ref, rng = c._net, c_network(c.network), random.Random(3)
        start = c.fluents_of([c.initial_state])[0]
        # stamps of the first epochs, then counters just short of their wrap
        net.playouts(start, 20, 100)
        net._set_epochs(2**32 - 7, 2**32 - 5)
        wrong, b = 0, start
        for _ in range(400):
            if ref.terminal(b):
                b = start
            legal = ref.legal(b)
            wrong += net.legal(b) != legal or net.terminal(b) != ref.terminal(b)
            joint = [rng.choice(ms) for ms in legal]
            nxt = ref.next(b, joint)
            wrong += net.next(b, joint) != nxt
            b = nxt
        print("wrong", wrong)
    """)
    assert out.strip() == "wrong 0"


def test_a_network_called_from_inside_its_own_call_refuses_never_deadlocks() -> None:
    """A finalizer that the collector runs inside a call of the network (an
    allocation there starts a collection) and that calls the same network is refused
    with an error; the outer call goes on and answers."""
    out = in_child(f"""
        import gc
        from gdl2pl.compiled import load_machine
        c = load_machine({TICTACTOE!r}, "compiled")
        net = c._net
        bits = c.fluents_of([c.initial_state])[0]
        want = net.legal(bits)
        seen = []
        class Reenter:
            def __init__(self):
                self.me = self
            def __del__(self):
                try:
                    net.legal(bits)
                    seen.append("answered")
                except RuntimeError:
                    seen.append("refused")
        answers = []
        gc.set_threshold(1)
        for _ in range(200):
            Reenter()                      # garbage in a cycle, for the next collection
            answers.append(net.legal(bits) == want)
        gc.set_threshold(700)
        print("refused" in seen, all(answers))
    """)
    assert out.strip() == "True True"


def cycle_game(k: int, seed: int = 0) -> str:
    """A game whose ``reach`` runs over a cycle of ``k`` nodes written in random order:
    one strongly connected component in the network."""
    rng = random.Random(seed)
    nodes = [f"n{i}" for i in range(k)]
    order = list(range(k))
    rng.shuffle(order)
    edges = [f"(edge {nodes[i]} {nodes[(i + 1) % k]})" for i in order]
    return "\n".join(
        [
            "(role p)",
            "(init (start n0))",
            "(init (step 0))",
            *edges,
            "(<= (reach ?x) (true (start ?x)))",
            "(<= (reach ?y) (reach ?x) (edge ?x ?y))",
            f"(<= (legal p go) (reach {nodes[k // 2]}))",
            "(<= (legal p stay) (true (step 0)))",
            "(<= (next (step 1)) (true (step 0)))",
            "(<= (next (start ?x)) (true (start ?x)))",
            "(<= terminal (true (step 1)))",
            "(<= (goal p 100) (true (step 1)))",
        ]
    )


def test_a_big_cycle_plays_as_the_reasoner_and_leaves_other_threads_running() -> None:
    """A cycle of 4,000 nodes (once 84 s of a frozen process in ``auto``): the
    compiled engine answers as the reasoner, and while it is built and tuned another
    thread of the process keeps running (it would stand still if the build held the
    GIL)."""
    text = cycle_game(4000)
    ticks = 0
    stop = threading.Event()

    def ticker() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            time.sleep(0.01)

    t = threading.Thread(target=ticker)
    t.start()
    start = time.monotonic()
    try:
        c = machine_from_text(text, "compiled", name="cycle")
    finally:
        elapsed = time.monotonic() - start
        stop.set()
        t.join()
    with c:
        assert isinstance(c, CompiledMachine)
        p = c.prolog
        s = c.initial_state
        assert c.all_legal_moves(s) == p.all_legal_moves(s)
        assert [str(m) for m in c.all_legal_moves(s)[0]] == ["go", "stay"]
        final, depth = c.depth_charge(s)
        assert depth == 1 and c.is_terminal(final)
    # the other thread ran through the load: at least a tick in every 0.2 s of it
    assert ticks >= elapsed / 0.2, (ticks, elapsed)


def test_goal_values_are_read_one_way_on_both_engines() -> None:
    text = """(role p) (init (s 1)) (val 0x32) (big 99999999999)
    (<= (legal p a) (true (s 1))) (<= (next (s 2)) (true (s 1)))
    (<= terminal (true (s 2)))
    (<= (goal p ?v) (val ?v) (true (s 2)))"""
    with machine_from_text(text, "compiled", name="hex") as c:
        final, _ = c.depth_charge(c.initial_state)
        for m in (c, c.prolog):
            assert m.playouts(c.initial_state, 3)[0] == [[(-1, 1)] * 3]
            with pytest.raises(GoalDefinitionError, match="non-numeric goal value 0x32"):
                m.goal(final, "p")
            assert m.average_scores(c.initial_state, 2) == [0.0]
    big = text.replace("(val ?v)", "(big ?v)")
    with machine_from_text(big, "compiled", name="big") as c:
        for m in (c, c.prolog):
            assert m.playouts(c.initial_state, 2)[0] == [[(99999999999, 1)] * 2]
            final, _ = m.depth_charge(c.initial_state)
            assert m.goals(final) == [99999999999]


def test_a_game_whose_terminal_or_legal_reads_does_is_played_by_the_reasoner() -> None:
    text = """(role p) (role q) (init (s 1))
    (<= (legal p a) (true (s 1))) (<= (legal p b) (true (s 1)))
    (<= (legal q x) (does p a)) (<= (legal q y) (true (s 1)))
    (<= (next (s 2)) (true (s 1)))
    (<= terminal (does p b)) (<= terminal (true (s 2)))
    (<= (goal p 0) (true (s 2))) (<= (goal q 0) (true (s 2)))"""
    with pytest.raises(CompileRefusedError, match="legal depends on does"):
        machine_from_text(text, "compiled", name="moving")
    with machine_from_text(text, "auto", name="moving") as m:
        assert m.engine_choice.engine == "prolog"
        assert "depends on does" in m.engine_choice.reason
        assert m.is_terminal(m.initial_state) is False


#: A fluent that the relaxation (which drops negations) nests without end, though no
#: reachable state has it (once a RecursionError, 600 deep, ending the process's load).
DEEP_UNREACHABLE = """(role p) (init (s 1)) (init (n z))
(<= (legal p a) (true (s 1)))
(<= (next (n (f ?x))) (true (n ?x)) (not (true (s 1))))
(<= (next (n ?x)) (true (n ?x)))
(<= (next (t 2)) (true (s 1)))
(<= terminal (true (t 2))) (<= (goal p 100) (true (t 2)))"""


def test_whatever_fails_while_compiling_the_reasoner_plays_and_says_why(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    with machine_from_text(DEEP_UNREACHABLE, "auto", name="deep") as m:
        assert m.wait_for_engine(120).engine == "prolog"
        assert "deeper than" in m.engine_choice.reason
        assert m.legal_moves(m.initial_state, "p")

    # a failure of any kind in building the machine, once the network is in
    def broken(*args: object, **kw: object) -> None:
        raise RuntimeError("a defect of the evaluator")

    monkeypatch.setattr(CompiledMachine, "__init__", broken)
    with (
        caplog.at_level(logging.WARNING, logger="gdl2pl.compiled"),
        load_machine(TICTACTOE) as m,
    ):
        assert isinstance(m, AutoMachine)
        choice = m.wait_for_engine(120)
        assert choice.engine == "prolog" and "a defect of the evaluator" in choice.reason
        s = m.next_state(m.initial_state, ["(mark 2 2)", "noop"])
        assert m.legal_moves(s, "oplayer")
    assert any("the reasoner plays it: 'a defect" in r.getMessage() for r in caplog.records)


#: 700 numbers and one rule joining each of them to every fluent (981,402 ground
#: rules once, over a minute and 1.6 GB in the player's own process).
def many_rules(n: int = 700) -> str:
    nums = " ".join(f"(num {i})" for i in range(n))
    return f"""(role p) (init (c 0)) (init (c 1)) {nums}
    (<= (r ?x ?y) (true (c ?x)) (num ?y))
    (<= (q ?y) (r ?x ?y))
    (<= (legal p (go ?y)) (q ?y))
    (<= (next (c ?y)) (does p (go ?y)))
    (<= terminal (true (c 5)))
    (<= (goal p 100) (true (c 5)))"""


def test_the_budget_bounds_the_whole_build_and_memory_has_its_own() -> None:
    start = time.monotonic()
    with pytest.raises(GroundingBudgetError, match="budget of 1 s"):
        machine_from_text(many_rules(3000), "compiled", name="many", budget=GroundingBudget(
            seconds=1.0, rules=10**8))
    # the whole load kept to its second, with a margin for a slow machine's process
    # start (the worker is killed at the deadline; nothing of it goes on)
    assert time.monotonic() - start < 1.0 + 15.0
    with pytest.raises(GroundingBudgetError, match="memory"):
        machine_from_text(many_rules(3000), "compiled", name="many", budget=GroundingBudget(
            seconds=120, rules=10**8, memory=600 * 2**20))



def _cpu_seconds(pid: int) -> float | None:
    """The CPU seconds of a live process, None once it has ended (gone or a zombie)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    if fields[0] in ("Z", "X"):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_a_grounding_whose_parent_was_killed_ends_on_its_own(tmp_path: Path) -> None:
    """The parent kills its grounding worker at the deadline; a parent killed first
    (here: gone without a word) cannot. The worker stops itself at its budget's seconds,
    long before its rule budget, and the kernel would at its CPU limit
    (twice the budget's seconds plus ten)."""
    game = tmp_path / "many.kif"
    game.write_text(many_rules(3000), encoding="utf-8")
    out = in_child(f"""
        import os
        from gdl2pl.bridge import StateMachine
        from gdl2pl.compiled import GroundingBudget, NetworkBuild
        from gdl2pl.load import read_game
        d = read_game({str(game)!r})
        sm = StateMachine(d, name="many")
        budget = GroundingBudget(seconds=1.0, rules=10**9)
        build = NetworkBuild(d, "many", sm._raw_roles, budget=budget).start()
        print(build._process.pid, flush=True)
        os._exit(0)
    """)
    pid = int(out.split()[0])
    try:
        seen = 0.0
        deadline = time.monotonic() + 240  # CPU seconds come slowly to a niced process
        while (cpu := _cpu_seconds(pid)) is not None:
            seen = cpu
            assert time.monotonic() < deadline, f"the orphaned worker still runs ({cpu} s CPU)"
            time.sleep(0.2)
        assert seen <= 2 * 1.0 + 10 + 2, f"it ran {seen} s of CPU"
    finally:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def test_a_grounding_worker_is_ended_by_the_kernel_past_its_cpu_limit() -> None:
    """Whatever runs in the worker outside Prolog's interruptible queries is bounded too."""
    done = subprocess.run(
        [sys.executable, "-P", "-c", textwrap.dedent("""
            from gdl2pl.compiled.ground_worker import _limit_cpu
            _limit_cpu(0.0, slack=1.0)
            while True:
                pass
        """)],
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == -signal.SIGXCPU, (done.returncode, done.stderr[-2000:])

def test_the_memory_budget_does_not_hold_back_a_game_that_fits() -> None:
    with machine_from_text(many_rules(50), "compiled", name="fits",
                           budget=GroundingBudget(memory=1024 * 2**20)) as c:
        assert isinstance(c, CompiledMachine)
        s = c.next_state(c.initial_state, ["(go 5)"])
        assert c.is_terminal(s) and c.goals(s) == [100]


def test_simulate_of_a_huge_count_runs_in_bounded_memory_and_stops_at_ctrl_c() -> None:
    """``simulate -n 230584300921369395200`` once wrote past its buffers; now it plays
    in parts, keeping sums only, and Ctrl-C ends it cleanly."""
    import signal

    p = subprocess.Popen(
        [sys.executable, "-P", "-m", "gdl2pl.cli", "simulate", TICTACTOE, "--engine", "compiled",
         "-n", "230584300921369395200"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(8)  # loaded, and playing
    assert p.poll() is None, p.communicate()
    with open(f"/proc/{p.pid}/status") as status:  # this process's peak, not other children's
        peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode > 0, (p.returncode, err[-500:])  # ended by the interrupt: no crash
    assert "Traceback" not in err or "KeyboardInterrupt" in err
    assert peak < 1_000_000, peak  # KiB


def ended_many_rules(n: int) -> str:
    """``many_rules`` with a clock: it ends after five steps."""
    succ = " ".join(f"(succ {i} {i + 1})" for i in range(5))
    return many_rules(n).replace(
        "(<= terminal (true (c 5)))",
        f"(init (t 0)) {succ} (<= (next (t ?y)) (true (t ?x)) (succ ?x ?y)) "
        "(<= terminal (true (t 5)))",
    ).replace("(<= (goal p 100) (true (c 5)))", "(<= (goal p 100) (true (t 5)))")


@pytest.mark.parametrize(
    "text",
    [cycle_game(4000), ended_many_rules(700)],
    ids=["cycle-4000", "many-rules-700"],
)
def test_serve_on_auto_answers_every_message_of_a_big_game_in_time(text: str) -> None:
    """``gdl2pl serve --engine auto`` (the default) under a 10 s start clock and 2 s
    play clock: the games that once froze the player (a 4,000-node cycle, 23 s to answer
    a 10 s start) or cost it a minute of grounding are played to their end with every
    move legal and in time, the grounding going on in its worker meanwhile."""
    from gdl2pl.bridge import swipl
    from gdl2pl.ggp.manager import run_match
    from gdl2pl.ggp.player import GamePlayer
    from gdl2pl.ggp.server import serving
    from gdl2pl.ggp.strategy import make_strategy
    from gdl2pl.load import parse_game

    swipl.attach_thread()
    d = parse_game(text, file="big.kif")
    player = GamePlayer(lambda: make_strategy("mcts", 3), name="auto")
    assert player.engine == "auto"
    with serving([player]) as (server,):
        rec = run_match(d, [server.url], game_name="big.kif", start_clock=10, play_clock=2,
                        seed=1, engine="prolog")
    assert rec["isCompleted"] and not rec["isAborted"], rec.get("abortReason")
    assert all(e == [""] for e in rec["errors"]), rec["errors"]  # no late, illegal, missing
