"""Running another engine as a subprocess through ``gdl2pl replay``'s protocol.

The engine gets one ``{"moves": [[...], ...]}`` line per match on stdin (then end of
input) and answers with one JSON record per visited state on stdout.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import selectors
import shlex
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from gdl2pl.jsonline import loads_line

STDERR_TAIL = 2000


@dataclass
class EngineRun:
    """What an engine answered: the records it printed (when they were collected, up to
    the first unreadable line), how many it printed (``received``), the protocol faults
    skipped (``faults``, lines that are not records), and ``problem`` (None if it ran to
    a clean end), with ``timed_out`` set when it was stopped for taking too long."""

    records: list[Any] = field(default_factory=list)
    problem: str | None = None
    timed_out: bool = False
    stderr_tail: str = ""
    received: int = 0
    faults: list[str] = field(default_factory=list)


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


#: How long a killed engine is waited for before its exit is left to the system.
REAP_SECONDS = 5.0
#: How long the output of an engine that exited in time may still be read past its
#: deadline.
DRAIN_SECONDS = 1.0
#: Protocol faults (lines that are not records) kept for the report when they are skipped.
MAX_FAULTS = 20

#: Takes each record as it arrives; False when it needs no more (the engine is stopped).
OnRecord = Callable[[Any], bool]


def run_engine(
    argv: list[str],
    matches: list[list[list[str]]],
    timeout: float,
    game: str | None = None,
    on_record: OnRecord | None = None,
    skip_faults: bool = False,
) -> EngineRun:
    """Send ``matches`` (joint-move sequences) to the engine ``argv``; give it ``timeout``
    seconds on the clock. ``game``, if given, is also passed in the environment variable
    ``GDL2PL_GAME``.

    Each record goes to ``on_record`` as it arrives and is not kept (without
    ``on_record`` they are collected in ``records``): memory stays bounded whatever the
    engine prints. A line longer than ``MAX_RECORD_BYTES``, more than
    ``MAX_OUTPUT_BYTES`` in all, or more records than ``max_records(matches)`` ends the
    run there and is the engine's problem; so is a line that is not a JSON object (a
    protocol fault), unless ``skip_faults``: then it is skipped and listed in ``faults``.

    The engine gets ``timeout`` seconds of its own: the time ``on_record`` takes moves
    the deadline on. It runs in its own session. When it exits, or the time is up, or the run
    ends early, what it started is killed too (its process group and session), and
    reading stops at the deadline (``DRAIN_SECONDS`` later once the engine has exited)
    even if a process that escaped both still holds its output open (then the run has
    timed out)."""
    collected: list[Any] = []

    def collect(rec: Any) -> bool:
        collected.append(rec)
        return True

    take: OnRecord = on_record or collect
    env = None if game is None else {**os.environ, "GDL2PL_GAME": game}
    stdin = "".join(json.dumps({"moves": m}, separators=(",", ":")) + "\n" for m in matches)
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,  # its own session and group: all of it can be stopped
        )
    except OSError as e:
        return EngineRun(problem=f"the engine does not start: {argv[0]}: {e.strerror or e}")
    session = _Session(proc, time.monotonic() + timeout, max_records(matches), take, skip_faults)
    try:
        session.run(stdin.encode())
    finally:
        session.close()
    run = EngineRun(
        collected,
        session.problem,
        session.timed_out,
        session.stderr_tail(),
        session.received,
        session.faults,
    )
    if session.timed_out:
        run.problem = f"the engine did not finish within {timeout:g} s"
    elif session.problem is None and not session.stopped and proc.returncode != 0:
        run.problem = f"the engine exited with status {proc.returncode}"
    return run


class _Session:
    """One run of an engine: its pipes read and written without blocking, until its output
    ends or the deadline."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        deadline: float,
        most: int,
        take: OnRecord,
        skip_faults: bool,
    ) -> None:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self.proc = proc
        self.deadline = deadline
        self.most = most
        self.take = take
        self.skip_faults = skip_faults
        self.problem: str | None = None
        self.timed_out = False
        self.stopped = False  # the reader needed no more and stopped the engine
        self.received = 0
        self.faults: list[str] = []
        self.lines = 0
        self.total = 0
        self.partial = bytearray()
        self.tail = bytearray()
        self.ended = False  # the engine exited (its group and session are killed)
        #: The pipes' identities: a process that still holds one is the engine's.
        self.pipes = {f"pipe:[{os.fstat(p.fileno()).st_ino}]" for p in (proc.stdout, proc.stderr)}

    def run(self, data: bytes) -> None:
        proc = self.proc
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        out, err, into = proc.stdout.fileno(), proc.stderr.fileno(), proc.stdin.fileno()
        for fd in (out, err, into):
            os.set_blocking(fd, False)
        with selectors.DefaultSelector() as sel:
            sel.register(out, selectors.EVENT_READ, "out")
            sel.register(err, selectors.EVENT_READ, "err")
            if data:
                sel.register(into, selectors.EVENT_WRITE, "in")
            else:
                proc.stdin.close()
            sent = 0
            while self._reading(sel) and self.problem is None and not self.stopped:
                now = time.monotonic()
                left = self._limit() - now
                if left <= 0:
                    self.timed_out = True
                    return
                for key, _ in sel.select(min(left, 0.5)):
                    if key.data == "in":
                        sent = self._write(sel, into, data, sent)
                        continue
                    chunk = self._read(key.fd)
                    if chunk is None:
                        continue
                    if not chunk:
                        sel.unregister(key.fd)
                        if key.data == "out":
                            self._lines(b"\n" if self.partial else b"")
                    elif key.data == "out":
                        self._lines(chunk)
                    else:
                        self.tail.extend(chunk)
                        del self.tail[: max(0, len(self.tail) - 4 * STDERR_TAIL)]
        if self.problem is None and not self.stopped:
            while not self._notice_exit():  # its output ended: it should exit now
                if time.monotonic() >= self.deadline:
                    self.timed_out = True
                    return
                time.sleep(0.01)
            proc.wait()

    def _limit(self) -> float:
        """Until when the output is read: the deadline, or a moment past it to drain
        the output of an engine that exited (it is checked at the deadline at the
        latest, so it exited in time)."""
        return self.deadline + (DRAIN_SECONDS if self._notice_exit() else 0.0)

    @staticmethod
    def _reading(sel: selectors.BaseSelector) -> bool:
        """Whether stdout or stderr is still open (input the engine never reads does not
        keep the run going)."""
        return any(key.data != "in" for key in sel.get_map().values())

    def _write(self, sel: selectors.BaseSelector, fd: int, data: bytes, sent: int) -> int:
        """Send the engine the next part of its input; close its input when all is sent
        or it stops reading."""
        assert self.proc.stdin is not None
        try:
            sent += os.write(fd, data[sent : sent + 65536])
        except BlockingIOError:
            return sent
        except OSError:  # the engine closed its input
            sent = len(data)
        if sent >= len(data):
            sel.unregister(fd)
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        return sent

    @staticmethod
    def _read(fd: int) -> bytes | None:
        try:
            return os.read(fd, 65536)
        except BlockingIOError:
            return None
        except OSError:
            return b""

    def _lines(self, chunk: bytes) -> None:
        """Take the complete lines of the output read so far, keeping the last partial
        one (never more than ``MAX_RECORD_BYTES`` of it)."""
        self.total += len(chunk)
        if self.total > MAX_OUTPUT_BYTES:
            self._fail(f"it printed more than {MAX_OUTPUT_BYTES:,} bytes")
            return
        self.partial.extend(chunk)
        start = 0
        while self.problem is None and not self.stopped:
            end = self.partial.find(b"\n", start)
            if end < 0:
                break
            self._line(bytes(self.partial[start:end]))
            start = end + 1
        del self.partial[:start]
        if self.problem is None and len(self.partial) > MAX_RECORD_BYTES:
            self._fail(
                f"line {self.lines + 1} of its output is longer than {MAX_RECORD_BYTES:,} bytes"
            )

    def _line(self, raw: bytes) -> None:
        self.lines += 1
        if len(raw) > MAX_RECORD_BYTES:
            self._fail(f"line {self.lines} of its output is longer than {MAX_RECORD_BYTES:,} bytes")
            return
        line = raw.decode("utf-8", "replace").rstrip("\r")
        if not line.strip():
            return
        rec, problem = parse_line(self.lines, line)
        if problem is not None:
            fault = f"protocol fault: {problem}"
            if not self.skip_faults:
                self._fail(fault + " (an engine prints only records on stdout; logs go to stderr)")
            elif len(self.faults) < MAX_FAULTS:
                self.faults.append(fault)
            return
        if self.received == self.most:
            self._fail(f"it printed more than {self.most:,} records (one per visited state)")
            return
        self.received += 1
        started = time.monotonic()
        if not self.take(rec):
            self.stopped = True
        self.deadline += time.monotonic() - started  # gdl2pl's time is not the engine's

    def _fail(self, problem: str) -> None:
        self.problem = problem

    def _notice_exit(self) -> bool:
        """Whether the engine has exited; once it has, kill what it left behind in its
        group and session (before reaping it, so that no other process can have taken
        its number)."""
        if not self.ended and _exited(self.proc):
            self.ended = True
            _kill_all(self.proc.pid, self.pipes)
        return self.ended

    def close(self) -> None:
        """Kill the engine and everything it started (unless it was reaped: its number
        may be another's now); close the pipes; reap it."""
        if self.proc.returncode is None:
            _kill_all(self.proc.pid, self.pipes)
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=REAP_SECONDS)

    def stderr_tail(self) -> str:
        return bytes(self.tail).decode("utf-8", "replace")[-STDERR_TAIL:]


