"""A reference engine measured in the same run: ``run.py --baseline-cmd``.

The command is any program that runs the gdl-perf loop (see ``loops.py``) on one game
with some reference engine and prints, as the last line of its standard output, one
JSON object with at least ``states`` (next-state calls in the measured time),
``playouts`` (finished games) and ``seconds`` (the measured time). It is given as one
string with the placeholders ``{game}`` (the game's KIF path, required), ``{warmup}``
and ``{seconds}``; the string is split like a shell line (``shlex``) and each word
filled in on its own, then run without a shell, so that a path with spaces stays one
argument and nothing in a game's path is run. Literal braces are written ``{{`` and
``}}``.
"""

from __future__ import annotations

import datetime
import json
import shlex
import string
import subprocess
from dataclasses import dataclass
from pathlib import Path

from reference import Reference

PLACEHOLDERS = ("game", "warmup", "seconds")
#: Time allowed beyond warm-up + measured seconds (start-up, parsing, the initial state).
SLACK_SECONDS = 120.0


class BaselineError(Exception):
    """The baseline command could not be used: bad template, failure, or bad output."""


@dataclass(frozen=True)
class Measured:
    """What one run of the baseline command reported, and when it ran."""

    states: int
    playouts: int
    seconds: float
    at: datetime.datetime

    @property
    def states_per_s(self) -> float:
        return self.states / self.seconds

    @property
    def playouts_per_s(self) -> float:
        return self.playouts / self.seconds

    def reference(self, game: str) -> Reference:
        """These figures as the reference of ``game`` (what ratios divide by)."""
        depth = self.states / self.playouts if self.playouts else 0.0
        return Reference(game, self.states_per_s, self.playouts_per_s, depth)


def check_template(template: str) -> list[str]:
    """The words of ``template``; ``BaselineError`` if it cannot be split, names an
    unknown placeholder, or lacks ``{game}``."""
    try:
        words = shlex.split(template)
    except ValueError as e:
        raise BaselineError(f"baseline command {template!r}: {e}") from None
    if not words:
        raise BaselineError("baseline command is empty")
    known = ", ".join("{" + n + "}" for n in PLACEHOLDERS)
    names: set[str] = set()
    for word in words:
        try:
            names |= {f for _, f, _, _ in string.Formatter().parse(word) if f is not None}
        except ValueError as e:
            raise BaselineError(
                f"baseline command word {word!r}: {e} (literal braces are written {{{{ }}}})"
            ) from None
    unknown = sorted(names - set(PLACEHOLDERS))
    if unknown:
        raise BaselineError(
            f"baseline command {template!r}: unknown placeholder(s) "
            f"{', '.join('{' + n + '}' for n in unknown)}; known: {known}"
        )
    if "game" not in names:
        raise BaselineError(f"baseline command {template!r} has no {{game}} placeholder")
    return words


def command_line(template: str, game: Path, warmup: float, seconds: float) -> list[str]:
    """The argument list for one game: each word of ``template`` filled in."""
    values = {"game": str(game), "warmup": f"{warmup:g}", "seconds": f"{seconds:g}"}
    return [w.format(**values) for w in check_template(template)]


def parse_output(stdout: str) -> tuple[int, int, float]:
    """(states, playouts, seconds) from the last non-empty line of ``stdout``;
    ``BaselineError`` saying what is wrong otherwise."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    if not lines:
        raise BaselineError("baseline command printed nothing")
    last = lines[-1].strip()
    try:
        data = json.loads(last)
    except ValueError:
        raise BaselineError(f"baseline output's last line is not JSON: {last[:120]!r}") from None
    if not isinstance(data, dict):
        raise BaselineError(f"baseline output is not a JSON object: {last[:120]!r}")
    for key in ("states", "playouts"):
        value = data.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise BaselineError(f"baseline output: {key!r} must be a count, got {value!r}")
    secs = data.get("seconds")
    if isinstance(secs, bool) or not isinstance(secs, int | float) or not secs > 0:
        raise BaselineError(f"baseline output: 'seconds' must be > 0, got {secs!r}")
    return data["states"], data["playouts"], float(secs)


def measure(template: str, game: Path, warmup: float, seconds: float) -> Measured:
    """Run the baseline command on ``game`` and read its figures; ``BaselineError`` if
    it cannot start, exits non-zero, overruns ``warmup + seconds + SLACK_SECONDS``, or
    prints no valid JSON line."""
    argv = command_line(template, game, warmup, seconds)
    at = datetime.datetime.now().astimezone()
    limit = warmup + seconds + SLACK_SECONDS
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=limit, check=False)
    except subprocess.TimeoutExpired:
        raise BaselineError(f"baseline command ran over {limit:g} s on {game.name}") from None
    except OSError as e:
        raise BaselineError(f"baseline command {argv[0]!r} could not start: {e}") from None
    if done.returncode != 0:
        tail = " ".join(done.stderr.split())[-200:]
        raise BaselineError(f"baseline command exited {done.returncode} on {game.name}: {tail}")
    states, playouts, secs = parse_output(done.stdout)
    return Measured(states, playouts, secs, at)
