"""No two project modules import each other, not even through an import hidden inside a
function or under ``if TYPE_CHECKING:``: such an import still ties the two modules into
one, and only moves the circle from import time to call time (``test_layers`` checks the
imports run at import time, and the direction of every import)."""

from __future__ import annotations

import ast
from pathlib import Path

from test_layers import MODULES


def project_imports(path: Path, module: str, modules: dict[str, Path]) -> set[str]:
    """The project modules ``path`` imports anywhere in its text (every level, relative
    imports resolved). ``from package import sub`` imports the module ``sub`` when there
    is one (its package is already imported: it encloses the importer, or Python imports
    it first without going back to the importer)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.stem == "__init__" else module.rsplit(".", 1)[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            subs = {f"{base}.{a.name}" for a in node.names} & modules.keys()
            out.update(subs)
            if len(subs) < len(node.names):
                out.add(base)
    return {m for m in out if m in modules and m != module}


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the project modules it imports anywhere in its text (every level)."""
    return {m: project_imports(p, m, modules) for m, p in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of ``graph`` as the path that closes it (first node repeated last), or
    None; depth-first, deterministic (sorted) order."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(m: str, path: list[str]) -> list[str] | None:
        state[m] = 1
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                return [*path[path.index(n) :], n]
            if n not in state:
                found = visit(n, [*path, n])
                if found:
                    return found
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m, [m])
            if found:
                return found
    return None


def test_no_cycle_at_any_level() -> None:
    cycle = find_cycle(import_graph(MODULES))
    assert cycle is None, "import cycle (counting imports inside functions): " + " -> ".join(
        cycle or []
    )


def test_the_finder_sees_a_cycle_closed_inside_a_function(tmp_path: Path) -> None:
    """The check itself: two modules of one package, the second importing the first only
    inside a function, make a cycle; without that import they make none, and neither
    does a package importing its module that imports a sibling through the package."""
    first = tmp_path / "first.py"
    second = tmp_path / "second.py"
    first.write_text("from .second import helper\n", encoding="utf-8")
    second.write_text(
        "def helper():\n    from .first import thing\n    return thing\n", encoding="utf-8"
    )
    modules = {"gdl2pl.bridge.first": first, "gdl2pl.bridge.second": second}
    assert find_cycle(import_graph(modules)) == [
        "gdl2pl.bridge.first",
        "gdl2pl.bridge.second",
        "gdl2pl.bridge.first",
    ]
    second.write_text("def helper():\n    return 1\n", encoding="utf-8")
    assert find_cycle(import_graph(modules)) is None
    package = tmp_path / "__init__.py"
    package.write_text("from .first import helper\n", encoding="utf-8")
    first.write_text("def f():\n    from gdl2pl.bridge import second\n", encoding="utf-8")
    assert find_cycle(import_graph({**modules, "gdl2pl.bridge": package})) is None
