"""Read-only numpy arrays the environments hand out, made once and shared."""

from __future__ import annotations

import numpy as np

#: Masks kept per game (beyond it, the oldest half is dropped).
MAX_MASKS = 100_000


def frozen(a: np.ndarray) -> np.ndarray:
    """``a``, made read-only."""
    a.flags.writeable = False
    return a


class ActionMasks:
    """The int8 action mask of a set of legal action ids (1 for legal), one read-only
    array per role and set: legal sets recur from state to state, and building a mask
    costs more than looking it up."""

    def __init__(self, sizes: list[int]) -> None:
        self._sizes = sizes
        self._masks: dict[tuple[int, tuple[int, ...]], np.ndarray] = {}

    def mask(self, role: int, legal: tuple[int, ...]) -> np.ndarray:
        key = (role, legal)
        m = self._masks.get(key)
        if m is None:
            m = np.zeros(self._sizes[role], np.int8)
            m[list(legal)] = 1
            m = frozen(m)
            if len(self._masks) >= MAX_MASKS:
                for old in list(self._masks)[: MAX_MASKS // 2]:
                    del self._masks[old]
            self._masks[key] = m
        return m
