"""Where a game named by the user is found."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import AdapterError

#: Folders (``os.pathsep``-separated) searched for a game given by a bare file name.
GAME_PATH_VARIABLE = "GDL2PL_GAME_PATH"


def find_game(name: str | os.PathLike[str]) -> Path:
    """``name`` itself if it is a file; else the first ``name`` in the folders of
    ``$GDL2PL_GAME_PATH``, then in gdl2pl's examples. ``AdapterError`` if none."""
    p = Path(name)
    if p.is_file():
        return p
    folders = [Path(d) for d in os.environ.get(GAME_PATH_VARIABLE, "").split(os.pathsep) if d]
    import gdl2pl

    folders.append(Path(gdl2pl.__file__).resolve().parent / "examples")
    for folder in folders:
        if (folder / p).is_file():
            return folder / p
    where = ", ".join(str(f) for f in folders)
    raise AdapterError(f"game file {os.fspath(name)} not found (searched: {where})")
