"""Progress bars for commands that may run longer than a second: drawn on stderr, and
only when stderr is a terminal (never in pipes, files or CI logs), after one second."""

from __future__ import annotations

import sys
from typing import Any

from tqdm import tqdm


def progress(total: int | None, what: str, **options: Any) -> tqdm:  # type: ignore[type-arg]
    """A bar counting ``total`` units of ``what`` (``None`` if the total is unknown)."""
    return tqdm(
        total=total,
        desc=what,
        unit="",
        file=sys.stderr,
        disable=not sys.stderr.isatty(),
        delay=1.0,
        leave=False,
        **options,
    )
