"""An OpenSpiel state shipped to a Ray task (local Ray, one CPU) plays on there as here."""

from __future__ import annotations

import pickle

from adapters_support import require_module


def test_openspiel_state_travels_through_a_ray_task(monkeypatch, tmp_path):
    ray = require_module("ray")
    # Ray puts the driver's working directory on its workers' path: from the repository,
    # its gdl2pl/ (without bridge/) would shadow the installed package there.
    monkeypatch.chdir(tmp_path)
    require_module("pyspiel")
    import gdl2pl.openspiel as gos

    game = gos.load_game("ticTacToe.kif")
    state = game.new_initial_state()
    state.apply_action(4)
    local = state.clone()
    while not local.is_terminal():
        local.apply_action(local.legal_actions()[0])

    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:

        @ray.remote
        def playout(blob: bytes) -> tuple[list[int], list[float]]:
            import gdl2pl.openspiel  # noqa: F401  (registers the game)

            s = pickle.loads(blob)
            history = []
            while not s.is_terminal():
                history.append(s.legal_actions()[0])
                s.apply_action(history[-1])
            return history, s.returns()

        history, returns = ray.get(playout.remote(pickle.dumps(state)))
    finally:
        ray.shutdown()
    assert returns == local.returns()
    assert [4, *history] == local.history()
