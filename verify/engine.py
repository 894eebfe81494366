"""Running another engine as a subprocess through ``gdl2pl replay``'s protocol.

The engine gets one ``{"moves": [[...], ...]}`` line per match on stdin (then end of
input) and answers with one JSON record per visited state on stdout.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import signal
import subprocess
import threading
from dataclasses import dataclass
from dataclasses import field
from typing import IO
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


#: The longest line an engine may print as one record (bytes).
MAX_RECORD_BYTES = 1 << 20
#: The most an engine may print for one game (bytes), whatever the matches.
MAX_OUTPUT_BYTES = 256 << 20


def parse_line(n: int, line: str) -> tuple[Any, str | None]:
    """The JSON object on line ``n`` of an engine's output, or None and what is wrong
    with the line (not JSON, nested too deep, not an object)."""
    try:
        rec = loads_line(line)
    except ValueError as e:
        return None, f"line {n} of its output is not JSON ({e}): {line[:120]!r}"
    if not isinstance(rec, dict):
        return None, f"line {n} of its output is not a JSON object: {line[:120]!r}"
    return rec, None


def parse_output(stdout: str) -> tuple[list[Any], str | None]:
    """The JSON records of an engine's output, and a description of its first line that is
    not a JSON object (None if all are)."""
    records: list[Any] = []
    for n, line in enumerate(stdout.splitlines(), 1):
        if not line.strip():
            continue
        rec, problem = parse_line(n, line)
        if problem is not None:
            return records, problem
        records.append(rec)
    return records, None


def max_records(matches: list[list[list[str]]]) -> int:
    """The most records an engine may print for ``matches``: one per visited state (a
    match of k joint moves visits k + 1 states), twice over for slack."""
    return 2 * sum(len(m) + 1 for m in matches) + 10


def run_engine(
    argv: list[str], matches: list[list[list[str]]], timeout: float, game: str | None = None
) -> EngineRun:
    """Send ``matches`` (joint-move sequences) to the engine ``argv``; wait at most
    ``timeout`` seconds for it to finish. ``game``, if given, is also passed in the
    environment variable ``GDL2PL_GAME``.

    The output is read as it comes, one record at a time: a line longer than
    ``MAX_RECORD_BYTES``, more than ``MAX_OUTPUT_BYTES`` in all, more records than
    ``max_records(matches)`` or a line that is not a JSON object ends the run there (the
    engine is stopped) and is the engine's problem; memory stays bounded whatever it
    prints."""
    env = None if game is None else {**os.environ, "GDL2PL_GAME": game}
    stdin = "".join(json.dumps({"moves": m}, separators=(",", ":")) + "\n" for m in matches)
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,  # its own process group: a timeout stops all of it
        )
    except OSError as e:
        return EngineRun(problem=f"the engine does not start: {argv[0]}: {e.strerror or e}")
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    tail = bytearray()
    timed_out = threading.Event()

    def stop_for_time() -> None:
        timed_out.set()
        _kill_group(proc)

    timer = threading.Timer(timeout, stop_for_time)
    feeder = threading.Thread(target=_feed, args=(proc.stdin, stdin.encode()), daemon=True)
    drainer = threading.Thread(target=_keep_tail, args=(proc.stderr, tail), daemon=True)
    timer.start()
    feeder.start()
    drainer.start()
    try:
        records, problem = _read_records(proc.stdout, max_records(matches))
        if problem is not None:
            _kill_group(proc)
        try:
            proc.wait(timeout=10 if problem or timed_out.is_set() else None)
        except subprocess.TimeoutExpired:  # a descendant that left the group holds on
            _kill_group(proc)
    finally:
        timer.cancel()
        proc.stdout.close()
    drainer.join(5)
    err = bytes(tail).decode("utf-8", "replace")
    run = EngineRun(records, problem, timed_out.is_set(), err[-STDERR_TAIL:])
    if timed_out.is_set():
        run.problem = f"the engine did not finish within {timeout:g} s"
    elif problem is None and proc.returncode != 0:
        run.problem = f"the engine exited with status {proc.returncode}"
    return run


def _read_records(out: IO[bytes], most: int) -> tuple[list[Any], str | None]:
    """Records from the engine's stdout until its end, or the first problem."""
    records: list[Any] = []
    total = 0
    n = 0
    while True:
        raw = out.readline(MAX_RECORD_BYTES + 1)
        if not raw:
            return records, None
        n += 1
        total += len(raw)
        if len(raw) > MAX_RECORD_BYTES:
            return records, f"line {n} of its output is longer than {MAX_RECORD_BYTES:,} bytes"
        if total > MAX_OUTPUT_BYTES:
            return records, f"it printed more than {MAX_OUTPUT_BYTES:,} bytes"
        line = raw.decode("utf-8", "replace")
        if not line.strip():
            continue
        rec, problem = parse_line(n, line.rstrip("\r\n"))
        if problem is not None:
            return records, problem
        if len(records) == most:
            return records, f"it printed more than {most:,} records (one per visited state)"
        records.append(rec)


def _feed(pipe: IO[bytes], data: bytes) -> None:
    with contextlib.suppress(OSError):  # the engine may stop reading early
        pipe.write(data)
    with contextlib.suppress(OSError):
        pipe.close()


def _keep_tail(pipe: IO[bytes], tail: bytearray) -> None:
    """Read the engine's stderr to its end, keeping only its last bytes."""
    with contextlib.suppress(OSError, ValueError):
        while chunk := pipe.read1(65536):  # type: ignore[attr-defined]
            tail.extend(chunk)
            del tail[: max(0, len(tail) - 4 * STDERR_TAIL)]
    with contextlib.suppress(OSError):
        pipe.close()


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill the engine and every process it started (wrapper scripts start the real one)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
