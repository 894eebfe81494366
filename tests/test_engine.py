"""Starting SWI-Prolog: an older ``swipl`` first on PATH must not abort the process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import EXAMPLES
from prolog_env import require_prolog

PROGRAM = f"""
from gdl2pl.bridge import StateMachine
sm = StateMachine.from_file({str(EXAMPLES / "ticTacToe.kif")!r})
print(len(sm.legal_moves(sm.initial_state, "xplayer")))
"""


def _fake_old_swipl(tmp: Path) -> Path:
    """A directory holding a ``swipl`` that claims to be SWI-Prolog 9.0.4 elsewhere."""
    bindir = tmp / "old-bin"
    bindir.mkdir()
    home = tmp / "old-home"
    home.mkdir()
    exe = bindir / "swipl"
    exe.write_text(f"#!/bin/sh\necho 'PLBASE=\"{home}\";'\necho 'PLVERSION=\"90004\";'\n")
    exe.chmod(0o755)
    return bindir


def run_program(env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``PROGRAM`` run by a new Python process with ``env``, in ``cwd``."""
    argv = [sys.executable, "-P", "-c", PROGRAM]
    return subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=120)


def test_older_swipl_first_on_path_is_bypassed(tmp_path: Path) -> None:
    require_prolog()
    env = dict(os.environ, PATH=f"{_fake_old_swipl(tmp_path)}:{os.environ['PATH']}")
    env.pop("SWI_HOME_DIR", None)
    done = run_program(env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "9"


def test_wrong_swi_home_dir_is_a_clear_error(tmp_path: Path) -> None:
    require_prolog()
    done = run_program(dict(os.environ, SWI_HOME_DIR=str(tmp_path)), tmp_path)
    assert done.returncode != 0
    assert "SWI_HOME_DIR" in done.stderr and "janus-swi is built against" in done.stderr
    assert "Fatal" not in done.stderr
