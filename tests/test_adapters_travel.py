"""States, games and environments travel: pickle, OpenSpiel's serialization, copies, and
a worker process; the reachability tables and the first-seen fallback; the metadata."""

from __future__ import annotations

import copy
import multiprocessing
import pickle
import random
import warnings

import pytest
from adapters_support import OWN_GAMES
from adapters_support import repository_game
from adapters_support import require_module

from gdl2pl import parse_game
from gdl2pl.adapters import AdapterError
from gdl2pl.adapters import GdlGame
from gdl2pl.adapters.reach import reachable_domains
from gdl2pl.adapters.reach import relaxed_game
from gdl2pl.kif import parse_kif_term

COUNTER = """(role r) (init (n z))
(<= (next (n (s ?x))) (true (n ?x)) (does r go))
(legal r go) (legal r stop)
(<= terminal (does r stop))
(goal r 50)"""


def _play_first_legal(blob: bytes) -> tuple[list[int], str, list[float]]:
    """In a worker: unpickle an OpenSpiel state, play the first legal action to the end."""
    import gdl2pl.openspiel  # noqa: F401  (registers the game)

    state = pickle.loads(blob)
    legal = state.legal_actions()
    text = str(state)
    while not state.is_terminal():
        state.apply_action(state.legal_actions()[0])
    return legal, text, state.returns()


def test_openspiel_state_travels_to_a_worker_process():
    require_module("pyspiel")
    import gdl2pl.openspiel as gos

    game = gos.load_game("ticTacToe.kif")
    state = game.new_initial_state()
    state.apply_action(4)
    local = state.clone()
    expected_legal, expected_text = local.legal_actions(), str(local)
    while not local.is_terminal():
        local.apply_action(local.legal_actions()[0])
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        legal, text, returns = pool.apply(_play_first_legal, (pickle.dumps(state),))
    assert (legal, text, returns) == (expected_legal, expected_text, local.returns())


def test_openspiel_serialization_round_trip():
    pyspiel = require_module("pyspiel")
    import gdl2pl.openspiel as gos

    game = gos.load_game("ticTacToe.kif")
    state = game.new_initial_state()
    for a in (0, 4, 8):
        state.apply_action(a)
    text = pyspiel.serialize_game_and_state(game, state)
    game2, state2 = pyspiel.deserialize_game_and_state(text)
    assert str(state2) == str(state)
    assert state2.legal_actions() == state.legal_actions()
    assert state2.history() == state.history()
    assert game2.gdl is game.gdl  # the game already loaded in this process


def test_pettingzoo_env_copies_and_pickles():
    require_module("pettingzoo")
    from gdl2pl.pettingzoo import raw_env

    e = raw_env("ticTacToe.kif")
    e.reset(seed=0)
    e.step(4)
    for twin in (copy.deepcopy(e), pickle.loads(pickle.dumps(e))):
        assert twin.agent_selection == e.agent_selection
        obs, mine = twin.observe(twin.agent_selection), e.observe(e.agent_selection)
        assert obs.keys() == mine.keys() and all((obs[k] == mine[k]).all() for k in obs)
        mask = twin.infos[twin.agent_selection]["action_mask"]
        assert (mask == e.infos[e.agent_selection]["action_mask"]).all()
        twin.step(0)
        assert e.infos[e.agent_selection]["action_mask"][0] == 1  # the original is untouched


def test_gymnasium_env_pickles():
    require_module("gymnasium")
    from gdl2pl.gymnasium import GdlEnv

    env = GdlEnv("buttons.kif")
    obs, info = env.reset(seed=0)
    twin = pickle.loads(pickle.dumps(env))
    assert (twin._obs() == obs).all()
    action = int(info["action_mask"].argmax())
    assert (twin.step(action)[0] == env.step(action)[0]).all()


def test_relaxation_keeps_what_the_rules_can_produce():
    game = parse_game("""(role a) (role b) (init (at 1)) (succ 1 2) (succ 2 3)
        (<= (next (at ?y)) (true (at ?x)) (succ ?x ?y) (not (true (blocked))))
        (<= (legal a (go ?y)) (true (at ?x)) (succ ?x ?y))
        (legal b noop) (<= terminal (true (at 3))) (goal a 100) (goal b 0)""")
    text = "\n".join(str(c) for c in relaxed_game(game, coarse=True).clauses)
    assert "(not (true (blocked)))" not in text  # a state-dependent negation is dropped
    from gdl2pl.bridge import StateMachine

    with StateMachine(game) as sm:
        reach = reachable_domains(game, sm.roles, "g", 100)
    assert {str(f) for f in reach.fluents} == {"(at 1)", "(at 2)", "(at 3)"}
    assert {str(m) for m in reach.moves[parse_kif_term("a")]} == {"(go 2)", "(go 3)"}
    assert {str(m) for m in reach.moves[parse_kif_term("b")]} == {"noop"}


