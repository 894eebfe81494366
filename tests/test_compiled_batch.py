"""The batched engine (issue 45): N games of a compiled game stepped together in C, the
outputs written into numpy arrays.

- step for step, the batch equals N games played one state at a time through the
  adapters' per-state path (``GdlGame.node``, ``observation``, ``next``) on their own
  machine: the compiled engine for every corpus game here, the reasoner for the small
  ones; states, observations (flat and planes), masks, rewards, ends, movers, with
  auto-reset, games left out by a mask, resets of some, and single-move roles whose
  action is anything;
- illegal actions are refused with nothing stepped, or end their game; a game that has
  ended is refused without auto-reset; sampling is reproducible from the seed; states
  can be saved and restored;
- what breaks the adapters' contract is reported as ``GdlGame.node`` reports it.
"""

from __future__ import annotations

import random
import textwrap
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from adapters_support import repository_game
from adapters_support import require_module
from hypothesis import HealthCheck
from hypothesis import example
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

pytestmark = pytest.mark.compiled

#: Corpus games that compile in seconds, of every kind: turn-taking (ticTacToe,
#: connectFour, breakthrough, knightThrough), puzzles (hanoi, blocks, eightPuzzle),
#: simultaneous (connectFourSimultaneous, smallest_4player), 3 players (3pConnectFour).
QUICK = ["ticTacToe", "connectFour", "hanoi", "3pConnectFour", "connectFourSimultaneous",
         "smallest_4player", "blocks"]
SLOW = ["breakthrough", "knightThrough", "eightPuzzle", "dotsAndBoxes", "pacman3p"]
#: Games also checked against the reasoner (the Prolog engine) itself.
ON_THE_REASONER = {"ticTacToe", "hanoi", "smallest_4player"}


@pytest.fixture(scope="module")
def np():
    return require_module("numpy")


_LOADED: dict[tuple[str, str], object] = {}