def _exited(proc: subprocess.Popen[bytes]) -> bool:
    """Whether the child ``proc`` has exited, without reaping it where the system can."""
    if proc.returncode is not None:
        return True
    if not hasattr(os, "waitid"):
        return proc.poll() is not None
    try:
        info = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return info is not None


def _kill_all(pid: int, pipes: set[str]) -> None:
    """Kill the process group ``pid`` (the engine and what it started; wrapper scripts
    start the real one), any process left in its session ``pid`` that moved to a group of
    its own, and any that escaped both (``setsid``) but still holds one of the engine's
    output ``pipes`` (as ``/proc`` names them: ``pipe:[inode]``)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    for other in _left_behind(pid, pipes):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(other, signal.SIGKILL)


def _left_behind(sid: int, pipes: set[str]) -> list[int]:
    """The processes of session ``sid`` and those holding one of ``pipes``, from
    ``/proc`` (none where there is no ``/proc``); never this process."""
    found = []
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            if _in_session(entry.name, sid) or _holds(entry.name, pipes):
                found.append(int(entry.name))
    return found


def _in_session(pid: str, sid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    fields = stat[stat.rfind(b")") + 2 :].split()  # state ppid pgrp session ...
    return len(fields) > 3 and fields[3] == str(sid).encode()


def _holds(pid: str, pipes: set[str]) -> bool:
    """Whether process ``pid`` can write into one of ``pipes`` (a process that only
    reads from one, as a fork of this one could, is not the engine's)."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:  # another user's process, or gone
        return False
    for fd in fds:
        with contextlib.suppress(OSError, ValueError, StopIteration):
            if os.readlink(f"/proc/{pid}/fd/{fd}") not in pipes:
                continue
            with open(f"/proc/{pid}/fdinfo/{fd}", encoding="ascii") as f:
                flags = next(line for line in f if line.startswith("flags:")).split()[1]
            if int(flags, 8) & os.O_ACCMODE != os.O_RDONLY:
                return True
    return False
