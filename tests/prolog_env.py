"""What a test needs from its surroundings, in one place: SWI-Prolog, an optional library,
the shared material. A test whose need is not met is skipped, except in CI (``CI=true``),
where it fails: there, a missing SWI-Prolog, library or corpus is a defect of the set-up.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import NoReturn

import pytest


def unavailable(message: str) -> NoReturn:
    """Skip the calling test because ``message`` (fail it in CI)."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{message} (CI=true: nothing may be missing)")
    pytest.skip(message)


def require_prolog() -> None:
    """Janus can start SWI-Prolog, else ``unavailable``."""
    from gdl2pl.bridge import PrologUnavailableError
    from gdl2pl.bridge import runtime

    try:
        runtime()
    except PrologUnavailableError as e:
        unavailable(f"SWI-Prolog is not usable: {e}")


def require_module(name: str) -> ModuleType:
    """The optional library ``name``, else ``unavailable`` (needs SWI-Prolog too)."""
    require_prolog()
    try:
        return importlib.import_module(name)
    except ImportError as e:
        unavailable(f"the optional library {name} is not installed: {e}")


def start_local_ray(ray: ModuleType, num_cpus: int) -> None:
    """``ray.init`` for a local instance whose workers import gdl2pl as installed.

    Ray puts the driver's working directory on its workers' ``sys.path``; from the
    repository's root that is the source tree (no C extension built there in CI), so the
    instance is started from the system's temporary folder (which outlives the workers:
    they are started later, in the driver's directory of the moment of ``init``)."""
    import contextlib
    import tempfile

    with contextlib.chdir(tempfile.gettempdir()):
        # an instance of its own: a cluster another test started on this machine (the
        # RLlib one) would be joined otherwise, and refuse num_cpus
        ray.init(address="local", num_cpus=num_cpus, include_dashboard=False,
                 log_to_driver=False)
