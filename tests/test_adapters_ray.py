"""An OpenSpiel state shipped to a Ray task (local Ray, one CPU) plays on there as here."""

from __future__ import annotations

import pickle

from adapters_support import require_module
from prolog_env import start_local_ray


def test_openspiel_state_travels_through_a_ray_task():
    ray = require_module("ray")
    require_module("pyspiel")
    import gdl2pl.openspiel as gos

    game = gos.load_game("ticTacToe.kif")
    state = game.new_initial_state()
    state.apply_action(4)
    local = state.clone()
    while not local.is_terminal():
        local.apply_action(local.legal_actions()[0])

    start_local_ray(ray, num_cpus=1)
    try:

        @ray.remote
        def playout(blob: bytes) -> tuple[list[int], list[float], str]:
            import gdl2pl.openspiel  # registers the game

            s = pickle.loads(blob)
            history = []
            while not s.is_terminal():
                history.append(s.legal_actions()[0])
                s.apply_action(history[-1])
            return history, s.returns(), gdl2pl.openspiel.__file__

        history, returns, where = ray.get(playout.remote(pickle.dumps(state)))
    finally:
        ray.shutdown()
    assert where == gos.__file__  # the worker imported this installation, not a source tree
    assert returns == local.returns()
    assert [4, *history] == local.history()
