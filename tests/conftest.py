"""Shared test helpers: where the public material (``../shared``) and the examples are, and
comparing descriptions up to a renaming of variables.

``../shared`` sits beside the repository. When it is missing a test that needs it is skipped,
except in CI (``CI=true``), where a missing corpus is a failure.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings
from prolog_env import require_prolog
from prolog_env import unavailable

from gdl2pl.syntax import Clause
from gdl2pl.syntax import Description
from gdl2pl.visitor import Renamer

# In CI the property tests draw the same examples on every run (Hypothesis's advice for CI),
# so a run's verdict is the revision's, not the draw's; locally each run draws afresh.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI") == "true":
    settings.load_profile("ci")

# The adapters keep the tables they analyse on disk (gdl2pl.adapters.table_cache): a test
# process keeps them in a directory of its own, so that a run neither reads a user's
# cache nor leaves anything in it.
if "GDL2PL_CACHE_DIR" not in os.environ:
    os.environ["GDL2PL_CACHE_DIR"] = tempfile.mkdtemp(prefix="gdl2pl-test-tables-")
    atexit.register(shutil.rmtree, os.environ["GDL2PL_CACHE_DIR"], True)

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
EXAMPLES = REPO / "gdl2pl" / "examples"


def shared_dir() -> Path:
    """``../shared``; skips the calling test if it is missing (fails it in CI)."""
    if not SHARED.is_dir():
        unavailable(f"the shared material is missing: {SHARED}")
    return SHARED


#: The stage of the pipeline each test module tests: ``pytest -m read`` runs one stage.
STAGES = {
    "read": ("test_kif", "test_infix", "test_normalize", "test_roundtrip", "test_visitor"),
    "check": ("test_check", "test_check_corpus"),
    "translate": ("test_translate", "test_pipeline", "test_golden"),
    "runtime": ("test_engine", "test_prolog_library", "test_runtime", "test_reference"),
    "bridge": ("test_state_machine", "test_hostile_input", "test_explain"),
    "ggp": ("test_protocol", "test_player", "test_manager", "test_hostile_network"),
    "cli": ("test_cli", "test_readme", "test_tutorial", "test_benchmarks"),
    "analysis": ("test_analysis",),
    "adapters": ("test_adapters",),
    "verify": ("test_verify",),
    "studio": ("test_studio",),
}

#: Modules that take long (corpora, networks, other libraries): ``pytest -m "not slow"``
#: (``make test-fast``) leaves them out.
SLOW = (
    "test_reference",
    "test_check_corpus",
    "test_adapters",
    "test_verify",
    "test_player",
    "test_manager",
    "test_hostile_network",
    "test_tutorial",
    "test_benchmarks",
    "test_analysis",
    "test_explain",
    "test_studio_browser",
)

#: Modules whose tests keep clocks (players, servers, limits, the studio, timeouts):
#: ``scripts/pytest-in-parts`` runs them with the machine to themselves, one part at a
#: time, and the other modules several parts at once.
CLOCKED = (
    "test_adapters_travel",
    "test_analysis",
    "test_analysis_budget",
    "test_close_races",
    "test_compiled_auto_check",
    "test_compiled_hardening",
    "test_gdl2_belief",
    "test_gdl2_corpus",
    "test_gdl2_hostile",
    "test_gdl2_match",
    "test_grounding_cleanup",
    "test_hostile_input",
    "test_hostile_network",
    "test_manager",
    "test_player",
    "test_player_search",
    "test_protocol",
    "test_studio",
    "test_studio_browser",
    "test_studio_class",
    "test_studio_limits",
    "test_verify",
    "test_verify_ray",
    "test_verify_streaming",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    shard = os.environ.get("GDL2PL_TEST_SHARD")  # "k/n": every n-th test from the k-th
    if shard:
        k, n = (int(x) for x in shard.split("/"))
        config.hook.pytest_deselected(items=[t for i, t in enumerate(items) if i % n != k])
        items[:] = [t for i, t in enumerate(items) if i % n == k]
    for item in items:
        name = item.path.stem
        for stage, prefixes in STAGES.items():
            if name.startswith(prefixes):
                item.add_marker(getattr(pytest.mark, stage))
        if name.startswith(SLOW):
            item.add_marker(pytest.mark.slow)


def shared_files(folder: str, pattern: str) -> list[str]:
    """Paths (relative to ``../shared``) matching ``pattern`` under ``folder``, sorted, for
    ``parametrize``. Without ``../shared`` it is ``[folder]``, so the test still runs once and
    ``shared_dir()`` skips or fails it instead of pytest quietly collecting nothing."""
    if not SHARED.is_dir():
        return [folder]
    return sorted(str(p.relative_to(SHARED)) for p in (SHARED / folder).glob(pattern))


@pytest.fixture
def shared() -> Path:
    """``../shared`` (see ``shared_dir``)."""
    return shared_dir()


def canonical_variables(d: Description) -> Description:
    """``d`` with the variables of each clause renamed ``V0``, ``V1``... in order of first
    occurrence: two descriptions are equal up to a consistent renaming of variables (per
    clause) exactly when their canonical forms are equal."""

    def clause(c: Clause) -> Clause:
        names: dict[str, str] = {}
        rename = Renamer(lambda name: name, lambda v: names.setdefault(v, f"V{len(names)}"))
        return rename(c)  # type: ignore[no-any-return]

    return Description(tuple(clause(c) for c in d.clauses))


def layered_game(relations: int, uses: int = 6) -> str:
    """A game whose rule for relation i uses the ``uses`` relations before it: few
    kilobytes, but a drawing Graphviz needs minutes to lay out."""
    lines = [
        "(role r) (init (c 0)) (<= terminal (true (c 0))) (<= (legal r a) (true (c 0)))",
        "(<= (next (c 0)) (does r a)) (r0 1)",
    ]
    for i in range(1, relations):
        body = " ".join(f"(r{j} ?x)" for j in range(max(0, i - uses), i))
        lines.append(f"(<= (r{i} ?x) {body})")
    lines.append(f"(<= (goal r 100) (r{relations - 1} ?x))")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def prolog_main_thread() -> None:
    """SWI-Prolog (else ``unavailable``), started from the main thread, with an engine,
    before any worker thread of a module's players, servers and managers calls it: a
    module of those says ``pytestmark = pytest.mark.usefixtures("prolog_main_thread")``."""
    require_prolog()
    from gdl2pl.bridge import swipl

    swipl.attach_thread()
