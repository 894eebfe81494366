"""The benchmark set and its reference figures, read from the anchors table.

The table in ``this-machine.md`` lists the 20 games and what the reference prover
(ggp-base's ``ProverStateMachine``) achieved on this machine type; nothing here is
hard-coded but the location of that file and of the game files.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared"
DEFAULT_ANCHORS = SHARED / "anchors" / "this-machine.md"
DEFAULT_GAMES_DIR = SHARED / "games" / "ggp-repository"


@dataclass(frozen=True)
class Reference:
    """One game of the set: the reference prover's figures on this machine type."""

    game: str
    states_per_s: float
    playouts_per_s: float
    avg_depth: float


def _number(cell: str) -> float:
    return float(cell.replace(",", "").replace("\u202f", "").strip())


def read_references(path: Path = DEFAULT_ANCHORS) -> list[Reference]:
    """The rows of the first Markdown table in ``path`` whose header names a game and
    states/s, in file order (columns: game, states/s, playouts/s, avg depth, ...)."""
    refs: list[Reference] = []
    in_table = False
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.lstrip().startswith("|"):
            if in_table:
                break
            continue
        if not in_table:
            in_table = cells[0].lower() == "game" and any("states/s" in c for c in cells)
            continue
        if re.fullmatch(r"[-: ]+", "".join(cells)):
            continue
        refs.append(Reference(cells[0], _number(cells[1]), _number(cells[2]), _number(cells[3])))
    if not refs:
        raise ValueError(f"no game table found in {path}")
    return refs


def select(refs: list[Reference], names: list[str] | None) -> list[Reference]:
    """The references for ``names`` (all when None); unknown names raise ``ValueError``."""
    if not names:
        return refs
    by_name = {r.game.casefold(): r for r in refs}
    unknown = [n for n in names if n.casefold() not in by_name]
    if unknown:
        known = ", ".join(r.game for r in refs)
        raise ValueError(f"not in the benchmark set: {', '.join(unknown)} (known: {known})")
    return [by_name[n.casefold()] for n in names]


def game_path(game: str, games_dir: Path = DEFAULT_GAMES_DIR) -> Path:
    """The KIF file of ``game``."""
    return games_dir / f"{game}.kif"


def add_set_options(p: argparse.ArgumentParser) -> None:
    """The options that choose the games of the set and where their figures and files
    are: ``--games``, ``--anchors``, ``--games-dir``."""
    p.add_argument("--games", nargs="+", help="games of the set (default: all 20)")
    p.add_argument("--anchors", type=Path, default=DEFAULT_ANCHORS, help="reference table")
    p.add_argument("--games-dir", type=Path, default=DEFAULT_GAMES_DIR, help="KIF files")


def chosen(p: argparse.ArgumentParser, args: argparse.Namespace) -> list[Reference]:
    """The references of the games ``args`` chose (``--games``, names split at commas
    too); the parser's error (exit status 2) if the table cannot be read or a game is
    not in the set."""
    args.games = [g for item in args.games or [] for g in item.split(",") if g]
    try:
        return select(read_references(args.anchors), args.games)
    except (OSError, ValueError) as e:
        p.error(str(e))
