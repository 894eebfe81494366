"""Observations shaped as a board: planes ``[channels, rows, cols]`` where fluents form one.

The board is the one the base propositions form, oriented by the game's ``row`` and
``column`` rules (``gdl2pl.board_axes.oriented_board``: the same geometry every drawing of
a state uses, rows top to bottom, columns left to right);
the plane of content ``v`` has a 1 at the cell ``(x, y)`` when ``(f x y v)`` holds,
channels in the contents' KIF order. The other fluents (``rest``, in base order) are a
flat 0/1 vector, or in the whole observation (``observation_planes``) planes after the
board's channels: one constant plane each, as OpenSpiel's chess gives the side to move;
past ``MAX_CONSTANT_PLANES`` of them (hex's 6,890 step, connection and owner fluents), packed
instead, their entries in base order filling planes row by row (zeros after the last),
so the observation stays the size of the fluents. Pure
functions over a game's base table and its observation vector; numpy (an optional
dependency) is imported where a layout is built, so that the package loads without it.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gdl2pl.board import MAX_CONTENTS
from gdl2pl.board import MAX_SIDE
from gdl2pl.board import BoardGeometry
from gdl2pl.board_axes import RuleLike
from gdl2pl.board_axes import oriented_board
from gdl2pl.syntax import Term

if TYPE_CHECKING:
    import numpy as np

#: The most contents (channels) a board relation may have.
MAX_CHANNELS = MAX_CONTENTS
#: The most other fluents shown as one constant plane each (beyond: packed planes).
MAX_CONSTANT_PLANES = 64

__all__ = ["MAX_CHANNELS", "MAX_CONSTANT_PLANES", "MAX_SIDE", "BoardLayout", "board_layout"]


@dataclass(frozen=True)
class BoardLayout:
    """Where each base proposition goes: on the board (channel, row, column) or in
    ``rest``."""

    geometry: BoardGeometry
    on_board: np.ndarray  # base indices of the board's propositions
    at: tuple[np.ndarray, np.ndarray, np.ndarray]  # their channel, row, column
    rest: np.ndarray  # base indices of the other propositions

    @property
    def relation(self) -> str:
        return self.geometry.relation

    @property
    def rows(self) -> tuple[str, ...]:
        """The rows' coordinates (``y``), top to bottom."""
        return self.geometry.rows

    @property
    def cols(self) -> tuple[str, ...]:
        """The columns' coordinates (``x``), left to right."""
        return self.geometry.columns

    @property
    def contents(self) -> tuple[str, ...]:
        """The contents (KIF text), one per channel."""
        return self.geometry.contents

    @property
    def shape(self) -> tuple[int, int, int]:
        """The board planes' shape: ``(contents, rows, columns)``."""
        return (len(self.contents), len(self.rows), len(self.cols))

    @property
    def packed(self) -> bool:
        """Whether the other fluents are packed into planes rather than one plane each."""
        return len(self.rest) > MAX_CONSTANT_PLANES

    @property
    def planes_shape(self) -> tuple[int, int, int]:
        """The whole observation's shape (``observation_planes``): the board's channels,
        then one plane per other fluent, or as many as they fill when packed."""
        area = len(self.rows) * len(self.cols)
        extra = -(-len(self.rest) // area) if self.packed else len(self.rest)
        return (len(self.contents) + extra, len(self.rows), len(self.cols))

    def planes(self, observation: Sequence[int]) -> np.ndarray:
        """The board planes (float32) of an observation vector (one entry per base
        proposition)."""
        import numpy as np

        vec = np.asarray(observation, np.float32)
        out = np.zeros(self.shape, np.float32)
        out[self.at] = vec[self.on_board]
        return out

    def rest_of(self, observation: Sequence[int]) -> np.ndarray:
        """The entries of the fluents that are not on the board (float32)."""
        import numpy as np

        return np.asarray(observation, np.float32)[self.rest]

    def mover_first(
        self,
        observer: int,
        roles: int,
        owners: Sequence[int | None],
        rest_owners: Sequence[int | None] = (),
    ) -> np.ndarray:
        """The order of the planes of ``observation_planes`` seen by role ``observer`` (of
        ``roles``): the board's channels of the observer first, then of the roles after
        it in turn, then the channels of no role; the other fluents' constant planes
        likewise (``rest_owners``, one per fluent of ``rest``; packed planes keep their
        order). ``owners``: per content, its role or None (``gdl2pl.adapters.owners``)."""
        import numpy as np

        def ordered(who: Sequence[int | None], start: int) -> list[int]:
            rank = [roles if w is None else (w - observer) % roles for w in who]
            return [start + i for i in sorted(range(len(who)), key=lambda i: rank[i])]

        n = len(self.contents)
        total = self.planes_shape[0]
        order = ordered(owners, 0)
        if self.packed or len(rest_owners) != len(self.rest):
            order += list(range(n, total))
        else:
            order += ordered(rest_owners, n)
        return np.array(order, np.intp)

    def observation_planes(self, observation: Sequence[int], out: np.ndarray | None = None) -> (
        np.ndarray
    ):
        """The whole observation as planes (float32, ``planes_shape``): the board's
        channels, then for each other fluent a plane of 1s where it holds, of 0s where not
        (or, ``packed``, their entries filling the planes row by row). Written into
        ``out`` when given."""
        import numpy as np

        vec = np.asarray(observation, np.float32)
        if out is None:
            out = np.zeros(self.planes_shape, np.float32)
        else:
            out[:] = 0
        n = len(self.contents)
        out[self.at] = vec[self.on_board]
        if self.packed:
            tail = out[n:].reshape(-1)
            tail[: len(self.rest)] = vec[self.rest]
        else:
            out[n:] = vec[self.rest][:, None, None]
        return out


def board_layout(base: Sequence[Term], rules: Iterable[RuleLike] = ()) -> BoardLayout | None:
    """The board the base propositions form, its rows as the game's ``rules`` for ``row``
    and ``column`` say, or None."""
    geometry = oriented_board(base, rules)
    if geometry is None:
        return None
    import numpy as np

    content_at = {v: i for i, v in enumerate(geometry.contents)}
    on: list[int] = []
    channel: list[int] = []
    row: list[int] = []
    col: list[int] = []
    rest: list[int] = []
    for i, f in enumerate(base):
        c = geometry.cell(f)
        if c is None:
            rest.append(i)
            continue
        x, y, v = c
        on.append(i)
        channel.append(content_at[v])
        row.append(geometry.row_at[y])
        col.append(geometry.column_at[x])
    return BoardLayout(
        geometry=geometry,
        on_board=np.array(on, np.intp),
        at=(np.array(channel, np.intp), np.array(row, np.intp), np.array(col, np.intp)),
        rest=np.array(rest, np.intp),
    )
