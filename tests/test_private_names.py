"""No module reads another module's private names: what one room needs of another has a
public, documented name in the room that owns it (issue 49, item 3).

An AST walk over every module of the package (``gdl2pl/`` and ``bridge/``): a read of
``x._name`` (or ``getattr(x, "_name")``) on anything but ``self``/``cls`` must be of a
name the module itself defines (a function, a class attribute or slot, an attribute it
assigns on ``self``, a name it spells as a string for ``object.__setattr__``): its own
objects' fields. A private name of another module's class is refused with the line that
reads it, so that ``sm._net`` or ``prolog._raw_roles`` cannot come back.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = [ROOT / "gdl2pl", ROOT / "bridge"]

#: Private names of other modules read on purpose, each with why (module, expression).
ALLOWED = {
    # the standard library's own name for what add_subparsers() returns (it has no public
    # one): a type annotation only
    ("gdl2pl/cli/network.py", "argparse._SubParsersAction"),
    ("gdl2pl/verify/commands.py", "argparse._SubParsersAction"),
    ("gdl2pl/analysis/commands.py", "argparse._SubParsersAction"),
    ("gdl2pl/studio/commands.py", "argparse._SubParsersAction"),
    # os._exit is documented public API (leave at once, no cleanup), despite its name
    ("gdl2pl/compiled/ground_worker.py", "os._exit"),
}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _getattr_call(node: ast.AST) -> bool:
    """``getattr(x, "name", ...)`` or ``hasattr(x, "name")``, the name spelled out."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr") and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str))


def own_names(tree: ast.AST) -> set[str]:
    """The private names a module defines: its functions and classes, the names its
    class bodies bind, the attributes it assigns on anything, and the private names it
    spells as strings (``__slots__``, ``object.__setattr__(s, "_bits", ...)``)."""
    names: set[str] = set()
    asked = {id(node.args[1]) for node in ast.walk(tree) if _getattr_call(node)}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store | ast.Del):
            names.add(node.attr)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
              and id(node) not in asked):  # getattr(x, "_y") reads, defines nothing
            names.add(node.value)
    return {n for n in names if _private(n)}


def foreign_reads(tree: ast.AST) -> list[tuple[int, str]]:
    """Reads of a private name the module does not define, on anything but self/cls:
    ``(line, expression)``."""
    own = own_names(tree)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            target, name = node.value, node.attr
        elif isinstance(node, ast.Call) and _getattr_call(node):
            target, name = node.args[0], node.args[1].value  # type: ignore[attr-defined]
        else:
            continue
        if not _private(name) or name in own:
            continue
        if isinstance(target, ast.Name) and target.id in ("self", "cls"):
            continue
        out.append((node.lineno, ast.unparse(node)))
    return out


def modules() -> list[Path]:
    return sorted(p for folder in PACKAGE for p in folder.rglob("*.py"))


def test_no_module_reads_another_modules_private_names() -> None:
    found = []
    for path in modules():
        rel = path.relative_to(ROOT).as_posix()
        for line, expr in foreign_reads(ast.parse(path.read_text(encoding="utf-8"))):
            if (rel, expr) not in ALLOWED:
                found.append(f"{rel}:{line}: {expr}")
    assert not found, "private names of other modules read:\n" + "\n".join(found)


def test_the_allow_list_names_only_reads_that_exist() -> None:
    """An entry whose read is gone is dropped from the list, not kept as a hole."""
    reads = set()
    for path in modules():
        rel = path.relative_to(ROOT).as_posix()
        reads |= {(rel, e) for _, e in foreign_reads(ast.parse(path.read_text("utf-8")))}
    assert reads >= ALLOWED, sorted(ALLOWED - reads)


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("def f(sm):\n    return sm._net\n", ["sm._net"]),
        ("def f(sm):\n    return sm._initial._bits\n", ["sm._initial._bits", "sm._initial"]),
        ("def f(p):\n    return getattr(p, '_raw_roles')\n", ["getattr(p, '_raw_roles')"]),
        ("class A:\n    def f(self):\n        return self._x\n", []),
        ("class A:\n    _x = 1\ndef f(a):\n    return a._x\n", []),  # its own class's
        ("class A:\n    def __init__(self):\n        self._y = 1\n"
         "def f(a):\n    return a._y\n", []),
        ("def f(a):\n    return a.__class__\n", []),  # dunders are public
    ],
)
def test_the_walk_finds_what_it_must(source: str, found: list[str]) -> None:
    assert sorted(e for _, e in foreign_reads(ast.parse(source))) == sorted(found)
