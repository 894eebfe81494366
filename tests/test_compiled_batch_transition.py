"""A batch as a learner wants it (issue 52, item 7): ``GdlBatch.transition``, the
functional step (``states, actions -> states``), gives what ``set_states`` then ``step``
then ``states()`` give, whether the states given are the batch's own or any others; the
packed states are each game's fluents; a terminal state the adapters cannot score marks
its game, the others play on (``unrepresentable="raise"`` keeps the old error)."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from adapters_support import repository_game
from adapters_support import require_module

pytestmark = pytest.mark.compiled

GAMES = ["ticTacToe", "connectFour", "3pConnectFour", "connectFourSimultaneous", "breakthrough"]


@pytest.fixture(scope="module")
def np():
    return require_module("numpy")


_LOADED: dict[str, object] = {}


def loaded(name: str):
    if name not in _LOADED:
        from gdl2pl.adapters import GdlGame

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _LOADED[name] = GdlGame(repository_game(name), engine="compiled")
    return _LOADED[name]


@pytest.fixture(scope="module", autouse=True)
def _close_games() -> Iterator[None]:
    yield
    for game in _LOADED.values():
        game.close()  # type: ignore[attr-defined]
    _LOADED.clear()


def outputs(b):
    return [a.copy() for a in (b.observations, b.action_masks, b.rewards, b.terminated,
                               b.mover, b.illegal, b.unrepresentable)]


def same(np, xs, ys) -> bool:
    return all(np.array_equal(x, y) for x, y in zip(xs, ys, strict=True))


@pytest.mark.parametrize("name", GAMES)
@pytest.mark.parametrize("n", [1, 70, 300])
def test_the_packed_states_are_each_games_fluents(np, name: str, n: int) -> None:
    """``states()`` (64 fluents of 64 games at a time, a bit matrix transposed) holds
    bit k of a game's row where fluent k of the network holds in its state, as the
    game's ``MachineState`` says; ``set_states`` puts them back, in any order."""
    from gdl2pl.adapters.batch import GdlBatch

    b = GdlBatch(loaded(name), n, seed=n)
    for _ in range(6):
        b.step(b.sample_actions())
    packed = b.states()
    fluents = b.sm.network.fluents
    for i in range(0, n, max(1, n // 17)):
        state = b.machine_state(i)
        bits = np.unpackbits(packed[i], bitorder="little")[: len(fluents)]
        held = {b.sm.fluent_term(k) for k in np.flatnonzero(bits)}
        assert held == set(state.fluents)
    order = np.random.default_rng(n).permutation(n)
    b.set_states(packed[order])
    assert np.array_equal(b.states(), packed[order])


@pytest.mark.parametrize("name", GAMES)
def test_a_transition_is_set_states_then_step(np, name: str) -> None:
    """Random states (of other games of the batch, shuffled), the batch's own states
    given back, a mask of games to step, an illegal action ending its game: each
    transition gives the states and outputs that ``set_states``, ``step`` and
    ``states()`` give on a second batch."""
    from gdl2pl.adapters.batch import GdlBatch

    n = 150
    game = loaded(name)
    fun, ref = GdlBatch(game, n, seed=1), GdlBatch(game, n, seed=1)
    rng = np.random.default_rng(7)
    states = fun.states()
    seen = [states]
    for k in range(24):
        if k % 5 == 4:  # states from elsewhere: shuffled from ones seen before
            pool = np.concatenate(seen[-3:])
            states = pool[rng.integers(0, len(pool), n)]
        ref.set_states(states)
        actions = ref.sample_actions()
        mask = rng.random(n) < 0.8 if k % 3 == 0 else None
        illegal = "raise"
        if k % 7 == 6:  # an action past the action table ends its game
            actions[0, :] = game.num_actions + 5
            illegal = "end"
        ref.step(actions, mask, illegal=illegal)
        got = fun.transition(states, actions, mask, illegal=illegal)
        assert np.array_equal(got.states, ref.states())
        assert same(np, outputs(fun), outputs(ref))
        assert got.rewards is fun.rewards and not got.states.flags.writeable
        states = got.states
        seen.append(states)


def test_one_action_per_game_reads_the_movers_of_the_states_given(np) -> None:
    from gdl2pl.adapters.batch import GdlBatch

    game = loaded("ticTacToe")
    fun, ref = GdlBatch(game, 64, seed=3), GdlBatch(game, 64, seed=3)
    for _ in range(3):
        ref.step(ref.sample_actions())
    other = ref.states()  # o to move in some, x in others: not the batch's own
    ref.set_states(other)
    movers = ref.mover.copy()
    joint = ref.sample_actions()
    one = joint[np.arange(64), np.maximum(movers, 0)]
    ref.step(one)
    got = fun.transition(other, one)
    assert np.array_equal(got.states, ref.states())
    assert same(np, outputs(fun), outputs(ref))
    with pytest.raises(ValueError, match="states: shape"):
        fun.transition(other[:3], one)


NO_GOAL = """
(role p) (init (s 0))
(succ 0 1) (succ 1 2)
(<= (legal p (go ?x)) (true (s ?y)) (succ ?y ?x))
(<= (legal p stop) (true (s ?y)))
(<= (next (s ?x)) (does p (go ?x)))
(<= (next halt) (does p stop))
(<= terminal (true (s 2)))
(<= terminal (true halt))
(<= (goal p 100) (true (s 2)))
"""


def test_an_unscorable_terminal_state_marks_its_game_and_the_others_play_on(
    np, tmp_path: Path
) -> None:
    """``halt`` is terminal without a goal value: under ``missing_goal="error"`` a game
    that halts is marked (reward 0), one that reaches (s 2) is scored, and the batch
    goes on; with ``unrepresentable="raise"`` the step raises as before."""
    from gdl2pl.adapters import GdlGame
    from gdl2pl.adapters import UnrepresentableStateError
    from gdl2pl.adapters.batch import GdlBatch

    path = tmp_path / "halt.kif"
    path.write_text(NO_GOAL)
    # (the kind analysis, which would meet halt, is the GdlGame's: not asked here)
    game = GdlGame(path, engine="compiled", missing_goal="error", dynamics="simultaneous")
    try:
        go, stop = (game.action_of[0][game.sm.term(m)] for m in ("(go 1)", "stop"))
        b = GdlBatch(game, 4)
        b.step(np.array([[stop], [go], [stop], [go]]))
        assert b.terminated.tolist() == [True, False, True, False]
        assert b.unrepresentable.tolist() == [True, False, True, False]
        assert b.rewards[:, 0].tolist() == [0.0, 0.0, 0.0, 0.0]
        go2 = game.action_of[0][game.sm.term("(go 2)")]
        b.step(np.array([[0], [go2], [0], [stop]]))  # 0 and 2 restart (not read)
        assert b.terminated.tolist() == [False, True, False, True]
        assert b.unrepresentable.tolist() == [False, False, False, True]
        assert b.rewards[:, 0].tolist() == [0.0, 1.0, 0.0, 0.0]
        strict = GdlBatch(game, 4, unrepresentable="raise")
        with pytest.raises(UnrepresentableStateError,
                           match="game 0 of the batch: role p has no goal value"):
            strict.step(np.array([[stop], [go], [stop], [go]]))
    finally:
        game.close()


@pytest.mark.parametrize(("name", "n"), [("connectFour", 1024), ("breakthrough", 300),
                                         ("3pConnectFour", 200)])
def test_groups_stepped_on_several_threads_give_the_same_games(np, name: str, n: int) -> None:
    """``threads=3``: the groups of games on three threads (each with its own scratch,
    every group bit-sliced but the calling thread's): the same states and outputs as one
    thread, step for step, by ``step``, ``transition`` and ``reset``; the memory the
    threads take is within ``memory_fixed``."""
    from gdl2pl.adapters.batch import GdlBatch

    game = loaded(name)
    one, many = GdlBatch(game, n, seed=4), GdlBatch(game, n, seed=4, threads=3)
    assert many.threads == 3 and one.threads == 1
    assert many.memory_bytes <= n * many.memory_per_game + many.memory_fixed
    actions = np.zeros((n, one.num_roles), np.int64)
    states = many.states()
    for k in range(30):
        one.sample_actions(actions)
        one.step(actions)
        if k % 2:
            many.step(actions)
            states = many.states()
        else:
            states = many.transition(states, actions).states
        assert np.array_equal(one.states(), states)
        assert same(np, outputs(one), outputs(many))
    half = np.arange(n) % 2 == 0
    one.reset(half)
    many.reset(half)
    assert same(np, outputs(one), outputs(many))
    many.threads = 1
    assert many.threads == 1
    with pytest.raises(ValueError, match="threads is 1 to 64"):
        many.threads = 0


def test_problems_met_on_several_threads_are_reported_as_on_one(np, tmp_path: Path) -> None:
    """The first problem of a call (by game) is the same whichever thread met it: here
    every game's role has no legal move after its first step."""
    from gdl2pl.adapters import GdlGame
    from gdl2pl.adapters import UnrepresentableStateError
    from gdl2pl.adapters.batch import GdlBatch

    path = tmp_path / "stuck.kif"
    path.write_text("""
(role p) (init (s 0))
(<= (legal p go) (true (s 0)))
(<= (next (s 1)) (does p go))
(<= terminal (true (s 2)))
(goal p 100)
""")
    game = GdlGame(path, engine="compiled", dynamics="simultaneous")
    try:
        for threads in (1, 4):
            batch = GdlBatch(game, 1024, threads=threads)
            mask = np.arange(1024) >= 700  # games of the third and fourth groups only
            with pytest.raises(UnrepresentableStateError,
                               match=r"game 700 of the batch: role p has no legal move"):
                batch.step(np.zeros((1024, 1), np.int32), mask)
    finally:
        game.close()