def test_unbounded_game_numbers_moves_and_fluents_as_first_seen(tmp_path):
    path = tmp_path / "counter.kif"
    path.write_text(COUNTER)
    g = GdlGame(path, max_terms=50, num_distinct_actions=3, analysis_states=0)
    try:
        assert g.actions_from == "first-seen" and g.base_from == "first-seen"
        assert g.action_space_sizes == (3,)
        meta = g.gdl_metadata()
        assert meta["actions"].status == "assumed"
        assert "cannot" in meta["actions"].how or "bound" in meta["actions"].how
        node = g.node(g.initial_state)
        assert len(node.legal[0]) == 2
        nxt = g.next(g.initial_state, [[str(m) for m in g.moves[0]].index("go")])
        assert sum(g.observation(nxt)) == 1
        twin = pickle.loads(pickle.dumps(g))
        assert twin is g  # the same key in this process
    finally:
        g.close()


def test_metadata_says_what_is_proved():
    g = GdlGame(OWN_GAMES / "adapter_no_input.kif")
    try:
        meta = g.gdl_metadata()
        assert meta["actions"].value == "reachability" and meta["actions"].status == "proved"
        assert meta["dynamics"].status == "proved"
        # the walker may go from b back to a, and stay at a, for ever: no length holds
        # (it was "proved" 2, the depth of the search through its three states)
        assert meta["max_game_length"].status == "assumed"
        assert meta["max_game_length"].value is None
    finally:
        g.close()


@pytest.mark.parametrize("name", ["chess", "checkers"])
def test_flagship_games_load_with_reachable_moves(name):
    require_module("pyspiel")
    import gdl2pl.openspiel as gos

    game = gos.load_game(repository_game(name), max_terms=10_000)  # default options else
    assert game.gdl.actions_from == "reachability"
    state = game.new_initial_state()
    assert state.legal_actions()
    meta = game.gdl_metadata()
    # chess ends at move 200 without goals unless mated: 50 is assumed there, and said so
    assert meta["missing_goal"].status == "assumed" and meta["missing_goal"].value == 50
    # the enumeration is cut off; the goal rules prove zero-sum (the assumed 50 fits)
    assert (meta["utility"].value, meta["utility"].status) == ("zero-sum", "proved")


@pytest.mark.parametrize("name", ["blokbox_simple", "breakthrough", "2pffa", "checkers"])
def test_reachability_covers_random_play(name):
    """Soundness: every fluent and legal move met in random matches is in the tables."""
    from gdl2pl import read_game
    from gdl2pl.bridge import StateMachine

    path = repository_game(name)
    with StateMachine.from_file(path) as sm:
        reach = reachable_domains(read_game(path), sm.roles, name, 100_000)
        sm.seed(1)
        for _ in range(3):
            state = sm.initial_state
            for _ in range(60):
                assert set(state) <= reach.fluents
                if sm.is_terminal(state):
                    break
                for role, moves in zip(sm.roles, sm.all_legal_moves(state), strict=True):
                    assert set(moves) <= reach.moves[role]
                state = sm.random_next_state(state)


def test_unpickling_refuses_a_game_whose_tables_differ():
    from gdl2pl.adapters.game import _shared_game

    g = GdlGame(OWN_GAMES / "adapter_no_input.kif")
    try:
        fn, args = g.__reduce__()
        assert fn(*args) is g
        path, options, tables, _, pack = args
        with pytest.raises(AdapterError, match="differ from where it was pickled"):
            _shared_game(path, options, tables, ("first-seen", "first-seen", "0" * 64), pack)
    finally:
        g.close()


def test_a_closed_game_is_not_shared():
    g = GdlGame.shared(OWN_GAMES / "adapter_no_input.kif")
    assert GdlGame.shared(OWN_GAMES / "adapter_no_input.kif") is g
    g.close()
    h = GdlGame.shared(OWN_GAMES / "adapter_no_input.kif")
    try:
        assert h is not g and h.node(h.initial_state).legal
    finally:
        h.close()


def test_a_kind_search_stopped_at_its_deadline_leaves_the_game_answering() -> None:
    """The game-kind search runs under ``analysis_seconds``; its deadline strikes inside
    tabling at any point. The game's questions go on being answered after it (they
    failed with "Tabling dependency error" when the search ran in the caller's thread)."""
    rng = random.Random(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        game = GdlGame(repository_game("chess"), analysis_seconds=0.5)
    try:
        for seed in range(20):
            game.analysis_seconds = rng.uniform(0.01, 1.0)
            game.analyse(10**6, 10**7, 10**6, seed)
            s = game.initial_state
            moves = game.sm.all_legal_moves(s)
            after = game.sm.next_state(s, [ms[0] for ms in moves])
            assert game.sm.all_legal_moves(after)
    finally:
        game.close()
