"""A game's board: its geometry, read from the fluents it may hold, and a state drawn on it.

A set of fluents forms a board when some relation of arity 3 or more, ``(f x y v ...)``,
has constant coordinates over 2..26 values each and at most ``MAX_CONTENTS`` contents (the
arguments after the coordinates, as KIF text: ``v``, or ``white pawn`` for chess_200's
``(cell e 2 white pawn)``); of several such relations the one with most fluents wins.
The geometry is read once from every fluent the game may hold (its ``base``, or its
reachable fluents), so a state is drawn on the whole board whatever pieces it holds now;
without one, from the state's own fluents.

Coordinates are Cartesian by default, as most GGP games write them (``(cell x y v)``:
chess, checkers, breakthrough, connect four): ``x`` is the column, left to right, ``y``
the row, the highest at the top when all rows are numerals (so connect four's pieces lie
at the bottom and white starts at the bottom of breakthrough), else in name order. A
board whose cells name their row first (``row_first``: ``(cell row column v)``, as the
course notes' tic-tac-toe does, and as its ``row`` and ``column`` relations say: see
``gdl2pl.board_axes``) is drawn as a matrix: row 1 at the top. Columns are ordered
numerically when all are numerals, else by name; contents by KIF text.

Every drawing of a state (``gdl2pl play``, the studio, ``str(state)`` of the adapters) and
the adapters' observation planes use this geometry. Pure functions.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field

from gdl2pl.kif import kif_term
from gdl2pl.syntax import Const
from gdl2pl.syntax import Func
from gdl2pl.syntax import Term

#: The most values a coordinate may range over.
MAX_SIDE = 26
#: The most contents a board relation may have.
MAX_CONTENTS = 64


@dataclass(frozen=True)
class BoardGeometry:
    """Where a board's cells are: the relation ``(relation x y v)`` (``(relation y x v)``
    when ``row_first``), its columns (``x``, left to right), rows (``y``, top to bottom)
    and contents (KIF text, in order)."""

    relation: str
    columns: tuple[str, ...]
    rows: tuple[str, ...]
    contents: tuple[str, ...]
    #: The cells name their row first: ``(relation row column v)``.
    row_first: bool = False
    #: The relation's arity: 3, or more where a cell's content takes several arguments.
    arity: int = 3
    #: Each column's and row's index.
    column_at: dict[str, int] = field(init=False, repr=False, compare=False)
    row_at: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "column_at", {x: i for i, x in enumerate(self.columns)})
        object.__setattr__(self, "row_at", {y: i for i, y in enumerate(self.rows)})

    def cell(self, fluent: Term) -> tuple[str, str, str] | None:
        """``(column, row, content)`` of a fluent that is a cell of this board, else None."""
        c = _cell(fluent)
        if c is None or c[0] != (self.relation, self.arity):
            return None
        _, a, b, v = c
        x, y = (b, a) if self.row_first else (a, b)
        if x not in self.column_at or y not in self.row_at:
            return None
        return x, y, v


def _numeric(values: set[str]) -> bool:
    return all(v.lstrip("-").isdigit() and v.lstrip("-") for v in values)


def _columns(values: Iterable[str]) -> tuple[str, ...]:
    vals = set(values)
    return tuple(sorted(vals, key=int)) if _numeric(vals) else tuple(sorted(vals))


def _rows(values: Iterable[str], top_down: bool = False) -> tuple[str, ...]:
    """Rows top to bottom: numerals from the highest (or the lowest, ``top_down``), else
    by name."""
    vals = set(values)
    if _numeric(vals):
        return tuple(sorted(vals, key=int, reverse=not top_down))
    return tuple(sorted(vals))


def _cell(f: Term) -> tuple[tuple[str, int], str, str, str] | None:
    """``((relation, arity), x, y, content)`` of a fluent that may be a board's cell."""
    if isinstance(f, Func) and len(f.args) >= 3:
        x, y, *v = f.args
        if isinstance(x, Const) and isinstance(y, Const):
            return (f.name, len(f.args)), x.name, y.name, " ".join(kif_term(a) for a in v)
    return None


