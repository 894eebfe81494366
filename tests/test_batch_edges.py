"""The batch and its vector environment at their edges (issue 48, items 5, 6 and 9):

- one action per game: an id no int32 holds is the id given (refused as not legal, or
  ending its game), never wrapped to another, legal one; an unsigned id no int64 holds is
  refused;
- one action per game where several roles choose is refused, saying where, whatever the
  game's kind analysis (cut short) took the game for;
- a closed batch and a closed vector environment refuse every call; a numpy integer seeds
  the vector environment as the same Python integer does.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from adapters_support import repository_game
from adapters_support import require_module

pytestmark = pytest.mark.compiled


@pytest.fixture(scope="module")
def np():
    return require_module("numpy")


@pytest.fixture(scope="module")
def tictactoe(np) -> Iterator[object]:
    from gdl2pl.adapters import GdlGame

    game = GdlGame(repository_game("ticTacToe"), engine="compiled")
    yield game
    game.close()


# -- item 5: ids that do not fit -------------------------------------------------------


@pytest.mark.parametrize("big", [2**32, -(2**32) + 2, 2**33 + 4, 2**31, -(2**31) - 1])
def test_one_action_per_game_takes_the_id_given_never_a_wrapped_one(np, tictactoe, big) -> None:
    """``2**32`` is no action of tic-tac-toe's 10: it is not legal, where its low 32 bits
    (0, 2, 4: marks) would be."""
    from gdl2pl.adapters.batch import GdlBatch

    batch = GdlBatch(tictactoe, 2)
    before = batch.states()
    with pytest.raises(ValueError, match=rf"game 0: action {big} of role 0 is not legal"):
        batch.step(np.array([big, 0], np.int64))
    assert np.array_equal(batch.states(), before)  # nothing stepped
    batch.step(np.array([big, 0], np.int64), illegal="end")
    assert batch.illegal.tolist() == [True, False]
    assert batch.rewards[0].tolist() == [-1.0, 0.0]
    assert np.array_equal(batch.states()[0], before[0])  # the game ended where it was


def test_ids_no_int64_holds_are_refused_in_either_form(np, tictactoe) -> None:
    from gdl2pl.adapters.batch import GdlBatch

    batch = GdlBatch(tictactoe, 2)
    huge = np.array([2**64 - 1, 0], np.uint64)  # -1 as an int64, 0 as an int32
    with pytest.raises(ValueError, match="18446744073709551615 is no action id"):
        batch.step(huge)
    with pytest.raises(ValueError, match="18446744073709551615 is no action id"):
        batch.step(np.stack([huge, huge], axis=1))
    batch.step(np.array([4, 0], np.uint64))  # ids that fit, unsigned, are taken as they are
    assert str(batch.machine_state(0)).count(" x)") == 1


# -- item 6: one action where several roles choose ---------------------------------------

#: Role a chooses alone for three steps, then a and b both choose: a kind analysis that
#: stops after two states (and a random match of one step) takes it for turn-taking.
LATE_SIMULTANEOUS = """
(role a) (role b)
(init (t 0))
(succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4)
(choice 1) (choice 2)
(<= (legal a (m ?c)) (choice ?c))
(<= (legal b (m ?c)) (true (t 3)) (choice ?c))
(<= (legal b noop) (true (t ?n)) (distinct ?n 3))
(<= (next (t ?m)) (true (t ?n)) (succ ?n ?m))
(<= (next (picked ?r ?c)) (does ?r (m ?c)))
(<= terminal (true (t 4)))
(goal a 50) (goal b 50)
"""


def test_one_action_per_game_is_refused_where_several_roles_choose(np, tmp_path: Path) -> None:
    from gdl2pl.adapters import GdlGame
    from gdl2pl.adapters.batch import GdlBatch

    path = tmp_path / "late.kif"
    path.write_text(LATE_SIMULTANEOUS)
    game = GdlGame(path, engine="compiled", analysis_states=2, analysis_edges=4,
                   analysis_steps=1)
    try:
        assert game.turn_taking and not game.kind.proved  # the analysis was cut short
        assert game.gdl_metadata()["dynamics"].status == "assumed"
        batch = GdlBatch(game, 3)
        for _ in range(3):  # a alone chooses: one action per game is a's
            batch.step(np.array([0, 1, 0]))
        assert batch.mover.tolist() == [-1, -1, -1]
        before = batch.states()
        with pytest.raises(ValueError, match=r"late.kif: game 1 of the batch: roles a, b all "
                                             r"have a choice in state .*\(t 3\).*shape \(N, "
                                             r"roles\)"):
            batch.step(np.array([0, 1, 0]), games=np.array([False, True, True]))
        assert np.array_equal(batch.states(), before)  # nothing stepped
        batch.step(np.array([0, 1, 0]), games=np.zeros(3, bool))  # none stepped: nothing asked
        batch.step(np.array([[0, 1], [1, 1], [0, 0]]))  # one per role: both are played
        picked = {str(f) for f in batch.machine_state(0)}
        assert {"(picked a 1)", "(picked b 2)"} <= picked, picked
        assert batch.terminated.all()
        batch.step(np.array([0, 0, 0]))  # ended: restarted, their actions not read
        assert batch.mover.tolist() == [0, 0, 0]
    finally:
        game.close()


# -- item 9: after close -----------------------------------------------------------------


def test_a_closed_batch_refuses_every_call(np, tictactoe) -> None:
    from gdl2pl.adapters.batch import GdlBatch
    from gdl2pl.bridge import GameClosedError

    lent = GdlBatch(tictactoe, 2)
    owned = GdlBatch(repository_game("ticTacToe"), 2)
    states = lent.states()
    for batch in (lent, owned):
        batch.close()
        batch.close()  # idempotent
        calls = [
            lambda b=batch: b.step(np.zeros((2, 2), np.int64)),
            lambda b=batch: b.step(np.zeros(2, np.int64)),
            lambda b=batch: b.reset(),
            lambda b=batch: b.sample_actions(),
            lambda b=batch: b.seed(1),
            lambda b=batch: b.states(),
            lambda b=batch: b.set_states(states),
            lambda b=batch: b.machine_state(0),
            lambda b=batch: b.memory_bytes,
        ]
        for call in calls:
            with pytest.raises(GameClosedError, match=r"ticTacToe\.kif: the batch is closed"):
                call()
    assert tictactoe.sm.legal_moves(tictactoe.initial_state, "xplayer")  # still its lender's
    sm = owned.game.sm
    with pytest.raises(GameClosedError):  # the batch loaded it: unloaded
        sm.legal_moves(sm.initial_state, "xplayer")


@pytest.fixture(scope="module")
def gymnasium(np):
    return require_module("gymnasium")


def vector_env(n: int = 4, **options):
    from gdl2pl.gymnasium.vector import GdlVectorEnv

    return GdlVectorEnv(n, str(repository_game("ticTacToe")), **options)


def test_numpy_integers_seed_the_vector_env_as_python_integers_do(np, gymnasium) -> None:
    def run(seed: object) -> list[bytes]:
        envs = vector_env()
        try:
            obs, info = envs.reset(seed=seed)
            seen = [obs.tobytes()]
            for _ in range(12):
                obs, *_, info = envs.step(np.argmax(info["action_mask"], axis=1))
                seen.append(obs.tobytes())
            return seen
        finally:
            envs.close()

    plain = run(3)
    assert run(np.int64(3)) == plain and run(np.uint8(3)) == plain
    assert run([np.int64(3), 4, 5, 6]) == plain and run(np.array([3, 4, 5, 6])) == plain
    assert run(4) != plain
    envs = vector_env()
    try:
        for bad in ("3", 3.0, True, [], [None]):
            with pytest.raises(TypeError, match="seed: an integer or a list of integers"):
                envs.reset(seed=bad)
    finally:
        envs.close()


def test_a_closed_vector_env_refuses_every_call(np, gymnasium) -> None:
    from gymnasium.error import ClosedEnvironmentError

    from gdl2pl.bridge import GameClosedError

    envs = vector_env(render_mode="ansi")
    envs.reset(seed=0)
    envs.close()
    envs.close()  # idempotent
    for call in (lambda: envs.step(np.zeros(4, np.int64)), lambda: envs.reset(seed=1),
                 envs.render):
        with pytest.raises(ClosedEnvironmentError, match=r"ticTacToe\.kif: the GdlVectorEnv "
                                                         r"is closed"):
            call()
    with pytest.raises(GameClosedError):
        envs.batch.states()