def loaded(name: str, engine: str):
    """The game ``name`` (of the corpus, or a path) as a ``GdlGame`` on ``engine``
    ("compiled-ref": a second compiled one), loaded once per module."""
    key = (name, engine)
    if key not in _LOADED:
        from gdl2pl.adapters import GdlGame

        path = Path(name) if name.endswith(".kif") else repository_game(name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # undeclared fluents, missing goals
            _LOADED[key] = GdlGame(path, engine=engine.removesuffix("-ref"))
    return _LOADED[key]


@pytest.fixture(scope="module", autouse=True)
def _close_games() -> Iterator[None]:
    yield
    for game in _LOADED.values():
        game.close()  # type: ignore[attr-defined]
    _LOADED.clear()


def expected(np, ref, state, form: str, num_actions: int):
    """What the batch must show for ``state``, from the adapters' per-state path."""
    node = ref.node(state)
    vec = ref.observation(state)
    planes = form == "planes"
    obs = ref.board.observation_planes(vec) if planes else np.asarray(vec, np.float32)
    masks = np.zeros((ref.num_roles, num_actions), np.int8)
    for r, ids in enumerate(node.legal):
        masks[r, list(ids)] = 1
    rewards = np.asarray(node.returns if node.terminal else [0.0] * ref.num_roles)
    return obs, masks, rewards, node.terminal, node.mover


def check_equal(np, batch, ref, states) -> None:
    for i, state in enumerate(states):
        assert batch.machine_state(i) == state, i
        obs, masks, rewards, terminal, mover = expected(
            np, ref, state, batch.observation_form, batch.num_actions)
        assert np.array_equal(batch.observations[i].astype(np.float32), obs), i
        assert np.array_equal(batch.action_masks[i], masks), i
        assert np.allclose(batch.rewards[i], rewards), i
        assert bool(batch.terminated[i]) == terminal, i
        assert int(batch.mover[i]) == mover, i
        assert not batch.illegal[i]


def play_alongside(np, name: str, engine: str, n: int, steps: int, seed: int,
                   form: str, use_masks: bool, solo: int) -> None:
    from gdl2pl.adapters.batch import GdlBatch

    game = loaded(name, "compiled")
    ref = loaded(name, engine) if engine != "compiled" else loaded(name, "compiled-ref")
    batch = GdlBatch(game, n, observation=form, seed=seed, solo=solo)
    rng = np.random.default_rng(seed)
    states = [ref.initial_state] * n
    check_equal(np, batch, ref, states)
    for _ in range(steps):
        if use_masks and rng.random() < 0.1:  # reset some games
            chosen = rng.random(n) < 0.5
            batch.reset(chosen)
            states = [ref.initial_state if c else s for c, s in zip(chosen, states, strict=True)]
            check_equal(np, batch, ref, states)
        active = rng.random(n) < 0.7 if use_masks else np.ones(n, bool)
        joint = np.zeros((n, ref.num_roles), np.int64)
        moves = []
        for i, state in enumerate(states):
            node = ref.node(state)
            move = []
            for r in range(ref.num_roles):
                legal = node.legal[r]
                if len(legal) == 1:  # played whatever the action says
                    joint[i, r] = rng.integers(0, batch.num_actions)
                    move.append(legal[0])
                elif legal:
                    joint[i, r] = legal[rng.integers(0, len(legal))]
                    move.append(int(joint[i, r]))
            moves.append(move)
        batch.step(joint, active if use_masks else None)
        for i, state in enumerate(states):
            if not active[i]:
                continue
            states[i] = ref.initial_state if ref.node(state).terminal else ref.next(state, moves[i])
        check_equal(np, batch, ref, states)


CASES = [(name, "compiled") for name in QUICK] + [(name, "prolog") for name in ON_THE_REASONER]


@pytest.mark.parametrize(("name", "engine"), CASES)
@settings(max_examples=6, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(n=st.integers(1, 70), steps=st.integers(1, 50), seed=st.integers(0, 2**32 - 1),
       form=st.sampled_from(["planes", "flat"]), use_masks=st.booleans(),
       solo=st.sampled_from([0, 3, 256]))
@example(n=70, steps=30, seed=1, form="planes", use_masks=True, solo=0)
@example(n=70, steps=30, seed=1, form="flat", use_masks=True, solo=256)
@example(n=300, steps=12, seed=2, form="planes", use_masks=True, solo=3)
def test_the_batch_equals_games_played_one_state_at_a_time(
    np, name: str, engine: str, n: int, steps: int, seed: int, form: str, use_masks: bool,
    solo: int,
) -> None:
    """``solo`` 0: every group bit-sliced; 256: every game one by one; 3: as it falls.
    Up to 64 games a group is one word an atom, up to 128 two, past that four (300: a
    group of 256 and one of 44)."""
    play_alongside(np, name, engine, n, steps, seed, form, use_masks, solo)


@pytest.mark.slow
@pytest.mark.parametrize("name", SLOW)
@settings(max_examples=3, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(n=st.integers(1, 70), steps=st.integers(1, 80), seed=st.integers(0, 2**32 - 1),
       form=st.sampled_from(["planes", "flat"]), use_masks=st.booleans(),
       solo=st.sampled_from([0, 3, 256]))
def test_the_batch_equals_games_played_one_state_at_a_time_on_bigger_games(
    np, name: str, n: int, steps: int, seed: int, form: str, use_masks: bool, solo: int
) -> None:
    play_alongside(np, name, "compiled", n, steps, seed, form, use_masks, solo)


def flip_game(k: int, seed: int = 0) -> str:
    """A game whose ``reach`` runs over a ring of ``k`` nodes with chords, written in
    random order, each edge switched on and off by a move: one cyclic group in the
    network, whose fixpoint differs from game to game."""
    rng = random.Random(seed)
    edges = [(i, (i + 1) % k) for i in range(k)] + [(i, (i * 7 + 3) % k) for i in range(0, k, 3)]
    rng.shuffle(edges)
    facts = [f"(edge e{j} n{a} n{b})" for j, (a, b) in enumerate(edges)]
    on = [f"(init (on e{j}))" for j in range(len(edges)) if rng.random() < 0.6]
    return "\n".join([
        "(role p)", "(init (step 0))", *on, *facts,
        *(f"(succ {i} {i + 1})" for i in range(8)),
        "(reach n0)",
        "(<= (reach ?y) (reach ?x) (edge ?e ?x ?y) (true (on ?e)))",
        "(<= (legal p (flip ?e)) (edge ?e ?x ?y) (reach ?x))",
        "(legal p wait)",
        "(<= (next (on ?e)) (true (on ?e)) (not (does p (flip ?e))))",
        "(<= (next (on ?e)) (edge ?e ?x ?y) (not (true (on ?e))) (does p (flip ?e)))",
        "(<= (next (step ?n)) (true (step ?m)) (succ ?m ?n))",
        "(<= terminal (true (step 8)))",
        f"(<= (goal p 100) (reach n{k // 2}))",
        f"(<= (goal p 0) (not (reach n{k // 2})))",
    ])


@pytest.mark.parametrize("solo", [0, 256])
def test_a_cyclic_group_reaches_its_fixpoint_in_every_game(np, tmp_path_factory, solo) -> None:
    """Every game of a group of 64 has its own edges on, so its own least fixpoint of
    ``reach``: the batch equals the reasoner game by game (bit-sliced: the worklist of
    words; one by one: the network's)."""
    path = tmp_path_factory.mktemp("flip") / "flip.kif"
    path.write_text(flip_game(30))
    play_alongside(np, str(path), "prolog", 300, 20, 5, "flat", True, solo)


def test_an_illegal_action_is_refused_with_nothing_stepped_or_ends_its_game(np) -> None:
    from gdl2pl.adapters.batch import GdlBatch

    batch = GdlBatch(loaded("ticTacToe", "compiled"), 3)
    before = batch.states()
    joint = batch.sample_actions()
    joint[1, 0] = 9  # xplayer's noop: not legal while it is to mark
    with pytest.raises(ValueError, match=r"game 1: action 9 of role 0 is not legal"):
        batch.step(joint)
    assert np.array_equal(batch.states(), before)
    batch.step(joint, illegal="end")
    assert batch.terminated.tolist() == [False, True, False]
    assert batch.illegal.tolist() == [False, True, False]
    assert batch.rewards[1].tolist() == [-1.0, 0.0]
    assert np.array_equal(batch.states()[1], before[1])  # the state stays
    assert not np.array_equal(batch.states()[0], before[0])
    batch.step(batch.sample_actions())  # game 1 restarts
    assert not batch.terminated[1] and not batch.illegal[1]


def test_a_game_that_has_ended_is_refused_without_auto_reset(np) -> None:
    from gdl2pl.adapters.batch import GdlBatch

    batch = GdlBatch(loaded("ticTacToe", "compiled"), 2, seed=4)
    while not batch.terminated.any():
        batch.step(batch.sample_actions())
    ended = int(np.flatnonzero(batch.terminated)[0])
    with pytest.raises(ValueError, match=f"game {ended} has ended"):
        batch.step(batch.sample_actions(), autoreset=False)
    batch.step(batch.sample_actions())  # auto-reset: back at the initial state
    assert batch.machine_state(ended) == batch.game.initial_state


def test_one_action_per_game_is_the_movers_in_a_turn_taking_game(np) -> None:
    from gdl2pl.adapters.batch import GdlBatch

    batch = GdlBatch(loaded("ticTacToe", "compiled"), 2)
    batch.step(np.array([0, 8]))
    assert batch.machine_state(0) != batch.machine_state(1)
    simultaneous = GdlBatch(loaded("connectFourSimultaneous", "compiled"), 2)
    with pytest.raises(ValueError, match="not turn-taking"):
        simultaneous.step(np.array([0, 0]))
    with pytest.raises(ValueError, match="shape"):
        batch.step(np.zeros((2, 3), np.int64))
    with pytest.raises(ValueError, match="integer"):
        batch.step(np.zeros((2, 2), np.float64))


def test_sampling_is_reproducible_from_the_seed(np) -> None:
    from gdl2pl.adapters.batch import GdlBatch

    def run(seed: int) -> list[bytes]:
        batch = GdlBatch(loaded("connectFour", "compiled"), 16, seed=seed)
        seen = []
        for _ in range(60):
            batch.step(batch.sample_actions())
            seen.append(batch.states().tobytes())
        return seen

    assert run(7) == run(7)
    assert run(7) != run(8)


def test_states_are_saved_and_restored(np) -> None:
    from gdl2pl.adapters.batch import GdlBatch

    batch = GdlBatch(loaded("connectFour", "compiled"), 8, seed=2)
    for _ in range(5):
        batch.step(batch.sample_actions())
    saved, obs, masks = batch.states(), batch.observations.copy(), batch.action_masks.copy()
    batch.step(batch.sample_actions())
    only = np.zeros(8, bool)
    only[:3] = True
    batch.set_states(saved, only)
    assert np.array_equal(batch.states()[:3], saved[:3])
    assert not np.array_equal(batch.states()[3:], saved[3:])
    batch.set_states(saved)
    assert np.array_equal(batch.observations, obs) and np.array_equal(batch.action_masks, masks)
    with pytest.raises(ValueError, match="states: shape"):
        batch.set_states(saved[:4])


def test_outputs_are_read_only_views_and_memory_is_stated(np) -> None:
    from gdl2pl.adapters.batch import GdlBatch

    batch = GdlBatch(loaded("ticTacToe", "compiled"), 10, observation="flat",
                     dtype=np.float32)
    with pytest.raises(ValueError):
        batch.observations[0, 0] = 1
    assert batch.observations.shape == (10, 29) and batch.observations.dtype == np.float32
    for game in ("ticTacToe", "hanoi", "connectFour"):
        for n in (1, 10, 64, 65, 1000):
            b = GdlBatch(loaded(game, "compiled"), n)
            outputs = b.observations.nbytes + b.action_masks.nbytes + b.rewards.nbytes
            assert outputs < b.memory_bytes <= n * b.memory_per_game + b.memory_fixed
    with pytest.raises(MemoryError, match="max_bytes"):
        GdlBatch(loaded("ticTacToe", "compiled"), 10**9)


def write_game(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "game.kif"
    path.write_text(text)
    return path


STUCK = """
(role p) (init (s 0))
(<= (legal p go) (true (s 0)))
(<= (next (s 1)) (does p go))
(<= terminal (true (s 2)))
(goal p 100)
"""

NO_GOAL = """
(role p) (init (s 0))
(legal p go)
(<= (next (s 1)) (does p go))
(<= terminal (true (s 1)))
(<= (goal p 100) (true (s 0)))
"""


def test_a_state_that_breaks_the_contract_is_reported_as_the_adapters_report_it(
    np, tmp_path: Path
) -> None:
    from gdl2pl.adapters import GdlGame
    from gdl2pl.adapters import UnrepresentableStateError
    from gdl2pl.adapters.batch import GdlBatch
    from gdl2pl.adapters.errors import MissingGoalWarning

    game = GdlGame(write_game(tmp_path, STUCK), engine="compiled", dynamics="simultaneous")
    try:
        batch = GdlBatch(game, 2)
        with pytest.raises(UnrepresentableStateError,
                           match=r"game 0 of the batch: role p has no legal move"):
            batch.step(np.zeros((2, 1), np.int32))
    finally:
        game.close()
    game = GdlGame(write_game(tmp_path, NO_GOAL), engine="compiled", missing_goal="error",
                   dynamics="simultaneous")
    try:
        batch = GdlBatch(game, 2, unrepresentable="raise")  # (the default marks the game)
        with pytest.raises(UnrepresentableStateError, match="role p has no goal value"):
            batch.step(np.zeros((2, 1), np.int32))
    finally:
        game.close()
    game = GdlGame(write_game(tmp_path, NO_GOAL), engine="compiled", missing_goal=30,
                   dynamics="simultaneous")
    try:
        batch = GdlBatch(game, 2)
        batch.step(np.zeros((2, 1), np.int32))
        assert batch.rewards[:, 0].tolist() == pytest.approx([-0.4, -0.4])
        assert "(s 1)" in game.missing_goal_met  # as GdlGame.node records it
    finally:
        game.close()
    game = GdlGame(write_game(tmp_path, NO_GOAL), engine="compiled", dynamics="simultaneous")
    try:
        batch = GdlBatch(game, 2)
        with pytest.warns(MissingGoalWarning, match="no goal value"):
            batch.step(np.zeros((2, 1), np.int32))
        assert batch.rewards[:, 0].tolist() == [0.0, 0.0]
    finally:
        game.close()


# -- the C type under hostile and careless use (run where a crash cannot end the suite) --

TICTACTOE = str(repository_game("ticTacToe"))

#: A child's preamble: a compiled game and a C Batch over it, with buffers of the
#: standard library only (no numpy: the C extension must not need it).
C_BATCH = f"""
import array, sys
from gdl2pl.compiled import load_machine
from gdl2pl.compiled._network import Batch
sm = load_machine({TICTACTOE!r}, "compiled")
net, N = sm._net, sm.network
R = len(N.legal)
move_action = [-1] * N.n_moves
for ms in N.legal:
    for k, (_, m) in enumerate(ms):
        move_action[m] = k
A = max(len(ms) for ms in N.legal)
F = N.n_fluents
start, at = list(range(F + 1)), list(range(F))
returns = [(int(v) - 50) / 50 for vs in N.goals for _, v in vs]
init = sm.fluents_of([sm.initial_state])[0]
def outputs(n, obs="b"):
    return (array.array(obs, bytes(n * F * array.array(obs).itemsize)),
            bytearray(n * R * A), array.array("f", [0.0] * (n * R)), bytearray(n),
            array.array("i", [0] * n), bytearray(n))
def make(n=2, size=None, **change):
    args = dict(network=net, n=n, init=init, move_action=move_action, n_actions=A,
                obs_start=start, obs_at=at, obs_size=F, goal_returns=returns,
                missing_return=0.0)
    args.update(zip(("observations", "masks", "rewards", "terminated", "mover", "illegal"),
                    outputs(n if size is None else size)))
    args.update(change)
    return Batch(**args)
"""


def in_child(code: str, timeout: float = 300, numpy: bool = True) -> str:
    """``code`` after the preamble, in a fresh Python (without numpy: any import of it
    fails, from the first line on)."""
    from test_compiled_hardening import in_child as run

    block = "" if numpy else "import sys\nsys.modules['numpy'] = None\n"
    return run(block + C_BATCH + textwrap.dedent(code), timeout)


def test_the_c_batch_works_without_numpy() -> None:
    out = in_child("""
        n = 3
        outs = outputs(n, "f")
        b = make(n, **dict(zip(("observations", "masks", "rewards", "terminated", "mover",
                                "illegal"), outs)))
        acts = array.array("q", [0] * (n * R))
        for _ in range(30):
            b.sample(acts)
            b.step(acts)
        print(b.n, len(b.get_states()) == n * b.state_bytes, sum(outs[0]) > 0,
              sys.modules["numpy"] is None)
    """, numpy=False)
    assert out.split() == ["3", "True", "True", "True"]


def test_every_width_of_group_steps_the_same_games() -> None:
    """A batch's games go in groups of 64, 128 or 256 (1, 2 or 4 words an atom: chosen
    by n, or asked for): whatever the width, bit-sliced, the same actions make the same
    states and the same outputs."""
    out = in_child("""
        n, seen = 300, []
        for width in (1, 2, 4):
            outs = outputs(n)
            b = make(n, width=width, **dict(zip(("observations", "masks", "rewards",
                                                 "terminated", "mover", "illegal"), outs)))
            b.solo = 0
            b.seed(5)
            acts = array.array("i", [0] * (n * R))
            trace = []
            for _ in range(12):
                b.sample(acts)
                b.step(acts)
                trace.append((b.get_states(), [bytes(o) for o in outs]))
            seen.append((b.width, trace))
        print([w for w, _ in seen], all(t == seen[0][1] for _, t in seen),
              len({s for s, _ in seen[0][1]}) > 1, make(100).width, make(64).width)
    """)
    assert out.split() == ["[1,", "2,", "4]", "True", "True", "2", "1"]


@pytest.mark.parametrize(("change", "error"), [
    ("observations=bytearray(5)", "observations: 58 items expected"),
    ("masks=bytes(2 * 2 * 10)", "writable"),
    ("rewards=array.array('i', [0] * 4)", "float32 or float64"),
    ("mover=bytearray(2)", "int32"),
    ("move_action=[99] * N.n_moves", "move_action: item 0 out of range"),
    ("move_action=[0] * N.n_moves", "two moves of role 0 have action id 0"),
    ("obs_at=[10**6] * F", "obs_at: item 0 out of range"),
    ("obs_start=[0] * (F + 1)", "spanning obs_at"),
    ("goal_returns=[0.0]", "one reward per goal entry"),
    ("goal_returns=['x'] * len(returns)", "not a number"),
    ("init=b'x'", "init: bytes, one per fluent"),
    ("n=0", "n >= 1"),
    ("width=3", "width: 1, 2 or 4 words a group, or 0 (by n)"),
    ("n=2**62, size=2", "overflows"),
    ("n=2**40, size=2", "items expected"),
    ("network=type(net).__new__(type(net))", "never built"),
])
def test_a_c_batch_of_bad_arguments_is_refused(change: str, error: str) -> None:
    out = in_child(f"""
        try:
            make({change})
            print("built")
        except Exception as e:
            print(type(e).__name__, str(e))
    """)
    assert error in out, out


def test_bad_calls_are_refused_and_a_rebuilt_network_too() -> None:
    out = in_child("""
        b = make(2)
        for call in (lambda: b.step(array.array("i", [0])),
                     lambda: b.step(array.array("d", [0.0] * 4)),
                     lambda: b.step(array.array("i", [0] * 4), bytearray(1)),
                     lambda: b.sample(bytes(16)),
                     lambda: b.state(2), lambda: b.state(-1),
                     lambda: b.set_states(bytes(1))):
            try:
                call()
                print("answered")
            except (ValueError, TypeError, IndexError, BufferError):
                print("refused")
        net.__init__(N.n_atoms, N.n_fluents, N.n_moves, N.rule_start, N.lit_start, N.lits,
                     N.state_program, N.move_program, N.legal, N.next, N.terminal,
                     [[(a, int(v)) for a, v in vs] for vs in N.goals])
        try:
            b.reset()
        except RuntimeError as e:
            print("rebuilt:", "built again" in str(e))
    """)
    assert out.split("\n")[:7] == ["refused"] * 7
    assert "rebuilt: True" in out


def test_batches_and_the_network_are_safe_for_any_interleaving_of_threads() -> None:
    """Two batches and single-state calls share one network from three threads, while
    the collector runs finalizers that let other threads in: each thread's answers are
    those it gets alone."""
    out = in_child("""
        import gc, threading, time
        def run_batch(seed, steps):
            b = make(64)
            b.solo = 0 if seed == 1 else 256  # bit-sliced, and one game at a time
            b.seed(seed)
            acts = array.array("i", [0] * (64 * R))
            seen = []
            for _ in range(steps):
                b.sample(acts)
                b.step(acts)
                seen.append(b.get_states())
                Yield()
            return seen
        bits = init
        def run_single(steps):
            seen, s = [], bits
            for i in range(steps):
                legal = net.legal(s)
                if net.terminal(s):
                    s = bits
                    continue
                s = net.next(s, [ms[i % len(ms)] for ms in legal])
                seen.append(s)
                Yield()
            return seen
        class Yield:
            def __init__(self):
                self.me = self
            def __del__(self):
                time.sleep(0)
        alone = [run_batch(1, 300), run_batch(2, 300), run_single(2000)]
        gc.set_threshold(5)
        got = [None] * 3
        def job(k, f, *a):
            got[k] = f(*a)
        threads = [threading.Thread(target=job, args=(0, run_batch, 1, 300)),
                   threading.Thread(target=job, args=(1, run_batch, 2, 300)),
                   threading.Thread(target=job, args=(2, run_single, 2000))]
        for t in threads: t.start()
        for t in threads: t.join()
        print([g == a for g, a in zip(got, alone)])
    """, timeout=600)
    assert out.strip() == "[True, True, True]"


def test_a_signal_in_a_long_step_is_raised_after_every_game_stepped() -> None:
    """A handler that raises (Ctrl-C) during a step of many games: the step finishes
    (the batch is never half stepped), then the error comes; a handler that calls the
    batch from inside its call is refused, never deadlocked."""
    out = in_child("""
        import signal
        n = 200_000
        b, twin = make(n), make(n)
        b.solo = twin.solo = 256  # one game at a time: a step of a second or so
        acts = array.array("i", [0] * (n * R))
        b.sample(acts)
        twin.step(acts)
        calls = []
        def handler(signum, frame):
            try:
                b.reset()
                calls.append("answered")
            except RuntimeError:
                calls.append("refused")
            raise KeyboardInterrupt
        signal.signal(signal.SIGALRM, handler)
        signal.setitimer(signal.ITIMER_REAL, 0.02)
        try:
            b.step(acts)
            print("finished before the signal")
        except KeyboardInterrupt:
            print("interrupted")
        signal.setitimer(signal.ITIMER_REAL, 0)
        print(calls, b.get_states() == twin.get_states())
    """)
    lines = out.strip().split("\n")
    assert lines == ["interrupted", "['refused'] True"], out


def test_sampled_actions_are_legal_and_uniform_on_both_paths() -> None:
    """Drawn from the initial state of 9,000 games: each of xplayer's 9 marks about
    1,000 times (a margin of 5 standard deviations), oplayer's noop always; with one
    move given no action id, its role's moves are drawn by the scan of its entries:
    never that move."""
    out = in_child("""
        from collections import Counter
        n = 9000
        for hole in (None, 4):
            table = list(move_action)
            if hole is not None:
                table[[m for _, m in N.legal[0]][hole]] = -1
            b = make(n, move_action=table)
            b.seed(11)
            acts = array.array("i", [0] * (n * R))
            b.sample(acts)
            xs = Counter(acts[0::2])
            print(sorted(xs), min(xs.values()) > 1000 - 5 * 30 and
                  max(xs.values()) < 1000 * 9 / (9 - (hole is not None)) + 5 * 31,
                  set(acts[1::2]))
    """)
    first, second = out.strip().split("\n")
    assert first == "[1, 2, 3, 4, 5, 6, 7, 8, 9] True {0}"  # (action ids: entries in order)
    assert second == "[1, 2, 3, 5, 6, 7, 8, 9] True {0}"


@pytest.mark.parametrize("policy", ["random", "linear"])
def test_the_self_play_example_collects_outcomes_from_the_movers_side(np, policy) -> None:
    """examples/selfplay_connectfour.py: in every finished game the players alternate,
    the last mover won (+1) or drew (0), and every position of a game carries that
    outcome from its mover's side."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "examples" / "selfplay_connectfour.py"
    spec = importlib.util.spec_from_file_location("selfplay_connectfour", path)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    data = example.collect(repository_game("connectFour"), 64, 80, policy, seed=3)
    n = len(data["values"])
    assert data["planes"].shape == (n, 4, 6, 8) and data["masks"].shape == (n, 9)
    assert (data["masks"].sum(axis=1) >= 1).all()
    assert sum(data["first_player"].values()) == data["finished"] > 0
    episodes = data["episodes"]
    for e in np.unique(episodes):
        players = data["players"][episodes == e]
        values = data["values"][episodes == e]
        assert (np.diff(players) != 0).all()  # turns alternate
        assert values[-1] in (1.0, 0.0)  # the last mover won or drew
        assert np.array_equal(values, np.where(players == players[-1], values[-1],
                                               -values[-1]))


def test_games_a_batch_cannot_hold_are_refused_saying_why(np) -> None:
    """A game on the reasoner only, or whose moves are numbered as first seen in play."""
    from adapters_support import OWN_GAMES

    from gdl2pl.adapters import AdapterError
    from gdl2pl.adapters import GdlGame
    from gdl2pl.adapters.batch import GdlBatch

    with pytest.raises(AdapterError, match="needs the compiled engine"):
        GdlBatch(loaded("ticTacToe", "prolog"), 4)
    game = GdlGame(OWN_GAMES / "adapter_no_input.kif", max_terms=1, engine="compiled")
    try:
        with pytest.raises(AdapterError, match="numbered as first seen"):
            GdlBatch(game, 4)
    finally:
        game.close()
    with pytest.raises(AdapterError, match="at least one game"):
        GdlBatch(loaded("ticTacToe", "compiled"), 0)
