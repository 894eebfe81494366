"""Closing a state machine while other threads query it (issue 23, item 6): never a
crash, never a misleading error. Each scenario runs in a subprocess, so that a segfault
fails the test instead of ending pytest."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from conftest import EXAMPLES
from prolog_env import require_prolog

SCRIPT = textwrap.dedent(
    """
    import sys, threading, time
    from gdl2pl.bridge import GameClosedError, StateMachine

    sm = StateMachine.from_file(sys.argv[1])
    threads = int(sys.argv[2])
    outcomes = []
    started = threading.Barrier(threads + 1)

    def work():
        started.wait()
        try:
            while True:
                sm.playouts(sm.initial_state, 50)
        except GameClosedError as e:
            outcomes.append(type(e).__name__)
        except Exception as e:
            outcomes.append(f"{type(e).__name__}: {e}")

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for w in workers:
        w.start()
    started.wait()
    time.sleep(0.3)
    sm.close()
    for w in workers:
        w.join(30)
    assert not any(w.is_alive() for w in workers), "a query outlived close()"
    print(sorted(set(outcomes)))
    try:
        sm.legal_moves(sm.initial_state, sm.roles[0])
    except GameClosedError as e:
        print("after:", e)
    with StateMachine.from_file(sys.argv[1]) as again:  # the process goes on
        print("next game:", len(again.legal_moves(again.initial_state, again.roles[0])))
    """
)


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_close_while_other_threads_query(threads: int) -> None:
    require_prolog()
    r = subprocess.run(
        [sys.executable, "-P", "-c", SCRIPT, str(EXAMPLES / "ticTacToe.kif"), str(threads)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.splitlines()
    assert lines[0] == "['GameClosedError']"  # every worker, and nothing else
    assert lines[1] == "after: ticTacToe.kif: the state machine has been closed"
    assert lines[2] == "next game: 9"
