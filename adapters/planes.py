"""Observations shaped as a board: planes ``[channels, rows, cols]`` where fluents form one.

A game's fluents form a board when one relation of arity 3, ``(f x y v)``, has constant
coordinates over 2..26 values each among the base propositions, and at most
``MAX_CHANNELS`` contents ``v``: the plane of content ``v`` has a 1 at ``(x, y)`` when
``(f x y v)`` holds. Of several such relations the one with most base propositions wins.
Rows and columns are ordered numerically when all are numerals, else by name; channels
by the contents' KIF text. The other fluents stay a flat 0/1 vector (``rest``), in base
order. Pure functions over a game's base table and its observation vector.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gdl2pl.kif import kif_term
from gdl2pl.syntax import Const
from gdl2pl.syntax import Func
from gdl2pl.syntax import Term

#: The most contents (channels) a board relation may have.
MAX_CHANNELS = 64
#: The most values a coordinate may range over.
MAX_SIDE = 26


@dataclass(frozen=True)
class BoardLayout:
    """Where each base proposition goes: on the board (channel, row, column) or in
    ``rest``."""

    relation: str
    rows: tuple[str, ...]
    cols: tuple[str, ...]
    contents: tuple[str, ...]  # KIF text per channel
    on_board: np.ndarray  # base indices of the board's propositions
    at: tuple[np.ndarray, np.ndarray, np.ndarray]  # their channel, row, column
    rest: np.ndarray  # base indices of the other propositions

    @property
    def shape(self) -> tuple[int, int, int]:
        return (len(self.contents), len(self.rows), len(self.cols))

    def planes(self, observation: Sequence[int]) -> np.ndarray:
        """The board planes (float32) of an observation vector (one entry per base
        proposition)."""
        vec = np.asarray(observation, np.float32)
        out = np.zeros(self.shape, np.float32)
        out[self.at] = vec[self.on_board]
        return out

    def rest_of(self, observation: Sequence[int]) -> np.ndarray:
        """The entries of the fluents that are not on the board (float32)."""
        return np.asarray(observation, np.float32)[self.rest]


def _order(values: Iterable[str]) -> tuple[str, ...]:
    vals = set(values)
    if all(v.lstrip("-").isdigit() for v in vals):
        return tuple(sorted(vals, key=int))
    return tuple(sorted(vals))


def _cell(f: Term) -> tuple[str, str, str, str] | None:
    if isinstance(f, Func) and len(f.args) == 3:
        x, y, v = f.args
        if isinstance(x, Const) and isinstance(y, Const):
            return f.name, x.name, y.name, kif_term(v)
    return None


def board_layout(base: Sequence[Term]) -> BoardLayout | None:
    """The board the base propositions form, or None."""
    cells: dict[str, list[tuple[int, str, str, str]]] = defaultdict(list)
    for i, f in enumerate(base):
        c = _cell(f)
        if c is not None:
            cells[c[0]].append((i, *c[1:]))
    best: tuple[str, list[tuple[int, str, str, str]]] | None = None
    for name, entries in cells.items():
        xs = {x for _, x, _, _ in entries}
        ys = {y for _, _, y, _ in entries}
        vs = {v for _, _, _, v in entries}
        fits = 2 <= len(xs) <= MAX_SIDE and 2 <= len(ys) <= MAX_SIDE and len(vs) <= MAX_CHANNELS
        if fits and (best is None or len(entries) > len(best[1])):
            best = (name, entries)
    if best is None:
        return None
    name, entries = best
    rows = _order(x for _, x, _, _ in entries)
    cols = _order(y for _, _, y, _ in entries)
    contents = tuple(sorted({v for _, _, _, v in entries}))
    r_at = {x: i for i, x in enumerate(rows)}
    c_at = {y: i for i, y in enumerate(cols)}
    v_at = {v: i for i, v in enumerate(contents)}
    on = {i for i, _, _, _ in entries}
    return BoardLayout(
        relation=name,
        rows=rows,
        cols=cols,
        contents=contents,
        on_board=np.array([i for i, _, _, _ in entries], np.intp),
        at=(
            np.array([v_at[v] for _, _, _, v in entries], np.intp),
            np.array([r_at[x] for _, x, _, _ in entries], np.intp),
            np.array([c_at[y] for _, _, y, _ in entries], np.intp),
        ),
        rest=np.array([i for i in range(len(base)) if i not in on], np.intp),
    )
