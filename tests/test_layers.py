"""The architecture, checked: each folder imports only from the folders below it, the
front end never touches SWI-Prolog, and no two modules import each other in a cycle."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import pytest
from conftest import REPO

#: Folder -> (import name, level). A module may import its own package and any package
#: of a lower level; nothing imports upwards or sideways.
PACKAGES = {
    "gdl2pl": ("gdl2pl", 0),
    "prolog": ("gdl2pl.prolog", 0),  # the runtime's Prolog: package data, no imports
    "gdl2pl/contract": ("gdl2pl.contract", 1),
    "bridge": ("gdl2pl.bridge", 2),
    "gdl2pl/compiled": ("gdl2pl.compiled", 3),
    "gdl2pl/information": ("gdl2pl.information", 3),
    "gdl2pl/ggp": ("gdl2pl.ggp", 4),
    "gdl2pl/explain": ("gdl2pl.explain", 4),
    "gdl2pl/analysis": ("gdl2pl.analysis", 5),
    "gdl2pl/adapters": ("gdl2pl.adapters", 5),
    "gdl2pl/openspiel": ("gdl2pl.openspiel", 6),
    "gdl2pl/pettingzoo": ("gdl2pl.pettingzoo", 6),
    "gdl2pl/gymnasium": ("gdl2pl.gymnasium", 6),
    "gdl2pl/verify": ("gdl2pl.verify", 5),
    "gdl2pl/studio": ("gdl2pl.studio", 6),
    "gdl2pl/rllib": ("gdl2pl.rllib", 7),
    "gdl2pl/cli": ("gdl2pl.cli", 7),
}
_BY_NAME = {name: (folder, level) for folder, (name, level) in PACKAGES.items()}


def package_of(module: str) -> str:
    """The package (import name) a ``gdl2pl...`` module belongs to."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        candidate = ".".join(parts[:n])
        if candidate in _BY_NAME:
            return candidate
    return "gdl2pl"


def modules() -> dict[str, Path]:
    """Every module of every package, by its import name."""
    found: dict[str, Path] = {}
    for folder, (name, _) in PACKAGES.items():
        for path in sorted((REPO / folder).glob("*.py")):
            stem = path.stem
            found[name if stem == "__init__" else f"{name}.{stem}"] = path
    return found


def _module_level(tree: ast.Module) -> list[ast.AST]:
    """The import statements run when the module is imported: not those inside
    functions (imported when called) or under ``if TYPE_CHECKING:`` (never run)."""
    out: list[ast.AST] = []
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.If):
            test = node.test
            if isinstance(test, ast.Name) and test.id == "TYPE_CHECKING":
                todo.extend(node.orelse)
                continue
            todo.extend(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            todo.extend(node.body + node.orelse + node.finalbody)
            for h in node.handlers:
                todo.extend(h.body)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            out.append(node)
    return out


def imports(
    path: Path, module: str, at_import_time: bool = False, known: Iterable[str] = ()
) -> set[str]:
    """The modules ``path`` imports (relative imports resolved): anywhere in it, or only
    those imported when it is itself imported. ``from package import sub`` imports the
    module ``sub`` when there is one (in ``known``, or the project's modules), its
    package being imported first either way."""
    modules = set(known) or MODULES.keys()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.stem == "__init__" else module.rsplit(".", 1)[0]
    out: set[str] = set()
    for node in _module_level(tree) if at_import_time else ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            subs = {f"{base}.{a.name}" for a in node.names}
            out.update(subs)
            if not subs <= modules:
                out.add(base)
    return out


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of ``graph`` as the path that closes it (first node repeated last), or
    None; depth-first, in sorted order."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(m: str, path: list[str]) -> list[str] | None:
        state[m] = 1
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                return [*path[path.index(n) :], n]
            if n not in state and (found := visit(n, [*path, n])):
                return found
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state and (found := visit(m, [m])):
            return found
    return None


MODULES = modules()


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_go_only_downwards(module: str) -> None:
    own = package_of(module)
    level = _BY_NAME[own][1]
    for imported in imports(MODULES[module], module):
        if not imported.startswith("gdl2pl.") and imported != "gdl2pl":
            continue
        target = package_of(imported)
        if target == own or (imported not in MODULES and target == "gdl2pl" and own == "gdl2pl"):
            continue
        assert _BY_NAME[target][1] < level or target == own, (
            f"{module} imports {imported}: {own} may not import from {target}"
        )


def test_the_front_end_never_imports_prolog() -> None:
    for module, path in MODULES.items():
        if package_of(module) == "gdl2pl":
            found = {m for m in imports(path, module) if m.split(".")[0] in ("janus_swi", "janus")}
            assert not found, f"{module} imports {found}"


def test_no_import_cycle() -> None:
    graph = {
        m: {i for i in imports(p, m, at_import_time=True) if i in MODULES and i != m}
        for m, p in MODULES.items()
    }
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])
