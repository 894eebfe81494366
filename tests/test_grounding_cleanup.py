"""Nothing of a grounding outlives the process that started it (issue 48 item 7): a
process that exits without ``close()`` leaves no ``gdl2pl-ground-*`` folder and no
worker; a worker whose parent was killed removes its folder and ends within a second;
and an ``AutoMachine`` closed while grounding says so (item 9).

The games here take minutes to ground (``many_rules``), so every build is still under way
when its parent goes; each test runs its parent in a child process with a temporary
folder of its own (``TMPDIR``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from prolog_env import require_prolog
from test_compiled_hardening import _cpu_seconds
from test_compiled_hardening import many_rules

pytestmark = pytest.mark.compiled

#: A budget no grounding here reaches: what ends a worker is its parent going.
BIG_BUDGET = "GroundingBudget(seconds=600, rules=10**9)"


@pytest.fixture(scope="module", autouse=True)
def _prolog() -> Iterator[None]:
    require_prolog()
    yield


@pytest.fixture
def slow_game(tmp_path: Path) -> Path:
    path = tmp_path / "many.kif"
    path.write_text(many_rules(3000), encoding="utf-8")
    return path


def parent(game: Path, tmp: Path, then: str) -> subprocess.Popen[str]:
    """A Python loading ``game`` on ``auto`` (its folders in ``tmp``), which prints its
    worker's pid and folder, then runs ``then``."""
    tmp.mkdir(exist_ok=True)
    code = f"""
        import os, sys, time
        from gdl2pl.compiled import GroundingBudget, load_machine
        sm = load_machine({str(game)!r}, "auto", budget={BIG_BUDGET})
        sm.legal_moves(sm.initial_state, "p")  # the reasoner answers meanwhile
        print(sm._build._process.pid, sm._build._folder, flush=True)
        {then}
    """
    return subprocess.Popen(
        [sys.executable, "-P", "-c", textwrap.dedent(code)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(tmp)},
    )


def gone(pid: int, folder: Path) -> bool:
    return _cpu_seconds(pid) is None and not folder.exists()


def wait_gone(pid: int, folder: Path, seconds: float) -> float:
    """Seconds until the worker ``pid`` has ended and ``folder`` is removed (a failure
    past ``seconds``; the worker is killed then)."""
    start = time.monotonic()
    try:
        while not gone(pid, folder):
            assert time.monotonic() - start < seconds, (
                f"after {seconds} s: worker {'ended' if _cpu_seconds(pid) is None else 'runs'},"
                f" folder {'there' if folder.exists() else 'removed'}"
            )
            time.sleep(0.02)
        return time.monotonic() - start
    finally:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def test_a_process_that_exits_without_close_leaves_nothing(slow_game: Path,
                                                           tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    p = parent(slow_game, tmp, "time.sleep(0.5)  # then exits, sm never closed")
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    pid, folder = int(out.split()[0]), Path(out.split()[1])
    assert folder.parent == tmp
    assert list(tmp.iterdir()) == []  # removed at the exit, before the process ended
    wait_gone(pid, folder, 10)  # killed at the exit; the margin is for its reaping
    assert "cancelled" not in err and "reasoner plays" not in err, err  # a quiet exit


@pytest.mark.parametrize("how", ["kill -9", "os._exit"])
def test_an_orphaned_worker_removes_its_folder_and_ends_within_a_second(
    slow_game: Path, tmp_path: Path, how: str
) -> None:
    """Its parent gone without a word (no exit handler runs), the worker sees it within
    ``PARENT_CHECK`` seconds; the bound asserted allows for a loaded machine (the worker
    runs niced), far below the 600 s its budget would let it run."""
    tmp = tmp_path / "tmp"
    then = "time.sleep(600)" if how == "kill -9" else "sys.stdin.readline(); os._exit(0)"
    p = parent(slow_game, tmp, then)
    assert p.stdin is not None and p.stdout is not None
    pid, folder = (lambda w: (int(w[0]), Path(w[1])))(p.stdout.readline().split())
    try:
        time.sleep(1.0)
        assert _cpu_seconds(pid) is not None and folder.exists()  # grounding under way
        if how == "kill -9":
            p.kill()
        else:
            p.stdin.write("go\n")
            p.stdin.flush()
        p.wait(timeout=60)
        took = wait_gone(pid, folder, 8)
    finally:
        p.kill()
        p.communicate()
    assert took < 8  # the rule is one second; the rest is the margin of a loaded machine


def test_an_auto_machine_closed_while_grounding_says_so(slow_game: Path) -> None:
    from gdl2pl.compiled import EngineChoice
    from gdl2pl.compiled import GroundingBudget
    from gdl2pl.compiled import load_machine

    sm = load_machine(slow_game, "auto", budget=GroundingBudget(seconds=600, rules=10**9))
    assert "being grounded in the background" in sm.engine_choice.reason
    folder = sm._build._folder  # type: ignore[attr-defined]
    sm.close()
    closed = EngineChoice("prolog", "closed before the network came in")
    assert sm.engine_choice == closed
    assert sm.wait_for_engine(60) == closed and sm.engine_choice == closed
    assert folder is not None and not folder.exists()
