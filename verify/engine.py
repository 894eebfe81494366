"""Running another engine as a subprocess through ``gdl2pl replay``'s protocol.

The engine gets one ``{"moves": [[...], ...]}`` line per match on stdin (then end of
input) and answers with one JSON record per visited state on stdout.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from gdl2pl.jsonline import loads_line

STDERR_TAIL = 2000


@dataclass
class EngineRun:
    """What an engine answered: the records it printed (up to the first unreadable line),
    and ``problem`` (None if it ran to a clean end), with ``timed_out`` set when it was
    stopped for taking too long."""

    records: list[Any] = field(default_factory=list)
    problem: str | None = None
    timed_out: bool = False
    stderr_tail: str = ""


SAFE_PATH = re.compile(r"[A-Za-z0-9/._+-]+")
SAFE_SUFFIX = re.compile(r"\.[A-Za-z0-9]{1,10}")


def game_file_name(original: str) -> str:
    """The fixed name the engine sees for a game: ``game`` plus the original's extension
    when that is plain letters and digits, so no character of a stranger's file name ever
    reaches the engine's command line."""
    suffix = os.path.splitext(original)[1]
    return "game" + (suffix if SAFE_SUFFIX.fullmatch(suffix) else "")


def engine_argv(template: str, game: str) -> list[str]:
    """The command line for one game: ``template`` split like a shell would, each
    ``{game}`` replaced by the game's path (appended as the last argument if absent).

    ``game`` must be a path gdl2pl made (letters, digits and ``/._+-`` only), so that a
    template that starts a shell (``sh -c "engine {game}"``) cannot be made to run
    anything by a file name; a ValueError refuses any other."""
    if not SAFE_PATH.fullmatch(game):
        raise ValueError(f"refusing to put an unsafe path on the engine's command line: {game!r}")
    argv = shlex.split(template)
    if not argv:
        raise ValueError("the engine command is empty")
    if not any("{game}" in a for a in argv):
        return [*argv, game]
    return [a.replace("{game}", game) for a in argv]


def parse_output(stdout: str) -> tuple[list[Any], str | None]:
    """The JSON records of an engine's output, and a description of its first line that is
    not a JSON object (None if all are)."""
    records: list[Any] = []
    for n, line in enumerate(stdout.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = loads_line(line)
        except ValueError as e:
            return records, f"line {n} of its output is not JSON ({e}): {line[:120]!r}"
        if not isinstance(rec, dict):
            return records, f"line {n} of its output is not a JSON object: {line[:120]!r}"
        records.append(rec)
    return records, None


def run_engine(
    argv: list[str], matches: list[list[list[str]]], timeout: float, game: str | None = None
) -> EngineRun:
    """Send ``matches`` (joint-move sequences) to the engine ``argv``; wait at most
    ``timeout`` seconds for it to finish. ``game``, if given, is also passed in the
    environment variable ``GDL2PL_GAME``."""
    env = None if game is None else {**os.environ, "GDL2PL_GAME": game}
    stdin = "".join(json.dumps({"moves": m}, separators=(",", ":")) + "\n" for m in matches)
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            env=env,
            start_new_session=True,  # its own process group: a timeout stops all of it
        )
    except OSError as e:
        return EngineRun(problem=f"the engine does not start: {argv[0]}: {e.strerror or e}")
    timed_out = False
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        try:
            out, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:  # a descendant that left the group holds the pipes
            out, err = "", ""
        timed_out = True
    records, garbage = parse_output(out)
    run = EngineRun(records, garbage, timed_out, (err or "")[-STDERR_TAIL:])
    if timed_out:
        run.problem = f"the engine did not finish within {timeout:g} s"
    elif proc.returncode != 0:
        run.problem = f"the engine exited with status {proc.returncode}" + (
            f" ({garbage})" if garbage else ""
        )
    return run


def _kill_group(proc: subprocess.Popen[str]) -> None:
    """Kill the engine and every process it started (wrapper scripts start the real one)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
