"""Every Python name the documentation cites (``gdl2pl.x.y`` in backquotes, in README.md,
ARCHITECTURE.md and docs/*.md) names something that exists: a module, or an attribute of
one. A reader who looks a name up finds it (docs/studio.md once cited
``gdl2pl.bridge.explain.Node``, which is ``gdl2pl.explain.proof.Node``)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest
from prolog_env import require_module

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "ARCHITECTURE.md", *sorted((ROOT / "docs").glob("*.md"))]
NAME = re.compile(r"`(gdl2pl(?:\.[A-Za-z_][A-Za-z0-9_]*)+)`")


def cited() -> list[tuple[str, str]]:
    found = {
        (page.relative_to(ROOT).as_posix(), m.group(1))
        for page in PAGES
        for m in NAME.finditer(page.read_text(encoding="utf-8"))
    }
    return sorted(found)


def resolve(dotted: str) -> object:
    """The object ``dotted`` names: its longest importable module prefix, then attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module_name = ".".join(parts[:cut])
        try:
            found: object = importlib.import_module(module_name)
        except ModuleNotFoundError as e:
            if e.name is not None and not e.name.startswith("gdl2pl"):
                require_module(e.name)  # an optional library: missing is a failure in CI
            continue
        for attribute in parts[cut:]:
            found = getattr(found, attribute)
        return found
    raise ModuleNotFoundError(dotted)


def test_the_pages_cite_names() -> None:
    assert len(cited()) >= 10


@pytest.mark.parametrize(("page", "dotted"), cited())
def test_a_cited_name_exists(page: str, dotted: str) -> None:
    try:
        resolve(dotted)
    except (ModuleNotFoundError, AttributeError) as e:
        pytest.fail(f"{page} cites {dotted}, which does not exist ({e})")
