"""One clock for a whole analysis: every phase (search, random matches, checks) draws
on the same ``Deadline``, so a budget of seconds bounds the command, not each phase.

Python loops ask ``passed()`` between steps and hand Prolog the seconds ``left()``,
which its loops (``gdl_search.pl``) check between states and steps: work is never
interrupted in the middle (a Prolog query stopped inside tabling can leave the
thread's tables unusable), so each phase ends at most one step past its deadline.
"""

from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Deadline:
    """A point in ``time.monotonic()`` time."""

    end: float

    @classmethod
    def after(cls, seconds: float, start: float | None = None) -> Deadline:
        """``seconds`` after ``start`` (default: now)."""
        return cls((time.monotonic() if start is None else start) + seconds)

    def left(self) -> float:
        """Seconds until the deadline, 0 once it has passed."""
        return max(0.0, self.end - time.monotonic())

    def passed(self) -> bool:
        return time.monotonic() >= self.end

    def share(self, fraction: float) -> Deadline:
        """The deadline at ``fraction`` of the time left now (a phase's part)."""
        now = time.monotonic()
        return Deadline(now + max(0.0, self.end - now) * fraction)
