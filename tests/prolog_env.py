"""SWI-Prolog for the tests: skipped when missing, except in CI (``CI=true``), where a
missing or unusable SWI-Prolog is a failure."""

from __future__ import annotations

import os

import pytest


def require_prolog() -> None:
    """Skip (or, in CI, fail) the calling test unless janus can start SWI-Prolog."""
    from gdl2pl.bridge import PrologUnavailableError, runtime

    try:
        runtime()
    except PrologUnavailableError as e:
        if os.environ.get("CI") == "true":
            pytest.fail(f"SWI-Prolog is not usable: {e}")
        pytest.skip(f"SWI-Prolog is not usable: {e}")
