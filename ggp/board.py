"""Drawing a state as a board, when it looks like one.

A state is drawn as a grid when some fluent functor of arity 3, ``(f x y v)``, covers
a rectangle of coordinates (each coordinate range at most 26 values): the cell at
``(x, y)`` shows ``v``. Other fluents are listed under the grid. Pure functions.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from gdl2pl.kif import kif_term
from gdl2pl.syntax import Const
from gdl2pl.syntax import Func
from gdl2pl.syntax import Term


def _order(values: Iterable[str]) -> list[str]:
    vals = set(values)
    if all(v.lstrip("-").isdigit() for v in vals):
        return sorted(vals, key=int)
    return sorted(vals)


def find_grid(fluents: Iterable[Term]) -> str | None:
    """The functor that best reads as a board ``(f x y v)``, or None."""
    cells: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for f in fluents:
        if (
            isinstance(f, Func)
            and len(f.args) == 3
            and all(isinstance(a, Const) for a in f.args[:2])
        ):
            cells[f.name].append((f.args[0].name, f.args[1].name))  # type: ignore[union-attr]
    best, best_count = None, 3
    for name, coords in cells.items():
        xs = {x for x, _ in coords}
        ys = {y for _, y in coords}
        if 2 <= len(xs) <= 26 and 2 <= len(ys) <= 26 and len(coords) > best_count:
            best, best_count = name, len(coords)
    return best


@dataclass(frozen=True)
class Grid:
    """A state read as a board: the functor ``name`` of its cells ``(name x y v)``, the
    row (``x``) and column (``y``) coordinates in order, each cell's value (KIF; several
    values of one cell joined by ``/``), and the fluents that are not cells."""

    name: str
    rows: tuple[str, ...]
    columns: tuple[str, ...]
    cells: dict[tuple[str, str], str]
    rest: tuple[Term, ...]


def grid_of(fluents: Iterable[Term]) -> Grid | None:
    """The state as a ``Grid`` when one is found (``find_grid``), else None."""
    fl = sorted(fluents, key=kif_term)
    name = find_grid(fl)
    if name is None:
        return None
    cell: dict[tuple[str, str], str] = {}
    rest: list[Term] = []
    for f in fl:
        if (
            isinstance(f, Func)
            and f.name == name
            and len(f.args) == 3
            and all(isinstance(a, Const) for a in f.args[:2])
        ):
            key = (f.args[0].name, f.args[1].name)  # type: ignore[union-attr]
            v = kif_term(f.args[2])
            cell[key] = v if key not in cell else cell[key] + "/" + v
        else:
            rest.append(f)
    rows = tuple(_order(x for x, _ in cell))
    columns = tuple(_order(y for _, y in cell))
    return Grid(name, rows, columns, cell, tuple(rest))


def render_state(fluents: Iterable[Term]) -> str:
    """A readable picture of a state: a grid when one is found, then the other fluents."""
    fl = sorted(fluents, key=kif_term)
    grid = grid_of(fl)
    if grid is None:
        return "\n".join(kif_term(f) for f in fl)
    cell = grid.cells
    width = max(1, *(len(v) for v in cell.values()), *(len(y) for y in grid.columns))
    xw = max(len(x) for x in grid.rows)
    lines = [" " * (xw + 1) + " ".join(y.rjust(width) for y in grid.columns)]
    for x in grid.rows:
        row = " ".join(cell.get((x, y), ".").rjust(width) for y in grid.columns)
        lines.append(f"{x.rjust(xw)} {row}")
    lines.extend(kif_term(f) for f in grid.rest)
    return "\n".join(lines)
