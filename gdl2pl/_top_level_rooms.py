"""The two rooms the design card keeps at the top of the repository, found from a source
tree.

Installed (editable or not), ``gdl2pl.bridge`` and ``gdl2pl.prolog`` sit inside the package
(``pyproject.toml``'s ``package-dir``). Imported from a source tree instead -- Python started
in the repository's root, where ``gdl2pl/`` is found before the installed package, as in an
interactive session or a Ray worker that inherits the driver's working directory -- those two
names would not be found, since their folders are ``bridge/`` and ``prolog/`` beside
``gdl2pl/``. ``install`` then adds a finder for exactly those two names, nothing else: the
package's ``__path__`` is left alone, so no other folder gets a second import name.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType

#: The rooms placed beside ``gdl2pl/`` rather than inside it.
TOP_LEVEL_ROOMS = ("bridge", "prolog")


class TopLevelRooms:
    """A meta path finder for ``gdl2pl.bridge`` and ``gdl2pl.prolog`` of one source tree."""

    def __init__(self, folders: dict[str, Path]) -> None:
        self.folders = folders

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        folder = self.folders.get(fullname)
        if folder is None:
            return None
        return importlib.util.spec_from_file_location(
            fullname, folder / "__init__.py", submodule_search_locations=[str(folder)]
        )


def install(package: str, package_file: str) -> None:
    """Find the top-level rooms beside ``package_file``'s folder when that folder is a
    source tree (the rooms are not inside it); do nothing in an installed package."""
    here = Path(package_file).parent
    if any((here / room).is_dir() for room in TOP_LEVEL_ROOMS):
        return
    folders = {
        f"{package}.{room}": here.parent / room
        for room in TOP_LEVEL_ROOMS
        if (here.parent / room / "__init__.py").is_file()
    }
    if folders and not any(isinstance(f, TopLevelRooms) for f in sys.meta_path):
        sys.meta_path.append(TopLevelRooms(folders))
