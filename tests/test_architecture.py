"""ARCHITECTURE.md's map is the house as built: its room table names every package of
``pyproject.toml`` with the folder it is installed from (its import name, but for the two
rooms ``package-dir`` keeps at the top of the repository), at the level
``tests/test_layers.py`` enforces, allowed to import exactly the rooms below it; and every
file of the repository it names exists. (The ``gdl2pl...`` names it cites are checked by
``tests/test_docs_names.py``.)"""

from __future__ import annotations

import re
import tomllib

import pytest
from conftest import REPO
from test_layers import PACKAGES

MAP = REPO / "ARCHITECTURE.md"


#: A row of the room table: import name, folder (without its final /), level, and the
#: rooms it may import (as the table names them: see ``short``).
Room = tuple[str, str, int, tuple[str, ...]]


def short(name: str) -> str:
    """How the table's last column names a room: the last part of its import name."""
    return name.rsplit(".", 1)[-1]


def _cell(text: str) -> str:
    return text.strip().strip("`").strip()


def rooms() -> list[Room]:
    """The rows of the room table (between its two HTML comments), in order."""
    text = MAP.read_text(encoding="utf-8")
    table = text.split("<!-- rooms:", 1)[1].split("<!-- end of rooms -->", 1)[0]
    found = []
    for line in table.splitlines():
        cells = line.split("|")[1:-1]
        if len(cells) != 5 or cells[0].strip() in ("import name", "") or "---" in cells[0]:
            continue
        name, folder, level, _, may = cells
        imports = () if _cell(may) == "—" else tuple(x.strip() for x in may.split(","))
        found.append((_cell(name), _cell(folder).rstrip("/"), int(level), imports))
    return found


#: The rooms the design card keeps at the top of the repository; every other import name
#: is its folder.
TOP_LEVEL = {"gdl2pl": "gdl2pl", "gdl2pl.prolog": "prolog", "gdl2pl.bridge": "bridge"}


def setuptools_config() -> dict:
    with (REPO / "pyproject.toml").open("rb") as f:
        return dict(tomllib.load(f)["tool"]["setuptools"])


def package_dirs() -> dict[str, str]:
    """Each package of ``pyproject.toml`` and the folder it is installed from."""
    config = setuptools_config()
    mapped = config["package-dir"]
    return {name: mapped.get(name, name.replace(".", "/")) for name in config["packages"]}


def test_only_the_design_cards_top_level_rooms_are_mapped() -> None:
    assert setuptools_config()["package-dir"] == TOP_LEVEL


def test_the_map_has_its_room_table() -> None:
    assert len(rooms()) >= 15


def test_every_package_is_a_room_in_the_folder_it_is_installed_from() -> None:
    table = {name: folder for name, folder, _, _ in rooms()}
    assert table == package_dirs()
    for folder in table.values():
        assert (REPO / folder / "__init__.py").is_file(), folder


def test_every_room_is_at_the_level_the_layer_test_enforces() -> None:
    table = {folder: (name, level) for name, folder, level, _ in rooms()}
    assert table == PACKAGES


@pytest.mark.parametrize("room", rooms(), ids=lambda r: r[0])
def test_a_room_may_import_exactly_the_rooms_below_it(room: Room) -> None:
    _, _, level, may_import = room
    assert may_import == tuple(short(r[0]) for r in rooms() if r[2] < level)


def test_every_file_the_map_names_exists() -> None:
    text = MAP.read_text(encoding="utf-8")
    paths = set(re.findall(r"`((?:[a-z0-9_]+/)+[A-Za-z0-9_]+\.(?:py|pl|c|md|toml))`", text))
    paths |= set(re.findall(r"`([A-Za-z_]+\.(?:md|toml))`", text))
    assert len(paths) >= 10
    missing = sorted(p for p in paths if not (REPO / p).is_file())
    assert not missing, f"ARCHITECTURE.md names files that do not exist: {missing}"


