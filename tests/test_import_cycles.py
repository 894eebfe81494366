"""No two project modules import each other, not even through an import hidden inside a
function or under ``if TYPE_CHECKING:``: such an import still ties the two modules into
one, and only moves the circle from import time to call time (``test_layers`` checks the
imports run at import time, and the direction of every import)."""

from __future__ import annotations

from pathlib import Path

from test_layers import MODULES
from test_layers import find_cycle
from test_layers import imports


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the project modules it imports anywhere in its text (every level)."""
    return {
        m: {i for i in imports(p, m, known=modules) if i in modules and i != m}
        for m, p in modules.items()
    }


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
