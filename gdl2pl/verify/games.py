"""Which games a run covers: files and directories given on the command line, each game
with a name relative to the directory it was found in (used to find its recorded trace
and to name its output file)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

GAME_SUFFIXES = frozenset({".kif", ".gdl", ".hrf"})


@dataclass(frozen=True)
class GameRef:
    """A game file: ``path`` as given or found, ``rel`` its path below the directory
    argument it came from (its file name for a file argument)."""

    path: str
    rel: str


def find_games(args: list[str]) -> list[GameRef]:
    """The games named by ``args`` (files, or directories searched recursively for
    .kif/.gdl/.hrf files), sorted per directory, without repeats. Raises
    ``FileNotFoundError`` for an argument that does not exist."""
    found: list[GameRef] = []
    seen: set[str] = set()
    for arg in args:
        p = Path(arg)
        if p.is_dir():
            refs = [
                GameRef(str(f), f.relative_to(p).as_posix())
                for f in sorted(p.rglob("*"))
                if f.suffix.lower() in GAME_SUFFIXES and f.is_file()
            ]
        elif p.is_file():
            refs = [GameRef(str(p), p.name)]
        else:
            raise FileNotFoundError(f"no such game file or directory: {arg}")
        for r in refs:
            key = str(Path(r.path).resolve())
            if key not in seen:
                seen.add(key)
                found.append(r)
    return found


def output_name(rel: str) -> str:
    """A flat file name for the game named ``rel`` (its path below its folder), one to one:
    the extension and the path are kept, ``%`` is written ``%25`` and ``/`` ``%2F``, so
    ``a/b.kif``, ``a__b.kif`` and ``a/b.gdl`` get three names."""
    return rel.replace("%", "%25").replace("/", "%2F")


def check_distinct_outputs(games: list[GameRef]) -> None:
    """Raise ``ValueError`` if two games would write one output file (the same path below
    two folders given on the command line)."""
    first: dict[str, str] = {}
    for g in games:
        other = first.setdefault(output_name(g.rel), g.path)
        if other != g.path:
            raise ValueError(
                f"{other!r} and {g.path!r} are both named {g.rel!r} below the folders given: "
                "their output files would be one; run them separately"
            )


def game_digest(text: str) -> str:
    """The SHA-256 (hex) of a game's text, which ties a recorded trace to its game."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def trace_file(game: GameRef, traces: Path) -> Path | None:
    """The recorded trace of ``game`` under ``traces``, for the longest tail ``x`` of the
    game's path that has one: ``<traces>/<output_name(x)>.jsonl`` (what ``trace-all``
    writes), else ``<traces>/<x without suffix>.jsonl`` (the reference layout, so that both
    ``games/`` and ``games/ggp-repository/`` find ``ggp-repository/<name>.jsonl``)."""
    parts = Path(game.path).resolve().parts
    for i in range(1, len(parts)):
        flat = traces / (output_name("/".join(parts[i:])) + ".jsonl")
        if flat.is_file():
            return flat
    parts = Path(game.path).with_suffix(".jsonl").resolve().parts
    for i in range(1, len(parts)):
        candidate = traces.joinpath(*parts[i:])
        if candidate.is_file():
            return candidate
    return None