def board_geometry(fluents: Iterable[Term], row_first: bool = False) -> BoardGeometry | None:
    """The board ``fluents`` form (see the module's docstring), or None; ``row_first``:
    its cells name their row first (a matrix, row 1 on top)."""
    cells: dict[tuple[str, int], set[tuple[str, str, str]]] = defaultdict(set)
    for f in fluents:
        c = _cell(f)
        if c is not None:
            cells[c[0]].add(c[1:])
    best: tuple[tuple[str, int], set[tuple[str, str, str]]] | None = None
    for name in sorted(cells):
        entries = cells[name]
        xs = {x for x, _, _ in entries}
        ys = {y for _, y, _ in entries}
        vs = {v for _, _, v in entries}
        fits = 2 <= len(xs) <= MAX_SIDE and 2 <= len(ys) <= MAX_SIDE and len(vs) <= MAX_CONTENTS
        if fits and (best is None or len(entries) > len(best[1])):
            best = (name, entries)
    if best is None:
        return None
    (relation, arity), entries = best
    if row_first:
        entries = {(b, a, v) for a, b, v in entries}
    return BoardGeometry(
        relation=relation,
        arity=arity,
        columns=_columns(x for x, _, _ in entries),
        rows=_rows((y for _, y, _ in entries), top_down=row_first),
        contents=tuple(sorted({v for _, _, v in entries})),
        row_first=row_first,
    )


def with_row_first(g: BoardGeometry, row_first: bool) -> BoardGeometry:
    """The board ``g`` read the other way when ``row_first`` differs from its own: the
    first coordinate of its cells the row (a matrix, row 1 on top), or the column
    (Cartesian). A student's choice for a game whose rules do not say."""
    if g.row_first == row_first:
        return g
    first, second = (g.rows, g.columns) if g.row_first else (g.columns, g.rows)
    return BoardGeometry(
        relation=g.relation,
        columns=_columns(second if row_first else first),
        rows=_rows(first if row_first else second, top_down=row_first),
        contents=g.contents,
        row_first=row_first,
    )


@dataclass(frozen=True)
class Grid:
    """A state on a board: the geometry, each occupied cell's content by ``(column, row)``
    (KIF; several contents of one cell joined by ``/``), and the fluents that are not
    cells of the board."""

    geometry: BoardGeometry
    cells: dict[tuple[str, str], str]
    rest: tuple[Term, ...]

    @property
    def table(self) -> list[list[str | None]]:
        """The cells row by row (top first), each left to right; None where empty."""
        g = self.geometry
        return [[self.cells.get((x, y)) for x in g.columns] for y in g.rows]


def grid_of(fluents: Iterable[Term], geometry: BoardGeometry | None = None) -> Grid | None:
    """The state ``fluents`` on the board ``geometry`` (by default the board the state's
    own fluents form), or None when there is no board."""
    fl = sorted(fluents, key=kif_term)
    g = geometry if geometry is not None else board_geometry(fl)
    if g is None:
        return None
    cells: dict[tuple[str, str], str] = {}
    rest: list[Term] = []
    for f in fl:
        c = g.cell(f)
        if c is None:
            rest.append(f)
            continue
        x, y, v = c
        cells[(x, y)] = v if (x, y) not in cells else cells[(x, y)] + "/" + v
    return Grid(g, cells, tuple(rest))


def render_state(
    fluents: Iterable[Term],
    geometry: BoardGeometry | None = None,
    show: Callable[[Term], str] = kif_term,
) -> str:
    """A readable picture of a state: the board (row names at the left, column names on
    top, ``.`` for an empty cell) when there is one, then the other fluents in KIF order,
    each written by ``show`` (KIF by default)."""
    fl = sorted(fluents, key=kif_term)
    grid = grid_of(fl, geometry)
    if grid is None:
        return "\n".join(show(f) for f in fl)
    g = grid.geometry
    width = max(1, *(len(v) for v in grid.cells.values()), *(len(x) for x in g.columns))
    yw = max(len(y) for y in g.rows)
    lines = [" " * (yw + 1) + " ".join(x.rjust(width) for x in g.columns)]
    for y, row in zip(g.rows, grid.table, strict=True):
        lines.append(f"{y.rjust(yw)} " + " ".join((v or ".").rjust(width) for v in row))
    lines.extend(show(f) for f in grid.rest)
    return "\n".join(lines)
