"""The adapters on the compiled engine: ``engine="compiled"`` plays the same games as the
reasoner. For any seed, a random OpenSpiel match chosen on the Prolog engine, replayed
action by action on the compiled one, passes through the same states: the same player
to move, legal actions, observation tensor, terminal flag and returns at every step.
The analyses (game kind, tables of moves and fluents) stay the reasoner's."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from adapters_support import repository_game
from adapters_support import require_module
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from prolog_env import require_prolog

from gdl2pl.adapters import AdapterError
from gdl2pl.adapters import GdlGame
from gdl2pl.bridge import StateMachine
from gdl2pl.compiled import AutoMachine
from gdl2pl.compiled import CompiledMachine

pytestmark = pytest.mark.compiled

GAMES = ["ticTacToe", "connectFour"]


@pytest.fixture(scope="module", autouse=True)
def _prolog() -> Iterator[None]:
    require_prolog()
    yield


@pytest.fixture(scope="module")
def pyspiel():
    return require_module("pyspiel")


def _openspiel(name: str, engine: str):
    from gdl2pl.openspiel import load_game

    return load_game(repository_game(name), engine=engine)


def _trajectory(game, actions: list[int] | None, seed: int) -> tuple[list[tuple], list[int]]:
    """Play ``game`` from its initial state: the given actions, or (None) uniformly random
    legal ones drawn from ``seed``. Every step's (player, legal actions, observation,
    terminal, returns), and the actions played."""
    rng = random.Random(seed)
    state = game.new_initial_state()
    seen, played = [], []
    while True:
        terminal = state.is_terminal()
        player = state.current_player()
        legal = [] if terminal else state.legal_actions()
        observation = list(state.observation_tensor(0))
        seen.append((player, legal, observation, terminal, state.returns()))
        if terminal:
            return seen, played
        a = rng.choice(legal) if actions is None else actions[len(played)]
        played.append(a)
        state.apply_action(a)


@pytest.mark.parametrize("name", GAMES)
@settings(
    max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 2**31 - 1))
def test_openspiel_random_matches_agree(pyspiel, name, seed):
    prolog, compiled = _openspiel(name, "prolog"), _openspiel(name, "compiled")
    assert type(prolog.gdl.sm) is StateMachine
    assert type(compiled.gdl.sm) is CompiledMachine
    want, actions = _trajectory(prolog, None, seed)
    got, _ = _trajectory(compiled, actions, seed)
    assert got == want
    assert want[-1][3]  # the match ended in a terminal state


@pytest.mark.parametrize("name", GAMES)
def test_openspiel_random_sim_test_on_the_compiled_engine(pyspiel, name):
    game = _openspiel(name, "compiled")
    pyspiel.random_sim_test(game, num_sims=3, serialize=True, verbose=False)


def test_registered_game_takes_the_engine_parameter(pyspiel):
    import gdl2pl.openspiel  # noqa: F401 (registers "gdl")

    game = pyspiel.load_game(
        "gdl", {"game": str(repository_game("ticTacToe")), "engine": "compiled"}
    )
    assert game.gdl.engine_choice.engine == "compiled"
    assert game.get_parameters()["engine"] == "compiled"


def test_the_analyses_stay_the_reasoners():
    g = GdlGame(repository_game("ticTacToe"), engine="compiled")
    try:
        assert isinstance(g.sm, CompiledMachine)
        assert g.reasoner is g.sm.prolog
        p = GdlGame(repository_game("ticTacToe"), engine="prolog")
        try:
            assert p.engine_choice.engine == "prolog" and p.reasoner is p.sm
            # The same tables and kind, from the same analyses.
            assert (g.moves, g.base, g.kind) == (p.moves, p.base, p.kind)
        finally:
            p.close()
    finally:
        g.close()


def test_the_adapters_and_the_playing_commands_default_to_auto():
    """Speed where users need it: the adapters, serve, match and simulate start on the
    reasoner and switch to the network; the teaching and checking commands stay on the
    reasoner, the definition of the game's meaning."""
    from gdl2pl.cli.main import _parser

    g = GdlGame(repository_game("ticTacToe"))
    try:
        assert isinstance(g.sm, AutoMachine) and g.reasoner is g.sm.prolog
        assert g.sm.wait_for_engine(60).engine == "compiled"
        assert g.engine_choice.engine == "compiled"
    finally:
        g.close()
    game = str(repository_game("ticTacToe"))
    parser = _parser()
    assert parser.parse_args(["simulate", game]).engine == "auto"
    assert parser.parse_args(["serve"]).engine == "auto"
    assert parser.parse_args(["match", game, "--player", "h:1"]).engine == "auto"
    for command in ("play", "trace", "replay"):
        assert parser.parse_args([command, game]).engine == "prolog"


def test_the_grounding_budget_is_the_users():
    """A game that does not ground within the default 30 s on a busy machine (checkers)
    needs a larger budget: ``grounding_budget`` is the compiled engine's."""
    from gdl2pl.compiled import GroundingBudget
    from gdl2pl.compiled import GroundingBudgetError

    # ten rules allow forty facts of the relaxed model, which stops it first
    with pytest.raises(GroundingBudgetError, match="more than 40 facts in its relaxed model"):
        GdlGame(repository_game("ticTacToe"), engine="compiled",
                grounding_budget=GroundingBudget(rules=10))
    g = GdlGame(repository_game("ticTacToe"), engine="compiled",
                grounding_budget=GroundingBudget(seconds=120))
    try:
        assert isinstance(g.sm, CompiledMachine)
    finally:
        g.close()


def test_an_unknown_engine_is_refused_by_name():
    with pytest.raises(AdapterError, match=r"ticTacToe\.kif: engine must be one of .*'fast'"):
        GdlGame(repository_game("ticTacToe"), engine="fast")  # type: ignore[arg-type]


def test_pettingzoo_on_the_compiled_engine_plays_the_same_match():
    require_module("pettingzoo")
    from gdl2pl.pettingzoo import parallel_env

    def play(engine: str) -> list[tuple]:
        env = parallel_env(repository_game("connectFour"), engine=engine)
        obs, infos = env.reset(seed=3)
        rng = random.Random(3)
        out = []
        while env.agents:
            acts = {}
            for a in env.agents:
                legal = [i for i, m in enumerate(infos[a]["action_mask"]) if m]
                acts[a] = rng.choice(legal)
            obs, rewards, _, _, infos = env.step(acts)
            seen = {a: (o["observation"].tolist(), o["action_mask"].tolist())
                    for a, o in obs.items()}
            out.append((sorted(acts.items()), seen, sorted(rewards.items())))
        env.close()
        return out

    assert play("compiled") == play("prolog")


def test_gymnasium_on_the_compiled_engine_plays_the_same_episode():
    require_module("gymnasium")
    from gdl2pl.gymnasium import GdlEnv

    def play(engine: str) -> list[tuple]:
        env = GdlEnv(repository_game("hanoi"), engine=engine)
        assert env.gdl.engine_choice.engine == engine
        obs, info = env.reset(seed=5)
        rng = random.Random(5)
        out = [obs.tolist()]
        done = False
        while not done:
            legal = [i for i, m in enumerate(info["action_mask"]) if m]
            obs, reward, terminated, truncated, info = env.step(rng.choice(legal))
            out.append((obs.tolist(), reward, terminated))
            done = terminated or truncated
        env.close()
        return out

    assert play("compiled") == play("prolog")