def test_every_module_is_found_once_under_its_own_name() -> None:
    """Walking the package ends, and names each module once: no folder is reachable
    under two import names (``gdl2pl.arrays`` beside ``gdl2pl.adapters.arrays``)."""
    import importlib
    import pkgutil

    import gdl2pl

    importlib.import_module("gdl2pl.adapters.paths")
    names = [m.name for m in pkgutil.walk_packages(gdl2pl.__path__, "gdl2pl.")]
    assert len(names) == len(set(names))
    assert "gdl2pl.adapters.arrays" in names
    assert not any(n.startswith(("gdl2pl.gdl2pl", "gdl2pl.arrays")) for n in names)
    assert all(n.count(".") <= 2 for n in names), [n for n in names if n.count(".") > 2]


def test_the_top_level_rooms_import_from_a_source_tree_too() -> None:
    """Python started in the repository's root finds ``gdl2pl/`` before the installed
    package; ``gdl2pl.bridge`` and ``gdl2pl.prolog`` are then found beside it, and only
    they: the package's ``__path__`` is its own folder."""
    import subprocess
    import sys

    probe = (
        "import gdl2pl, gdl2pl.bridge, gdl2pl.prolog, importlib.util as u; "
        "print(gdl2pl.bridge.__file__); print(gdl2pl.__path__); "
        "print(u.find_spec('gdl2pl.tests'), u.find_spec('gdl2pl.gdl2pl'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    bridge, path, missing = out.stdout.splitlines()
    assert bridge == str(REPO / "bridge" / "__init__.py")
    assert path == repr([str(REPO / "gdl2pl")])
    assert missing == "None None"


#: A file the map names, then what of it the same sentence names right after it, joined
#: by commas, "and" or "then": a predicate (`name/N`) of a Prolog file, a function, class
#: or method (`name`) of a Python file, e.g. "`gdl2pl/compiled/assemble.py` `assemble`,
#: then `_arrays`" or "`prolog/gdl_runtime.pl` `state_roles/2`".
_PLACE = re.compile(r"`((?:[a-z0-9_]+/)+[A-Za-z0-9_]+\.(?:py|pl))`"
                    r"((?:(?:\s*,\s*(?:then\s+|and\s+)?|\s+and\s+|\s+then\s+|\s+)"
                    r"`[A-Za-z_][A-Za-z0-9_]*(?:/\d+)?`)+)")


def named_places() -> list[tuple[str, str]]:
    """Each (file, name) pair the map names as described at ``_PLACE``."""
    text = MAP.read_text(encoding="utf-8")
    return [(m[1], name) for m in _PLACE.finditer(text) for name in re.findall(r"`([^`]+)`", m[2])]


def _prolog_arities(source: str, name: str) -> set[int]:
    """The arities of the clauses of ``name`` in a Prolog file (heads at a line's start)."""
    arities = set()
    for m in re.finditer(rf"^{re.escape(name)}(\(|\s*(?::-|-->|\.))", source, re.M):
        if m[1] != "(":
            arities.add(0)
            continue
        depth, args, i = 1, 1, m.end()
        while depth and i < len(source):
            ch = source[i]
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
            elif ch == "," and depth == 1:
                args += 1
            i += 1
        arities.add(args)
    return arities


def test_every_predicate_and_function_the_map_names_is_where_it_says() -> None:
    places = named_places()
    assert ("gdl2pl/ggp/player.py", "_select") in places
    missing = []
    for path, name in places:
        source = (REPO / path).read_text(encoding="utf-8")
        if path.endswith(".pl"):
            pred, arity = name.rsplit("/", 1) if "/" in name else (name, None)
            found = _prolog_arities(source, pred)
            ok = int(arity) in found if arity is not None else bool(found)
        else:
            ok = re.search(rf"^\s*(?:async\s+)?(?:def|class)\s+{re.escape(name)}\b|"
                           rf"^{re.escape(name)}\s*[:=]", source, re.M) is not None
        if not ok:
            missing.append(f"{path}: {name}")
    assert not missing, f"ARCHITECTURE.md names what its files do not define: {missing}"


def test_a_predicate_is_found_with_its_arity() -> None:
    source = "%! chain(+A, -B) is det.\nchain(A, f(B, C)) :-\n    g(A, [B, C]).\nstop.\n"
    assert _prolog_arities(source, "chain") == {2}
    assert _prolog_arities(source, "stop") == {0}
    assert _prolog_arities(source, "g") == set()  # called, not defined at a line's start
