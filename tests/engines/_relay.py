"""Helper of the fake engines: gdl2pl's own answers for the matches on stdin, as records
(each fake engine then spoils them in its own way)."""

from __future__ import annotations

import json
import subprocess
import sys


def honest_records(game: str, stdin: str) -> list[dict]:
    """What ``gdl2pl replay GAME`` prints for ``stdin``, parsed."""
    out = subprocess.run(
        [sys.executable, "-P", "-m", "gdl2pl.cli", "replay", game],
        input=stdin,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def emit(records: list[dict]) -> None:
    for r in records:
        print(json.dumps(r), flush=True)
